"""Figures of the lesson additions: a projection X · W = Q drawn as three matrices side by side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .matrices import FIGURE_WIDTH, FONT_FAMILY, LABEL_EVERY_SIDE, FigureStyle, FigureText, label_width, plain_label

__all__ = ["MAX_PROJECTION_SIDE", "projection_figure"]

MAX_PROJECTION_SIDE = 64
"""Beyond this many rows or columns in X or W, the product is not drawn as matrices (cells
would be too small to see); the tables keep the numbers."""
DEFAULT_TEXT = FigureText()
DEFAULT_STYLE = FigureStyle()


def projection_figure(
    x: np.ndarray,
    w: np.ndarray,
    product: np.ndarray,
    row_labels: list[str],
    *,
    names: tuple[str, str, str] = ("X", "W<sup>Q</sup>", "Q"),
    text: FigureText = DEFAULT_TEXT,
    style: FigureStyle = DEFAULT_STYLE,
) -> go.Figure:
    """X (n, d_model) · W (d_model, dk) = product (n, dk), as three heatmaps in a row.

    Each panel's title carries its shape, so the rule "inner sizes match" can be read off;
    each panel has its own diverging scale centred at 0 (W's entries are much smaller than X's).
    Every cell has the same width and the gaps between panels hold the next panel's row labels
    (see `projection_layout`); numbers are printed only when they fit a cell.
    """
    n, d_model = x.shape
    width = w.shape[1]
    if w.shape[0] != d_model or product.shape != (n, width):
        raise ValueError(f"shapes do not chain: {x.shape} · {w.shape} ≠ {product.shape}")
    features_in = [f"d{index}" for index in range(d_model)]
    features_out = [f"d{index}" for index in range(width)]
    rows = [plain_label(label) for label in row_labels]
    titles = (
        f"{names[0]}   {n}×{d_model}",
        f"·  {names[1]}   {d_model}×{width}",
        f"=  {names[2]}   {n}×{width}",
    )
    layout = projection_layout(rows, d_model, width, style)
    panels = ((x, rows, features_in), (w, features_in, features_out), (product, rows, features_out))
    number_size = max(style.font_size - 2, 8)
    widest_number = max(_number_width(f"{value:.1f}", number_size) for values, _, _ in panels for value in values.flat)
    cells = sum(values.size for values, _, _ in panels)
    show_numbers = cells <= style.max_cells_with_numbers and widest_number + 4 <= layout.cell
    traces, axes, titles_placed = [], {}, []
    for column, (values, y_labels, x_labels) in enumerate(panels, start=1):
        suffix = "" if column == 1 else str(column)  # the panel's axes: x, y; x2, y2; x3, y3
        heat = dict(
            z=np.asarray(values, dtype=float),
            x=x_labels,
            y=y_labels,
            colorscale=style.diverging,
            zmid=0.0,
            showscale=False,
            xgap=style.cell_gap,
            ygap=style.cell_gap,
            hovertemplate=f"%{{y}}, %{{x}}<br>{text.value}: %{{z:.4f}}<extra></extra>",
            xaxis=f"x{suffix}",
            yaxis=f"y{suffix}",
        )
        if show_numbers:
            heat.update(texttemplate="%{z:.1f}", textfont={"size": number_size})
        traces.append(go.Heatmap(**heat))
        x_domain, y_domain = layout.x_domains[column - 1], layout.y_domains[column - 1]
        x_axis = dict(
            anchor=f"y{suffix}", type="category", domain=x_domain, tickangle=layout.tick_angle, automargin=False,
            tickfont={"size": style.font_size},
        )
        if len(x_labels) <= LABEL_EVERY_SIDE and layout.tick_angle is not None:  # every feature labelled
            x_axis.update(tickmode="array", tickvals=x_labels, ticktext=x_labels)
        y_axis = dict(
            anchor=f"x{suffix}", type="category", autorange="reversed", domain=y_domain,
            tickfont={"size": style.font_size},
        )
        if len(y_labels) <= LABEL_EVERY_SIDE:
            y_axis.update(tickmode="array", tickvals=y_labels, ticktext=y_labels)
        axes.update({f"xaxis{suffix}": x_axis, f"yaxis{suffix}": y_axis})
        titles_placed.append(dict(  # the panel's title, centred above it
            text=titles[column - 1], x=sum(x_domain) / 2, y=y_domain[1], xref="paper", yref="paper",
            xanchor="center", yanchor="bottom", showarrow=False, font={"size": style.font_size},
        ))
    # One constructor call, not make_subplots() and an update per panel: the same figure, built
    # several times faster (every update parses its property paths again).
    return go.Figure(data=traces, layout=dict(
        **axes,
        annotations=titles_placed,
        height=layout.top + layout.plot_height + layout.bottom,
        margin={"l": 10, "r": 10, "t": layout.top, "b": layout.bottom},
        font={"family": FONT_FAMILY, "size": style.font_size},
        plot_bgcolor="#d9d9d9",
    ))


@dataclass(frozen=True)
class ProjectionLayout:
    """Where the three panels of X · W = Q go, estimated for a full-width figure."""

    x_domains: tuple[list[float], ...]
    """Each panel's horizontal span (X, W, Q), as fractions of the plotting area."""
    y_domains: tuple[list[float], ...]
    """Each panel's vertical span: top-aligned, as tall as its rows."""
    cell: float
    """Width of a cell in pixels (the same in every panel)."""
    row: int
    """Height of a row in pixels."""
    tick_angle: int | None
    """Angle of the feature labels: 0, −45 or −90 (upright strips); None when the cells are too
    narrow for every label (Plotly then labels every few features)."""
    wrapped: bool
    """Q drawn under X instead of beside W: in one row the cells would be too narrow for labels."""
    plot_height: int
    """Pixels of the plotting area."""
    top: int
    """Margin above it, for the titles."""
    bottom: int
    """Margin below it, for the lowest panel's feature labels."""


def projection_layout(tokens: list[str], d_model: int, width: int, style: FigureStyle) -> ProjectionLayout:
    """Panels with equal cell widths, X's row labels in the left margin, W's row labels (d0, d1, …)
    in the gap before W and the token labels in the gap before Q. When the three panels in one row
    would leave cells too narrow for their feature labels (projector type), Q goes under X."""
    font = style.font_size
    # a gap holds its labels, the ticks' standoff and, beside W's lower rows, half of X's last
    # (tilted) column label: two ems beyond the label itself
    token_room = max(label_width(token, font) for token in tokens) + 2 * font
    feature_label = label_width(f"d{max(d_model, width) - 1}", font)
    feature_room = feature_label + 2 * font
    plot_width = FIGURE_WIDTH - 20 - token_room  # the figure minus its margins and X's row labels
    cell = (plot_width - feature_room - token_room) / (d_model + 2 * width)
    wrapped = _feature_label_angle(cell, feature_label, font) not in (0, -45)
    if wrapped:
        cell = (plot_width - feature_room) / (d_model + width)
    angle = _feature_label_angle(cell, feature_label, font)
    top_rows = max(len(tokens), d_model)
    row = min(style.row_height, max(12, 560 // top_rows))
    if top_rows <= LABEL_EVERY_SIDE:  # every row labelled: a line of type tall
        row = max(row, font + 8)
    label_drop = int(font + {0: 0.0, -45: 0.75, -90: 1.0}.get(angle, 1.0) * feature_label)
    x_end = d_model * cell / plot_width
    w_start = x_end + feature_room / plot_width
    w_end = w_start + width * cell / plot_width
    top_height, n_height, w_height = top_rows * row, len(tokens) * row, d_model * row
    if wrapped:
        plot_height = top_height + label_drop + 2 * font + n_height  # X and W, their labels, Q's title, Q
        q_x, q_y = [0.0, width * cell / plot_width], [0.0, n_height / plot_height]
    else:
        plot_height = top_height
        q_x, q_y = [w_end + token_room / plot_width, 1.0], [1 - n_height / plot_height, 1.0]
    return ProjectionLayout(
        x_domains=([0.0, x_end], [w_start, w_end], q_x),
        y_domains=([1 - n_height / plot_height, 1.0], [1 - w_height / plot_height, 1.0], q_y),
        cell=cell,
        row=row,
        tick_angle=angle,
        wrapped=wrapped,
        plot_height=plot_height,
        top=20 + 2 * font,
        bottom=10 + label_drop,
    )


def _feature_label_angle(cell: float, label: float, font_size: int) -> int | None:
    """Upright (0) when a feature label fits its cell, tilted (−45) or on its side (−90) when a
    line of type does, None when not even that (labels thinned out)."""
    ink = 0.8 * font_size  # the height of a line of digits
    if label + font_size / 2 <= cell:
        return 0
    if cell * 0.7 >= ink:
        return -45
    if cell >= ink:
        return -90
    return None


def _number_width(number: str, font_size: int) -> float:
    """Pixels of a printed number: a digit is half an em, a sign or a point about a third."""
    return font_size * sum(0.5 if char.isdigit() else 0.3 for char in number)
