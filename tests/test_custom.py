"""attention_core.lessons.custom: typed cells, attention on typed matrices, and B − A of two traces.

Expected values come from the cells themselves or from loops written here (`_attention_by_hand`),
never from the code under test.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_core import InputError, MaskSpec, ToySettings, build_toy_trace
from attention_core.lessons.custom import (
    EXAMPLES,
    MAX_ABS_VALUE,
    CellError,
    axis_names,
    cell_errors,
    cell_text,
    changed_settings,
    custom_trace,
    dot_product_latex,
    parse_cell,
    parse_matrix,
    resize_cells,
    weight_difference,
)

# --------------------------------------------------------------------------------------
# An independent reference: attention with explicit loops and math.exp
# --------------------------------------------------------------------------------------


def _attention_by_hand(q, k, v, causal=False, scale=None):
    n, dk = len(q), len(q[0])
    m, dv = len(k), len(v[0])
    scale = 1 / math.sqrt(dk) if scale is None else scale
    raw = [[sum(q[i][t] * k[j][t] for t in range(dk)) for j in range(m)] for i in range(n)]
    scaled = [[raw[i][j] * scale for j in range(m)] for i in range(n)]
    allowed = [[(j <= i) if causal else True for j in range(m)] for i in range(n)]
    weights = []
    for i in range(n):
        top = max(scaled[i][j] for j in range(m) if allowed[i][j])
        exps = [math.exp(scaled[i][j] - top) if allowed[i][j] else 0.0 for j in range(m)]
        weights.append([e / sum(exps) for e in exps])
    output = [[sum(weights[i][j] * v[j][c] for j in range(m)) for c in range(dv)] for i in range(n)]
    return {
        "raw_scores": np.array(raw),
        "scaled_scores": np.array(scaled),
        "mask": np.array(allowed),
        "weights": np.array(weights),
        "output": np.array(output),
    }


# --------------------------------------------------------------------------------------
# One cell
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, 2.0),
        (-0.5, -0.5),
        (np.float32(1.25), 1.25),
        (np.int64(-3), -3.0),
        ("1.5", 1.5),
        (" -2 ", -2.0),
        ("1e-3", 0.001),
        ("+4", 4.0),
        (".5", 0.5),
        ("１.５", 1.5),  # full-width digits, as a Chinese input method types them
        ("\u22121", -1.0),  # typographic minus sign
        (str(MAX_ABS_VALUE), MAX_ABS_VALUE),
    ],
)
def test_parse_cell_accepts_numbers_and_numeric_strings(value, expected):
    assert parse_cell(value) == expected


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (None, "cell_empty"),
        ("", "cell_empty"),
        ("   ", "cell_empty"),
        ("abc", "cell_not_a_number"),
        ("1,5", "cell_not_a_number"),
        ("2x", "cell_not_a_number"),
        (True, "cell_not_a_number"),
        ([1], "cell_not_a_number"),
        (float("nan"), "cell_not_finite"),
        (np.nan, "cell_not_finite"),
        ("nan", "cell_not_finite"),
        (float("inf"), "cell_not_finite"),
        ("-inf", "cell_not_finite"),
        ("Infinity", "cell_not_finite"),
        ("1e999", "cell_not_finite"),  # overflows to inf when read
        (2 * MAX_ABS_VALUE, "cell_too_large"),
        ("-2e6", "cell_too_large"),
    ],
)
def test_parse_cell_refuses_bad_cells_with_a_code(value, code):
    with pytest.raises(CellError) as caught:
        parse_cell(value, "K", 2, 1)
    error = caught.value
    assert error.code == code
    assert (error.matrix, error.row, error.column) == ("K", 2, 1)
    assert error.details["matrix"] == "K" and error.details["row"] == 2 and error.details["column"] == 1
    assert isinstance(error, InputError) and isinstance(error, ValueError)


def test_cell_error_keeps_the_text_as_typed():
    with pytest.raises(CellError) as caught:
        parse_cell(" abc ", "Q", 0, 0)
    assert caught.value.value == " abc "
    with pytest.raises(CellError) as caught:
        parse_cell(None, "Q", 0, 0)
    assert caught.value.value == ""


def test_cell_text_round_trips_through_parse_cell():
    for number in (0, 3, -7, 0.5, -1e-3, 123456.75):
        assert parse_cell(cell_text(number)) == number
    assert cell_text(2.0) == "2"
    assert cell_text(None) is None
    assert cell_text("x") == "x"


# --------------------------------------------------------------------------------------
# One matrix
# --------------------------------------------------------------------------------------


def test_parse_matrix_reads_a_mixed_table():
    rows = [[1, "2", " 3.5 "], ["-1", 0.25, "1e1"]]
    matrix = parse_matrix(rows, "Q")
    np.testing.assert_array_equal(matrix, np.array([[1, 2, 3.5], [-1, 0.25, 10]]))
    assert matrix.dtype == np.float64
    assert not matrix.flags.writeable


def test_parse_matrix_names_the_first_bad_cell_row_by_row():
    rows = [["1", "2", "3"], ["4", "five", "6"], ["", "8", "nan"]]
    with pytest.raises(CellError) as caught:
        parse_matrix(rows, "V")
    assert (caught.value.matrix, caught.value.row, caught.value.column, caught.value.code) == (
        "V",
        1,
        1,
        "cell_not_a_number",
    )
    found = [(e.row, e.column, e.code) for e in cell_errors(rows, "V")]
    assert found == [(1, 1, "cell_not_a_number"), (2, 0, "cell_empty"), (2, 2, "cell_not_finite")]


@pytest.mark.parametrize("rows", [[], [[]], [[1, 2], [3]]])
def test_parse_matrix_refuses_ragged_or_empty_tables(rows):
    with pytest.raises(ValueError, match="rows of equal length"):
        parse_matrix(rows, "K")


def test_resize_cells_keeps_what_fits_and_fills_the_rest():
    rows = [["1", "2", "3"], ["4", "5", "6"]]
    assert resize_cells(rows, 3, 2) == [["1", "2"], ["4", "5"], ["0", "0"]]
    assert resize_cells(rows, 1, 4, fill=None) == [["1", "2", "3", None]]
    assert resize_cells([], 2, 1) == [["0"], ["0"]]


@given(
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(1, 8),
)
def test_growing_then_shrinking_back_restores_the_table(rows, columns, more_rows, more_columns):
    table = [[f"{i}.{j}" for j in range(columns)] for i in range(rows)]
    grown = resize_cells(table, rows + more_rows, columns + more_columns)
    assert resize_cells(grown, rows, columns) == table
    assert all(cell == "0" for row in grown[rows:] for cell in row)


def test_axis_names():
    assert axis_names(["cat", "dog"], 3, "k") == ["0:cat", "1:dog", "k2"]
    assert axis_names(["animal"], 2, "d", numbered=False) == ["animal", "d1"]
    assert axis_names(["a", "b", "c"], 2, "q") == ["0:a", "1:b"]


def test_examples_parse_and_have_consistent_shapes():
    for example in EXAMPLES.values():
        cells = example.cells
        q, k, v = (parse_matrix(cells[name], name.upper()) for name in ("q", "k", "v"))
        assert q.shape[1] == k.shape[1] and k.shape[0] == v.shape[0]
        for names, size in (
            (example.query_names, q.shape[0]),
            (example.key_names, k.shape[0]),
            (example.feature_names, q.shape[1]),
            (example.value_names, v.shape[1]),
        ):
            assert len(names) in (0, size)


# --------------------------------------------------------------------------------------
# Attention on typed numbers
# --------------------------------------------------------------------------------------

Q = [[1.0, 2.0, 0.0], [0.0, -1.0, 2.0], [0.5, 0.5, 0.5]]
K = [[2.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, -1.0, 1.0]]
V = [[3.0, 0.0], [2.0, 1.0], [0.0, 3.0], [0.0, 1.0]]


@pytest.mark.parametrize("causal", [False, True])
def test_custom_trace_matches_the_loops(causal):
    trace = custom_trace(np.array(Q), np.array(K), np.array(V), causal=causal)
    expected = _attention_by_hand(Q, K, V, causal=causal)
    for name in ("raw_scores", "scaled_scores", "weights", "output"):
        np.testing.assert_allclose(trace.matrix(name), expected[name], rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_array_equal(trace.matrix("mask"), expected["mask"])
    assert trace.attention.scale == pytest.approx(1 / math.sqrt(3))


def test_custom_trace_labels_every_axis():
    trace = custom_trace(
        np.array(Q),
        np.array(K),
        np.array(V),
        query_labels=["0:a", "1:b", "2:c"],
        key_labels=["0:w", "1:x", "2:y", "3:z"],
        feature_labels=["f", "g", "h"],
        value_labels=["u", "v"],
    )
    assert trace.axis_labels("raw_scores") == (["0:a", "1:b", "2:c"], ["0:w", "1:x", "2:y", "3:z"])
    assert trace.axis_labels("q") == (["0:a", "1:b", "2:c"], ["f", "g", "h"])
    assert trace.axis_labels("k") == (["0:w", "1:x", "2:y", "3:z"], ["f", "g", "h"])
    assert trace.axis_labels("v") == (["0:w", "1:x", "2:y", "3:z"], ["u", "v"])
    assert trace.axis_labels("output") == (["0:a", "1:b", "2:c"], ["u", "v"])
    default = custom_trace(np.array(Q), np.array(K), np.array(V))
    assert default.query_labels == ("q0", "q1", "q2") and default.value_labels == ("d0", "d1")
    with pytest.raises(KeyError):
        default.matrix("x_query")
    with pytest.raises(ValueError, match="labels"):
        custom_trace(np.array(Q), np.array(K), np.array(V), query_labels=["only one"])


def test_dot_product_latex_spells_out_the_score():
    trace = custom_trace(np.array(Q), np.array(K), np.array(V))
    latex = dot_product_latex(trace, 1, 3)
    # q_1 · k_3 = 0·0 + (−1)·(−1) + 2·1 = 3, and 3/√3 ≈ 1.732
    assert r"0\cdot0 + (-1)\cdot(-1) + 2\cdot1 = 3" in latex
    assert r"\sqrt{3}} = 1.732" in latex


# --------------------------------------------------------------------------------------
# B − A of two toy traces
# --------------------------------------------------------------------------------------


def _difference_by_hand(weights_a, weights_b):
    n, m = weights_a.shape
    diff = [[float(weights_b[i, j]) - float(weights_a[i, j]) for j in range(m)] for i in range(n)]
    best = (0, 0)
    for i in range(n):
        for j in range(m):
            if abs(diff[i][j]) > abs(diff[best[0]][best[1]]):
                best = (i, j)
    return np.array(diff), best


SETTING_PAIRS = [
    (ToySettings(), ToySettings(scale=1.0)),
    (ToySettings(dk=4), ToySettings(dk=64)),
    (ToySettings(), ToySettings(mask=MaskSpec(causal=True))),
    (ToySettings(query_text="猫坐在垫子上。"), ToySettings(query_text="猫坐在垫子上。", seed=3, projection="identity")),
]


@pytest.mark.parametrize(("settings_a", "settings_b"), SETTING_PAIRS)
def test_weight_difference_matches_the_loops(settings_a, settings_b):
    trace_a, trace_b = build_toy_trace(settings_a), build_toy_trace(settings_b)
    difference = weight_difference(trace_a, trace_b)
    diff, (i, j) = _difference_by_hand(trace_a.attention.weights, trace_b.attention.weights)
    np.testing.assert_allclose(difference.diff, diff, rtol=0, atol=1e-15)
    assert difference.diff.shape == (len(trace_a.query_tokens), len(trace_a.key_tokens))
    assert difference.argmax == (i, j)
    assert difference.max_abs == pytest.approx(abs(diff[i, j]))
    assert difference.change == pytest.approx(diff[i, j])
    assert difference.weight_a == trace_a.attention.weights[i, j]
    assert difference.weight_b == trace_b.attention.weights[i, j]
    assert difference.changed
    sides = ((difference.peak_a, trace_a.attention.weights), (difference.peak_b, trace_b.attention.weights))
    for peak, weights in sides:
        rows = [max(float(w) for w in row) for row in weights]
        assert peak == pytest.approx(sum(rows) / len(rows))
    assert not difference.diff.flags.writeable


def test_weight_difference_rows_sum_to_zero():
    difference = weight_difference(build_toy_trace(ToySettings()), build_toy_trace(ToySettings(dk=32, seed=5)))
    np.testing.assert_allclose(difference.diff.sum(axis=1), 0.0, atol=1e-12)


def test_weight_difference_marks_cells_both_sides_mask():
    causal = ToySettings(mask=MaskSpec(causal=True))
    difference = weight_difference(build_toy_trace(causal), build_toy_trace(dataclasses.replace(causal, dk=16)))
    n = difference.diff.shape[0]
    expected = [[j > i for j in range(n)] for i in range(n)]
    np.testing.assert_array_equal(difference.both_masked, expected)
    assert np.all(difference.diff[difference.both_masked] == 0)


def test_identical_settings_give_no_change():
    trace = build_toy_trace(ToySettings())
    difference = weight_difference(trace, build_toy_trace(ToySettings()))
    assert not difference.changed
    assert difference.max_abs == 0.0
    assert difference.peak_a == difference.peak_b


def test_weight_difference_refuses_different_tokens():
    with pytest.raises(ValueError, match="same query and key tokens"):
        weight_difference(build_toy_trace(ToySettings()), build_toy_trace(ToySettings(text="A different sentence.")))


def test_changed_settings_names_the_fields():
    a = ToySettings()
    assert changed_settings(a, a) == []
    assert changed_settings(a, dataclasses.replace(a, dk=64, scale=1.0)) == ["dk", "scale"]
    assert changed_settings(a, dataclasses.replace(a, mask=MaskSpec(causal=True))) == ["mask"]
