"""Heatmaps of recorded matrices, labelled by tokens.

A separate submodule (it imports Plotly), so a notebook gets the app's figures with
``from attention_core.figures import heatmap``.

Colour conventions: signed matrices (embeddings, Q, K, V, scores, output) use a
diverging, colour-blind-safe scale centred at 0; weights use a sequential scale fixed
to [0, 1] so that steps compare; masked cells are grey gaps marked with ×.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..stages import MATRICES
from ..toy import ToyTrace

__all__ = [
    "DIVERGING",
    "PALETTES",
    "PROJECTOR",
    "SEQUENTIAL",
    "FigureStyle",
    "FigureText",
    "heatmap",
    "matrix_heatmap",
    "standalone_html",
]

DIVERGING = "RdBu_r"
"""Signed values: blue negative, white 0, red positive."""
SEQUENTIAL = "Blues"
"""Weights in [0, 1]: white 0 to dark blue 1."""
MASK_COLOURS = ((0.0, "#d9d9d9"), (1.0, "#2166ac"))
"""Mask: grey = masked, blue = may attend."""
MASKED_GREY = "#d9d9d9"

MAX_CELLS_WITH_NUMBERS = 400
"""Numbers are printed inside cells only up to this many cells (text is slow to draw)."""

FONT_FAMILY = '"Source Sans Pro", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Heiti SC", sans-serif'
"""Latin first, then the usual Chinese fonts of Linux, macOS and Windows: exported figures
(PNG button, HTML file) keep Chinese token labels legible wherever they are opened."""

PALETTES: dict[str, tuple[str, str]] = {
    # name: (diverging scale for signed values, sequential scale for weights); all colour-blind safe
    "blue-red": (DIVERGING, SEQUENTIAL),
    "purple-orange": ("PuOr_r", "Cividis"),
    "viridis": ("PuOr_r", "Viridis"),
}


@dataclass(frozen=True)
class FigureStyle:
    """How figures look: the normal screen style, or large type for a projector."""

    font_size: int = 12
    """Size of tick labels and of the numbers printed in cells."""
    cell_gap: int = 1
    """Pixels between cells."""
    row_height: int = 34
    """Height of a row in small matrices (shrinks for long sentences)."""
    max_cells_with_numbers: int = MAX_CELLS_WITH_NUMBERS
    """Print numbers in cells up to this many cells."""
    palette: str = "blue-red"
    """A key of PALETTES."""

    @property
    def diverging(self) -> str:
        return PALETTES[self.palette][0]

    @property
    def sequential(self) -> str:
        return PALETTES[self.palette][1]


PROJECTOR = FigureStyle(font_size=20, cell_gap=3, row_height=46, max_cells_with_numbers=1024)
"""Readable from the back of a classroom on a 1280×720 projector."""


@dataclass(frozen=True)
class FigureText:
    """Words used inside figures, passed in so the caller can translate them."""

    query: str = "query"
    key: str = "key"
    feature: str = "feature"
    value: str = "value"
    masked: str = "masked"
    allowed: str = "may attend"


def _row_height(rows: int, style: FigureStyle) -> int:
    return style.row_height if rows <= 16 else max(8, style.row_height * 16 // rows)


def matrix_heatmap(
    values: np.ndarray,
    row_labels: list[str],
    column_labels: list[str],
    *,
    colour: str = "signed",
    masked: np.ndarray | None = None,
    row_title: str = "",
    column_title: str = "",
    title: str = "",
    text: FigureText = FigureText(),
    show_numbers: bool | None = None,
    style: FigureStyle = FigureStyle(),
) -> go.Figure:
    """A labelled heatmap of one matrix, (rows, columns).

    colour: "signed" (diverging, centred at 0), "weights" (0–1) or "mask" (two colours).
    masked: boolean (rows, columns), True where the cell is masked: drawn as a grey gap
    with a ×, never coloured as a value (display only; the records keep their numbers).
    """
    values = np.asarray(values, dtype=float)
    rows, columns = values.shape
    shown = values.copy()
    if masked is not None and colour != "mask":
        shown[masked] = np.nan  # a gap, for display only
    shown[~np.isfinite(shown)] = np.nan
    if show_numbers is None:
        show_numbers = rows * columns <= style.max_cells_with_numbers

    heat = dict(
        z=shown,
        x=column_labels,
        y=row_labels,
        xgap=style.cell_gap,
        ygap=style.cell_gap,
        hovertemplate=(
            f"{row_title}: %{{y}}<br>{column_title}: %{{x}}<br>{text.value}: %{{z:.4f}}<extra></extra>"
        ),
    )
    if colour == "weights":
        heat.update(colorscale=style.sequential, zmin=0.0, zmax=1.0)
    elif colour == "mask":
        heat.update(
            colorscale=[list(stop) for stop in MASK_COLOURS],
            zmin=0.0,
            zmax=1.0,
            showscale=False,
            customdata=np.where(values > 0.5, text.allowed, text.masked),
            hovertemplate=f"{row_title}: %{{y}}<br>{column_title}: %{{x}}<br>%{{customdata}}<extra></extra>",
        )
    else:
        heat.update(colorscale=style.diverging, zmid=0.0)
    if show_numbers and colour != "mask":
        heat.update(texttemplate="%{z:.2f}", textfont={"size": style.font_size})
    figure = go.Figure(go.Heatmap(**heat))

    if masked is not None and masked.any() and colour != "mask":
        mask_rows, mask_columns = np.nonzero(masked)
        figure.add_trace(
            go.Scatter(
                x=[column_labels[j] for j in mask_columns],
                y=[row_labels[i] for i in mask_rows],
                mode="markers",
                marker={
                    "symbol": "x-thin",
                    "size": style.font_size * 3 // 4 if rows <= 16 else 5,
                    "line": {"width": 1.5, "color": "#555"},
                },
                name=text.masked,
                hovertemplate=f"{row_title}: %{{y}}<br>{column_title}: %{{x}}<br>{text.masked}<extra></extra>",
                showlegend=False,
            )
        )

    figure.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"} if title else None,
        height=110 + 4 * style.font_size + rows * _row_height(rows, style),
        margin={"l": 10, "r": 10, "t": 30 + 2 * style.font_size if title else 10, "b": 10},
        plot_bgcolor=MASKED_GREY,
        font={"family": FONT_FAMILY, "size": style.font_size},
        xaxis={"title": {"text": column_title}, "type": "category", "tickangle": -45 if columns > 6 else 0},
        yaxis={"title": {"text": row_title}, "type": "category", "autorange": "reversed"},
    )
    return figure


def standalone_html(figure: go.Figure) -> str:
    """The figure as one self-contained HTML file: Plotly's JavaScript is inlined, so it
    opens offline (no CDN); hovering and zooming still work."""
    return figure.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False})


def heatmap(
    trace: ToyTrace,
    name: str,
    *,
    text: FigureText = FigureText(),
    title: str | None = None,
    show_numbers: bool | None = None,
    style: FigureStyle = FigureStyle(),
) -> go.Figure:
    """The heatmap of the recorded matrix `name` of a toy trace, labelled by tokens.

    Rows are query tokens (or key tokens for K and V); columns are key tokens for n × m
    matrices and feature dimensions otherwise. Score and weight matrices mark masked cells.
    """
    info = MATRICES[name]
    row_labels, column_labels = trace.axis_labels(name)
    axis_titles = {"query": text.query, "key": text.key, "dim": text.feature}
    values = trace.matrix(name)
    masked = None
    if info.columns == "key" and name != "mask":
        masked = ~np.asarray(trace.attention.mask)
    return matrix_heatmap(
        values,
        row_labels,
        column_labels,
        colour=info.colour,
        masked=masked,
        row_title=axis_titles[info.rows],
        column_title=axis_titles[info.columns],
        title=f"{info.label}   {values.shape[0]}×{values.shape[1]}" if title is None else title,
        text=text,
        show_numbers=show_numbers,
        style=style,
    )
