"""How a figure is sent to the browser: the app's look in the figure itself, no template,
small arrays as lists, one fixed data revision, reversed category axes with their range.

Each of these keeps plotly.js from recomputing a chart when Streamlit hands it a second copy
right after the first drawing (tests/browser/test_single_drawing.py checks that in Chromium).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go
import pytest
from apptest_helpers import decode_array, plotly_specs, run_app

from attention_core import ToySettings, build_toy_trace
from attention_core.figures import heatmap
from attention_core.figures.look import LAYOUT_LOOK, X_AXIS_LOOK, Y_AXIS_LOOK, in_app_look, with_app_look
from ui.views import MAX_LISTED_NUMBERS, browser_ready


def _typed(array: np.ndarray) -> dict:
    """A Plotly typed-array spec, written by hand (not through the code under test)."""
    return {"dtype": "f4", "bdata": base64.b64encode(array.astype("<f4").tobytes()).decode(),
            "shape": ", ".join(str(size) for size in array.shape)}


def test_the_look_fills_in_what_a_figure_leaves_unset_and_keeps_what_it_sets():
    spec = {
        "data": [{"type": "scatter", "x": [1, 2], "y": [3, 4]}],
        "layout": {"template": {"layout": {"paper_bgcolor": "black"}}, "font": {"size": 20},
                   "xaxis": {"title": {"text": "dk"}}, "yaxis2": {"showgrid": True}, "title": "A title"},
    }
    looked = with_app_look(spec)
    layout = looked["layout"]
    assert "template" not in layout
    assert layout["font"] == {**LAYOUT_LOOK["font"], "size": 20}, "the figure's own size wins"
    assert layout["paper_bgcolor"] == LAYOUT_LOOK["paper_bgcolor"]
    assert layout["title"]["text"] == "A title" and layout["title"]["font"]["weight"] == "bold"
    assert layout["xaxis"]["title"] == {**X_AXIS_LOOK["title"], "text": "dk"}
    assert layout["yaxis"]["ticklabelposition"] == Y_AXIS_LOOK["ticklabelposition"], "the first axes always"
    assert layout["yaxis2"]["showgrid"] is True and layout["yaxis2"]["gridcolor"], "a grid it turns on is coloured"
    assert "gridcolor" not in layout["yaxis"], "a colour given outright would turn the grid on"
    assert looked["data"][0]["marker"] == {"line": {"width": 0}}
    assert spec["layout"]["template"], "the figure given is not changed"


def test_a_heatmaps_axes_get_the_themes_light_tick_colour_and_a_lines_do_not():
    spec = {"data": [{"type": "heatmap", "z": [[1]], "xaxis": "x2", "yaxis": "y2"}, {"type": "bar", "y": [1]}],
            "layout": {"xaxis2": {}, "yaxis2": {}}}
    layout = with_app_look(spec)["layout"]
    assert layout["xaxis2"]["tickcolor"] == layout["yaxis2"]["tickcolor"]
    assert "tickcolor" not in layout["xaxis"] and "tickcolor" not in layout["yaxis"]


def test_small_typed_arrays_become_lists_with_the_same_numbers_and_large_ones_stay_typed():
    small = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    large = np.ones(MAX_LISTED_NUMBERS + 1, dtype=np.float32)
    spec = {"data": [{"type": "heatmap", "z": _typed(small)}, {"type": "scatter", "y": _typed(large)}],
            "layout": {}}
    ready = browser_ready(spec)
    assert ready["data"][0]["z"] == [[float(value) for value in row] for row in small], "exact float32 values"
    assert ready["data"][1]["y"] == spec["data"][1]["y"]
    assert ready["layout"]["datarevision"] == 0
    assert isinstance(spec["data"][0]["z"], dict), "the spec given is not changed"


def test_a_reversed_category_axis_gets_the_range_autorange_would_find():
    spec = {"data": [{"type": "heatmap", "y": ["0:a", "1:b", "2:a"], "x": ["k"]},
                     {"type": "scatter", "y": ["1:b", "3:c"], "x": ["k", "k"]}],
            "layout": {"yaxis": {"type": "category", "autorange": "reversed"},
                       "yaxis2": {"autorange": "reversed"}}}
    layout = browser_ready(spec)["layout"]
    assert layout["yaxis"]["range"] == [3.5, -0.5] and layout["yaxis"]["autorange"] is False  # 4 categories
    assert layout["yaxis2"] == {"autorange": "reversed"}, "not a category axis: left to plotly.js"


def test_a_heatmap_sent_the_apps_way_holds_the_engines_weights():
    trace = build_toy_trace(ToySettings())
    ready = browser_ready(with_app_look(heatmap(trace, "weights").to_dict()))
    shown = np.array(ready["data"][0]["z"], dtype=float)
    np.testing.assert_array_equal(shown, trace.attention.weights.astype(float))
    # and Plotly reads it back as a valid figure
    go.Figure(json.loads(json.dumps(ready)))


def test_a_notebook_gets_the_apps_look_without_a_template():
    figure = heatmap(build_toy_trace(ToySettings()), "weights")
    looked = in_app_look(figure)
    spec = json.loads(looked.to_json())
    assert "template" not in spec["layout"]
    assert spec["layout"]["paper_bgcolor"] == LAYOUT_LOOK["paper_bgcolor"]
    assert figure.layout.template is not None, "the figure given is not changed"


@pytest.mark.parametrize("page", [None, "why-sqrt-dk", "multi-head", "cell"])
def test_every_chart_of_a_page_is_sent_without_streamlits_theme_or_a_template(page):
    at = run_app(page)
    charts = at.get("plotly_chart")
    assert charts
    for chart, spec in zip(charts, plotly_specs(at), strict=True):
        assert chart.proto.theme == "", "Streamlit's theme would be applied as a template in the browser"
        assert spec["layout"].get("template") is None
        assert spec["layout"]["datarevision"] == 0
        assert spec["layout"]["font"]["family"], "the app's look is in the figure"
        go.Figure(spec)  # every property valid: Plotly's own checks were skipped when it was sent
        for trace in spec["data"]:
            for value in trace.values():
                if isinstance(value, dict) and "bdata" in value:
                    assert decode_array(value).size > MAX_LISTED_NUMBERS
