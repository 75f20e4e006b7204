"""benchmarks/browser_profile.py splits a CPU profile's time by whose code ran. A native call
(getBoundingClientRect, toDataURL) counts for the script that made it, V8's "(program)" for the
browser, and idle time for no one: checked on a profile written out by hand."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from browser_profile import chunk, summarise

STATIC = "http://127.0.0.1:8501/static/js/"


def frame(function: str, script: str = "") -> dict:
    return {"functionName": function, "url": STATIC + script if script else "", "lineNumber": 0, "columnNumber": 0}


def hand_made_profile() -> dict:
    """root → Plotly's draw → toDataURL (native); root → the Slider → getBoundingClientRect (native);
    root → react-dom; (program), (garbage collector) and (idle) directly under the root."""
    nodes = [
        {"id": 1, "callFrame": frame("(root)"), "children": [2, 4, 6, 7, 8, 9]},
        {"id": 2, "callFrame": frame("draw", "PlotlyChart.D9Z0_fxz.js"), "children": [3]},
        {"id": 3, "callFrame": frame("toDataURL")},
        {"id": 4, "callFrame": frame("qe", "Slider.WU6er_Bo.js"), "children": [5]},
        {"id": 5, "callFrame": frame("getBoundingClientRect")},
        {"id": 6, "callFrame": frame("Ho", "react-dom.Dzbslgj4.js")},
        {"id": 7, "callFrame": frame("(program)")},
        {"id": 8, "callFrame": frame("(garbage collector)")},
        {"id": 9, "callFrame": frame("(idle)")},
    ]
    # microseconds spent in each sampled node, in samples of 250 µs (each sample counts its own delta)
    spent = {2: 1000, 3: 3000, 5: 2000, 6: 500, 7: 4000, 8: 250, 9: 9000}
    samples = [node for node, microseconds in spent.items() for _ in range(microseconds // 250)]
    return {"nodes": nodes, "samples": samples, "timeDeltas": [250] * len(samples)}


def test_time_is_split_by_whose_code_ran():
    by_category, by_call = summarise(hand_made_profile())
    assert by_category["plotly"] == 4.0  # its own 1 ms and the 3 ms of toDataURL it called
    assert by_category["streamlit"] == 2.0  # the Slider's forced layout
    assert by_category["react"] == 0.5
    assert by_category["browser"] == 4.0
    assert by_category["gc"] == 0.25
    assert by_category["idle"] == 9.0
    assert by_call[("toDataURL", "PlotlyChart")] == 3.0
    assert by_call[("getBoundingClientRect", "Slider")] == 2.0
    assert not any(function == "(idle)" for function, _ in by_call), "idle is nobody's call"


def test_a_chunk_is_named_without_its_content_hash():
    assert chunk(STATIC + "PlotlyChart.D9Z0_fxz.js") == "PlotlyChart"
    assert chunk(STATIC + "emotion-styled.browser.esm.DdOkyKg_.js") == "emotion-styled"
