"""The speed benchmarks' floor app (benchmarks/floor_app.py) draws a heatmap at every size they
time, as the app does, so that the app's times can be read against it.

At 2,048 tokens it once sent every one of the 4 million weights: 56 MB of JSON, over the
server's message limit, so Streamlit showed its error box and the "floor" times were the
time to draw that box.

It also draws its chart as the app does (ui.views.draw), and prints nothing else: a bare string
in its source once put a paragraph on its page, and its chart, sent with Streamlit's theme, was
computed twice by plotly.js.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
from apptest_helpers import decode_array
from streamlit.testing.v1 import AppTest
from test_hostile_input import MAX_CHART_PAYLOAD

from attention_core.figures import matrices
from ui import views

ROOT = Path(__file__).resolve().parents[1]
FLOOR_APP = ROOT / "benchmarks" / "floor_app.py"
LONGEST = 2048
"""The most tokens the benchmarks give the floor app (control_latency.py's largest size)."""


def _floor_constant(name: str):
    """A constant of floor_app.py, read from its source (importing it would run the app)."""
    for node in ast.parse(FLOOR_APP.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == name for target in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"floor_app.py has no {name}")


def _weights_heatmap(tokens: int) -> dict:
    at = AppTest.from_file(str(FLOOR_APP), default_timeout=120)
    at.run()
    at.text_area(key="text").input(" ".join(f"w{index}" for index in range(tokens))).run()
    assert not at.exception, [exception.value for exception in at.exception]
    (chart,) = at.get("plotly_chart")
    assert len(chart.proto.spec.encode()) < MAX_CHART_PAYLOAD  # else the browser gets an error box
    return next(trace for trace in json.loads(chart.proto.spec)["data"] if trace["type"] == "heatmap")


def test_the_floor_app_draws_as_many_cells_as_the_app_at_most():
    assert _floor_constant("MAX_DRAWN_SIDE") == matrices.MAX_DRAWN_SIDE
    assert _floor_constant("MAX_CELLS_WITH_NUMBERS") == matrices.MAX_CELLS_WITH_NUMBERS
    assert _floor_constant("MAX_LISTED_NUMBERS") == views.MAX_LISTED_NUMBERS


def test_the_floor_app_shows_its_controls_and_one_chart_sent_as_the_app_sends_charts():
    at = AppTest.from_file(str(FLOOR_APP), default_timeout=60)
    at.query_params["numbers"] = "1"
    at.run()
    assert not at.exception
    assert not at.main.markdown and not at.sidebar.markdown  # nothing but the chart and the controls
    (chart,) = at.get("plotly_chart")
    assert chart.proto.theme == ""  # theme=None: the browser is not handed a themed copy
    spec = json.loads(chart.proto.spec)
    assert spec["layout"]["datarevision"] == 0 and "template" not in spec["layout"]
    (heat,) = [trace for trace in spec["data"] if trace["type"] == "heatmap"]
    assert isinstance(heat["z"], list) and heat["texttemplate"]  # a small matrix as a list, its numbers printed
    assert spec["layout"]["yaxis"]["range"] == [len(heat["y"]) - 0.5, -0.5]


def test_a_long_sentence_is_drawn_in_blocks_within_the_message_limit():
    heat = _weights_heatmap(LONGEST)
    block = -(-LONGEST // matrices.MAX_DRAWN_SIDE)
    assert len(heat["y"]) == len(heat["x"]) == -(-LONGEST // block) <= matrices.MAX_DRAWN_SIDE
    assert heat["y"][0] == f"0–{block - 1}" and heat["y"][-1].endswith(f"–{LONGEST - 1}")
    weights = decode_array(heat["z"]).astype(float)
    assert weights.shape == (len(heat["y"]), len(heat["x"]))
    assert np.all((weights > 0) & (weights <= 1))  # each block's largest weight


def test_a_short_sentence_is_drawn_cell_by_cell():
    heat = _weights_heatmap(16)
    assert heat["y"][:2] == ["0:w0", "1:w1"] and len(heat["y"]) == 16
    weights = decode_array(heat["z"]).astype(float)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-6)  # plain softmax rows, not blocks
