"""Figures of the mask lab: small thumbnails of each mask, and weights with fully masked rows outlined.

Built on `matrix_heatmap`, so colours, labels and hover texts match every other heatmap
of the app: grey = masked, blue = may attend; weights on the fixed 0–1 scale.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .matrices import FigureText, matrix_heatmap

__all__ = ["OUTLINE_COLOUR", "fill_weights_heatmap", "mask_thumbnail", "outline_rows", "row_comparison_heatmap"]

OUTLINE_COLOUR = "#d6604d"
"""Frame around fully masked rows: a warm red, distinct from the blue scales."""

FRAME_COLOUR = "#737373"
"""Thin frame around a thumbnail."""
DEFAULT_TEXT = FigureText()
"""English figure words, for callers that do not translate."""
THUMBNAIL_HEIGHT = 190
"""Height in pixels of one mask thumbnail (title included)."""


def mask_thumbnail(mask: np.ndarray, row_labels: list[str], column_labels: list[str], *, title: str,
                   text: FigureText = DEFAULT_TEXT) -> go.Figure:
    """A small picture of one boolean mask, (n, m): no tick labels, the tokens are in the hover text."""
    figure = matrix_heatmap(
        np.asarray(mask, dtype=float),
        row_labels,
        column_labels,
        colour="mask",
        row_title=text.query,
        column_title=text.key,
        title=title,
        text=text,
        show_numbers=False,
    )
    rows, columns = np.shape(mask)
    figure.update_layout(  # one update: each one parses its property paths again
        height=THUMBNAIL_HEIGHT,
        margin={"l": 4, "r": 4, "t": 34, "b": 4},
        title={"font": {"size": 15}},
        xaxis={"showticklabels": False, "title": None, "tickangle": 0},
        yaxis={"showticklabels": False, "title": None},
        # the matrix's edge: a masked first or last row would otherwise melt into the background
        shapes=[*figure.layout.shapes, dict(type="rect", x0=-0.5, x1=columns - 0.5, y0=-0.5, y1=rows - 0.5,
                                            line={"color": FRAME_COLOUR, "width": 1})],
    )
    return figure


def outline_rows(figure: go.Figure, rows, columns: int) -> go.Figure:
    """Frame the given row indices of a category heatmap with `columns` columns (in place)."""
    frames = [
        dict(type="rect", xref="x", yref="y", x0=-0.5, x1=columns - 0.5, y0=row - 0.5, y1=row + 0.5,
             line={"color": OUTLINE_COLOUR, "width": 3}, fillcolor="rgba(0,0,0,0)")
        for row in rows
    ]
    if frames:  # one assignment, not add_shape() per row (each parses its property paths again)
        figure.layout.shapes = [*figure.layout.shapes, *frames]
    return figure


def fill_weights_heatmap(weights: np.ndarray, mask: np.ndarray, fully_masked_rows: np.ndarray,
                         row_labels: list[str], column_labels: list[str], *, title: str,
                         text: FigureText = DEFAULT_TEXT, show_numbers: bool | None = None) -> go.Figure:
    """Weights (n, m) for comparing two ways of masking, fully masked rows framed in red.

    Masked cells are grey gaps as usual, except in fully masked rows: there the numbers are
    the point (0 for the engine, 1/m for a −1e9 fill), so they are drawn as values.
    """
    mask = np.asarray(mask, dtype=bool)
    fully_masked_rows = np.asarray(fully_masked_rows, dtype=bool)
    gaps = ~mask & ~fully_masked_rows[:, None]  # (n, m)
    figure = matrix_heatmap(
        weights,
        row_labels,
        column_labels,
        colour="weights",
        masked=gaps,
        row_title=text.query,
        column_title=text.key,
        title=title,
        text=text,
        show_numbers=show_numbers,
    )
    return outline_rows(figure, np.flatnonzero(fully_masked_rows), len(column_labels))


def row_comparison_heatmap(engine_weights: np.ndarray, fill_weights: np.ndarray, rows, row_labels: list[str],
                           column_labels: list[str], *, engine_name: str, fill_name: str, title: str = "",
                           text: FigureText = DEFAULT_TEXT) -> go.Figure:
    """The given query rows of two weight matrices (n, m), one above the other, numbers in the cells.

    Row i of the engine and row i of the fill alternate, labelled "i:token · <name>", so that
    the two answers for one query sit next to each other at a size where numbers fit.
    """
    rows = [int(row) for row in rows]
    values = np.stack([matrix[row] for row in rows for matrix in (engine_weights, fill_weights)])  # (2·rows, m)
    labels = [f"{row_labels[row]} · {name}" for row in rows for name in (engine_name, fill_name)]
    figure = matrix_heatmap(
        values,
        labels,
        column_labels,
        colour="weights",
        row_title=text.query,
        column_title=text.key,
        title=title,
        text=text,
        show_numbers=True,
    )
    figure.update_traces(texttemplate="%{z:.3f}", selector={"type": "heatmap"})
    lines = [  # a line between the pairs of rows: what add_hline() adds, without its checks
        dict(type="line", x0=0, x1=1, xref="x domain", y0=2 * pair - 0.5, y1=2 * pair - 0.5, yref="y",
             line={"color": OUTLINE_COLOUR, "width": 2})
        for pair in range(1, len(rows))
    ]
    figure.update_layout(yaxis_title=None, shapes=[*figure.layout.shapes, *lines])
    return figure
