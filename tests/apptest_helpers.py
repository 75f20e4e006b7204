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


def key_segments(spec: dict, dv: int) -> list[dict]:
    """Each key's stacked bars in the follow-one-cell output chart, key by key: y, x, colour,
    opacity, outline width and hover label (its first line, which names the key).

    Up to the legend's limit the chart has one bar trace per key; past it, one trace holding
    dv bars per key in turn, named in `customdata`, and each key's bars must look alike.
    """
    stacked = [trace for trace in spec["data"] if trace.get("type") == "bar"]
    if len(stacked) > 1 or "name" in stacked[0]:
        return [
            {"y": decode_array(bar["y"]), "x": list(bar["x"]), "colour": bar["marker"]["color"],
             "opacity": float(bar["marker"]["opacity"]), "outline": float(bar["marker"]["line"]["width"]),
             "label": bar["hovertemplate"].split("<br>")[0]}
            for bar in stacked
        ]
    (bar,) = stacked
    assert bar["showlegend"] is False

    def per_key(values) -> list:
        """One value per key, checked to be the same over the key's dv bars."""
        rows = [list(values[start:start + dv]) for start in range(0, len(values), dv)]
        assert all(len(set(row)) == 1 for row in rows), rows
        return [row[0] for row in rows]

    marker, label = bar["marker"], bar["hovertemplate"].split("<br>")[0]
    return [
        {"y": y, "x": list(bar["x"][start:start + dv]), "colour": colour, "opacity": float(opacity),
         "outline": float(outline), "label": label.replace("%{customdata}", key)}
        for start, y, colour, opacity, outline, key in zip(
            range(0, len(bar["x"]), dv), decode_array(bar["y"]).reshape(-1, dv), per_key(marker["color"]),
            per_key(list(decode_array(marker["opacity"]))), per_key(list(decode_array(marker["line"]["width"]))),
            per_key(bar["customdata"]), strict=True,
        )
    ]
