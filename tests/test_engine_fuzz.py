"""Fuzzing the engine: random shapes, dtypes, masks and magnitudes through
`scaled_dot_product_attention`.

Whatever it is given, the engine either raises ValueError (for input it documents as
unusable) or returns finite weights and output; each row of weights sums to 1, or is all
0 when every key of that row is masked; a masked weight is exactly 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_core.attention import scaled_dot_product_attention

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = (np.float32, np.float64, np.int32, np.int64)
MAGNITUDE = 1e6


@st.composite
def attention_inputs(draw, magnitude: float = MAGNITUDE):
    """(q, k, v, mask) with random leading dims, sizes and dtypes; mask None or boolean,
    broadcastable, often with fully masked rows."""
    leading = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    n, m = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    dk, dv = draw(st.integers(1, 6)), draw(st.integers(1, 6))

    def matrix(shape):
        dtype = np.dtype(draw(st.sampled_from(DTYPES)))
        if dtype.kind == "i":
            bound = min(int(magnitude), int(np.iinfo(dtype).max))
            elements = st.integers(-bound, bound)
        else:
            width = 32 if dtype == np.float32 else 64
            bound = float(dtype.type(magnitude))  # representable in this dtype
            elements = st.one_of(
                st.floats(-bound, bound, width=width),  # includes ±bound, 0, -0.0, subnormals
                st.sampled_from([bound, -bound, 0.0]),
            )
        return draw(hnp.arrays(dtype, shape, elements=elements))

    # leading dims: q has them all; k and v may broadcast (size 1 or absent)
    def broadcastable(shape):
        return tuple(draw(st.sampled_from([size, 1])) for size in shape)

    q = matrix((*leading, n, dk))
    k = matrix((*broadcastable(leading), m, dk))
    v = matrix((*broadcastable(leading), m, dv))
    mask_kind = draw(st.sampled_from(["none", "full", "rows", "keys", "fully_masked_row"]))
    if mask_kind == "none":
        mask = None
    elif mask_kind == "full":
        mask = draw(hnp.arrays(np.bool_, (*leading, n, m)))
    elif mask_kind == "rows":
        mask = draw(hnp.arrays(np.bool_, (n, m)))  # broadcast over the leading dims
    elif mask_kind == "keys":
        mask = draw(hnp.arrays(np.bool_, (m,)))  # a padding mask: one flag per key
    else:
        mask = draw(hnp.arrays(np.bool_, (*leading, n, m)))
        mask[..., draw(st.integers(0, n - 1)), :] = False  # at least one query sees no key
    return q, k, v, mask


def _check(trace, mask) -> None:
    weights = np.asarray(trace.weights, dtype=np.float64)
    output = np.asarray(trace.output, dtype=np.float64)
    assert np.isfinite(weights).all(), "NaN or Inf in the weights"
    assert np.isfinite(output).all(), "NaN or Inf in the output"
    assert (weights >= 0).all() and (weights <= 1 + 1e-6).all()

    effective = np.broadcast_to(np.True_ if mask is None else mask, weights.shape)
    fully_masked = ~effective.any(axis=-1)  # (..., n)
    np.testing.assert_array_equal(np.asarray(trace.fully_masked_rows), fully_masked)
    assert (weights[~effective] == 0).all(), "a masked key got a non-zero weight"

    sums = weights.sum(axis=-1)  # (..., n)
    tolerance = 1e-5 * weights.shape[-1] if trace.weights.dtype == np.float32 else 1e-12 * weights.shape[-1]
    np.testing.assert_allclose(sums[~fully_masked], 1.0, atol=tolerance)
    assert (sums[fully_masked] == 0).all(), "a fully masked row must have weights 0"
    assert (output[fully_masked] == 0).all(), "a fully masked row must have output 0"


@FUZZ
@given(attention_inputs())
def test_weights_and_output_are_finite_and_rows_sum_to_one(inputs):
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    _check(trace, mask)
    assert trace.weights.shape == (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])


@FUZZ
@given(attention_inputs(), st.floats(-100, 100, allow_nan=False, allow_infinity=False))
def test_any_finite_scale_keeps_weights_finite(inputs, scale):
    q, k, v, mask = inputs
    trace = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    _check(trace, mask)


@settings(max_examples=60, deadline=None)
@given(attention_inputs(magnitude=1e30))
def test_huge_inputs_raise_or_stay_finite(inputs):
    """Beyond the UI's ±1e6, scores may overflow float32: a ValueError that says so, never NaN."""
    q, k, v, mask = inputs
    try:
        trace = scaled_dot_product_attention(q, k, v, mask=mask)
    except ValueError as problem:
        assert "overflow" in str(problem) or "NaN or infinite" in str(problem)
        return
    _check(trace, mask)


@pytest.mark.parametrize("dk", [64, 1024])
def test_an_overflow_is_found_when_there_are_fewer_scores_than_inputs(dk):
    """One query against two long keys (as the √dk lesson samples them): the scores are read,
    not bounded, and an overflow still says so. Each product is 1e20 · 1e20 · dk / √dk, far
    beyond float32's 3.4e38; the same inputs scaled down by 1e10 stay finite."""
    q = np.full((1, dk), 1e20, dtype=np.float32)  # (1, dk)
    k = np.full((2, dk), 1e20, dtype=np.float32)  # (2, dk): 2 scores from 3 · dk inputs
    v = np.ones((2, 1), dtype=np.float32)
    with pytest.raises(ValueError, match="overflowed float32"):
        scaled_dot_product_attention(q, k, v)
    trace = scaled_dot_product_attention(q / 1e10, k / 1e10, v)
    np.testing.assert_allclose(trace.weights, [[0.5, 0.5]])


@settings(max_examples=50, deadline=None)
@given(
    hnp.arrays(np.float64, (3, 4), elements=st.floats(-1e6, 1e6)),
    st.sampled_from([np.nan, np.inf, -np.inf]),
    st.integers(0, 11),
)
def test_non_finite_input_is_refused(q, bad, index):
    q = q.copy()
    q.flat[index] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        scaled_dot_product_attention(q, q, q)


def test_every_key_masked_everywhere_gives_zeros():
    q = np.full((2, 3, 4), 1e6)
    trace = scaled_dot_product_attention(q, q, q, mask=np.zeros((3, 3), dtype=bool))
    assert (np.asarray(trace.weights) == 0).all() and (np.asarray(trace.output) == 0).all()
    assert np.asarray(trace.fully_masked_rows).all()


def test_one_allowed_key_among_huge_scores_takes_all_the_weight():
    q = np.array([[1e6, -1e6]], dtype=np.float32)
    k = np.array([[1e6, 1e6], [-1e6, -1e6], [1e6, -1e6]], dtype=np.float32)
    mask = np.array([[False, True, False]])
    trace = scaled_dot_product_attention(q, k, k, mask=mask)
    np.testing.assert_array_equal(np.asarray(trace.weights), [[0.0, 1.0, 0.0]])
