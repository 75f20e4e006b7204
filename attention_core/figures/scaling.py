"""Figures of the "Why √dk" page: measured dot products, softmax saturation and gradient size.

Every figure is drawn from a record of `attention_core.lessons.scaling` (sampled with a seed),
never from a formula, except the theory line √dk, which is labelled as theory. Traces
carry a stable ``meta`` name (``"raw_std"``, ``"chosen_dk"``…) so that tests and
notebooks can find them whatever language the legend is in.

Colours: without the scaling = orange, with it = blue (a colour-blind-safe pair), theory
and reference lines = grey; the dk chosen on the page is a solid dark line, the paper's
dk = 64 a dotted one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..lessons.scaling import PAPER_DK, AttentionPair, DotProductSample, ScalingSweep
from .matrices import left_title, subplot_layout

__all__ = [
    "SCALED_COLOUR",
    "UNSCALED_COLOUR",
    "ScalingText",
    "dot_product_histograms",
    "entropy_against_dk",
    "jacobian_against_dk",
    "max_weight_against_dk",
    "std_against_dk",
    "weight_row_bars",
]

UNSCALED_COLOUR = "#e66100"
"""Orange: scores used as they are (scale 1)."""
SCALED_COLOUR = "#1f5fa8"
"""Blue: scores divided by √dk (or by T·√dk)."""
THEORY_COLOUR = "#7f7f7f"
"""Grey: the theory line and reference levels."""
CHOSEN_COLOUR = "#222222"
"""Near black: the dk chosen on the page."""
FONT_SIZE = 14
"""Readable on a projector at 1280×720."""


@dataclass(frozen=True)
class ScalingText:
    """Words inside the figures, passed in already translated (and with numbers filled in)."""

    dk_axis: str = "dk (size of q and k, log scale)"
    """Horizontal axis of every plot against dk."""
    count_axis: str = "number of pairs"
    """Vertical axis of the histograms."""
    std_axis: str = "standard deviation"
    """Vertical axis of the spread plot."""
    unscaled: str = "without ÷√dk"
    """Legend of measurements on the raw scores (scale 1)."""
    scaled: str = "with ÷√dk"
    """Legend of measurements on the scaled scores (scale 1/(T·√dk))."""
    raw_std: str = "measured std of q·k"
    """Legend of the measured spread of the raw dot products."""
    scaled_std: str = "measured std of q·k/√dk"
    """Legend of the measured spread of the scaled dot products."""
    theory: str = "theory: √dk"
    """Legend of the theory line."""
    chosen: str = "your dk"
    """Legend of the line at the dk chosen on the page (number included by the caller)."""
    paper: str = "paper: dk = 64"
    """Legend of the line at the paper's dk."""
    max_weight_axis: str = "largest weight in a row"
    """Vertical axis of the saturation plot."""
    uniform_weight: str = "uniform: 1/m"
    """Legend of the largest weight of uniform weights."""
    entropy_axis: str = "entropy of the weights (nats)"
    """Vertical axis of the entropy plot."""
    uniform_entropy: str = "uniform: log m"
    """Legend of the largest possible entropy."""
    jacobian_axis: str = "size of softmax's derivative ‖J‖"
    """Vertical axis of the gradient plot."""
    key_axis: str = "key"
    """Horizontal axis of the one-row bar chart."""
    weight_axis: str = "weight"
    """Vertical axis of the one-row bar chart."""


_AXIS_LINES = {"showline": True, "linecolor": "#888", "gridcolor": "#e5e5e5", "zeroline": False}


def _figure(traces: list, *, height: int, title: str = "", axes: tuple[str, ...] = ("xaxis", "yaxis"),
            **layout) -> go.Figure:
    """The figure of `traces` in the page's chart style, with `layout` (axes as dicts) merged in.

    Built in one constructor call: a figure built with add_trace() and update_layout() is the
    same, several times slower (each call parses its property paths again)."""
    layout = dict(
        height=height,
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        font={"size": FONT_SIZE},
        # under the axis title at any type size: anchored to the figure's bottom edge, whose
        # room Plotly reserves before placing the tick labels and the axis title above it
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0.0, "xanchor": "left"},
        plot_bgcolor="white",
        hovermode="closest",
        title=left_title(title),
        **layout,
    )
    for name in axes:  # every axis of the figure: lines on, zero line off
        layout[name] = {**layout.get(name, {}), **_AXIS_LINES}
    return go.Figure(data=traces, layout=layout)


def _dk_axis(dks: np.ndarray, title: str) -> dict:
    """A logarithmic dk axis with a tick at every measured dk (powers of two are evenly spaced)."""
    ticks = [int(dk) for dk in dks]
    return {"type": "log", "tickvals": ticks, "ticktext": [str(dk) for dk in ticks], "title": {"text": title}}


def _dk_marks(chosen_dk: int, y_span: tuple[float, float], text: ScalingText) -> list[go.Scatter]:
    """Vertical lines at the dk chosen on the page and at the paper's dk = 64 (as traces, in the legend)."""
    low, high = y_span
    return [
        go.Scatter(
            x=[PAPER_DK, PAPER_DK],
            y=[low, high],
            mode="lines",
            line={"color": THEORY_COLOUR, "dash": "dot", "width": 2},
            name=text.paper,
            meta="paper_dk",
            hoverinfo="name",
        ),
        go.Scatter(
            x=[chosen_dk, chosen_dk],
            y=[low, high],
            mode="lines",
            line={"color": CHOSEN_COLOUR, "width": 2},
            name=text.chosen,
            meta="chosen_dk",
            hoverinfo="name",
        ),
    ]


def _measured(x, y, *, name: str, meta: str, colour: str, value_format: str, symbol: str = "circle") -> go.Scatter:
    return go.Scatter(
        x=np.asarray(x),
        y=np.asarray(y, dtype=float),
        mode="lines+markers",
        line={"color": colour, "width": 2.5},
        marker={"color": colour, "size": 8, "symbol": symbol},
        name=name,
        meta=meta,
        hovertemplate=f"dk = %{{x}}<br>{name}: %{{y:{value_format}}}<extra></extra>",
    )


def _reference(x, level: float, *, name: str, meta: str) -> go.Scatter:
    return go.Scatter(
        x=[int(x[0]), int(x[-1])],
        y=[level, level],
        mode="lines",
        line={"color": THEORY_COLOUR, "dash": "dash", "width": 1.5},
        name=name,
        meta=meta,
        hovertemplate=f"{name}: {level:.3g}<extra></extra>",
    )


# ---------------------------------------------------------------- the dot products themselves


def dot_product_histograms(
    sample: DotProductSample, *, raw_title: str, scaled_title: str, text: ScalingText = ScalingText()
) -> go.Figure:
    """Histograms of the sample's raw q·k (left) and scaled q·k/√dk (right) on one shared x-axis.

    Sharing the axis is the point: as dk grows the raw histogram widens like √dk while
    the scaled one keeps the same width.
    """
    layout = subplot_layout(rows=1, cols=2, shared_xaxes="all", horizontal_spacing=0.08,
                            subplot_titles=(raw_title, scaled_title))
    traces = []
    for column, (values, colour, name, meta) in enumerate(
        (
            (sample.raw, UNSCALED_COLOUR, text.unscaled, "raw"),
            (sample.scaled, SCALED_COLOUR, text.scaled, "scaled"),
        ),
        start=1,
    ):
        traces.append(
            go.Histogram(
                x=np.asarray(values),
                nbinsx=60,
                marker={"color": colour, "line": {"width": 0}},
                name=name,
                meta=meta,
                showlegend=False,
                hovertemplate=f"{name}<br>%{{x}}<br>{text.count_axis}: %{{y}}<extra></extra>",
                xaxis="x" if column == 1 else f"x{column}",
                yaxis="y" if column == 1 else f"y{column}",
            )
        )
    layout["xaxis"]["title"] = {"text": "q·k"}
    layout["xaxis2"]["title"] = {"text": "q·k / √dk"}
    layout["yaxis"]["title"] = {"text": text.count_axis}
    for annotation in layout["annotations"]:  # the subplot titles
        annotation["font"] = {**annotation.get("font", {}), "size": FONT_SIZE + 1}
    figure = _figure(traces, height=320, axes=("xaxis", "xaxis2", "yaxis", "yaxis2"), bargap=0.02, **layout)
    figure.layout.margin.t = 40
    return figure


def std_against_dk(sweep: ScalingSweep, chosen_dk: int, text: ScalingText = ScalingText()) -> go.Figure:
    """Measured spread of q·k and of the scaled scores against dk, with the theory line √dk.

    Both axes are logarithmic, so √dk is a straight line of slope ½ and the scaled
    scores' spread is a flat line at 1/T.
    """
    traces = [
        _measured(sweep.dks, sweep.raw_std, name=text.raw_std, meta="raw_std", colour=UNSCALED_COLOUR,
                  value_format=".2f"),
        _measured(sweep.dks, sweep.scaled_std, name=text.scaled_std, meta="scaled_std", colour=SCALED_COLOUR,
                  value_format=".2f", symbol="square"),
        go.Scatter(  # drawn after the measured points, so the dashes stay visible on top of them
            x=sweep.dks,
            y=sweep.theory_raw_std,
            mode="lines",
            line={"color": "#444444", "dash": "dash", "width": 1.5},
            name=text.theory,
            meta="theory_raw_std",
            hovertemplate=f"dk = %{{x}}<br>{text.theory}: %{{y:.2f}}<extra></extra>",
        ),
    ]
    values = np.concatenate([sweep.raw_std, sweep.scaled_std, sweep.theory_raw_std])
    traces += _dk_marks(chosen_dk, (float(values.min()) * 0.8, float(values.max()) * 1.25), text)
    powers = [2.0**power for power in range(-4, 7)]
    return _figure(traces, height=400, xaxis=_dk_axis(sweep.dks, text.dk_axis), yaxis={
        "type": "log", "title": {"text": text.std_axis}, "tickvals": powers, "ticktext": [f"{p:g}" for p in powers]})


# ---------------------------------------------------------------- what softmax makes of the scores


def max_weight_against_dk(sweep: ScalingSweep, chosen_dk: int, text: ScalingText = ScalingText()) -> go.Figure:
    """Mean largest weight of a row of m weights against dk: 1/m is uniform, 1 is one-hot."""
    traces = [
        _reference(sweep.dks, 1.0 / sweep.num_keys, name=text.uniform_weight, meta="uniform_weight"),
        _measured(sweep.dks, sweep.max_weight_unscaled, name=text.unscaled, meta="max_weight_unscaled",
                  colour=UNSCALED_COLOUR, value_format=".3f"),
        _measured(sweep.dks, sweep.max_weight_scaled, name=text.scaled, meta="max_weight_scaled",
                  colour=SCALED_COLOUR, value_format=".3f", symbol="square"),
        *_dk_marks(chosen_dk, (0.0, 1.0), text),
    ]
    return _figure(traces, height=380, xaxis=_dk_axis(sweep.dks, text.dk_axis),
                   yaxis={"range": [0.0, 1.05], "title": {"text": text.max_weight_axis}})


def entropy_against_dk(sweep: ScalingSweep, chosen_dk: int, text: ScalingText = ScalingText()) -> go.Figure:
    """Mean entropy of a row of weights against dk: log m is uniform, 0 is all weight on one key."""
    traces = [
        _reference(sweep.dks, sweep.uniform_entropy, name=text.uniform_entropy, meta="uniform_entropy"),
        _measured(sweep.dks, sweep.entropy_unscaled, name=text.unscaled, meta="entropy_unscaled",
                  colour=UNSCALED_COLOUR, value_format=".3f"),
        _measured(sweep.dks, sweep.entropy_scaled, name=text.scaled, meta="entropy_scaled",
                  colour=SCALED_COLOUR, value_format=".3f", symbol="square"),
        *_dk_marks(chosen_dk, (0.0, sweep.uniform_entropy), text),
    ]
    return _figure(traces, height=380, xaxis=_dk_axis(sweep.dks, text.dk_axis),
                   yaxis={"range": [0.0, sweep.uniform_entropy * 1.08], "title": {"text": text.entropy_axis}})


def jacobian_against_dk(sweep: ScalingSweep, chosen_dk: int, text: ScalingText = ScalingText()) -> go.Figure:
    """Mean Frobenius norm of softmax's Jacobian diag(p) − ppᵀ against dk (near 0 = no gradient)."""
    top = float(max(sweep.jacobian_norm_unscaled.max(), sweep.jacobian_norm_scaled.max())) * 1.15
    traces = [
        _measured(sweep.dks, sweep.jacobian_norm_unscaled, name=text.unscaled, meta="jacobian_norm_unscaled",
                  colour=UNSCALED_COLOUR, value_format=".3f"),
        _measured(sweep.dks, sweep.jacobian_norm_scaled, name=text.scaled, meta="jacobian_norm_scaled",
                  colour=SCALED_COLOUR, value_format=".3f", symbol="square"),
        *_dk_marks(chosen_dk, (0.0, top), text),
    ]
    return _figure(traces, height=380, xaxis=_dk_axis(sweep.dks, text.dk_axis),
                   yaxis={"range": [0.0, top], "title": {"text": text.jacobian_axis}})


def weight_row_bars(pair: AttentionPair, sample: int = 0, *, title: str = "",
                    text: ScalingText = ScalingText()) -> go.Figure:
    """The m weights of one sampled query, without and with scaling, as grouped bars (0–1)."""
    unscaled = pair.unscaled.weights[sample, 0]  # (m,)
    scaled = pair.scaled.weights[sample, 0]  # (m,)
    keys = [f"k{j + 1}" for j in range(unscaled.shape[-1])]
    traces = [
        go.Bar(
            x=keys,
            y=np.asarray(weights, dtype=float),
            name=name,
            meta=meta,
            marker={"color": colour},
            hovertemplate=f"{name}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
        )
        for weights, name, meta, colour in (
            (unscaled, text.unscaled, "row_unscaled", UNSCALED_COLOUR),
            (scaled, text.scaled, "row_scaled", SCALED_COLOUR),
        )
    ]
    return _figure(traces, height=380, title=title, barmode="group", bargap=0.25, bargroupgap=0.05,
                   xaxis={"type": "category", "title": {"text": text.key_axis}},
                   yaxis={"range": [0.0, 1.0], "title": {"text": text.weight_axis}})
