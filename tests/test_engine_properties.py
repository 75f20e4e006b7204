"""Property tests of the attention engine: invariants that hold for every input.

Hypothesis draws small shapes, values and masks; each property is a consequence of the
formula softmax(mask(Q Kᵀ · scale)) V, not of the implementation.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_core.attention as attention_module
from attention_core.attention import AttentionTrace, masked_softmax, scaled_dot_product_attention
from attention_core.multihead import multi_head_attention

FAST = settings(max_examples=50, deadline=None)
ARRAY_FIELDS = (
    "q",
    "k",
    "v",
    "raw_scores",
    "scaled_scores",
    "mask",
    "masked_scores",
    "weights",
    "output",
    "fully_masked_rows",
)
DOCUMENTED_FIELDS = (*ARRAY_FIELDS, "scale")

sizes = st.integers(min_value=1, max_value=5)
dtypes = st.sampled_from([np.float64, np.float32])


def finite_floats(bound: float, dtype=np.float64):
    """Finite floats in [-bound, bound], representable in `dtype`."""
    width = 32 if dtype == np.float32 else 64
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False, width=width)


@st.composite
def attention_inputs(draw, bound: float = 10.0, with_mask: bool = True, dtype=None):
    """(q, k, v, mask) with n, m, dk, dv in 1..5; mask None or a random (n, m) boolean array."""
    n, m, dk, dv = draw(sizes), draw(sizes), draw(sizes), draw(sizes)
    dtype = draw(dtypes) if dtype is None else dtype
    elements = finite_floats(bound, dtype)
    q = draw(hnp.arrays(dtype, (n, dk), elements=elements))
    k = draw(hnp.arrays(dtype, (m, dk), elements=elements))
    v = draw(hnp.arrays(dtype, (m, dv), elements=elements))
    mask = draw(st.none() | hnp.arrays(np.bool_, (n, m))) if with_mask else None
    return q, k, v, mask


def effective_mask(mask, n, m):
    return np.ones((n, m), dtype=bool) if mask is None else mask


# ----- weights -------------------------------------------------------------------------


@FAST
@given(attention_inputs())
def test_weight_rows_sum_to_one_or_zero_when_fully_masked(inputs):
    """Each row of weights sums to 1, or to exactly 0 for a fully masked row."""
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    sums = trace.weights.astype(np.float64).sum(axis=-1)
    allowed = effective_mask(mask, q.shape[0], k.shape[0])
    fully = ~allowed.any(axis=-1)
    np.testing.assert_array_equal(trace.fully_masked_rows, fully)
    np.testing.assert_allclose(sums[~fully], 1.0, rtol=1e-5)
    np.testing.assert_array_equal(sums[fully], 0.0)


@FAST
@given(attention_inputs())
def test_masked_weights_are_exactly_zero(inputs):
    """Wherever the mask is False the weight is exactly 0.0."""
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    allowed = effective_mask(mask, q.shape[0], k.shape[0])
    assert np.all(trace.weights[~allowed] == 0.0)
    assert np.all(np.isneginf(trace.masked_scores[~allowed]))
    assert np.all(np.isfinite(trace.masked_scores[allowed]))


@FAST
@given(attention_inputs(bound=1e3))
def test_weights_lie_between_zero_and_one(inputs):
    """Every weight is in [0, 1]."""
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert np.all(trace.weights >= 0.0)
    assert np.all(trace.weights <= 1.0)


@FAST
@given(
    hnp.arrays(np.float64, st.tuples(sizes, sizes), elements=finite_floats(100.0)),
    st.floats(-1e4, 1e4, allow_nan=False),
    st.data(),
)
def test_masked_softmax_is_invariant_to_adding_a_constant(scores, shift, data):
    """masked_softmax(scores + c, mask) == masked_softmax(scores, mask) for any constant c."""
    mask = data.draw(st.none() | hnp.arrays(np.bool_, scores.shape))
    np.testing.assert_allclose(
        masked_softmax(scores + shift, mask), masked_softmax(scores, mask), rtol=1e-9, atol=1e-12
    )


@FAST
@given(hnp.arrays(np.float64, st.tuples(sizes, sizes), elements=finite_floats(100.0)), st.data())
def test_masked_softmax_matches_exp_formula(scores, data):
    """masked_softmax equals exp(s) / Σ exp(s) over allowed entries, 0 on masked entries and empty rows."""
    mask = data.draw(hnp.arrays(np.bool_, scores.shape))
    got = masked_softmax(scores, mask)
    for i in range(scores.shape[0]):
        allowed = [j for j in range(scores.shape[1]) if mask[i, j]]
        top = max((scores[i, j] for j in allowed), default=0.0)
        total = sum(math.exp(scores[i, j] - top) for j in allowed)
        for j in range(scores.shape[1]):
            expected = math.exp(scores[i, j] - top) / total if mask[i, j] else 0.0
            assert got[i, j] == pytest.approx(expected, rel=1e-9, abs=1e-300)


@FAST
@given(attention_inputs(dtype=np.float64), st.data())
def test_shifting_all_keys_by_one_vector_leaves_weights_unchanged(inputs, data):
    """k + u (same u for every key) adds q_i·u to all of row i's scores, so the weights do not change."""
    q, k, v, mask = inputs
    u = data.draw(hnp.arrays(np.float64, (k.shape[1],), elements=finite_floats(10.0)))
    before = scaled_dot_product_attention(q, k, v, mask=mask)
    after = scaled_dot_product_attention(q, k + u, v, mask=mask)
    np.testing.assert_allclose(after.weights, before.weights, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(after.output, before.output, rtol=1e-7, atol=1e-7)


@FAST
@given(attention_inputs(dtype=np.float64), st.randoms(use_true_random=False))
def test_permuting_keys_permutes_weight_columns_and_keeps_output(inputs, random):
    """Permuting the keys, values and mask columns together permutes the weights' columns; output is unchanged."""
    q, k, v, mask = inputs
    m = k.shape[0]
    perm = list(range(m))
    random.shuffle(perm)
    perm = np.array(perm)
    permuted_mask = None if mask is None else mask[:, perm]
    before = scaled_dot_product_attention(q, k, v, mask=mask)
    after = scaled_dot_product_attention(q, k[perm], v[perm], mask=permuted_mask)
    np.testing.assert_allclose(after.raw_scores, before.raw_scores[:, perm], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(after.weights, before.weights[:, perm], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(after.output, before.output, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(after.fully_masked_rows, before.fully_masked_rows)


@FAST
@given(attention_inputs(dtype=np.float64), st.randoms(use_true_random=False))
def test_permuting_queries_permutes_rows(inputs, random):
    """Permuting the queries (and mask rows) permutes the rows of weights and output."""
    q, k, v, mask = inputs
    perm = list(range(q.shape[0]))
    random.shuffle(perm)
    perm = np.array(perm)
    before = scaled_dot_product_attention(q, k, v, mask=mask)
    after = scaled_dot_product_attention(q[perm], k, v, mask=None if mask is None else mask[perm])
    np.testing.assert_allclose(after.weights, before.weights[perm], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(after.output, before.output[perm], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(after.fully_masked_rows, before.fully_masked_rows[perm])


@FAST
@given(attention_inputs(bound=100.0))
def test_output_rows_lie_within_allowed_value_range(inputs):
    """Each output row of a not-fully-masked query is within the per-column min/max of its allowed V rows."""
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    allowed = effective_mask(mask, q.shape[0], k.shape[0])
    v64 = v.astype(np.float64)
    slack = 1e-4 if v.dtype == np.float32 else 1e-9
    for i in range(q.shape[0]):
        if not allowed[i].any():
            np.testing.assert_array_equal(trace.output[i], 0.0)
            continue
        rows = v64[allowed[i]]
        low, high = rows.min(axis=0), rows.max(axis=0)
        span = np.maximum(high - low, 1.0)
        assert np.all(trace.output[i] >= low - slack * span)
        assert np.all(trace.output[i] <= high + slack * span)


@FAST
@given(attention_inputs(bound=1e3), st.sampled_from([None, 1.0, 1e-3]))
def test_no_nan_or_inf_for_large_scores(inputs, scale):
    """Inputs up to ±1e3 (scores up to ~±1e6 with scale 1): no NaN anywhere, no inf outside masked_scores."""
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    for name in ARRAY_FIELDS:
        array = getattr(trace, name)
        if array.dtype != np.bool_:
            assert not np.any(np.isnan(array)), name
    for name in ("raw_scores", "scaled_scores", "weights", "output"):
        assert np.all(np.isfinite(getattr(trace, name))), name


@FAST
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 3),
    st.floats(1.0, 1e6),
    st.integers(0, 2**32 - 1),
    dtypes,
)
def test_scores_of_magnitude_up_to_1e6_are_stable(n, m, dk, magnitude, seed, dtype):
    """Scores scaled to magnitude up to 1e6 (via scale): weights finite, rows sum to 1, argmax weight = argmax score."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, size=(n, dk)).astype(dtype)
    k = rng.uniform(-1, 1, size=(m, dk)).astype(dtype)
    v = rng.normal(size=(m, 2)).astype(dtype)
    trace = scaled_dot_product_attention(q, k, v, scale=magnitude)
    assert np.all(np.isfinite(trace.weights)) and np.all(np.isfinite(trace.output))
    np.testing.assert_allclose(trace.weights.astype(np.float64).sum(axis=-1), 1.0, rtol=1e-5)
    best = np.argmax(trace.scaled_scores, axis=-1)
    assert np.all(trace.weights[np.arange(n), best] == trace.weights.max(axis=-1))


# ----- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("mask_dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_non_boolean_mask_raises_value_error(mask_dtype):
    """A mask of dtype float or int (even 0/1 valued, right shape) raises ValueError naming its shape."""
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    mask = np.ones((3, 4), dtype=mask_dtype)
    with pytest.raises(ValueError) as excinfo:
        scaled_dot_product_attention(q, k, v, mask=mask)
    assert "(3, 4)" in str(excinfo.value)


@FAST
@given(sizes, sizes, st.integers(1, 8), st.integers(1, 8))
def test_wrong_mask_shape_raises_value_error_naming_both_shapes(n, m, rows, cols):
    """A boolean mask that does not broadcast to (n, m) raises ValueError whose message shows both shapes."""
    assume(rows not in (1, n) or cols not in (1, m))
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(n, 2)), rng.normal(size=(m, 2)), rng.normal(size=(m, 3))
    mask = np.ones((rows, cols), dtype=bool)
    with pytest.raises(ValueError) as excinfo:
        scaled_dot_product_attention(q, k, v, mask=mask)
    message = str(excinfo.value)
    assert str((rows, cols)) in message
    assert str((n, m)) in message


def test_transposed_mask_raises_value_error_naming_both_shapes():
    """An (m, n) mask given for (n, m) scores (a common slip) raises ValueError showing (4, 3) and (3, 4)."""
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    with pytest.raises(ValueError) as excinfo:
        scaled_dot_product_attention(q, k, v, mask=np.ones((4, 3), dtype=bool))
    assert "(4, 3)" in str(excinfo.value)
    assert "(3, 4)" in str(excinfo.value)


@FAST
@given(sizes, sizes, sizes, st.integers(1, 3))
def test_query_key_size_mismatch_raises_value_error(n, m, dk, extra):
    """q (n, dk) with k (m, dk + extra) raises ValueError."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        scaled_dot_product_attention(
            rng.normal(size=(n, dk)), rng.normal(size=(m, dk + extra)), rng.normal(size=(m, 2))
        )


@FAST
@given(sizes, sizes, sizes, st.integers(1, 3))
def test_key_value_row_mismatch_raises_value_error(n, m, dk, extra):
    """k with m rows and v with m + extra rows raises ValueError."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        scaled_dot_product_attention(
            rng.normal(size=(n, dk)), rng.normal(size=(m, dk)), rng.normal(size=(m + extra, 2))
        )


# ----- immutability and copies --------------------------------------------------------------


@FAST
@given(attention_inputs())
def test_trace_arrays_are_read_only(inputs):
    """Every array in the trace has writeable=False and item assignment raises ValueError."""
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for name in ARRAY_FIELDS:
        array = getattr(trace, name)
        assert isinstance(array, np.ndarray), name
        assert not array.flags.writeable, name
        with pytest.raises(ValueError):
            array[...] = array.dtype.type(0)
        with pytest.raises(ValueError):
            array.flat[0] = array.dtype.type(1)


def test_trace_fields_cannot_be_reassigned():
    """The trace is a frozen dataclass: assigning a field raises FrozenInstanceError."""
    trace = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.weights = np.zeros((2, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.scale = 2.0


def test_multi_head_trace_arrays_are_read_only():
    """MultiHeadTrace's concat, output, w_o and its heads' arrays are read-only; the record is frozen."""
    rng = np.random.default_rng(1)
    query, key = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    w = rng.normal(size=(4, 4))
    trace = multi_head_attention(query, key, key, w, w, w, w, num_heads=2)
    for array in (trace.concat, trace.output, trace.w_o, trace.heads.weights, trace.heads.q):
        assert not array.flags.writeable
        with pytest.raises(ValueError):
            array[...] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.output = None


@FAST
@given(attention_inputs())
def test_mutating_inputs_afterwards_does_not_change_trace(inputs):
    """Changing the caller's q, k, v and mask after the call leaves every recorded stage as it was."""
    q, k, v, mask = inputs
    if mask is None:
        mask = np.ones((q.shape[0], k.shape[0]), dtype=bool)
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    snapshot = {name: np.array(getattr(trace, name), copy=True) for name in ARRAY_FIELDS}
    q += 1
    k *= -2
    v -= 3
    mask[...] = ~mask
    for name in ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(trace, name), snapshot[name], err_msg=name)


def test_trace_does_not_share_memory_with_inputs():
    """trace.q, k, v and mask are copies of the caller's arrays, for float64 and float32 alike."""
    for dtype in (np.float64, np.float32):
        q = np.ones((2, 3), dtype=dtype)
        k = np.ones((4, 3), dtype=dtype)
        v = np.ones((4, 2), dtype=dtype)
        mask = np.ones((2, 4), dtype=bool)
        trace = scaled_dot_product_attention(q, k, v, mask=mask)
        for given_array, recorded in ((q, trace.q), (k, trace.k), (v, trace.v), (mask, trace.mask)):
            assert not np.shares_memory(given_array, recorded)
        assert q.flags.writeable, "the caller's own array must stay writeable"


def test_multi_head_copies_w_o():
    """Mutating the caller's W_O after multi-head attention does not change trace.w_o."""
    rng = np.random.default_rng(2)
    query = rng.normal(size=(2, 4))
    w = rng.normal(size=(4, 4))
    w_o = rng.normal(size=(4, 4))
    trace = multi_head_attention(query, query, query, w, w, w, w_o, num_heads=2)
    saved = w_o.copy()
    w_o[...] = 0
    np.testing.assert_array_equal(trace.w_o, saved)


# ----- the record's fields ---------------------------------------------------------------------


def test_trace_fields_have_documented_names_and_order():
    """AttentionTrace's fields are exactly q, k, v, raw_scores, ..., fully_masked_rows, scale, in that order."""
    assert dataclasses.is_dataclass(AttentionTrace)
    assert tuple(f.name for f in dataclasses.fields(AttentionTrace)) == DOCUMENTED_FIELDS


def test_trace_scale_is_a_python_float():
    """trace.scale is a float, also when the given scale is an int or a NumPy scalar."""
    for given_scale in (None, 2, np.float32(0.5), np.int64(3)):
        trace = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), scale=given_scale)
        assert type(trace.scale) is float


def test_every_trace_field_has_a_docstring():
    """In the class source, every field is followed by a non-empty docstring that is unique to it."""
    tree = ast.parse(inspect.getsource(AttentionTrace))
    body = tree.body[0].body
    docs = {}
    for statement, following in itertools.pairwise(body):
        is_field = isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
        is_docstring = (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        )
        if is_field and is_docstring:
            docs[statement.target.id] = following.value.value.strip()
    for name in DOCUMENTED_FIELDS:
        assert docs.get(name), f"field {name!r} has no docstring"
    assert len(set(docs.values())) == len(docs), "field docstrings should not be copies of each other"


def test_module_documents_every_field_name():
    """The attention module's source mentions every field name (so users can find them)."""
    source = inspect.getsource(attention_module)
    for name in DOCUMENTED_FIELDS:
        assert name in source, name


def test_multi_head_trace_has_documented_fields():
    """MultiHeadTrace has the fields heads, concat, output and w_o."""
    from attention_core.multihead import MultiHeadTrace

    names = {f.name for f in dataclasses.fields(MultiHeadTrace)}
    assert {"heads", "concat", "output", "w_o"} <= names
