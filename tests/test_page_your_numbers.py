"""The "Type your own numbers" page, run by AppTest.

AppTest cannot type into an `st.data_editor`, so the tests give the page its numbers the
way the page itself keeps them: the plain session-state entry "your_numbers.cells"
({"q", "k", "v"}: lists of rows, as the editors hold them). The size controls, the
causal toggle and the example selector are real widgets and are driven as a user would.
Every drawn matrix is compared with attention computed here with loops.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from apptest_helpers import chart_ids, heatmap_z, plotly_specs, run_app

from attention_core.lessons.custom import EXAMPLES

PAGE = "your-numbers"
TEXT = "The cat sat on the mat."  # the sidebar's sentence (unused by this page, but the sidebar needs one)
CELLS = {
    "q": [["1", "0.5"], ["-1", "2"], ["0", "3"]],
    "k": [["2", 1], ["0", "1.5"], ["1", "-1"], ["4", "0"]],
    "v": [["1", "0", "2"], ["0", "1", "0"], ["3", "3", "3"], ["-1", "0", "1"]],
}


def _numbers(rows):
    return [[float(x) for x in row] for row in rows]


def _attention_by_hand(q, k, v, causal=False):
    n, dk, m, dv = len(q), len(q[0]), len(k), len(v[0])
    raw = [[sum(q[i][t] * k[j][t] for t in range(dk)) for j in range(m)] for i in range(n)]
    scaled = [[s / math.sqrt(dk) for s in row] for row in raw]
    weights = []
    for i in range(n):
        allowed = [not causal or j <= i for j in range(m)]
        top = max(s for s, ok in zip(scaled[i], allowed, strict=True) if ok)
        exps = [math.exp(s - top) if ok else 0.0 for s, ok in zip(scaled[i], allowed, strict=True)]
        weights.append([e / sum(exps) for e in exps])
    output = [[sum(weights[i][j] * v[j][c] for j in range(m)) for c in range(dv)] for i in range(n)]
    return {"raw_scores": raw, "scaled_scores": scaled, "weights": weights, "output": output, "masked": None}


def drawn(at) -> dict[str, np.ndarray]:
    """z of every chart, keyed by the matrix name at the end of its key (mask charts included)."""
    return {
        chart_id.rsplit("-", 1)[-1]: heatmap_z(spec)
        for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True)
    }


def assert_drawn_equals_by_hand(at, cells, causal=False):
    expected = _attention_by_hand(_numbers(cells["q"]), _numbers(cells["k"]), _numbers(cells["v"]), causal=causal)
    charts = drawn(at)
    for name in ("raw_scores", "scaled_scores", "weights", "output"):
        want = np.array(expected[name])
        if causal and name == "weights":  # QKᵀ and QKᵀ/√dk hold every pair: the mask comes after them
            n, m = want.shape
            want = np.where(np.tril(np.ones((n, m), dtype=bool)), want, np.nan)  # masked weights are drawn as gaps
        np.testing.assert_allclose(charts[name], want, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_example_is_drawn_from_its_numbers(lang):
    at = run_app(page=PAGE, lang=lang, text=TEXT)
    assert_drawn_equals_by_hand(at, EXAMPLES["features"].cells)
    assert {"raw_scores", "scaled_scores", "weights", "output"} <= set(drawn(at))
    assert not at.error


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_typed_numbers_are_drawn_stage_by_stage(lang):
    at = run_app(page=PAGE, lang=lang, text=TEXT, **{"your_numbers.cells": CELLS})
    # the size controls follow the typed tables
    assert [at.number_input(key=f"your_numbers.{size}").value for size in ("n", "m", "dk", "dv")] == [3, 4, 2, 3]
    assert_drawn_equals_by_hand(at, CELLS)
    assert "mask" not in drawn(at)
    # the editors show the typed numbers, labelled generically
    editors = {
        df.key.split(".")[2]: df.value for df in at.dataframe if (df.key or "").startswith("your_numbers.editor")
    }
    assert editors["q"].shape == (3, 2)
    assert list(editors["k"].index) == ["k0", "k1", "k2", "k3"]
    assert editors["k"].iloc[0, 1] == "1"  # typed as the number 1, shown as text


def test_causal_toggle_masks_later_keys():
    at = run_app(page=PAGE, text=TEXT, **{"your_numbers.cells": CELLS})
    at.toggle(key="your_numbers.causal").set_value(True).run()
    assert not at.exception
    charts = drawn(at)
    n, m = 3, 4
    np.testing.assert_array_equal(charts["mask"], np.tril(np.ones((n, m))))
    assert "masked_scores" in charts
    assert_drawn_equals_by_hand(at, CELLS, causal=True)


def test_changing_sizes_keeps_the_numbers_that_fit():
    at = run_app(page=PAGE, text=TEXT, **{"your_numbers.cells": CELLS})
    at.number_input(key="your_numbers.n").set_value(2).run()
    at.number_input(key="your_numbers.dk").set_value(3).run()
    assert not at.exception
    cells = at.session_state["your_numbers.cells"]
    assert cells["q"] == [["1", "0.5", "0"], ["-1", "2", "0"]]
    assert cells["k"] == [["2", "1", "0"], ["0", "1.5", "0"], ["1", "-1", "0"], ["4", "0", "0"]]
    assert cells["v"] == CELLS["v"]
    assert drawn(at)["raw_scores"].shape == (2, 4)
    assert_drawn_equals_by_hand(at, cells)


@pytest.mark.parametrize(
    ("bad", "code_words"),
    [
        ("abc", ("“abc”", "not a number")),
        ("", ("empty",)),
        ("nan", ("“nan”", "not a finite number")),
        ("inf", ("“inf”", "not a finite number")),
    ],
)
def test_a_bad_cell_is_named_and_nothing_is_computed(bad, code_words):
    cells = {name: [list(row) for row in rows] for name, rows in CELLS.items()}
    cells["k"][2][1] = bad
    at = run_app(page=PAGE, text=TEXT, **{"your_numbers.cells": cells})
    messages = [error.value for error in at.error]
    assert len(messages) == 1
    assert messages[0].startswith("K, row k2, column d1")
    for words in code_words:
        assert words in messages[0]
    assert plotly_specs(at) == []  # no stage is drawn from a broken table


def test_bad_cells_in_chinese():
    cells = {name: [list(row) for row in rows] for name, rows in CELLS.items()}
    cells["q"][0][0] = "一"
    cells["v"][1][2] = None
    at = run_app(page=PAGE, text=TEXT, lang="zh", **{"your_numbers.cells": cells})
    messages = [error.value for error in at.error]
    assert len(messages) == 2
    assert messages[0].startswith("Q（行 q0，列 d0）") and "不是数字" in messages[0]
    assert messages[1].startswith("V（行 k1，列 d2）") and "格子是空的" in messages[1]


def test_loading_an_example_replaces_the_tables():
    at = run_app(page=PAGE, text=TEXT, **{"your_numbers.cells": CELLS})
    at.selectbox(key="your_numbers.example").set_value("loud").run()
    assert not at.exception
    assert at.session_state["your_numbers.cells"] == EXAMPLES["loud"].cells
    assert at.number_input(key="your_numbers.n").value == len(EXAMPLES["loud"].q)
    assert_drawn_equals_by_hand(at, EXAMPLES["loud"].cells)
    # the example's words label the axes
    raw = plotly_specs(at)[0]["data"][0]
    assert raw["y"] == ["0:pet?", "1:ride?"] and raw["x"][0] == "0:cat"


def test_works_with_cross_attention_in_the_sidebar():
    at = run_app(page=PAGE, text=TEXT, cross=True, query_text="猫坐在垫子上。", **{"your_numbers.cells": CELLS})
    assert_drawn_equals_by_hand(at, CELLS)
