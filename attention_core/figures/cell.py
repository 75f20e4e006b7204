"""Figures and formulas for following one cell (i, j), built from a `CellTrace`.

Every bar drawn here is a number of the record, unchanged: q_i and k_j, their products,
exp(S̃ − max) for row i, and the contributions A_ij' · v_j' stacked into output row i.
The formulas are LaTeX strings with the record's numbers filled in (rounded for reading).

Colours: q_i and k_j are orange and bluish green (Okabe–Ito, colour-blind safe); signed
products are red (positive, "agree") and blue (negative), as in the score heatmaps; the
picked key is dark blue among light blue bars and outlined in black in the stack.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.colors import qualitative

from ..lessons.cell import CellTrace
from ..toy import ToyTrace
from .matrices import FigureText, heatmap, plain_label

__all__ = [
    "CellFigureText",
    "cell_locator",
    "contribution_bars",
    "dot_product_latex",
    "mask_latex",
    "output_latex",
    "product_bars",
    "scale_latex",
    "softmax_bars",
    "softmax_latex",
    "vector_bars",
]

QUERY_COLOUR = "#E69F00"
KEY_COLOUR = "#009E73"
POSITIVE = "#b2182b"
NEGATIVE = "#2166ac"
PICKED = "#08519c"
OTHERS = "#9ecae1"
HIGHLIGHT = "#E69F00"
KEY_PALETTE = qualitative.Safe
"""One colour per key in the stacked output bars (cycled past 11 keys)."""
MAX_BAR_LABELS = 24
"""Bars carry their number as a label only up to this many bars."""
MAX_KEYS_IN_LEGEND = 16
"""The stacked output bars name each key in a legend up to this many keys (as many entries as
fit beside the chart); beyond, the bars are one trace and each names its key in its hover."""
MAX_TERMS = 6
"""Sums in formulas show at most this many terms, then ⋯."""
FIGURE_HEIGHT = 330
FIGURE_TEXT = FigureText()


@dataclass(frozen=True)
class CellFigureText:
    """Words used inside the cell figures, passed in so the caller can translate them."""

    feature: str = "feature"
    key: str = "key token"
    query_vector: str = "q_i"
    key_vector: str = "k_j"
    product: str = "q_i × k_j"
    exp: str = "exp(S̃ − max)"
    weight: str = "weight"
    masked: str = "masked"
    output: str = "output o_i"
    contribution: str = "w · v"


def _signed(value: float, digits: int) -> str:
    """A bar label with a true minus sign, as Plotly's axes write it."""
    return f"{value:.{digits}f}".replace("-", "−")


def _figure(traces: list, title: str, x_title: str, y_title: str, categories: int, *, validate: bool = True,
            **layout) -> go.Figure:
    """The bar charts' figure, `layout` merged in (y_range: the y axis's range). Built in one
    constructor call: the same figure as go.Figure() and update_layout(), several times faster
    (every update parses its property paths again). `validate=False`: traces and layout kept as
    given, not checked by Plotly (for figures whose validated build the tests compare with)."""
    y_range = layout.pop("y_range", None)
    figure_layout = dict(
        title={"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        height=FIGURE_HEIGHT,
        margin={"l": 10, "r": 10, "t": 48, "b": 10},
        font={"size": 14},
        bargap=0.2,
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0},
        xaxis={"title": {"text": x_title}, "type": "category", "tickangle": -45 if categories > 12 else 0},
        yaxis={"title": {"text": y_title}, "zeroline": True, "zerolinecolor": "#444", "zerolinewidth": 1},
    )
    figure_layout.update(layout)
    if y_range is not None:
        figure_layout["yaxis"]["range"] = y_range
    return go.Figure(data=traces, layout=figure_layout, _validate=validate)


def _feature_labels(size: int) -> list[str]:
    return [f"d{t}" for t in range(size)]


def vector_bars(cell: CellTrace, query_label: str, key_label: str, *, title: str = "",
                text: CellFigureText = CellFigureText()) -> go.Figure:
    """q_i and k_j side by side, one pair of bars per feature."""
    features = _feature_labels(cell.q_i.shape[0])
    query_label, key_label = plain_label(query_label), plain_label(key_label)
    traces = [
        go.Bar(x=features, y=cell.q_i, name=f"{text.query_vector} ({query_label})", marker_color=QUERY_COLOUR,
               hovertemplate=f"{text.query_vector}<br>%{{x}}: %{{y:.4f}}<extra></extra>"),
        go.Bar(x=features, y=cell.k_j, name=f"{text.key_vector} ({key_label})", marker_color=KEY_COLOUR,
               hovertemplate=f"{text.key_vector}<br>%{{x}}: %{{y:.4f}}<extra></extra>"),
    ]
    return _figure(traces, title, text.feature, "", len(features), barmode="group")


def product_bars(cell: CellTrace, *, title: str = "", text: CellFigureText = CellFigureText()) -> go.Figure:
    """q_it · k_jt for every feature t, red where positive and blue where negative."""
    features = _feature_labels(cell.products.shape[0])
    labelled = len(features) <= MAX_BAR_LABELS
    bars = go.Bar(
        x=features,
        y=cell.products,
        name=text.product,
        marker_color=[POSITIVE if value >= 0 else NEGATIVE for value in cell.products],
        text=[_signed(value, 2) for value in cell.products] if labelled else None,
        textposition="outside",
        cliponaxis=False,
        hovertemplate=f"{text.product}<br>%{{x}}: %{{y:.4f}}<extra></extra>",
    )
    return _figure([bars], title, text.feature, text.product, len(features))


def softmax_bars(cell: CellTrace, key_labels: Sequence[str], *, title: str = "",
                 text: CellFigureText = CellFigureText()) -> go.Figure:
    """exp(S̃_ij' − max) for every key j' of row i; labels are the weights A_ij'.

    The picked key is dark blue; masked keys are 0 and marked with ×. Dividing every bar
    by the row sum gives the weights, so the bars also show the weights' proportions.
    """
    key_labels = [plain_label(label) for label in key_labels]
    m = len(key_labels)
    labelled = m <= MAX_BAR_LABELS
    colours = [PICKED if key == cell.j else OTHERS for key in range(m)]
    outline = [2 if key == cell.j else 0 for key in range(m)]
    weight_labels = [  # masked keys carry a × instead
        f"{weight:.3f}" if allowed else "" for weight, allowed in zip(cell.weights_row, cell.row_allowed, strict=True)
    ]
    traces = [
        go.Bar(
            x=list(key_labels),
            y=cell.exp_row,
            customdata=cell.weights_row,
            name=text.exp,
            marker={"color": colours, "line": {"color": "#222", "width": outline}},
            text=weight_labels if labelled else None,
            textposition="outside",
            cliponaxis=False,
            hovertemplate=(
                f"{text.key}: %{{x}}<br>{text.exp}: %{{y:.4f}}<br>{text.weight}: %{{customdata:.4f}}<extra></extra>"
            ),
        )
    ]
    masked = [key for key in range(m) if not cell.row_allowed[key]]
    if masked:
        traces.append(
            go.Scatter(
                x=[key_labels[key] for key in masked],
                y=[0.0] * len(masked),
                mode="markers",
                marker={"symbol": "x-thin", "size": 12, "line": {"width": 2, "color": "#555"}},
                name=text.masked,
                hovertemplate=f"{text.key}: %{{x}}<br>{text.masked}<extra></extra>",
                showlegend=False,
            )
        )
    return _figure(traces, title, text.key, text.exp, m, showlegend=False, y_range=[0, 1.18])


def contribution_bars(cell: CellTrace, key_labels: Sequence[str], *, title: str = "",
                      text: CellFigureText = CellFigureText()) -> go.Figure:
    """Output row i as stacked contributions A_ij' · v_j', one colour per key j'.

    Positive contributions stack upwards and negative ones downwards (Plotly's relative
    bar mode), so each stack's net height is the output feature; black diamonds mark
    o_i itself. The picked key is opaque and outlined, the others are faded.

    Up to MAX_KEYS_IN_LEGEND keys, one bar trace per key, each with its legend entry (a click
    hides that key). Beyond, one bar trace holds every key's bars in the same order, colours and
    outlines, each naming its key in its hover: at the follow-one-cell page's cap of 256 keys,
    plotly.js drew the 256 traces and their legend in about 0.5 s, the one trace in 0.1 s.
    The traces are plain dicts, not validated: 256 validated `go.Bar`s took about 170 ms on
    every rerun. The same figure as a validated build (tests/test_cell_figures.py compares them).
    """
    features = _feature_labels(cell.output_row.shape[0])
    labels = [plain_label(label) for label in key_labels]
    colours = [KEY_PALETTE[key % len(KEY_PALETTE)] for key in range(len(labels))]
    opacities = [1.0 if key == cell.j else 0.45 for key in range(len(labels))]
    outlines = [2.5 if key == cell.j else 0 for key in range(len(labels))]

    def hover(label: str) -> str:
        return f"{text.key}: {label}<br>%{{x}}: %{{y:.4f}}<extra>{text.contribution}</extra>"

    if len(labels) <= MAX_KEYS_IN_LEGEND:
        traces = [
            {
                "type": "bar",
                "x": list(features),
                "y": cell.contributions[key],  # (dv,)
                "name": labels[key],
                "marker": {"color": colours[key], "opacity": opacities[key],
                           "line": {"color": "#000", "width": outlines[key]}},
                "hovertemplate": hover(labels[key]),
            }
            for key in range(len(labels))
        ]
    else:

        def per_bar(values: list) -> list:  # one item per bar, key by key as the bars stack
            return [value for value in values for _ in features]

        traces = [
            {
                "type": "bar",
                "x": features * len(labels),
                "y": cell.contributions.ravel(),  # (m · dv,): key 0's dv features, then key 1's, …
                "customdata": per_bar(labels),
                "marker": {"color": per_bar(colours), "opacity": per_bar(opacities),
                           "line": {"color": "#000", "width": per_bar(outlines)}},
                "hovertemplate": hover("%{customdata}"),
                "showlegend": False,
            }
        ]
    traces.append(
        {
            "type": "scatter",
            "x": list(features),
            "y": cell.output_row,  # (dv,)
            "mode": "markers",
            "name": text.output,
            "marker": {"symbol": "diamond", "size": 11, "color": "#000", "line": {"color": "#fff", "width": 1}},
            "hovertemplate": f"{text.output}<br>%{{x}}: %{{y:.4f}}<extra></extra>",
        }
    )
    return _figure(
        traces, title, text.feature, text.contribution, len(features),
        validate=False,
        barmode="relative",
        height=FIGURE_HEIGHT + 60,
        legend={"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.01, "font": {"size": 12}},
    )


def cell_locator(trace: ToyTrace, cell: CellTrace, *, title: str = "", text: FigureText = FIGURE_TEXT) -> go.Figure:
    """The weights heatmap with row i outlined (dashed) and cell (i, j) outlined (thick)."""
    n, m = trace.attention.weights.shape
    figure = heatmap(trace, "weights", text=text, title=title, show_numbers=False)
    outlines = [
        dict(type="rect", x0=-0.5, x1=m - 0.5, y0=cell.i - 0.5, y1=cell.i + 0.5,
             line={"color": "#333", "width": 1.5, "dash": "dot"}),
        dict(type="rect", x0=cell.j - 0.5, x1=cell.j + 0.5, y0=cell.i - 0.5, y1=cell.i + 0.5,
             line={"color": HIGHLIGHT, "width": 4}),
    ]
    # one update, not add_shape() twice and three updates: the same figure, several times faster
    figure.update_layout(shapes=[*figure.layout.shapes, *outlines], height=min(380, 150 + 24 * n),
                         font={"size": 12}, title_font_size=15)
    figure.update_traces(colorbar={"thickness": 12}, selector={"type": "heatmap"})
    return figure


# ---------------------------------------------------------------- formulas with the numbers


def _number(value: float, digits: int = 3) -> str:
    """A number for LaTeX: −∞ for -inf, parentheses around negatives inside products."""
    if math.isinf(value):
        return r"-\infty" if value < 0 else r"\infty"
    return f"{value:.{digits}f}"


def _factor(value: float) -> str:
    text = _number(value)
    return f"({text})" if text.startswith("-") else text


def _abbreviated(terms: list[str], keep: int | None = None) -> str:
    """Join terms with +, keeping the first ones, the term at index `keep` and the last."""
    if len(terms) <= MAX_TERMS:
        return " + ".join(terms)
    shown = sorted({0, 1, len(terms) - 1} | ({keep} if keep is not None else set()))
    parts: list[str] = []
    for position, index in enumerate(shown):
        if position and index != shown[position - 1] + 1:
            parts.append(r"\cdots")
        parts.append(terms[index])
    return " + ".join(parts)


def dot_product_latex(cell: CellTrace) -> str:
    """S_ij = q_i · k_j = Σ_t q_it k_jt with the products written out."""
    terms = [rf"{_factor(q)} \cdot {_factor(k)}" for q, k in zip(cell.q_i, cell.k_j, strict=True)]
    return (
        rf"S_{{ij}} = q_i \cdot k_j = \sum_{{t=1}}^{{{cell.q_i.shape[0]}}} q_{{it}}\,k_{{jt}}"
        rf" = {_abbreviated(terms)} = {_number(cell.raw_score, 4)}"
    )


def scale_latex(cell: CellTrace, dk: int) -> str:
    """S̃_ij = S_ij / √dk (or S_ij · scale for a custom scale)."""
    if math.isclose(cell.scale, 1 / math.sqrt(dk)):
        return (
            rf"\tilde S_{{ij}} = \frac{{S_{{ij}}}}{{\sqrt{{d_k}}}}"
            rf" = \frac{{{_number(cell.raw_score, 4)}}}{{\sqrt{{{dk}}}}} = {_number(cell.scaled_score, 4)}"
        )
    return (
        rf"\tilde S_{{ij}} = S_{{ij}} \times {cell.scale:.4g} = {_factor(cell.raw_score)} \times {cell.scale:.4g}"
        rf" = {_number(cell.scaled_score, 4)}"
    )


def mask_latex(cell: CellTrace) -> str:
    """What the mask does to cell (i, j): keep the score, or replace it by −∞."""
    if cell.allowed:
        return rf"M_{{ij}} = 1 \;\Rightarrow\; \tilde S_{{ij}} = {_number(cell.scaled_score, 4)}"
    return (
        r"M_{ij} = 0 \;\Rightarrow\; \tilde S_{ij} \leftarrow -\infty"
        r"\;\Rightarrow\; e^{-\infty} = 0 \;\Rightarrow\; A_{ij} = 0"
    )


def softmax_latex(cell: CellTrace) -> str:
    """A_ij = exp(S̃_ij − max) / Σ_j' exp(S̃_ij' − max), with the row's numbers."""
    general = (
        r"A_{ij} = \frac{e^{\tilde S_{ij} - \max_{j'} \tilde S_{ij'}}}"
        r"{\sum_{j'} e^{\tilde S_{ij'} - \max_{j'} \tilde S_{ij'}}}"
    )
    if cell.fully_masked:
        return general + r" \;\rightarrow\; \frac{0}{0} \;\Rightarrow\; A_{ij} := 0"
    exp_terms = [_number(value) for value in cell.exp_row]
    if not cell.allowed:
        numerator = r"e^{-\infty}"
    else:
        numerator = rf"e^{{{_number(cell.row_scores[cell.j])} - {_factor(cell.row_max)}}}"
    return (
        rf"{general} = \frac{{{numerator}}}{{{_abbreviated(exp_terms, cell.j)}}}"
        rf" = \frac{{{_number(cell.exp_row[cell.j], 4)}}}{{{_number(cell.row_sum, 4)}}} = {_number(cell.weight, 4)}"
    )


def output_latex(cell: CellTrace) -> str:
    """o_i = Σ_j' A_ij' v_j' with the weights written out; the picked key's term boxed."""
    terms = []
    for key, weight in enumerate(cell.weights_row):
        term = rf"{_number(weight)}\,v_{{{key}}}"
        terms.append(rf"\boxed{{{term}}}" if key == cell.j else term)
    return rf"o_i = \sum_{{j'}} A_{{ij'}}\, v_{{j'}} = {_abbreviated(terms, cell.j)}"

