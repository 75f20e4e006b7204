"""Figures of the quiz: the true weights with the student's guesses marked, and a sketched row.

Built on `heatmap`, so the weights look as on every other page (fixed 0–1 scale, masked
cells as grey gaps). Marks are told apart by shape as well as colour (colour-blind safe):
a black frame around each strongest key, a bar under each guess, green when right and
orange when wrong (a right guess is also inside a frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..lessons.quiz import MAX_ASKED_ROWS, QuizResult, SketchResult
from ..toy import ToyTrace
from .matrices import (
    FONT_FAMILY,
    MAX_DRAWN_SIDE,
    FigureStyle,
    FigureText,
    deep_merged,
    heatmap,
    left_title,
    plain_label,
)

__all__ = ["GUESS_COLOURS", "QuizText", "guesses_heatmap", "quiz_rows", "sketch_bars", "sketch_heatmap"]

TRUTH_COLOUR = "#1a1a1a"
"""Frame of a strongest key: near black, visible on white and on dark blue cells."""
GUESS_COLOURS = {True: "#1b7837", False: "#e08214"}
"""Bar under a guess: green when right, orange when wrong (a colour-blind-safe pair)."""
SKETCH_COLOUR = "#e08214"
"""Bars of the sketched row."""
TRUTH_BAR_COLOUR = "#2166ac"
"""Bars of the true weights (the dark end of the weights' blue scale)."""


@dataclass(frozen=True)
class QuizText:
    """Words inside the quiz figures, passed in so the caller can translate them."""

    strongest: str = "strongest key"
    right: str = "your guess: right"
    wrong: str = "your guess: wrong"
    sketch: str = "your sketch (normalised)"
    truth: str = "attention weights"
    weight: str = "weight"


DEFAULT_TEXT, DEFAULT_QUIZ_TEXT, DEFAULT_STYLE = FigureText(), QuizText(), FigureStyle()
"""English words and the screen style, for callers that do not pass their own."""


def quiz_rows(n: int, centre: int | None = None) -> slice:
    """The query rows a quiz heatmap shows: the asked ones (the first MAX_ASKED_ROWS), or,
    around `centre`, a window of that many rows containing it."""
    if centre is None:
        return slice(0, min(n, MAX_ASKED_ROWS))
    start = min(max(0, centre - MAX_ASKED_ROWS // 2), max(0, n - MAX_ASKED_ROWS))
    return slice(start, min(n, start + MAX_ASKED_ROWS))


def _legend(style: FigureStyle) -> dict:
    """A legend in one line between the title (at the very top) and the plot."""
    return {"orientation": "h", "x": 0.0, "xanchor": "left", "y": 1.0, "yanchor": "bottom",
            "font": {"size": style.font_size}}


def _top_with_legend(style: FigureStyle) -> dict:
    """Layout changes that make room above the plot for the title and, under it, the legend
    (to merge into a layout: `deep_merged`, or `update_layout` on a built figure)."""
    return dict(
        title={"y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": style.font_size // 2}},
        legend=_legend(style),
        showlegend=True,
        margin={"t": 24 + 4 * style.font_size},
    )


def _cell(row: int, column: int, inset: float) -> dict:
    """A rectangle inside cell (row, column), `inset` cells in from each edge (category axes
    place category k at coordinate k)."""
    return {"x0": column - 0.5 + inset, "x1": column + 0.5 - inset, "y0": row - 0.5 + inset, "y1": row + 0.5 - inset}


def guesses_heatmap(
    trace: ToyTrace, result: QuizResult, *, text: FigureText = DEFAULT_TEXT, quiz_text: QuizText = DEFAULT_QUIZ_TEXT,
    style: FigureStyle = DEFAULT_STYLE,
) -> go.Figure:
    """The weights of the asked rows, (r, m), with every strongest key framed and every guess underlined.

    The marks keep clear of the numbers printed in the cells: a frame on the cell's edge for
    a strongest key, a bar along the cell's bottom for a guess. Beyond MAX_DRAWN_SIDE keys
    the heatmap is drawn in blocks and the marks are left out.
    """
    rows = quiz_rows(len(trace.query_tokens))
    figure = heatmap(trace, "weights", text=text, style=style, window=(rows, slice(None)))
    if len(trace.key_tokens) > MAX_DRAWN_SIDE:
        return figure
    first_of_kind = set()

    def legend(kind: str, name: str) -> dict:
        shown = kind not in first_of_kind
        first_of_kind.add(kind)
        return {"showlegend": shown, "name": name, "legendgroup": kind}

    marks = []
    for i, keys in zip(result.rows, result.best_keys, strict=True):
        for j in keys:
            marks.append(dict(
                type="rect", **_cell(i - rows.start, j, 0.04), line={"color": TRUTH_COLOUR, "width": 2.5},
                **legend("strongest", quiz_text.strongest),
            ))
    for i, j, right in zip(result.rows, result.guesses, result.correct, strict=True):
        if j is None:
            continue
        bar = _cell(i - rows.start, j, 0.12)
        bar["y0"] = bar["y1"] - 0.17  # a bar along the bottom edge (the y axis points down)
        marks.append(dict(
            type="rect", **bar, line={"width": 0}, fillcolor=GUESS_COLOURS[bool(right)],
            **legend(f"guess-{bool(right)}", quiz_text.right if right else quiz_text.wrong),
        ))
    # one update: add_shape() for each mark parses its property paths again
    figure.update_layout(shapes=[*figure.layout.shapes, *marks], **_top_with_legend(style))
    return figure


def sketch_heatmap(
    trace: ToyTrace, result: SketchResult, *, text: FigureText = DEFAULT_TEXT, style: FigureStyle = DEFAULT_STYLE
) -> go.Figure:
    """The weights around the sketched row, with that row framed."""
    rows = quiz_rows(len(trace.query_tokens), centre=result.query)
    figure = heatmap(trace, "weights", text=text, style=style, window=(rows, slice(None)))
    position = result.query - rows.start  # the row's place in the window
    frame = dict(type="rect", x0=-0.5, x1=len(trace.key_tokens) - 0.5, y0=position - 0.5, y1=position + 0.5,
                 line={"color": SKETCH_COLOUR, "width": 3})
    figure.layout.shapes = [*figure.layout.shapes, frame]  # one assignment: add_shape() parses its paths again
    return figure


def sketch_bars(
    trace: ToyTrace,
    result: SketchResult,
    *,
    quiz_text: QuizText = DEFAULT_QUIZ_TEXT,
    style: FigureStyle = DEFAULT_STYLE,
) -> go.Figure:
    """The sketched row next to the true one: two bars per key, both summing to 1."""
    key_labels = [plain_label(label) for label in trace.key_labels]
    bars = [
        (quiz_text.sketch, result.guess, SKETCH_COLOUR),
        (quiz_text.truth, result.truth, TRUTH_BAR_COLOUR),
    ]
    traces = [
        go.Bar(
            x=key_labels,
            y=np.asarray(values, dtype=float),
            name=name,
            marker={"color": colour},
            texttemplate="%{y:.2f}",
            textposition="outside",
            textfont={"size": style.font_size},
            hovertemplate=f"%{{x}}<br>{quiz_text.weight}: %{{y:.4f}}<extra>{name}</extra>",
        )
        for name, values, colour in bars
    ]
    layout = dict(
        barmode="group",
        title=left_title(plain_label(trace.query_labels[result.query])),
        height=300 + 6 * style.font_size,
        margin={"l": 10, "r": 10, "b": 10},
        font={"family": FONT_FAMILY, "size": style.font_size},
        xaxis={"type": "category", "tickangle": -45 if len(key_labels) > 6 else 0},
        yaxis={"title": {"text": quiz_text.weight}, "range": [0, 1.12]},
    )
    # one constructor call: updates after it parse their property paths again
    return go.Figure(data=traces, layout=deep_merged(layout, _top_with_legend(style)))
