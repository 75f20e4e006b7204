"""The stacked output bars of the follow-one-cell page: what they draw, and that the figure,
built without Plotly's validation for speed, is the one a validated build makes."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from attention_core import causal_mask, scaled_dot_product_attention
from attention_core.figures.cell import KEY_PALETTE, CellFigureText, contribution_bars
from attention_core.lessons.cell import follow_cell


def _cell(m: int, i: int, j: int, *, masked: bool = False, seed: int = 0):
    rng = np.random.default_rng(seed)
    n, dk, dv = max(i + 1, 2), 4, 3
    q, k, v = rng.normal(size=(n, dk)), rng.normal(size=(m, dk)), rng.normal(size=(m, dv))
    mask = causal_mask(n, m) if masked else None
    return follow_cell(scaled_dot_product_attention(q, k, v, mask=mask), i, j), v


CASES = [(1, 0, 0, False), (5, 2, 3, False), (5, 2, 1, True), (40, 3, 39, False), (256, 1, 200, False)]


@pytest.mark.parametrize(("m", "i", "j", "masked"), CASES)
def test_each_key_is_one_bar_of_its_weight_times_its_value_row(m, i, j, masked):
    cell, v = _cell(m, i, j, masked=masked)
    labels = [f"{position}:w{position}" for position in range(m)]
    figure = contribution_bars(cell, labels, text=CellFigureText(key="key", contribution="w·v"))
    bars, diamonds = figure.data[:-1], figure.data[-1]
    assert len(bars) == m and all(bar.type == "bar" for bar in bars)
    weights = cell.weights_row
    for key, bar in enumerate(bars):
        expected = [float(weights[key]) * float(v[key][feature]) for feature in range(v.shape[1])]  # by hand
        np.testing.assert_allclose(bar.y, expected, rtol=1e-12, atol=1e-15)
        assert list(bar.x) == [f"d{feature}" for feature in range(v.shape[1])]
        assert bar.name == labels[key]
        assert bar.marker.color == KEY_PALETTE[key % len(KEY_PALETTE)]
        assert (bar.marker.opacity, bar.marker.line.width) == ((1.0, 2.5) if key == j else (0.45, 0))
        assert bar.hovertemplate.startswith(f"key: {labels[key]}<br>")
    assert diamonds.type == "scatter" and diamonds.mode == "markers"
    sums = [sum(float(weights[key]) * float(v[key][feature]) for key in range(m)) for feature in range(v.shape[1])]
    np.testing.assert_allclose(diamonds.y, sums, rtol=1e-9, atol=1e-12)
    assert figure.layout.barmode == "relative"


@pytest.mark.parametrize(("m", "i", "j", "masked"), CASES)
def test_the_unvalidated_figure_is_the_validated_one(m, i, j, masked):
    """Plotly's validation rejects a misspelt property and coerces values; the figure sent must be
    what a validated build of the same traces and layout sends."""
    cell, _ = _cell(m, i, j, masked=masked)
    labels = [f"{position}:<b>w{position}</b>" for position in range(m)]  # escaped by the figure
    figure = contribution_bars(cell, labels, title="output row", text=CellFigureText())
    validated = go.Figure(figure.to_dict())  # raises on any property Plotly does not know
    assert json.loads(pio.to_json(validated)) == json.loads(pio.to_json(figure))
    assert all("<b>" not in trace.name for trace in figure.data)
