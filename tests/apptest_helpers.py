"""Helpers for AppTest: run a page of the app and read back what its Plotly charts draw."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"


def run_app(page: str | None = None, timeout: float = 60, **session_state) -> AppTest:
    """Run the app (optionally switched to `pages/<page>.py`) with some session state preset.

    Widget values are preset through their keys, as a user's earlier choices would be.
    """
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    for key, value in session_state.items():
        at.session_state[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}.py")
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def run_page_alone(page: Path, timeout: float = 120, **session_state) -> AppTest:
    """Run one page file on its own (not through app.py's menu) with some session state preset."""
    at = AppTest.from_file(str(page), default_timeout=timeout)
    for key, value in session_state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page_text(at: AppTest) -> str:
    """The page's prose: its title, subheaders, Markdown and captions."""
    return " ".join(element.value for kind in ("markdown", "caption", "subheader", "title") for element in at.get(kind))


def spec_ending(at: AppTest, suffix: str) -> dict:
    """The figure spec of the chart whose key ends with `suffix`."""
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith(suffix):
            return spec
    raise AssertionError(f"no chart ending in {suffix}: {chart_ids(at)}")


def plotly_specs(at: AppTest) -> list[dict]:
    """The JSON spec of every Plotly chart on the current page, in page order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def chart_ids(at: AppTest) -> list[str]:
    """The element id of every Plotly chart (it contains the chart's `key=`)."""
    return [chart.proto.id for chart in at.get("plotly_chart")]


def decode_array(value) -> np.ndarray:
    """A Plotly data array from a spec: a plain list, or a base64 typed array {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            array = array.reshape([int(size) for size in str(value["shape"]).split(",")])
        return array
    return np.array(value, dtype=float)


def heatmap_traces(spec: dict) -> list[dict]:
    """The heatmap traces of one figure spec."""
    return [trace for trace in spec["data"] if trace.get("type") == "heatmap"]


def heatmap_z(spec: dict) -> np.ndarray:
    """The z matrix of the first heatmap of one figure spec (NaN where a cell is a gap)."""
    return decode_array(heatmap_traces(spec)[0]["z"]).astype(float)
