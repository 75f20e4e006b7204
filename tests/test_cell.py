"""follow_cell: every number of one cell equals the trace's own record and an explicit loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import ToySettings, build_toy_trace, causal_mask, scaled_dot_product_attention
from attention_core.lessons.cell import CellTrace, follow_cell

N, M, DK, DV = 4, 6, 5, 3


def _qkv(seed: int = 0, n: int = N, m: int = M, dk: int = DK, dv: int = DV):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, dk)), rng.normal(size=(m, dk)), rng.normal(size=(m, dv))


def _masks() -> dict[str, np.ndarray | None]:
    partial = causal_mask(N, M)  # (N, M): query i sees keys 0..i
    one_row_empty = partial.copy()
    one_row_empty[2] = False
    return {
        "none": None,
        "causal": partial,
        "one row fully masked": one_row_empty,
        "all masked": np.zeros((N, M), dtype=bool),
    }


def loop_reference(q, k, v, mask, i: int, j: int) -> dict:
    """Cell (i, j) by hand: Python floats, loops and math.exp, nothing shared with the engine."""
    n, dk = len(q), len(q[0])
    m, dv = len(v), len(v[0])
    allowed = [True] * m if mask is None else [bool(mask[i][c]) for c in range(m)]
    products = [float(q[i][t]) * float(k[j][t]) for t in range(dk)]
    raw = 0.0
    for product in products:
        raw += product
    scale = 1.0 / math.sqrt(dk)
    row = []
    for c in range(m):
        dot = 0.0
        for t in range(dk):
            dot += float(q[i][t]) * float(k[c][t])
        row.append(dot * scale)
    if any(allowed):
        top = max(score for score, ok in zip(row, allowed, strict=True) if ok)
        exps = [math.exp(score - top) if ok else 0.0 for score, ok in zip(row, allowed, strict=True)]
    else:
        top, exps = 0.0, [0.0] * m
    total = sum(exps)
    weights = [e / total if total > 0 else 0.0 for e in exps]
    contributions = [[weights[c] * float(v[c][f]) for f in range(dv)] for c in range(m)]
    output = [sum(contributions[c][f] for c in range(m)) for f in range(dv)]
    assert n > i
    return {
        "products": products,
        "raw": raw,
        "scaled": raw * scale,
        "allowed": allowed[j],
        "row_max": top,
        "exp_row": exps,
        "row_sum": total,
        "weights_row": weights,
        "weight": weights[j],
        "contributions": contributions,
        "output": output,
    }


def _assert_matches_trace(cell: CellTrace, trace, i: int, j: int) -> None:
    np.testing.assert_array_equal(cell.q_i, trace.q[i])
    np.testing.assert_array_equal(cell.k_j, trace.k[j])
    assert cell.raw_score == pytest.approx(trace.raw_scores[i, j], rel=1e-12, abs=1e-12)
    assert cell.scaled_score == pytest.approx(trace.scaled_scores[i, j], rel=1e-12, abs=1e-12)
    assert cell.allowed == bool(trace.mask[i, j])
    np.testing.assert_array_equal(cell.row_allowed, trace.mask[i])
    np.testing.assert_array_equal(cell.row_scores, trace.masked_scores[i])
    assert cell.fully_masked == bool(trace.fully_masked_rows[i])
    np.testing.assert_allclose(cell.exp_row / cell.row_sum if cell.row_sum else cell.exp_row, trace.weights[i],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cell.weights_row, trace.weights[i], rtol=1e-12, atol=1e-15)
    assert cell.weight == pytest.approx(trace.weights[i, j], rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(cell.contributions, trace.weights[i][:, None] * trace.v, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cell.contributions.sum(axis=0), trace.output[i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cell.output_row, trace.output[i], rtol=1e-12, atol=1e-12)


def _assert_matches_loops(cell: CellTrace, expected: dict) -> None:
    np.testing.assert_allclose(cell.products, expected["products"], rtol=1e-12, atol=1e-15)
    assert cell.raw_score == pytest.approx(expected["raw"], rel=1e-12, abs=1e-12)
    assert cell.scaled_score == pytest.approx(expected["scaled"], rel=1e-12, abs=1e-12)
    assert cell.allowed == expected["allowed"]
    assert cell.row_max == pytest.approx(expected["row_max"], rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(cell.exp_row, expected["exp_row"], rtol=1e-12, atol=1e-15)
    assert cell.row_sum == pytest.approx(expected["row_sum"], rel=1e-12)
    np.testing.assert_allclose(cell.weights_row, expected["weights_row"], rtol=1e-12, atol=1e-15)
    assert cell.weight == pytest.approx(expected["weight"], rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(cell.contributions, expected["contributions"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cell.output_row, expected["output"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mask_name", list(_masks()))
def test_every_cell_equals_the_trace_record_and_the_loop_reference(mask_name):
    q, k, v = _qkv()
    mask = _masks()[mask_name]
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for i in range(N):
        for j in range(M):
            cell = follow_cell(trace, i, j)
            assert (cell.i, cell.j) == (i, j)
            _assert_matches_trace(cell, trace, i, j)
            _assert_matches_loops(cell, loop_reference(q, k, v, mask, i, j))


def test_shapes_are_documented_ones():
    q, k, v = _qkv()
    cell = follow_cell(scaled_dot_product_attention(q, k, v), 1, 2)
    assert cell.q_i.shape == cell.k_j.shape == cell.products.shape == (DK,)
    assert cell.row_allowed.shape == cell.row_scores.shape == cell.exp_row.shape == cell.weights_row.shape == (M,)
    assert cell.shifted_scores.shape == (M,)
    assert cell.v.shape == cell.contributions.shape == (M, DV)
    assert cell.output_row.shape == cell.contribution.shape == (DV,)
    np.testing.assert_array_equal(cell.contribution, cell.contributions[2])


def test_the_largest_allowed_score_gets_exp_exactly_one():
    q, k, v = _qkv(seed=3)
    mask = causal_mask(N, M)
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for i in range(N):
        cell = follow_cell(trace, i, 0)
        best = int(np.argmax(np.where(mask[i], trace.scaled_scores[i], -np.inf)))
        assert cell.exp_row[best] == 1.0
        assert cell.row_max == trace.scaled_scores[i, best]
        assert np.all(cell.shifted_scores[mask[i]] <= 0)


def test_a_masked_cell_has_score_minus_infinity_and_weight_zero():
    q, k, v = _qkv()
    trace = scaled_dot_product_attention(q, k, v, mask=causal_mask(N, M))
    cell = follow_cell(trace, 1, 4)  # query 1 may not look ahead at key 4
    assert not cell.allowed and not cell.fully_masked
    assert math.isfinite(cell.scaled_score)  # the score itself is still computed...
    assert cell.row_scores[4] == -np.inf  # ...then replaced by −∞
    assert cell.exp_row[4] == 0.0 and cell.weight == 0.0
    np.testing.assert_array_equal(cell.contributions[4], np.zeros(DV))
    assert cell.weights_row.sum() == pytest.approx(1.0)


def test_a_fully_masked_row_gives_zeros_and_never_nan():
    q, k, v = _qkv()
    mask = _masks()["one row fully masked"]
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for j in range(M):
        cell = follow_cell(trace, 2, j)
        assert cell.fully_masked and not cell.allowed
        assert cell.row_max == 0.0 and cell.row_sum == 0.0 and cell.weight == 0.0
        for array in (cell.exp_row, cell.weights_row, cell.contributions, cell.output_row):
            assert not np.isnan(array).any()
            np.testing.assert_array_equal(array, np.zeros_like(array))
        assert np.all(cell.shifted_scores == -np.inf)
    assert not follow_cell(trace, 1, 0).fully_masked  # the other rows are untouched


def test_cross_attention_lets_i_range_over_queries_and_j_over_keys():
    toy = build_toy_trace(ToySettings(query_text="猫坐在垫子上。"))
    trace = toy.attention
    n, m = len(toy.query_tokens), len(toy.key_tokens)
    assert n != m
    cell = follow_cell(trace, n - 1, m - 1)
    _assert_matches_trace(cell, trace, n - 1, m - 1)
    _assert_matches_loops(cell, loop_reference(trace.q, trace.k, trace.v, None, n - 1, m - 1))
    with pytest.raises(ValueError, match=f"i={m - 1} is out of range: the trace has {n} queries"):
        follow_cell(trace, m - 1, 0)  # a key position is not a query position when n < m


@pytest.mark.parametrize(
    ("i", "j", "message"),
    [
        (N, 0, rf"i={N} is out of range: the trace has {N} queries \(positions 0 to {N - 1}\)"),
        (-1, 0, "i=-1 is out of range"),
        (0, M, rf"j={M} is out of range: the trace has {M} keys \(positions 0 to {M - 1}\)"),
        (0, -3, "j=-3 is out of range"),
        (1.0, 0, "i must be an integer position; got 1.0"),
        (0, True, "j must be an integer position; got True"),
        ("0", 0, "i must be an integer position"),
    ],
)
def test_positions_are_validated_with_clear_messages(i, j, message):
    trace = scaled_dot_product_attention(*_qkv())
    with pytest.raises(ValueError, match=message):
        follow_cell(trace, i, j)


def test_numpy_integers_are_accepted():
    trace = scaled_dot_product_attention(*_qkv())
    cell = follow_cell(trace, np.int64(2), np.int32(3))
    assert (cell.i, cell.j) == (2, 3) and type(cell.i) is int


def test_multi_head_traces_are_refused():
    q, k, v = (np.stack([array, array]) for array in _qkv())  # (2, ..., ...): two heads
    with pytest.raises(ValueError, match="select one head first"):
        follow_cell(scaled_dot_product_attention(q, k, v), 0, 0)


def test_the_record_is_read_only():
    cell = follow_cell(scaled_dot_product_attention(*_qkv()), 0, 1)
    for array in (cell.q_i, cell.k_j, cell.products, cell.exp_row, cell.weights_row, cell.contributions,
                  cell.output_row, cell.row_scores, cell.shifted_scores, cell.v):
        with pytest.raises(ValueError):
            array[0] = 1.0
    with pytest.raises(AttributeError):
        cell.weight = 0.5  # type: ignore[misc]


def test_a_custom_scale_is_followed():
    q, k, v = _qkv()
    trace = scaled_dot_product_attention(q, k, v, scale=1.0)
    cell = follow_cell(trace, 0, 1)
    assert cell.scale == 1.0
    assert cell.scaled_score == pytest.approx(cell.raw_score)
    _assert_matches_trace(cell, trace, 0, 1)


def test_float32_traces_stay_close_to_their_record():
    q, k, v = (array.astype(np.float32) for array in _qkv())
    trace = scaled_dot_product_attention(q, k, v)
    cell = follow_cell(trace, 3, 5)
    assert cell.raw_score == pytest.approx(float(trace.raw_scores[3, 5]), rel=1e-5, abs=1e-5)
    np.testing.assert_allclose(cell.weights_row, trace.weights[3], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(cell.output_row, trace.output[3], rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 5),
    m=st.integers(1, 6),
    dk=st.integers(1, 6),
    dv=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    mask_density=st.sampled_from([None, 0.0, 0.3, 0.7, 1.0]),
    data=st.data(),
)
def test_any_cell_of_any_trace_matches_its_record(n, m, dk, dv, seed, mask_density, data):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(n, dk)) * 3, rng.normal(size=(m, dk)) * 3, rng.normal(size=(m, dv))
    mask = None if mask_density is None else rng.random((n, m)) < mask_density
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    i = data.draw(st.integers(0, n - 1), label="i")
    j = data.draw(st.integers(0, m - 1), label="j")
    cell = follow_cell(trace, i, j)
    _assert_matches_trace(cell, trace, i, j)
    _assert_matches_loops(cell, loop_reference(q, k, v, mask, i, j))
    assert not any(np.isnan(a).any() for a in (cell.exp_row, cell.weights_row, cell.contributions, cell.output_row))
