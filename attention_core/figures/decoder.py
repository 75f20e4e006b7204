"""Figures of the decoder page: the 30 × 9 layer × head grid, and the next-token prediction.

- `head_grid`: one number per head (a head-finder score, or a summary of what the head does
  on this prompt) as a layers × heads heatmap, layers top to bottom, heads left to right,
  both numbered from 1, the chosen head outlined. Its payload is 270 numbers whatever the
  prompt's length, so it stays small at 256 tokens where 270 attention matrices would not.
- `prediction_bars`: the top next tokens and their probabilities, most likely on top.

Colours follow `attention_core.figures.matrices`: shares in [0, 1] on the sequential scale
fixed to [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .matrices import SEQUENTIAL, left_title, plain_label
from .real_model import HIGHLIGHT

__all__ = ["DecoderFigureText", "head_grid", "prediction_bars"]


@dataclass(frozen=True)
class DecoderFigureText:
    """Words used inside the decoder's figures, passed in so the caller can translate them."""

    layer: str = "layer"
    head: str = "head"
    kv_head: str = "K/V head"
    score: str = "score"
    probability: str = "probability"
    token: str = "next token"


def head_grid(
    values: np.ndarray,
    *,
    chosen: tuple[int, int] | None = None,
    text: DecoderFigureText = DecoderFigureText(),
    title: str = "",
    zmax: float | None = 1.0,
    kv_groups: int = 3,
) -> go.Figure:
    """`values` (layers, heads) as a heatmap; `chosen` = (layer, head), 0-based, is outlined.

    `zmax`: the top of the colour scale (1 for shares; None: the largest value). Thin white
    lines separate the groups of query heads that share a key/value head.
    """
    values = np.asarray(values, dtype=np.float32)  # (layers, heads)
    layers, heads = values.shape
    group = heads // kv_groups if kv_groups else heads
    customdata = np.array([[head // group + 1 for head in range(heads)]] * layers)  # (layers, heads)
    heat = go.Heatmap(
        z=values,
        x=list(range(1, heads + 1)),
        y=list(range(1, layers + 1)),
        customdata=customdata,
        colorscale=SEQUENTIAL,
        zmin=0.0,
        zmax=zmax if zmax is not None else float(values.max() or 1.0),
        xgap=1,
        ygap=1,
        colorbar={"thickness": 12, "title": {"text": text.score}},
        hovertemplate=(f"{text.layer} %{{y}} · {text.head} %{{x}} ({text.kv_head} %{{customdata}})"
                       f"<br>{text.score}: %{{z:.3f}}<extra></extra>"),
    )
    shapes = [
        dict(type="line", x0=boundary * group + 0.5, x1=boundary * group + 0.5, y0=0.5, y1=layers + 0.5,
             line={"color": "white", "width": 4}, layer="above")
        for boundary in range(1, kv_groups)
    ]
    if chosen is not None:
        layer, head = chosen
        shapes.append(dict(type="rect", x0=head + 0.5, x1=head + 1.5, y0=layer + 0.5, y1=layer + 1.5,
                           line={"color": HIGHLIGHT, "width": 3}, layer="above"))
    layout = dict(
        shapes=shapes,
        xaxis=dict(side="top", tickmode="linear", tick0=1, dtick=1, showgrid=False,
                   title={"text": f"{text.head} →"}, range=[0.5, heads + 0.5]),
        yaxis=dict(autorange="reversed", tickmode="linear", tick0=1, dtick=1, showgrid=False,
                   title={"text": f"{text.layer} ↓"}),
        height=60 + 17 * layers + (40 if title else 0),
        margin={"l": 10, "r": 10, "t": 90 if title else 50, "b": 10},
        plot_bgcolor="white",
        title=left_title(title),
    )
    # One constructor call, not add_shape() and updates: the same figure, several times faster.
    return go.Figure(data=[heat], layout=layout)


def prediction_bars(labels: list[str], probabilities: list[float], *, text: DecoderFigureText = DecoderFigureText(),
                    title: str = "") -> go.Figure:
    """Horizontal bars of the next-token probabilities, the most likely on top, each labelled
    "rank:token" and printed as a percentage."""
    shown = [plain_label(f"{rank + 1}:{label}") for rank, label in enumerate(labels)]
    bars = go.Bar(
        x=probabilities,
        y=shown,
        orientation="h",
        marker={"color": "#2166ac"},
        text=[f"{p:.1%}" for p in probabilities],
        textposition="auto",
        hovertemplate=f"%{{y}}<br>{text.probability}: %{{x:.4f}}<extra></extra>",
    )
    layout = dict(
        yaxis=dict(type="category", autorange="reversed", title={"text": text.token}),
        xaxis=dict(range=[0, max(1e-9, max(probabilities, default=1.0)) * 1.1], tickformat=".0%",
                   title={"text": text.probability}),
        height=80 + 28 * len(labels),
        margin={"l": 10, "r": 10, "t": 50 if title else 10, "b": 40},
        title=left_title(title),
    )
    return go.Figure(data=[bars], layout=layout)
