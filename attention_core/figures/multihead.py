"""Figures of multi-head attention: every head's weights at a glance, and how the heads recombine.

- `head_weights_grid`: small multiples, one weight heatmap per head, one shared 0–1
  colour scale, so heads compare at a glance;
- `concat_heatmap`, `w_o_heatmap`, `output_heatmap`: Concat(head_1..head_h) (n, h·dv),
  W_O (h·dv, d_model) and the layer's output (n, d_model), with thin lines between the
  heads' blocks of columns (concat) or rows (W_O).

Colours follow `attention_core.figures.matrices`: weights sequential 0–1, signed values
diverging around 0, masked cells grey gaps.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..toy_multihead import ToyMultiHeadTrace
from .matrices import (
    FONT_FAMILY,
    MASKED_GREY,
    MAX_DRAWN_SIDE,
    FigureStyle,
    FigureText,
    cells_width,
    label_step,
    matrix_heatmap,
    plain_label,
    subplot_layout,
    tilted_label_pitch,
)

__all__ = ["MAX_DRAWN_CELLS", "concat_heatmap", "head_weights_grid", "output_heatmap", "w_o_heatmap"]

MAX_DRAWN_CELLS = 128 * 128
"""Largest matrix drawn cell by cell here; a 512 × 512 W_O would be megabytes of JSON and unreadable."""
_SEPARATOR = {"color": "#222", "width": 1.5}
PLAIN_TEXT = FigureText()
"""The English words of `FigureText`, used when no translation is given."""
SCREEN = FigureStyle()
"""The normal screen style, used when no style is given."""


def _grid_shape(num_heads: int, columns: int) -> tuple[int, int]:
    columns = min(columns, num_heads)
    return math.ceil(num_heads / columns), columns


def head_weights_grid(
    trace: ToyMultiHeadTrace,
    titles: list[str],
    *,
    text: FigureText = PLAIN_TEXT,
    style: FigureStyle = SCREEN,
    columns: int = 4,
) -> go.Figure:
    """Every head's attention weights (n, m) as small multiples, titled by `titles` (one per head).

    One shared colour scale fixed to [0, 1]; rows are query tokens (labelled on the first
    column), columns key tokens (labelled on the bottom row); masked cells are grey gaps.
    """
    heads = trace.attention.heads
    num_heads, n, m = heads.weights.shape
    if len(titles) != num_heads:
        raise ValueError(f"need one title per head: {num_heads} heads, {len(titles)} titles")
    grid_rows, grid_columns = _grid_shape(num_heads, columns)
    panel_height = min(260, max(140, 16 * n)) + 2 * style.font_size  # about square at 4 panels a row
    if style.screen_height is not None:  # the whole grid on one screen
        panel_height = min(panel_height, (style.screen_height - 110) // grid_rows)
    layout = subplot_layout(
        rows=grid_rows,
        cols=grid_columns,
        subplot_titles=tuple(titles),
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.02,
        vertical_spacing=min(0.12, 60 / (grid_rows * panel_height)) if grid_rows > 1 else 0.0,
    )
    query_labels, key_labels = map(plain_label, trace.query_labels), map(plain_label, trace.key_labels)
    query_labels, key_labels = list(query_labels), list(key_labels)
    traces = []
    for head in range(num_heads):
        shown = np.array(heads.weights[head], dtype=float)  # (n, m), a copy for display
        shown[~np.asarray(heads.mask[head])] = np.nan  # masked: a grey gap, display only
        suffix = "" if head == 0 else str(head + 1)  # subplots are numbered row by row, from 1
        traces.append(
            go.Heatmap(
                z=shown,
                x=key_labels,
                y=query_labels,
                coloraxis="coloraxis",
                xgap=1 if m <= 24 else 0,  # thin gaps whatever the style: small cells
                ygap=1 if n <= 24 else 0,
                name=titles[head],
                hovertemplate=(
                    f"{titles[head]}<br>{text.query}: %{{y}}<br>{text.key}: %{{x}}<br>"
                    f"{text.value}: %{{z:.3f}}<extra></extra>"
                ),
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
        )
    # no tick marks: with panels this close, one panel's marks would fall on its neighbour
    # key labels every k-th, so that tilted neighbours are not drawn over each other (Plotly's
    # own thinning leaves them an em apart along the axis, too close for 45°); none in a panel's
    # last k - 1 columns, where the next panel's first label is the neighbour
    step = label_step(cells_width(style) / grid_columns / max(m, 1), tilted_label_pitch(style))
    labelled = [
        label for index, label in enumerate(key_labels[::step]) if m - index * step >= step or grid_columns == 1
    ]
    for name, axis in layout.items():
        if name.startswith("xaxis"):
            axis.update(type="category", tickangle=-45, ticks="", showgrid=False,
                        tickmode="array", tickvals=labelled, ticktext=labelled)
        elif name.startswith("yaxis"):
            axis.update(type="category", autorange="reversed", ticks="", showgrid=False)
    for annotation in layout.get("annotations", ()):  # the subplot titles
        annotation["font"] = {**annotation.get("font", {}), "size": style.font_size + 3}
    layout.update(
        coloraxis={"colorscale": style.sequential, "cmin": 0.0, "cmax": 1.0, "colorbar": {"thickness": 14}},
        plot_bgcolor=MASKED_GREY,
        font={"family": FONT_FAMILY, "size": style.font_size},
        height=grid_rows * panel_height + 110,
        margin={"l": 10, "r": 10, "t": 30 + 2 * style.font_size, "b": 10},
    )
    # One constructor call, not an add_trace(row=, col=) per head and updates: the same figure,
    # built several times faster (each of those parses its property paths again).
    return go.Figure(data=traces, layout=layout)


def _block_lines(figure: go.Figure, count: int, size: int, axis: str) -> None:
    """Thin lines between `count` blocks of `size` columns (axis="x") or rows (axis="y").

    `matrix_heatmap` draws a side longer than MAX_DRAWN_SIDE in groups of cells; the lines
    are kept when every group falls inside one block, left out when groups straddle two.
    """
    group = -(-count * size // MAX_DRAWN_SIDE)  # cells per drawn cell, as in matrix_heatmap
    if size % group:
        return
    lines = []
    for block in range(1, count):
        position = block * size // group - 0.5  # between two category positions
        if axis == "x":  # what add_vline() adds, without its checks (ten times faster)
            lines.append(dict(type="line", x0=position, x1=position, xref="x", y0=0, y1=1, yref="y domain"))
        else:
            lines.append(dict(type="line", x0=0, x1=1, xref="x domain", y0=position, y1=position, yref="y"))
    figure.layout.shapes = [*figure.layout.shapes, *(dict(line, line=_SEPARATOR) for line in lines)]


def concat_heatmap(
    trace: ToyMultiHeadTrace, *, title: str, text: FigureText = PLAIN_TEXT, style: FigureStyle = SCREEN
) -> go.Figure:
    """Concat(head_1, ..., head_h), (n, h·dv), with a line between the heads' column blocks."""
    figure = matrix_heatmap(
        trace.attention.concat,
        trace.query_labels,
        trace.concat_labels,
        row_title=text.query,
        column_title=text.feature,
        title=title,
        text=text,
        show_numbers=False,
        style=style,
    )
    _block_lines(figure, trace.num_heads, trace.dv, "x")
    return figure


def w_o_heatmap(
    trace: ToyMultiHeadTrace, *, title: str, text: FigureText = PLAIN_TEXT, style: FigureStyle = SCREEN
) -> go.Figure | None:
    """W_O, (h·dv, d_model), with a line between the row blocks that multiply each head;
    None when it has more than MAX_DRAWN_CELLS cells."""
    if trace.w_o.size > MAX_DRAWN_CELLS:
        return None
    figure = matrix_heatmap(
        trace.w_o,
        trace.concat_labels,
        trace.feature_labels,
        row_title=text.feature,
        column_title=text.feature,
        title=title,
        text=text,
        show_numbers=False,
        style=style,
    )
    _block_lines(figure, trace.num_heads, trace.dv, "y")
    return figure


def output_heatmap(
    trace: ToyMultiHeadTrace, *, title: str, text: FigureText = PLAIN_TEXT, style: FigureStyle = SCREEN
) -> go.Figure:
    """MultiHead(Q, K, V) = Concat · W_O, (n, d_model)."""
    return matrix_heatmap(
        trace.attention.output,
        trace.query_labels,
        trace.feature_labels,
        row_title=text.query,
        column_title=text.feature,
        title=title,
        text=text,
        show_numbers=False,
        style=style,
    )
