"""Plotly figures built from the engine's records: the same ones the app shows.

Imported explicitly (it needs Plotly): ``from attention_core.figures import heatmap``.
One submodule per subject; every figure the app draws is built here, never in a page.
"""

from .matrices import (
    DIVERGING,
    MAX_DRAWN_SIDE,
    PALETTE_COLOURS,
    PALETTES,
    PROJECTOR,
    SEQUENTIAL,
    FigureStyle,
    FigureText,
    heatmap,
    matrix_heatmap,
    plain_label,
    reserve_label_room,
    restyle,
    standalone_html,
)

__all__ = [
    "DIVERGING",
    "MAX_DRAWN_SIDE",
    "PALETTES",
    "PALETTE_COLOURS",
    "PROJECTOR",
    "SEQUENTIAL",
    "FigureStyle",
    "FigureText",
    "heatmap",
    "matrix_heatmap",
    "plain_label",
    "reserve_label_room",
    "restyle",
    "standalone_html",
]
