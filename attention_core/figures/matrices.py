"""Heatmaps of recorded matrices, labelled by tokens.

A separate submodule (it imports Plotly), so a notebook gets the app's figures with
``from attention_core.figures import heatmap``.

Colour conventions: signed matrices (embeddings, Q, K, V, scores, output) use a
diverging, colour-blind-safe scale centred at 0; weights use a sequential scale fixed
to [0, 1] so that steps compare; masked cells are grey gaps, marked with × in matrices of up
to MAX_MARKED_SIDE tokens.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..stages import MATRICES
from ..toy import ToyTrace

__all__ = [
    "DIVERGING",
    "HIGHLIGHT_COLOUR",
    "MAX_DRAWN_SIDE",
    "MAX_MARKED_SIDE",
    "PALETTES",
    "PALETTE_COLOURS",
    "PROJECTOR",
    "SEQUENTIAL",
    "FigureStyle",
    "FigureText",
    "heatmap",
    "highlight_shapes",
    "matrix_heatmap",
    "plain_label",
    "reserve_label_room",
    "restyle",
    "standalone_html",
]

DIVERGING = "RdBu_r"
"""Signed values: blue negative, white 0, red positive."""
SEQUENTIAL = "Blues"
"""Weights in [0, 1]: white 0 to dark blue 1."""
MASK_COLOURS = ((0.0, "#d9d9d9"), (1.0, "#2166ac"))
"""Mask: grey = masked, blue = may attend."""
MASKED_GREY = "#d9d9d9"
CROSS_QUERY_LABEL = "X → Q"
"""Title of the query sentence's X in cross-attention (beside ``X → K, V``)."""

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

PALETTE_COLOURS: dict[str, dict[str, str]] = {
    # name: the colour at each end (and the middle) of its scales, so that a sentence can say
    # "red is positive" under one palette and "orange is positive" under another
    "blue-red": {"negative": "blue", "zero": "white", "positive": "red", "low": "white", "high": "dark_blue"},
    "purple-orange": {
        "negative": "purple", "zero": "white", "positive": "orange", "low": "dark_blue", "high": "yellow",
    },
    "viridis": {"negative": "purple", "zero": "white", "positive": "orange", "low": "dark_purple", "high": "yellow"},
}
"""Colour names (keys ``colour.<name>`` of the UI strings) of each palette: negative / zero /
positive for the diverging scale of signed matrices, low (0) / high (1) for the weights."""


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
    max_height: int | None = None
    """Tallest a matrix figure may be, in pixels (rows get shorter: up to 16 rows never below a
    line of type; beyond, every k-th row is labelled): on a projector the whole heatmap must fit
    on the screen with the stage's buttons."""
    square_cells: bool = False
    """When restyling a finished figure: square cells sized for the type (no squeezed strips)."""
    screen_height: int | None = None
    """When restyling a finished figure: the tallest it may be, in pixels, so that scrolled to
    it shows the whole matrix (its rows, and its cells while they stay wide enough, shrink)."""

    @property
    def diverging(self) -> str:
        return PALETTES[self.palette][0]

    @property
    def sequential(self) -> str:
        return PALETTES[self.palette][1]


PROJECTOR = FigureStyle(
    font_size=20, cell_gap=3, row_height=46, max_cells_with_numbers=1024, max_height=480, square_cells=True,
    screen_height=640,
)
"""Readable from the back of a classroom on a 1280×720 projector: 20 px type (tick labels too),
a heatmap short enough to share the first screen with the stage's title and buttons, and any
other figure no taller than the screen below Streamlit's 75-px header."""


DENSE_SIDE = 64
"""Beyond this many rows (columns), cells are drawn without gaps: gaps would hide them."""
LABEL_EVERY_SIDE = 24
"""Up to this many rows (columns) every one is labelled, unless rows are shorter than a line of
type (projector mode: every k-th, `label_step`); beyond, Plotly thins the labels out."""
MAX_MARKED_SIDE = 32
"""Up to this many rows and columns a masked cell carries a × as well as its grey; beyond, it
is grey only. plotly.js draws each × as an element of its own, about 0.04 ms apiece: a causal
mask of 100 tokens has 4,950 of them, 180 ms per drawing (`benchmarks/mask_marks.py`), where
a × would be a few pixels wide."""
MAX_DRAWN_SIDE = 200
"""Beyond this many rows or columns a matrix is drawn in blocks (a 2048 × 2048 matrix would
be 4 million cells and ~20 MB of JSON); exact values stay available through a zoom window."""


@dataclass(frozen=True)
class FigureText:
    """Words used inside figures, passed in so the caller can translate them."""

    query: str = "query"
    key: str = "key"
    feature: str = "feature"
    value: str = "value"
    masked: str = "masked"
    allowed: str = "may attend"
    block_max: str = "largest value"
    block_mean: str = "mean"
    blocks: str = "each cell: {how} of a block of {rows} × {columns}"
    labels: tuple[tuple[str, str], ...] = ()
    """(matrix name, title label) pairs replacing `MatrixInfo.label` in titles, for labels
    that contain words (``mask(QKᵀ/√dₖ)``); a tuple so that the text stays hashable."""


def plain_label(label: str) -> str:
    """A label as literal text: Plotly reads a subset of HTML in labels and hovers (<b>, <a href>,
    <br>), so a typed token such as "<br>" must be escaped to show as typed."""
    return label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def block_reduce(values: np.ndarray, row_size: int, column_size: int, how: str) -> np.ndarray:
    """Reduce every block of row_size × column_size cells to one value ("max" or "mean").

    NaN cells (masked) are ignored; a block of NaN only stays NaN. Edge blocks may be smaller.
    The rows of a block are reduced first, whole rows at a time, then the few columns left of
    each block: reducing the short inner axis of every block first took up to 5 times as long.
    """
    rows, columns = values.shape
    block_rows, block_columns = -(-rows // row_size), -(-columns // column_size)
    padded = np.full((block_rows * row_size, block_columns * column_size), np.nan, dtype=np.float32)
    padded[:rows, :columns] = values
    strips = padded.reshape(block_rows, row_size, block_columns * column_size)  # (R, rs, C·cs)
    if how == "max":
        row_maxima = np.fmax.reduce(strips, axis=1)  # (R, C·cs); fmax skips NaN
        return np.fmax.reduce(row_maxima.reshape(block_rows, block_columns, column_size), axis=2)  # (R, C)
    present = ~np.isnan(strips)  # (R, rs, C·cs)
    np.copyto(strips, 0, where=~present)  # `padded` is this function's own copy
    sums = strips.sum(axis=1).reshape(block_rows, block_columns, column_size).sum(axis=2)  # (R, C)
    counts = present.sum(axis=1, dtype=np.int32).reshape(block_rows, block_columns, column_size).sum(axis=2)  # (R, C)
    return np.divide(sums, counts, out=np.full(sums.shape, np.nan, dtype=np.float32), where=counts > 0)


def _block_labels(labels: list[str], size: int) -> list[str]:
    """"12–23" for the block of positions 12 to 23 ("d0–d7" for feature dimensions); an axis
    drawn cell by cell (size 1) keeps its own labels ("3:cat", not "3–3")."""
    if size == 1:
        return labels

    def position(label: str) -> str:
        return label.split(":", 1)[0]

    return [
        f"{position(labels[start])}–{position(labels[min(start + size, len(labels)) - 1])}"
        for start in range(0, len(labels), size)
    ]


HIGHLIGHT_COLOUR = "#111111"
"""Outline of highlighted rows and cells: near-black, visible on every palette."""


def highlight_shapes(
    rows: int,
    columns: int,
    highlight_rows: tuple[int, ...] = (),
    highlight_cells: tuple[tuple[int, int], ...] = (),
) -> list[dict]:
    """Plotly rectangle shapes outlining whole rows and single cells of a (rows, columns) heatmap.

    Category axes place cell k at coordinate k, so a cell spans k − 0.5 to k + 0.5. Indices
    outside the matrix are skipped (the sentence may have changed under a kept choice).
    """
    shapes = []
    for row in highlight_rows:
        if 0 <= row < rows:
            shapes.append(_outline(-0.5, columns - 0.5, row - 0.5, row + 0.5, width=3))
    for row, column in highlight_cells:
        if 0 <= row < rows and 0 <= column < columns:
            shapes.append(_outline(column - 0.5, column + 0.5, row - 0.5, row + 0.5, width=4))
    return shapes


def _outline(x0: float, x1: float, y0: float, y1: float, width: int) -> dict:
    return {
        "type": "rect", "xref": "x", "yref": "y", "x0": x0, "x1": x1, "y0": y0, "y1": y1,
        "line": {"color": HIGHLIGHT_COLOUR, "width": width}, "fillcolor": "rgba(0,0,0,0)", "layer": "above",
    }


def label_width(label: str, font_size: int, *, at_least: bool = False) -> float:
    """About how many pixels a label takes: a wide (Chinese) character is an em, any other
    about half an em (Plotly sizes nothing before drawing, so the figure has to guess).

    With `at_least`, rather more than that (for margins, where too little costs a redraw):
    0.6 em for a narrow character, more than most Latin letters, and an em for those the
    Chinese fonts draw an em wide (·, ↵, ␣)."""
    if len(label) <= MAX_CACHED_LABEL:
        return font_size * _label_ems(label, at_least)
    return font_size * _label_ems.__wrapped__(label, at_least)


MAX_CACHED_LABEL = 64
"""Labels up to this many characters have their width kept (tokens, "d0", "d1", …: the same
ones are measured on every rerun); a longer one is measured each time, so that the kept widths
stay small whatever is typed."""


@functools.lru_cache(maxsize=16384)
def _label_ems(label: str, at_least: bool) -> float:
    wide, narrow = ("WFA", 0.6) if at_least else ("WF", 0.55)
    return sum(
        1.0 if unicodedata.east_asian_width(char) in wide or (at_least and char == "␣") else narrow
        for char in label
    )


def _column_label_angle(labels: list[str], cell_width: float, style: FigureStyle) -> int:
    """-45 (tilted) when the widest column label, with half an em on either side, is wider than a
    cell: upright, neighbours would run into each other ("2:汽车3:自行车"); else 0."""
    widest = max((label_width(label, style.font_size) for label in labels), default=0.0)
    return -45 if widest + style.font_size > cell_width else 0


def _narrowest_cell(columns: int, style: FigureStyle) -> float:
    """A cell's width when its matrix shares the page with another (half of FIGURE_WIDTH, minus
    about nine ems of row labels and colour bar): the narrowest a page lays a matrix out."""
    return (FIGURE_WIDTH // 2 - 9 * style.font_size) / max(columns, 1)


def _row_height(rows: int, style: FigureStyle) -> int:
    """Full height up to 16 rows; beyond, rows shrink so the figure stays about one screen tall.
    Under a height cap (projector) rows shrink to fit it, but stay a line of type tall up to
    16 rows (beyond, `matrix_heatmap` labels every k-th row)."""
    height = style.row_height if rows <= 16 else max(2, style.row_height * 16 // rows)
    if style.max_height is not None:
        height = min(height, _fitted_row(rows, style.max_height - _chrome_height(style), style))
    return height


def _fitted_row(rows: int, room: int, style: FigureStyle) -> int:
    """The tallest row that fits `rows` rows in `room` pixels, but a line of type at least up
    to 16 rows (beyond, every k-th row is labelled: `label_step`)."""
    return max(room // max(rows, 1), line_height(style) if rows <= 16 else 1)


def line_height(style: FigureStyle) -> int:
    """Pixels a row needs for its label (or a printed number) to be read: a line of type."""
    return style.font_size + 6


def _chrome_height(style: FigureStyle) -> int:
    """Pixels of a matrix figure outside its cells: title, tick labels, axis titles."""
    return 110 + 4 * style.font_size


def _title_margin(style: FigureStyle) -> int:
    """Room above the cells for the title: tighter under a height cap, where every row counts."""
    return 20 + 3 * style.font_size // 2 if style.max_height is not None else 30 + 2 * style.font_size


def left_title(text: str, **placement) -> dict:
    """A figure's title at its top left, over the row labels (Plotly centres titles), with any
    other `placement` ("y", "yanchor"); {} (no title) for no text."""
    return {"text": text, "x": 0.0, "xanchor": "left", **placement} if text else {}


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
    highlight_rows: tuple[int, ...] = (),
    highlight_cells: tuple[tuple[int, int], ...] = (),
    marked_side: int = MAX_MARKED_SIDE,
) -> go.Figure:
    """A labelled heatmap of one matrix, (rows, columns).

    colour: "signed" (diverging, centred at 0), "weights" (0–1) or "mask" (two colours).
    masked: boolean (rows, columns), True where the cell is masked: drawn as a grey gap
    (with a × when neither side is longer than `marked_side`), never coloured as a value
    (display only; the records keep their numbers).
    A side longer than MAX_DRAWN_SIDE is drawn in blocks: the block maximum for weights
    (where attention goes is what matters), the block mean otherwise (for the mask: the
    share of allowed cells), and the title says so.
    highlight_rows / highlight_cells: rows and (row, column) cells outlined in near-black
    (not drawn on a matrix shown in blocks).
    """
    values = np.asarray(values)
    shown = values.astype(np.float32 if values.dtype == np.float32 else np.float64)  # a copy
    if masked is not None and colour != "mask":
        shown[masked] = np.nan  # a gap, for display only
    shown[~np.isfinite(shown)] = np.nan
    row_size, column_size = -(-shown.shape[0] // MAX_DRAWN_SIDE), -(-shown.shape[1] // MAX_DRAWN_SIDE)
    aggregated = row_size > 1 or column_size > 1
    if aggregated:
        how = "max" if colour == "weights" else "mean"
        shown = block_reduce(shown, row_size, column_size, how)
        row_labels, column_labels = _block_labels(row_labels, row_size), _block_labels(column_labels, column_size)
        how_words = text.block_max if how == "max" else text.block_mean
        title = f"{title} — {text.blocks.format(how=how_words, rows=row_size, columns=column_size)}"
        masked = None  # fully masked blocks are gaps; markers would be too many to draw
        highlight_rows, highlight_cells = (), ()  # a block is not the chosen cell
    # escaped after the blocks are named: a block's name holds positions only
    row_labels, column_labels = [plain_label(label) for label in row_labels], [plain_label(c) for c in column_labels]
    rows, columns = shown.shape
    if show_numbers is None:
        show_numbers = rows * columns <= style.max_cells_with_numbers
        if style.max_height is not None:  # projector: big numbers, or none (the table has them)
            show_numbers = show_numbers and numbers_fit(style, columns, signed=bool(np.nanmin(shown) < 0))
            show_numbers = show_numbers and _row_height(rows, style) >= line_height(style)

    heat = dict(
        z=shown,
        x=column_labels,
        y=row_labels,
        xgap=style.cell_gap if columns <= DENSE_SIDE else 0,
        ygap=style.cell_gap if rows <= DENSE_SIDE else 0,
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
            customdata=None if aggregated else np.where(shown > 0.5, text.allowed, text.masked),
            hovertemplate=(
                f"{row_title}: %{{y}}<br>{column_title}: %{{x}}<br>{text.allowed}: %{{z:.0%}}<extra></extra>"
                if aggregated
                else f"{row_title}: %{{y}}<br>{column_title}: %{{x}}<br>%{{customdata}}<extra></extra>"
            ),
        )
    else:
        heat.update(colorscale=style.diverging, zmid=0.0)
    if show_numbers and colour != "mask":
        heat.update(texttemplate="%{z:.2f}", textfont={"size": style.font_size})
    traces = [go.Heatmap(**heat)]
    marked = max(rows, columns) <= marked_side
    if masked is not None and masked.any() and colour != "mask" and marked:
        mask_rows, mask_columns = np.nonzero(masked)
        traces.append(
            go.Scatter(
                # arrays of labels, not lists: Plotly checks a list item by item (a causal mask
                # of 100 tokens has 4,950 markers: 13 ms against 0.5 ms)
                x=np.array(column_labels, dtype=object)[mask_columns],
                y=np.array(row_labels, dtype=object)[mask_rows],
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
    tick_angle = -45 if columns > 6 else _column_label_angle(column_labels, _narrowest_cell(columns, style), style)
    axis_type = _axis_type(style)
    layout = dict(
        title=left_title(title),
        height=_chrome_height(style) + rows * _row_height(rows, style),
        margin={"l": 10, "r": 10, "t": _title_margin(style) if title else 10, "b": 10},
        plot_bgcolor=MASKED_GREY,
        font={"family": FONT_FAMILY, "size": style.font_size},
        xaxis=deep_merged({"title": {"text": column_title}, "type": "category", "tickangle": tick_angle}, axis_type),
        yaxis=deep_merged({"title": {"text": row_title}, "type": "category", "autorange": "reversed"}, axis_type),
    )
    shapes = highlight_shapes(rows, columns, tuple(highlight_rows), tuple(highlight_cells))
    if shapes:
        layout["shapes"] = shapes
    if columns <= LABEL_EVERY_SIDE:  # every token labelled: Plotly would skip every other label when crowded
        layout["xaxis"].update(tickmode="array", tickvals=column_labels, ticktext=column_labels)
    if rows <= LABEL_EVERY_SIDE:  # under a height cap rows may be shorter than a line: every k-th
        labelled = row_labels[::label_step(_row_height(rows, style), line_height(style))]
        layout["yaxis"].update(tickmode="array", tickvals=labelled, ticktext=labelled)
    # The layout given to the constructor, not set afterwards with update_layout() or
    # _axes_style(): the same figure, built about four times faster (an update parses every
    # property path again).
    return go.Figure(data=traces, layout=layout)


FIGURE_WIDTH = 900
"""Width of a full-width figure on a 1280-pixel projector with the sidebar open; about twelve
characters of type go to the row labels and the colour bar, the rest to the cells."""


def number_width(style: FigureStyle, characters: int) -> int:
    """Pixels a cell needs for a printed number of that many characters (a digit is about
    half an em wide), with a little room on either side."""
    return style.font_size * characters // 2 + 8


def numbers_fit(style: FigureStyle, columns: int, signed: bool, decimals: int = 2) -> bool:
    """Whether printed numbers fit side by side in `columns` full-width columns."""
    return number_width(style, 2 + decimals + signed) <= cells_width(style) // max(columns, 1)


def _fit_cells(figure: go.Figure, style: FigureStyle) -> bool:
    """Size a one-heatmap figure's cells for the style's type: square, wide enough for a printed
    number (numbers are dropped when the page is too narrow for them: the table has them) and
    tall enough for a label. Thumbnails (no tick labels) keep their size. Returns whether the
    cells can be square (not when a page too narrow for them would squeeze the labelled rows)."""
    heatmaps = [trace for trace in figure.data if trace.type == "heatmap"]
    if figure.layout.xaxis.showticklabels is False or not heatmaps:
        return True
    if len(heatmaps) != 1 or (heatmaps[0].xaxis or "x") != "x":  # subplots: rows a line of type tall
        rows = max(len(trace.y if trace.y is not None else trace.z) for trace in heatmaps)
        needed = _chrome_height(style) + rows * (line_height(style) + 2)  # a line and a gap
        if rows <= DENSE_SIDE and (figure.layout.height or 0) < needed:
            figure.layout.height = needed
        return True
    heat = heatmaps[0]
    rows, columns = len(heat.y if heat.y is not None else heat.z), len(heat.x if heat.x is not None else heat.z[0])
    decimals = re.search(r"\.(\d)f", heat.texttemplate or "")
    wanted = 2 * style.font_size  # a row label's height, and room for tilted column labels
    if decimals:
        values = np.asarray(heat.z, dtype=float)
        signed = bool(np.any(values[np.isfinite(values)] < 0))
        characters = 2 + int(decimals.group(1)) + signed  # "0.12", "-0.12"
        wanted = max(wanted, number_width(style, characters))
    cell = min(wanted, cells_width(style) // max(columns, 1))
    row = cell if rows > DENSE_SIDE else max(cell, line_height(style) + 2)  # a labelled row: a line and a gap
    margin = figure.layout.margin
    chrome = _chrome_height(style) + (margin.t or 0) // 2
    if style.screen_height is not None and chrome + rows * row > style.screen_height:
        row = _fitted_row(rows, style.screen_height - chrome, style)
        if row * columns >= cells_width(style) // 2:  # squares still half the width: smaller squares
            cell = min(cell, row)
    if decimals and (cell < wanted or row < line_height(style)):
        heat.texttemplate = None  # too narrow or too short for numbers: they would overlap
    cell = max(cell, 4)
    x_axis, y_axis = figure.layout.xaxis, figure.layout.yaxis
    x_changes, tick_angle = {}, x_axis.tickangle
    if not tick_angle and heat.x is not None:  # upright labels wider than a cell: tilted
        tick_angle = x_changes["tickangle"] = _column_label_angle([str(label) for label in heat.x], cell, style)
    y_changes = _thinned(y_axis, row, line_height(style), categories=None if heat.y is None else list(heat.y))
    if heat.x is not None and tick_angle:  # tilted: Plotly's own thinning is too dense
        pitch = cell if row == cell else cells_width(style) / max(columns, 1)
        x_changes.update(_thinned(x_axis, pitch, tilted_label_pitch(style), categories=list(heat.x)))
    _update_axes(figure, {"xaxis": x_changes, "yaxis": y_changes})
    figure.layout.height = chrome + rows * row
    return row == cell


def cells_width(style: FigureStyle) -> int:
    """Pixels a full-width figure leaves its cells: FIGURE_WIDTH less about twelve characters of
    row labels, axis title and colour bar."""
    return FIGURE_WIDTH - 12 * style.font_size


def tilted_label_pitch(style: FigureStyle) -> float:
    """Pixels between neighbouring column labels tilted by 45° so that they are not drawn over
    each other: an em across, measured square to the text, and some to spare for labels
    squeezed by wide margins."""
    return style.font_size / math.sin(math.radians(45))


def label_step(pitch: float, least: float) -> int:
    """Label every k-th category when categories are `pitch` pixels apart and a label needs
    `least`: else labels are drawn over each other."""
    return 1 if pitch >= least else math.ceil(least / max(pitch, 1))


def _thinned(axis, pitch: float, least: float, categories: list | None = None) -> dict:
    """The axis's changes that label every k-th category (`label_step`), so that labels are not
    drawn over each other; {} when it needs none.

    With `categories`, an axis labelling all of them or every j-th (as `matrix_heatmap` does) is
    labelled afresh from them, so a figure built with thinned labels and then restyled is not
    thinned twice; other tick arrays are thinned as they are. An axis with neither is thinned by
    Plotly itself."""
    step = label_step(pitch, least)
    values = None if axis.tickvals is None else list(axis.tickvals)
    texts = values if axis.ticktext is None else list(axis.ticktext)
    if categories is not None and (values is None or (texts == values and _every_kth(values, categories))):
        if step > 1 or values is not None:
            return {"tickmode": "array", "tickvals": categories[::step], "ticktext": categories[::step]}
    elif values is not None and step > 1:
        return {"tickvals": values[::step], "ticktext": texts[::step]}
    return {}


def _update_axes(figure: go.Figure, changes: dict[str, dict]) -> None:
    """Merge `changes` (nested dicts merged too) into the figure's axes by name ("xaxis", …): one
    assignment an axis, several times faster than update_xaxes() or an update per property
    (each parses its property paths again)."""
    for name, change in changes.items():
        if change:
            figure.layout[name] = deep_merged(figure.layout[name].to_plotly_json(), change)


def deep_merged(base: dict, changes: dict) -> dict:
    """`base` with `changes` merged in, dicts within dicts merged too (as Plotly's update does)."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _every_kth(values: list, categories: list) -> bool:
    """Whether `values` are `categories[::k]` for some k."""
    if len(values) < 2:
        return values == categories[:1]
    step = categories.index(values[1]) if values[1] in categories else 0
    return step > 0 and values == categories[::step]


def subplot_layout(**options) -> dict:
    """`make_subplots(**options)`'s layout (axis domains, anchors and shared axes, the panel
    titles' annotations) as a fresh dict, made once per distinct options (`subplot_titles` a
    tuple). A figure built from it in one constructor call, its traces naming their axes
    ("x2", "y2"), is the same as one from make_subplots() and add_trace(row=, col=), several
    times faster: each of those calls parses its property paths again."""
    return json.loads(_subplot_layout_json(**options))


@functools.lru_cache(maxsize=64)
def _subplot_layout_json(**options) -> str:
    layout = make_subplots(**options).layout.to_plotly_json()
    layout.pop("template", None)  # the constructor applies the default template again
    return json.dumps(layout)


def _axis_type(style: FigureStyle) -> dict:
    """An axis's tick labels and title at the style's type size (Streamlit's chart theme would
    set its own, smaller), as changes to merge into the axis (`deep_merged`): the title keeps its text."""
    return {"tickfont": {"size": style.font_size}, "title": {"font": {"size": style.font_size}}}


def _axes_style(figure: go.Figure, style: FigureStyle, square: bool = False) -> go.Figure:
    """Every axis's type at the style's size (as `_axis_type`), and square cells when asked."""
    changes = {name: _axis_type(style) for name in _axis_names(figure.layout)}
    if square:
        for trace in figure.data:
            if trace.type == "heatmap":  # each subplot's y axis follows its own x axis
                x_name, y_name = trace.xaxis or "x", trace.yaxis or "y"
                changes[x_name.replace("x", "xaxis", 1)]["constrain"] = "domain"
                changes[y_name.replace("y", "yaxis", 1)].update(scaleanchor=x_name, scaleratio=1, constrain="domain")
    _update_axes(figure, changes)
    return figure


def _axis_names(layout: go.Layout) -> list[str]:
    """The layout's axes: "xaxis" and "yaxis", and the subplots' "xaxis2", "yaxis2", … it has."""
    return sorted({"xaxis", "yaxis", *(key for key in layout._props if key.startswith(("xaxis", "yaxis")))})


AXIS_PAD = 8
"""Pixels between the plot area and its axis lines (`margin.pad`; Streamlit's chart theme uses 8)."""
TITLE_STANDOFF = {"x": 20, "y": 24}
"""Pixels between an axis's tick labels and its title (Streamlit's chart theme's values)."""
TICK_ROOM = 10
"""Pixels of an axis's margin besides its labels, title, the pad and one em of the tick labels'
type: tick marks (5), the gap Plotly leaves between them and the labels, and a few to spare
(measured in Chromium at 12 and 20 px type)."""
TEXT_LINE = 1.4
"""Height of a line of Plotly's SVG text in ems (17 px at 12 px type, measured in Chromium)."""


def _tick_labels(figure: go.Figure, axis_name: str, axis: dict) -> list[str] | None:
    """Labels at least as wide as the widest tick label the axis will draw: its `ticktext`, the
    categories of the traces on it, or for numbers the ends of their range (`_number_labels`);
    None when the traces give nothing to go by. `axis`: the axis's properties, as a dict."""
    if axis.get("showticklabels") is False:
        return []
    if axis.get("ticktext") is not None:
        return [str(label) for label in axis["ticktext"]]
    letter = axis_name[0]
    reference = letter + axis_name[len("xaxis"):]  # "yaxis2" → "y2"
    on_axis = [trace for trace in figure.data if (getattr(trace, f"{letter}axis", None) or letter) == reference]
    values = [_count_range(trace, letter) if trace.type == "histogram" and getattr(trace, letter, None) is None
              else getattr(trace, letter, None) for trace in on_axis]
    if on_axis and all(v is not None and len(v) and isinstance(v[0], str) for v in values):
        return [label for labels in values for label in labels]  # categories
    axis_type, axis_range = axis.get("type"), axis.get("range")
    if axis_type == "category" or any(v is None or not len(v) or isinstance(v[0], str) for v in values):
        return None
    try:
        numbers = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values])
    except (TypeError, ValueError):
        return None
    if axis_range is not None and None not in axis_range:
        numbers = np.asarray(axis_range, dtype=float)
        if axis_type == "log":
            numbers = 10.0 ** numbers
    return _number_labels(numbers[np.isfinite(numbers)], log=axis_type == "log",
                          bars=any(trace.type == "bar" for trace in on_axis))


def _count_range(histogram, letter: str) -> tuple[float, float]:
    """The range of a histogram's counts axis: up to every sample in one bin (or 100 %, or 1)."""
    samples = getattr(histogram, "y" if letter == "x" else "x", None)
    return (0.0, {"percent": 100.0, "": float(len(samples) if samples is not None else 1)}.get(
        histogram.histnorm or "", 1.0))


def _number_labels(numbers: np.ndarray, log: bool, bars: bool) -> list[str]:
    """Labels as wide as the widest Plotly prints over `numbers`: the ends of their range (a bar
    axis also shows 0) written to the precision of a twentieth of the span, with Plotly's "−".
    Plotly's own ticks are rounder, so never longer; on a log axis, the powers of ten."""
    if not numbers.size:
        return []
    low, high = float(numbers.min()), float(numbers.max())
    if log:
        largest = max(abs(low), abs(high), 1.0)
        return [str(10 ** min(math.ceil(math.log10(largest)), 4))]  # 10000 and beyond print as "10k"
    if bars:
        low, high = min(low, 0.0), max(high, 0.0)
    span = (high - low) or abs(high) or 1.0
    decimals = max(0, math.ceil(-math.log10(span / 20)))
    padding = span / 20  # autorange pads scatter plots by about 5 %
    return [f"{end:.{decimals}f}".replace("-", "−") for end in (low - padding, high + padding)]


def _axis_room(axis: dict, axis_name: str, font_size: int, labels: list[str]) -> tuple[float, float]:
    """What Plotly's "automargin" would push the margins to for one axis (its properties as a
    dict, the figure's type size): the pixels from the plot area to the far side of its title
    (y: the widest label; x: the tallest, tilted or not), and how far its end label reaches
    past the plot area along the axis."""
    tick_size = axis.get("tickfont", {}).get("size") or font_size
    widest = max((label_width(label, tick_size, at_least=True) for label in labels), default=0.0)
    line = TEXT_LINE * tick_size if labels else 0.0
    if axis_name.startswith("y"):
        depth, overhang = widest, line / 2  # the end label is centred on its tick
    else:
        tick_angle = axis.get("tickangle")
        angle = math.radians(abs(tick_angle)) if isinstance(tick_angle, (int, float)) else 0.0
        depth = widest * math.sin(angle) + line * math.cos(angle)
        overhang = (widest * math.cos(angle) + line * math.sin(angle)) / 2
    title = axis.get("title", {})
    if title.get("text") is not None:  # Plotly keeps room for a title set to "" as well
        standoff = title["standoff"] if title.get("standoff") is not None else TITLE_STANDOFF[axis_name[0]]
        depth += standoff + 0.7 * (title.get("font", {}).get("size") or font_size) * (1 + title["text"].count("<br>"))
    return depth + TICK_ROOM + tick_size + AXIS_PAD, overhang + 6 if labels else 0.0


COLOUR_BAR_EMS = 5
"""Shortest plot area, in ems of the figure's type, whose colour bar has room for three labels
(−2, 0, 2) without one running into the next."""


def _room_for_colour_bar(figure: go.Figure, margin: dict, font_size: int) -> go.Figure:
    """A one-heatmap figure of a few rows made taller when its margins (as a dict) leave the
    colour bar (as long as the plot area) too short for its labels."""
    heatmaps = [trace for trace in figure.data if trace.type == "heatmap" and trace.showscale is not False]
    height = figure.layout.height
    if len(heatmaps) != 1 or height is None:
        return figure
    plot_height = height - (margin.get("t") or 0) - (margin.get("b") or 0)
    shortest = COLOUR_BAR_EMS * font_size
    if plot_height < shortest:
        figure.layout.height = height + shortest - plot_height
    return figure


_EDGES = {"x": ("b", "t"), "y": ("l", "r")}
"""The margin an axis's labels go in (its usual side, then the other), by its letter."""
_ALONG = {"x": ("l", "r"), "y": ("b", "t")}
"""The margins an axis's end labels reach into, by its letter."""


def reserve_label_room(figure: go.Figure) -> go.Figure:
    """Margins wide enough for the labels and titles of the axes on the figure's edges.

    With margins too narrow, Plotly draws the whole figure, measures the labels, widens the
    margins and draws everything again: about half of a figure's first drawing in Chromium (a
    page opened, a stage or view switched; a change to a drawn figure keeps the margins found
    before: `benchmarks/plotly_margins.py`). The room is guessed from the labels' characters
    and rounded up; where a font is wider than the guess, Plotly still widens the margin itself
    (automargin stays on), so a label is never cut. Returns the same figure, changed in place.
    """
    layout = figure.layout
    font_size = layout.font.size or 12
    # the axes' properties read once, as dicts: each read through Plotly's objects walks the
    # figure's tree again, and a figure has dozens of them
    axes = {name: layout[name].to_plotly_json() for name in _axis_names(layout)}
    room = dict.fromkeys("lrtb", 0.0)
    for name, axis in axes.items():
        letter = name[0]
        if axis.get("visible") is False:
            continue
        far = axis.get("side") in ("top", "right")
        edge = _EDGES[letter][far]
        anchor_name = axis.get("anchor")
        if anchor_name == "free":
            at_edge = (axis.get("position") or 0.0) == float(far)
        else:  # on the paper's edge when the axis it is drawn along reaches that edge
            anchor = axes.get(anchor_name.replace("x", "xaxis", 1).replace("y", "yaxis", 1), {}) if anchor_name else {}
            domain = anchor.get("domain") if anchor.get("domain") is not None else (0.0, 1.0)
            at_edge = domain[far] == float(far)
        labels = _tick_labels(figure, name, axis) if at_edge else None
        if labels is None:
            continue
        depth, overhang = _axis_room(axis, name, font_size, labels)
        room[edge] = max(room[edge], depth)
        for side in _ALONG[letter]:
            room[side] = max(room[side], overhang)
    margin = layout.margin.to_plotly_json()
    if any(room.values()):
        # One assignment: about seven times faster than update_layout(margin=...) (which parses
        # the property path and tells the figure of each side set, one by one).
        margin = {**margin, "pad": AXIS_PAD, **{
            side: max(margin.get(side) or 0, math.ceil(needed)) for side, needed in room.items()}}
        layout.margin = margin
    return _room_for_colour_bar(figure, margin, font_size)


def restyle(figure: go.Figure, style: FigureStyle) -> go.Figure:
    """Any figure of this package in another style: type size, cell gaps and palette.

    Lets every page honour projector mode and the palette choice with one call, whichever
    figure function built the figure. Returns the same figure, changed in place.
    """
    if style == FigureStyle():
        return figure
    default = FigureStyle()
    palettes = {
        _resolved_scale(default.diverging): style.diverging,
        _resolved_scale(default.sequential): style.sequential,
    }
    changes = {"font": {"size": style.font_size}, "legend_font_size": style.font_size}
    if figure.layout.title.text:
        changes["title_font_size"] = style.font_size
    figure.update_layout(changes)
    for annotation in figure.layout.annotations or ():
        if annotation.font.size is not None and annotation.font.size < style.font_size:
            annotation.font.size = style.font_size
    for trace in figure.data:
        changes = {}
        if trace.type == "heatmap":
            if trace.xgap:
                changes["xgap"] = style.cell_gap
            if trace.ygap:
                changes["ygap"] = style.cell_gap
            if trace.colorscale is not None and trace.colorscale in palettes:
                changes["colorscale"] = palettes[trace.colorscale]
        if getattr(trace, "textfont", None) is not None and trace.textfont.size:
            changes["textfont_size"] = style.font_size
        if changes:
            trace.update(changes)  # one update a trace: each costs as much as the next
    square = style.square_cells and _fit_cells(figure, style)
    return _axes_style(figure, style, square=square)


@functools.lru_cache(maxsize=32)
def _resolved_scale(name: str) -> tuple:
    """A named colour scale as Plotly stores it in a trace."""
    return go.Heatmap(colorscale=name).colorscale


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
    window: tuple[slice, slice] | None = None,
    highlight: tuple[int, int] | None = None,
    marked_side: int = MAX_MARKED_SIDE,
) -> go.Figure:
    """The heatmap of the recorded matrix `name` of a toy trace, labelled by tokens.

    Rows are query tokens (or key tokens for K and V); columns are key tokens for n × m
    matrices and feature dimensions otherwise. Masked cells are marked only from the mask
    stage on (`MatrixInfo.marks_masked`): QKᵀ and QKᵀ/√dk hold a score for every pair.
    `window` = (rows, columns) slices draws only that part, cell by cell (the zoom).
    `highlight` = (i, j), query i and key j: outlines cell (i, j) of an n × m matrix, row i of a
    query-side matrix (X, Q, AV) and row j of a key-side one (K, V): what cell (i, j) is made of.
    `marked_side`: the longest side whose masked cells carry a × (see `matrix_heatmap`).
    """
    info = MATRICES[name]
    row_labels, column_labels = trace.axis_labels(name)
    axis_titles = {"query": text.query, "key": text.key, "dim": text.feature}
    values = trace.matrix(name)
    masked = None
    if info.marks_masked:
        masked = ~np.asarray(trace.attention.mask)
    label = dict(text.labels).get(name, info.label)
    if name == "x_query" and trace.settings.query_text.strip():  # cross-attention: this X gives Q only
        label = CROSS_QUERY_LABEL
    if window is not None:
        row_window, column_window = window
        values = values[row_window, column_window]
        row_labels, column_labels = row_labels[row_window], column_labels[column_window]
        masked = None if masked is None else masked[row_window, column_window]
    highlight_rows, highlight_cells = _highlighted(info, highlight, window)
    return matrix_heatmap(
        values,
        row_labels,
        column_labels,
        colour=info.colour,
        masked=masked,
        row_title=axis_titles[info.rows],
        column_title=axis_titles[info.columns],
        title=f"{label}   {values.shape[0]}×{values.shape[1]}" if title is None else title,
        text=text,
        show_numbers=show_numbers,
        style=style,
        highlight_rows=highlight_rows,
        highlight_cells=highlight_cells,
        marked_side=marked_side,
    )


def _highlighted(info, highlight: tuple[int, int] | None, window: tuple[slice, slice] | None):
    """(rows, cells) to outline in the matrix `info` for the chosen (query i, key j)."""
    if highlight is None:
        return (), ()
    position = {"query": highlight[0], "key": highlight[1]}
    row_start = 0 if window is None else (window[0].start or 0)
    column_start = 0 if window is None else (window[1].start or 0)
    if info.columns == "key":  # n × m: the chosen cell
        return (), ((position[info.rows] - row_start, position["key"] - column_start),)
    return (position[info.rows] - row_start,), ()  # a row of X, Q, K, V or AV
