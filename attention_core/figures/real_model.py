"""Figures of the real model: every head of every layer at a glance, and the sentence embedding.

- `weights_mosaic`: the attention weights of all layers × heads (6 × 12 = 72 small
  multiples for all-MiniLM-L6-v2) as ONE heatmap trace, the panels tiled into one matrix
  with a blank line between them. One trace and one pair of axes draw in a fraction of
  the time 72 subplots take, and the payload is just the weights (float32, no numbers
  printed in cells). Rows and columns are labelled "layer ℓ · i:token" and
  "head h · j:token", so hovering a cell names the layer, head, query and key.
- `embedding_strip`: the sentence embedding as a 1 × d strip, diverging around 0.

Colours follow `attention_core.figures.matrices`: weights sequential and fixed to [0, 1],
signed values diverging around 0, masked (padding) cells grey gaps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..real_model.forward import ModelRun
from .matrices import DIVERGING, MASKED_GREY, SEQUENTIAL, left_title

__all__ = ["HIGHLIGHT", "RealModelFigureText", "embedding_strip", "mosaic_matrix", "weights_mosaic"]

HIGHLIGHT = "#E69F00"
"""Outline of the chosen head (Okabe–Ito orange, visible on blue and on grey)."""
_GAP = 1
"""Blank cells between two panels."""
PLOT_WIDTH = 800
"""About the mosaic's drawn width in pixels on a 1280-pixel screen (wide layout, sidebar open):
its height follows from it, so that cells come out about square."""


@dataclass(frozen=True)
class RealModelFigureText:
    """Words used inside the real model's figures, passed in so the caller can translate them."""

    layer: str = "layer"
    head: str = "head"
    query: str = "query"
    key: str = "key"
    weight: str = "weight"
    dimension: str = "dimension"
    value: str = "value"


def mosaic_matrix(run: ModelRun, positions: tuple[int, ...]) -> np.ndarray:
    """All weights tiled: panel (ℓ, h) holds layer ℓ head h's weights at `positions`, with NaN
    for masked cells and for the blank lines between panels.

    Shape (layers·(n + gap) − gap, heads·(n + gap) − gap), n = len(positions), float32.
    """
    layers, heads = len(run.layers), run.config.num_heads
    n, step = len(positions), len(positions) + _GAP
    mosaic = np.full((layers * step - _GAP, heads * step - _GAP), np.nan, dtype=np.float32)
    index = np.ix_(positions, positions)
    for layer, record in enumerate(run.layers):
        for head in range(heads):
            panel = np.array(record.attention.weights[head][index], dtype=np.float32)  # (n, n), a copy
            panel[~np.asarray(record.attention.mask[head][index])] = np.nan  # masked: a gap, display only
            mosaic[layer * step : layer * step + n, head * step : head * step + n] = panel
    return mosaic


def _axis_labels(count: int, prefix: str, role: str, labels: list[str]) -> list[str]:
    """One unique label per mosaic row (or column): "layer k · query i:token", blanks for the gaps."""
    result: list[str] = []
    for block in range(count):
        if block:
            result.extend(f"{' ' * (block * _GAP + gap)}\u200b" for gap in range(_GAP))  # unique, never shown
        result.extend(f"{prefix} {block + 1} · {role} {label}" for label in labels)
    return result


def weights_mosaic(
    run: ModelRun,
    positions: tuple[int, ...],
    *,
    chosen: tuple[int, int] | None = None,
    text: RealModelFigureText = RealModelFigureText(),
    title: str = "",
) -> go.Figure:
    """Every layer's every head's weights as small multiples in one heatmap.

    Rows of panels are layers, columns of panels are heads (both numbered from 1); inside a
    panel rows are query tokens and columns key tokens at `positions`. `chosen` = (layer,
    head), 0-based, is outlined.
    """
    layers, heads = len(run.layers), run.config.num_heads
    labels = [f"{p}:{run.encoding.tokens[p]}" for p in positions]
    n, step = len(positions), len(positions) + _GAP
    row_labels = _axis_labels(layers, text.layer, text.query, labels)
    column_labels = _axis_labels(heads, text.head, text.key, labels)
    centre = (n - 1) // 2
    mosaic = mosaic_matrix(run, positions)
    heat = go.Heatmap(
        z=mosaic,
        x=column_labels,
        y=row_labels,
        colorscale=SEQUENTIAL,
        zmin=0.0,
        zmax=1.0,
        hoverongaps=False,
        colorbar={"thickness": 12, "len": 0.8},
        hovertemplate=f"%{{y}}<br>%{{x}}<br>{text.weight}: %{{z:.3f}}<extra></extra>",
    )
    # panel separators: white bands over the blank lines (the grey background marks masked cells)
    width, height = heads * step - _GAP, layers * step - _GAP
    band = {"type": "rect", "fillcolor": "white", "line": {"width": 0}, "layer": "above"}
    shapes = [dict(band, x0=head * step - _GAP - 0.5, x1=head * step - 0.5, y0=-0.5, y1=height - 0.5)
              for head in range(1, heads)]
    shapes += [dict(band, x0=-0.5, x1=width - 0.5, y0=layer * step - _GAP - 0.5, y1=layer * step - 0.5)
               for layer in range(1, layers)]
    if chosen is not None:
        layer, head = chosen
        shapes.append(dict(type="rect", x0=head * step - 0.5, x1=head * step + n - 0.5,
                           y0=layer * step - 0.5, y1=layer * step + n - 0.5,
                           line={"color": HIGHLIGHT, "width": 3}, layer="above"))
    layout = dict(
        shapes=shapes,
        xaxis=dict(
            type="category",
            side="top",
            tickmode="array",
            tickvals=[column_labels[head * step + centre] for head in range(heads)],
            ticktext=[f"{text.head} {head + 1}" for head in range(heads)],
            tickfont={"size": 13},
            ticks="",
            showgrid=False,
            range=[-0.5, width - 0.5],  # no padding around the panels
            title={"text": f"{text.key} →", "font": {"size": 13}},
        ),
        yaxis=dict(
            type="category",
            range=[height - 0.5, -0.5],  # first layer on top
            tickmode="array",
            tickvals=[row_labels[layer * step + centre] for layer in range(layers)],
            ticktext=[f"{text.layer} {layer + 1}" for layer in range(layers)],
            tickfont={"size": 13},
            ticks="",
            showgrid=False,
            title={"text": f"{text.query} ↓", "font": {"size": 13}},
        ),
        plot_bgcolor=MASKED_GREY if run.layers[0].attention.mask.size > run.layers[0].attention.mask.sum() else "white",
        height=round(min(760, max(300, PLOT_WIDTH * height / width + (130 if title else 90)))),
        margin={"l": 10, "r": 10, "t": 120 if title else 80, "b": 10},
        title=left_title(title, y=0.99, yanchor="top"),
    )
    # One constructor call, not add_shape() per band and updates: the same figure, several
    # times faster (each of those calls parses its property paths again).
    return go.Figure(data=[heat], layout=layout)


def embedding_strip(run: ModelRun, *, title: str = "", text: RealModelFigureText = RealModelFigureText()) -> go.Figure:
    """The sentence embedding, (d,), as one row of d coloured cells (diverging around 0)."""
    values = np.asarray(run.sentence_embedding, dtype=np.float32)[None, :]  # (1, d)
    limit = float(np.abs(values).max()) or 1.0
    heat = go.Heatmap(
        z=values,
        x=list(range(values.shape[1])),
        y=[""],
        colorscale=DIVERGING,
        zmin=-limit,
        zmax=limit,
        colorbar={"thickness": 10},
        hovertemplate=f"{text.dimension} %{{x}}<br>{text.value}: %{{z:.4f}}<extra></extra>",
    )
    layout = dict(
        title=left_title(title),
        height=150,
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 30},
        xaxis={"title": {"text": text.dimension}, "showgrid": False},
        yaxis={"showticklabels": False},
    )
    return go.Figure(data=[heat], layout=layout)  # one constructor call: an update after it parses again
