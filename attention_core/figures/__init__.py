"""Plotly figures built from the engine's records: the same ones the app shows.

Imported explicitly (it needs Plotly): ``from attention_core.figures import heatmap``.
One submodule per subject; every figure the app draws is built here, never in a page.
"""

from .matrices import DIVERGING, SEQUENTIAL, FigureText, heatmap, matrix_heatmap

__all__ = ["DIVERGING", "SEQUENTIAL", "FigureText", "heatmap", "matrix_heatmap"]
