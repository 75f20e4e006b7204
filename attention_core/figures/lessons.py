"""Figures of the lesson additions: a projection X · W = Q drawn as three matrices side by side."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .matrices import FONT_FAMILY, FigureStyle, FigureText, plain_label

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
    figure = make_subplots(
        rows=1,
        cols=3,
        column_widths=[d_model + 6, width + 2, width + 6],  # room for the token labels
        horizontal_spacing=0.09,
        subplot_titles=titles,
    )
    show_numbers = max(n, d_model) * max(width, d_model) <= style.max_cells_with_numbers // 2
    for column, (values, y_labels, x_labels) in enumerate(
        ((x, rows, features_in), (w, features_in, features_out), (product, rows, features_out)), start=1
    ):
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
        )
        if show_numbers:
            heat.update(texttemplate="%{z:.1f}", textfont={"size": max(style.font_size - 2, 8)})
        figure.add_trace(go.Heatmap(**heat), row=1, col=column)
        figure.update_xaxes(type="category", tickangle=-45 if len(x_labels) > 6 else 0, row=1, col=column)
    tallest = max(n, d_model)
    for column, rows_drawn in enumerate((n, d_model, n), start=1):
        # top-aligned panels whose heights follow their row counts: every cell is the same size
        figure.update_yaxes(
            type="category", autorange="reversed", domain=[1 - rows_drawn / tallest, 1], row=1, col=column
        )
    figure.update_layout(
        height=120 + 4 * style.font_size + tallest * min(style.row_height, max(12, 560 // tallest)),
        margin={"l": 10, "r": 10, "t": 30 + 2 * style.font_size, "b": 10},
        font={"family": FONT_FAMILY, "size": style.font_size},
        plot_bgcolor="#d9d9d9",
    )
    return figure
