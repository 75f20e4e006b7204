"""Figures of the "Compare two settings" page: two weight maps and their difference.

A's and B's weights share the fixed 0–1 sequential scale of every weight map, so equal
colours mean equal weights. The difference B − A is diverging and centred at 0 with a
symmetric range ±max|B − A|: red where B attends more, blue where it attends less.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..lessons.custom import WeightDifference
from ..toy import ToyTrace
from .matrices import FigureText, heatmap, matrix_heatmap

__all__ = ["difference_figure", "weights_figure"]

ENGLISH = FigureText()
"""The figures' words when the caller passes none."""


MAX_KEYS_WITH_NUMBERS_HALF_WIDTH = 6
"""In a half-width figure, numbers fit inside the cells up to this many key columns."""


def weights_figure(trace: ToyTrace, title: str, *, text: FigureText = ENGLISH, half_width: bool = False) -> go.Figure:
    """One side's attention weights, (n, m), on the fixed 0–1 scale; masked cells are grey ×.

    `half_width`: the figure shares the row with another, so numbers are printed in the
    cells only when they fit (hovering always shows them).
    """
    show_numbers = None
    if half_width and len(trace.key_tokens) > MAX_KEYS_WITH_NUMBERS_HALF_WIDTH:
        show_numbers = False
    return heatmap(trace, "weights", text=text, title=title, show_numbers=show_numbers)


def difference_figure(
    trace_a: ToyTrace,
    trace_b: ToyTrace,
    difference: WeightDifference,
    title: str,
    *,
    text: FigureText = ENGLISH,
) -> go.Figure:
    """B − A, (n, m), diverging around 0 with the symmetric range ±max|B − A|.

    Cells that both sides mask are grey ×; hovering a cell shows A's and B's weights.
    Identical weights give a white map on the range ±1.
    """
    row_labels, column_labels = trace_a.axis_labels("weights")
    figure = matrix_heatmap(
        difference.diff,
        row_labels,
        column_labels,
        colour="signed",
        masked=difference.both_masked,
        row_title=text.query,
        column_title=text.key,
        title=title,
        text=text,
    )
    limit = difference.max_abs if difference.changed else 1.0
    both = np.stack([trace_a.attention.weights, trace_b.attention.weights], axis=-1)  # (n, m, 2)
    figure.update_traces(
        selector={"type": "heatmap"},
        zmin=-limit,
        zmax=limit,
        zmid=None,
        customdata=both,
        hovertemplate=(
            f"{text.query}: %{{y}}<br>{text.key}: %{{x}}<br>A: %{{customdata[0]:.4f}}<br>"
            "B: %{customdata[1]:.4f}<br>B − A: %{z:+.4f}<extra></extra>"
        ),
    )
    if figure.data[0].texttemplate:
        figure.update_traces(selector={"type": "heatmap"}, texttemplate="%{z:+.2f}")
    return figure
