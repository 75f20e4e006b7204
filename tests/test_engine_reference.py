"""The engine against the independent loop-based reference in `reference.py`.

Every recorded stage is compared: raw_scores, scaled_scores, mask, masked_scores,
weights, output, fully_masked_rows and scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import attention_reference, multi_head_reference

from attention_core.attention import scaled_dot_product_attention
from attention_core.multihead import multi_head_attention

FLOAT64_TOL = {"rtol": 1e-12, "atol": 1e-12}
FLOAT32_TOL = {"rtol": 2e-5, "atol": 2e-6}
SCORE_STAGES = ("raw_scores", "scaled_scores", "weights", "output")


def assert_matches_reference(trace, ref: dict, tol: dict = FLOAT64_TOL) -> None:
    """Every stage of `trace` equals the reference's (masks and flags exactly)."""
    for name in SCORE_STAGES:
        got = getattr(trace, name)
        assert got.shape == ref[name].shape, f"{name}: shape {got.shape} != {ref[name].shape}"
        np.testing.assert_allclose(got, ref[name], err_msg=name, **tol)
    assert trace.mask.dtype == np.bool_
    np.testing.assert_array_equal(trace.mask, ref["mask"], err_msg="mask")
    np.testing.assert_array_equal(trace.fully_masked_rows, ref["fully_masked_rows"], err_msg="fully_masked_rows")
    masked = trace.masked_scores
    assert masked.shape == ref["masked_scores"].shape
    np.testing.assert_array_equal(np.isneginf(masked), ~ref["mask"], err_msg="-inf exactly where masked")
    assert np.all(np.isfinite(masked[ref["mask"]])), "allowed scores must be finite"
    np.testing.assert_allclose(masked[ref["mask"]], ref["masked_scores"][ref["mask"]], err_msg="masked_scores", **tol)
    assert isinstance(trace.scale, float)
    assert trace.scale == pytest.approx(ref["scale"], rel=1e-15)


def random_qkv(rng, n, m, dk, dv, lead=(), dtype=np.float64):
    """Random Gaussian q (lead, n, dk), k (lead, m, dk), v (lead, m, dv)."""
    q = rng.normal(size=(*lead, n, dk)).astype(dtype)
    k = rng.normal(size=(*lead, m, dk)).astype(dtype)
    v = rng.normal(size=(*lead, m, dv)).astype(dtype)
    return q, k, v


# (n, m, dk, dv): n ≠ m both ways, dv ≠ dk, dk = 1, n = 1, m = 1, all ones.
SHAPES = [
    (3, 5, 4, 2),
    (5, 3, 2, 6),
    (4, 4, 1, 3),
    (1, 6, 3, 3),
    (4, 1, 3, 2),
    (1, 1, 1, 1),
    (7, 2, 8, 1),
]


@pytest.mark.parametrize(("n", "m", "dk", "dv"), SHAPES)
def test_unmasked_attention_matches_reference(n, m, dk, dv):
    """No mask, default scale: every stage equals the reference, shapes included."""
    rng = np.random.default_rng(n * 1000 + m * 100 + dk * 10 + dv)
    q, k, v = random_qkv(rng, n, m, dk, dv)
    trace = scaled_dot_product_attention(q, k, v)
    assert_matches_reference(trace, attention_reference(q, k, v))
    assert trace.weights.shape == (n, m)
    assert trace.output.shape == (n, dv)
    assert trace.fully_masked_rows.shape == (n,)
    assert trace.scale == pytest.approx(1 / math.sqrt(dk))


@pytest.mark.parametrize(("n", "m", "dk", "dv"), SHAPES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_mask_matches_reference(n, m, dk, dv, seed):
    """A random boolean mask (some rows possibly fully masked): every stage equals the reference."""
    rng = np.random.default_rng(seed)
    q, k, v = random_qkv(rng, n, m, dk, dv)
    mask = rng.random((n, m)) < 0.6
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert_matches_reference(trace, attention_reference(q, k, v, mask=mask))


@st.composite
def leading_shape_like(draw, full: tuple[int, ...]):
    """A leading shape that broadcasts to `full`: a suffix of it with some sizes replaced by 1."""
    keep = draw(st.integers(0, len(full)))
    suffix = full[len(full) - keep :]
    return tuple(draw(st.sampled_from([size, 1])) for size in suffix)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_random_shapes_and_broadcast_leading_dims_match_reference(data):
    """Random n, m, dk, dv, leading dims broadcast between q, k, v and mask: every stage equals the reference."""
    n, m, dk, dv = (data.draw(st.integers(1, 4)) for _ in range(4))
    full = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    q_lead, k_lead, v_lead = (data.draw(leading_shape_like(full)) for _ in range(3))
    score_lead = np.broadcast_shapes(q_lead, k_lead)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q = rng.normal(size=(*q_lead, n, dk))
    k = rng.normal(size=(*k_lead, m, dk))
    v = rng.normal(size=(*v_lead, m, dv))
    mask = None
    if data.draw(st.booleans()):
        mask_lead = data.draw(leading_shape_like(score_lead))
        mask = rng.random((*mask_lead, n, m)) < 0.6
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert trace.weights.shape == (*score_lead, n, m)
    assert trace.output.shape == (*np.broadcast_shapes(score_lead, v_lead), n, dv)
    assert_matches_reference(trace, attention_reference(q, k, v, mask=mask))


def test_stored_inputs_equal_given_inputs():
    """trace.q, trace.k and trace.v hold the given inputs."""
    rng = np.random.default_rng(3)
    q, k, v = random_qkv(rng, 3, 4, 2, 5)
    trace = scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(trace.q, q)
    np.testing.assert_array_equal(trace.k, k)
    np.testing.assert_array_equal(trace.v, v)


def test_head_axis_matches_reference_per_head():
    """A leading head axis (2 heads) gives per-head results equal to the reference."""
    rng = np.random.default_rng(4)
    q, k, v = random_qkv(rng, 3, 5, 4, 2, lead=(2,))
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.weights.shape == (2, 3, 5)
    assert trace.output.shape == (2, 3, 2)
    assert_matches_reference(trace, attention_reference(q, k, v))
    for h in range(2):
        single = attention_reference(q[h], k[h], v[h])
        np.testing.assert_allclose(trace.weights[h], single["weights"], **FLOAT64_TOL)
        np.testing.assert_allclose(trace.output[h], single["output"], **FLOAT64_TOL)


def test_leading_dims_broadcast_between_q_and_kv():
    """q (2, 3, n, dk) with k (3, m, dk), v (3, m, dv): k and v broadcast over the first axis."""
    rng = np.random.default_rng(5)
    q = rng.normal(size=(2, 3, 4, 3))
    k = rng.normal(size=(3, 6, 3))
    v = rng.normal(size=(3, 6, 2))
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.raw_scores.shape == (2, 3, 4, 6)
    assert trace.mask.shape == (2, 3, 4, 6)
    assert trace.output.shape == (2, 3, 4, 2)
    assert trace.fully_masked_rows.shape == (2, 3, 4)
    assert_matches_reference(trace, attention_reference(q, k, v))
    for a in range(2):
        for h in range(3):
            single = attention_reference(q[a, h], k[h], v[h])
            np.testing.assert_allclose(trace.output[a, h], single["output"], **FLOAT64_TOL)


def test_size_one_leading_dims_broadcast():
    """q (2, 1, n, dk) with k, v (3, m, ·): scores get leading shape (2, 3)."""
    rng = np.random.default_rng(6)
    q = rng.normal(size=(2, 1, 3, 2))
    k = rng.normal(size=(3, 4, 2))
    v = rng.normal(size=(3, 4, 5))
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.weights.shape == (2, 3, 3, 4)
    assert_matches_reference(trace, attention_reference(q, k, v))


def test_two_dim_mask_broadcasts_over_heads():
    """An (n, m) mask with 3 heads is applied to every head; trace.mask has the full (3, n, m) shape."""
    rng = np.random.default_rng(7)
    q, k, v = random_qkv(rng, 4, 5, 3, 2, lead=(3,))
    mask = rng.random((4, 5)) < 0.5
    mask[1] = False
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert trace.mask.shape == (3, 4, 5)
    for h in range(3):
        np.testing.assert_array_equal(trace.mask[h], mask)
    assert trace.fully_masked_rows[:, 1].all()
    assert_matches_reference(trace, attention_reference(q, k, v, mask=mask))


def test_per_head_mask_and_key_vector_mask_broadcast():
    """A per-head (h, n, m) mask and a per-key (m,) mask both match the reference."""
    rng = np.random.default_rng(8)
    q, k, v = random_qkv(rng, 3, 4, 2, 3, lead=(2,))
    per_head = rng.random((2, 3, 4)) < 0.5
    trace = scaled_dot_product_attention(q, k, v, mask=per_head)
    assert_matches_reference(trace, attention_reference(q, k, v, mask=per_head))
    per_key = np.array([True, False, True, True])
    trace = scaled_dot_product_attention(q, k, v, mask=per_key)
    assert trace.mask.shape == (2, 3, 4)
    assert_matches_reference(trace, attention_reference(q, k, v, mask=per_key))


@pytest.mark.parametrize("with_mask", [False, True])
def test_float32_inputs_give_float32_records(with_mask):
    """float32 q, k, v: every float record is float32 and matches the reference within float32 precision."""
    rng = np.random.default_rng(9)
    q, k, v = random_qkv(rng, 4, 6, 3, 2, dtype=np.float32)
    mask = (rng.random((4, 6)) < 0.6) if with_mask else None
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for name in ("q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights", "output"):
        assert getattr(trace, name).dtype == np.float32, name
    assert trace.mask.dtype == np.bool_
    assert trace.fully_masked_rows.dtype == np.bool_
    assert_matches_reference(trace, attention_reference(q, k, v, mask=mask), FLOAT32_TOL)


def test_float64_inputs_give_float64_records():
    """float64 q, k, v: every float record is float64."""
    rng = np.random.default_rng(10)
    trace = scaled_dot_product_attention(*random_qkv(rng, 2, 3, 2, 2))
    for name in ("q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights", "output"):
        assert getattr(trace, name).dtype == np.float64, name


def test_mixed_float32_and_float64_compute_in_float64():
    """One float64 input among float32 ones: records are float64."""
    rng = np.random.default_rng(11)
    q, k, v = random_qkv(rng, 2, 3, 2, 2, dtype=np.float32)
    trace = scaled_dot_product_attention(q, k.astype(np.float64), v)
    assert trace.weights.dtype == np.float64
    assert trace.output.dtype == np.float64
    assert_matches_reference(trace, attention_reference(q, k, v))


@pytest.mark.parametrize("int_dtype", [np.int64, np.int32, np.int8])
def test_integer_inputs_compute_in_float64(int_dtype):
    """Integer arrays are computed in float64 (no integer division or truncation)."""
    rng = np.random.default_rng(12)
    q = rng.integers(-3, 4, size=(3, 2)).astype(int_dtype)
    k = rng.integers(-3, 4, size=(4, 2)).astype(int_dtype)
    v = rng.integers(-3, 4, size=(4, 3)).astype(int_dtype)
    trace = scaled_dot_product_attention(q, k, v)
    for name in ("q", "raw_scores", "scaled_scores", "weights", "output"):
        assert getattr(trace, name).dtype == np.float64, name
    assert_matches_reference(trace, attention_reference(q, k, v))


def test_nested_lists_compute_in_float64():
    """Plain Python lists are accepted and computed in float64."""
    q = [[1.0, 0.0], [0.5, -1.0]]
    k = [[1.0, 2.0], [0.0, 1.0], [-1.0, 0.5]]
    v = [[1.0], [2.0], [3.0]]
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.output.dtype == np.float64
    assert_matches_reference(trace, attention_reference(q, k, v))


def test_small_hand_computed_example():
    """A 1×2 example worked by hand: scores [2, 0] / √2, weights a logistic pair."""
    q = np.array([[1.0, 1.0]])
    k = np.array([[1.0, 1.0], [1.0, -1.0]])
    v = np.array([[10.0], [20.0]])
    trace = scaled_dot_product_attention(q, k, v)
    s = 2 / math.sqrt(2)
    w0 = 1 / (1 + math.exp(-s))
    np.testing.assert_allclose(trace.raw_scores, [[2.0, 0.0]])
    np.testing.assert_allclose(trace.scaled_scores, [[s, 0.0]])
    np.testing.assert_allclose(trace.weights, [[w0, 1 - w0]], rtol=1e-14)
    np.testing.assert_allclose(trace.output, [[10 * w0 + 20 * (1 - w0)]], rtol=1e-14)


@pytest.mark.parametrize("scale", [1.0, 0.5, 2.0, 0.125, -1.0, 3])
def test_custom_scale_multiplies_raw_scores(scale):
    """scale=s: scaled_scores == raw_scores · s, and every stage matches the reference."""
    rng = np.random.default_rng(13)
    q, k, v = random_qkv(rng, 3, 4, 5, 2)
    trace = scaled_dot_product_attention(q, k, v, scale=scale)
    assert trace.scale == float(scale)
    np.testing.assert_allclose(trace.scaled_scores, trace.raw_scores * scale, rtol=1e-15)
    assert_matches_reference(trace, attention_reference(q, k, v, scale=scale))


def test_scale_one_leaves_scores_unscaled():
    """scale=1.0: scaled_scores equal raw_scores (no hidden 1/√dk)."""
    rng = np.random.default_rng(14)
    q, k, v = random_qkv(rng, 3, 3, 16, 2)
    trace = scaled_dot_product_attention(q, k, v, scale=1.0)
    np.testing.assert_array_equal(trace.scaled_scores, trace.raw_scores)
    assert trace.scale == 1.0


def test_default_scale_is_inverse_sqrt_dk():
    """scale=None gives 1/√dk, e.g. 0.25 for dk = 16."""
    rng = np.random.default_rng(15)
    trace = scaled_dot_product_attention(*random_qkv(rng, 2, 3, 16, 2))
    assert trace.scale == pytest.approx(0.25)
    np.testing.assert_allclose(trace.scaled_scores, trace.raw_scores * 0.25, rtol=1e-15)


def test_scale_zero_gives_uniform_weights_and_mean_output():
    """scale=0: every weight is 1/m and every output row is the mean of the rows of V."""
    rng = np.random.default_rng(16)
    q, k, v = random_qkv(rng, 3, 5, 4, 2)
    trace = scaled_dot_product_attention(q * 100, k * 100, v, scale=0.0)
    assert trace.scale == 0.0
    np.testing.assert_array_equal(trace.scaled_scores, np.zeros((3, 5)))
    np.testing.assert_allclose(trace.weights, np.full((3, 5), 1 / 5), rtol=1e-14)
    np.testing.assert_allclose(trace.output, np.tile(v.mean(axis=0), (3, 1)), rtol=1e-12, atol=1e-14)
    assert_matches_reference(trace, attention_reference(q * 100, k * 100, v, scale=0.0))


def test_scale_zero_with_mask_is_uniform_over_allowed_keys():
    """scale=0 with a mask: weights are 1/(number of allowed keys) on allowed keys, 0 elsewhere."""
    rng = np.random.default_rng(17)
    q, k, v = random_qkv(rng, 3, 4, 2, 2)
    mask = np.array([[True, True, False, False], [True, True, True, True], [False, True, False, False]])
    trace = scaled_dot_product_attention(q, k, v, mask=mask, scale=0.0)
    expected = mask / mask.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(trace.weights, expected, rtol=1e-14)


def huge_qkv(rng, n, m, dk, dv, dtype=np.float64):
    """q, k with entries of size ~1e3 so that, with scale=1, scores reach ~±1e6."""
    q = (rng.normal(size=(n, dk)) * 1e3).astype(dtype)
    k = (rng.normal(size=(m, dk)) * 1e3).astype(dtype)
    v = rng.normal(size=(m, dv)).astype(dtype)
    return q, k, v


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_huge_scores_stay_finite_and_match_stable_reference(dtype):
    """Scores of order ±1e6: no NaN or inf in weights/output, and they match the stable reference."""
    rng = np.random.default_rng(18)
    q, k, v = huge_qkv(rng, 4, 6, 3, 2, dtype=dtype)
    mask = rng.random((4, 6)) < 0.7
    for use_mask in (None, mask):
        trace = scaled_dot_product_attention(q, k, v, mask=use_mask, scale=1.0)
        assert np.abs(trace.raw_scores).max() > 1e5
        assert np.all(np.isfinite(trace.weights))
        assert np.all(np.isfinite(trace.output))
        assert np.all(np.isfinite(trace.scaled_scores))
        ref = attention_reference(q, k, v, mask=use_mask, scale=1.0)
        np.testing.assert_allclose(trace.weights, ref["weights"], atol=1e-6)
        tol = FLOAT32_TOL if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-9}
        np.testing.assert_allclose(trace.output, ref["output"], **tol)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_scores_of_plus_minus_1e6_give_one_hot_rows(sign):
    """Scores ±1e6 with clear gaps: each row's weight is 1 on its largest score, 0 elsewhere."""
    q = np.array([[1e3], [-1e3], [0.5e3]]) * sign
    k = np.array([[1e3], [-1e3], [0.5e3], [0.0]])
    v = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [-1.0, 5.0]])
    trace = scaled_dot_product_attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(np.abs(trace.raw_scores).max(), 1e6)
    assert np.all(np.isfinite(trace.weights)) and np.all(np.isfinite(trace.output))
    winners = np.argmax(trace.raw_scores, axis=1)
    expected = np.zeros((3, 4))
    expected[np.arange(3), winners] = 1.0
    np.testing.assert_allclose(trace.weights, expected, atol=1e-12)
    np.testing.assert_allclose(trace.output, v[winners], atol=1e-9)
    assert_matches_reference(trace, attention_reference(q, k, v, scale=1.0))


def test_huge_tied_scores_split_weight_evenly():
    """Two keys tied at score 1e6 (others far below) share the weight 1/2 each, not NaN."""
    q = np.array([[1e3]])
    k = np.array([[1e3], [1e3], [-1e3]])
    v = np.array([[0.0], [4.0], [100.0]])
    trace = scaled_dot_product_attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(trace.weights, [[0.5, 0.5, 0.0]], atol=1e-15)
    np.testing.assert_allclose(trace.output, [[2.0]], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fully_masked_row_gives_zero_weights_zero_output_and_flag(dtype):
    """A row with every key masked: weights 0, output 0 (no NaN), flagged; other rows unaffected."""
    rng = np.random.default_rng(19)
    q, k, v = random_qkv(rng, 4, 5, 3, 2, dtype=dtype)
    mask = rng.random((4, 5)) < 0.7
    mask[:, 0] = True  # rows 0, 2, 3 keep at least one key
    mask[1] = False
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert not np.any(np.isnan(trace.weights)) and not np.any(np.isnan(trace.output))
    np.testing.assert_array_equal(trace.weights[1], np.zeros(5))
    np.testing.assert_array_equal(trace.output[1], np.zeros(2))
    np.testing.assert_array_equal(trace.fully_masked_rows, [False, True, False, False])
    assert np.all(np.isneginf(trace.masked_scores[1]))

    unmasked_row = mask.copy()
    unmasked_row[1] = True
    other = scaled_dot_product_attention(q, k, v, mask=unmasked_row)
    keep = [0, 2, 3]
    np.testing.assert_array_equal(trace.weights[keep], other.weights[keep])
    np.testing.assert_array_equal(trace.output[keep], other.output[keep])
    tol = FLOAT32_TOL if dtype == np.float32 else FLOAT64_TOL
    assert_matches_reference(trace, attention_reference(q, k, v, mask=mask), tol)


def test_every_row_fully_masked():
    """An all-False mask: all weights and outputs are 0, every row flagged, no NaN."""
    rng = np.random.default_rng(20)
    q, k, v = random_qkv(rng, 3, 4, 2, 2, lead=(2,))
    mask = np.zeros((3, 4), dtype=bool)
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_array_equal(trace.weights, np.zeros((2, 3, 4)))
    np.testing.assert_array_equal(trace.output, np.zeros((2, 3, 2)))
    assert trace.fully_masked_rows.shape == (2, 3)
    assert trace.fully_masked_rows.all()
    assert np.all(np.isneginf(trace.masked_scores))


def test_fully_masked_row_in_one_head_only():
    """A row fully masked in head 0 but not in head 1 is flagged for head 0 only."""
    rng = np.random.default_rng(21)
    q, k, v = random_qkv(rng, 3, 4, 2, 2, lead=(2,))
    mask = np.ones((2, 3, 4), dtype=bool)
    mask[0, 2] = False
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    expected_flags = np.zeros((2, 3), dtype=bool)
    expected_flags[0, 2] = True
    np.testing.assert_array_equal(trace.fully_masked_rows, expected_flags)
    np.testing.assert_array_equal(trace.output[0, 2], np.zeros(2))
    assert np.abs(trace.output[1, 2]).sum() > 0
    assert_matches_reference(trace, attention_reference(q, k, v, mask=mask))


def test_no_mask_records_all_true_mask_and_no_flags():
    """mask=None: trace.mask is all True with shape (..., n, m) and no row is flagged."""
    rng = np.random.default_rng(22)
    q, k, v = random_qkv(rng, 3, 5, 2, 2, lead=(2,))
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.mask.shape == (2, 3, 5)
    assert trace.mask.dtype == np.bool_
    assert trace.mask.all()
    assert not trace.fully_masked_rows.any()
    assert not np.any(np.isneginf(trace.masked_scores))
    np.testing.assert_array_equal(trace.masked_scores, trace.scaled_scores)


# ----- multi-head attention -----------------------------------------------------------


def random_projections(rng, d_model, num_heads, dk, dv, dtype=np.float64):
    """Random W_Q, W_K (d_model, h·dk), W_V (d_model, h·dv), W_O (h·dv, d_model)."""
    w_q = rng.normal(size=(d_model, num_heads * dk)) / math.sqrt(d_model)
    w_k = rng.normal(size=(d_model, num_heads * dk)) / math.sqrt(d_model)
    w_v = rng.normal(size=(d_model, num_heads * dv)) / math.sqrt(d_model)
    w_o = rng.normal(size=(num_heads * dv, d_model)) / math.sqrt(num_heads * dv)
    return tuple(w.astype(dtype) for w in (w_q, w_k, w_v, w_o))


def assert_multi_head_matches_reference(trace, ref, num_heads, tol=FLOAT64_TOL):
    """Each head's stages, the concatenation and the output equal the reference."""
    assert trace.heads.weights.shape[0] == num_heads
    for h in range(num_heads):
        head_ref = ref["heads"][h]
        for name in ("q", "k", "v", "raw_scores", "scaled_scores", "weights", "output"):
            np.testing.assert_allclose(getattr(trace.heads, name)[h], head_ref[name], err_msg=f"head {h} {name}", **tol)
        np.testing.assert_array_equal(trace.heads.mask[h], head_ref["mask"])
        np.testing.assert_array_equal(trace.heads.fully_masked_rows[h], head_ref["fully_masked_rows"])
    np.testing.assert_allclose(trace.concat, ref["concat"], err_msg="concat", **tol)
    np.testing.assert_allclose(trace.output, ref["output"], err_msg="output", **tol)


@pytest.mark.parametrize(
    ("n", "m", "d_model", "num_heads", "dk", "dv"),
    [
        (3, 5, 6, 2, 3, 2),
        (5, 2, 4, 1, 4, 4),
        (4, 4, 6, 3, 2, 5),
        (1, 3, 5, 2, 1, 3),
    ],
)
def test_multi_head_matches_reference(n, m, d_model, num_heads, dk, dv):
    """Multi-head attention (n ≠ m, dv ≠ dk) equals the per-head loop reference, stage by stage."""
    rng = np.random.default_rng(n + 10 * m + 100 * num_heads)
    query = rng.normal(size=(n, d_model))
    key = rng.normal(size=(m, d_model))
    value = rng.normal(size=(m, d_model))
    w_q, w_k, w_v, w_o = random_projections(rng, d_model, num_heads, dk, dv)
    trace = multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    assert trace.heads.weights.shape == (num_heads, n, m)
    assert trace.heads.q.shape == (num_heads, n, dk)
    assert trace.heads.output.shape == (num_heads, n, dv)
    assert trace.concat.shape == (n, num_heads * dv)
    assert trace.output.shape == (n, d_model)
    np.testing.assert_array_equal(trace.w_o, w_o)
    ref = multi_head_reference(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    assert_multi_head_matches_reference(trace, ref, num_heads)


def test_multi_head_with_mask_matches_reference():
    """An (n, m) mask, including a fully masked row, applies to every head as in the reference."""
    rng = np.random.default_rng(23)
    n, m, d_model, num_heads, dk, dv = 4, 5, 6, 3, 2, 3
    query, key, value = rng.normal(size=(n, d_model)), rng.normal(size=(m, d_model)), rng.normal(size=(m, d_model))
    w_q, w_k, w_v, w_o = random_projections(rng, d_model, num_heads, dk, dv)
    mask = rng.random((n, m)) < 0.6
    mask[2] = False
    trace = multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads, mask=mask)
    ref = multi_head_reference(query, key, value, w_q, w_k, w_v, w_o, num_heads, mask=mask)
    assert_multi_head_matches_reference(trace, ref, num_heads)
    np.testing.assert_array_equal(trace.concat[2], np.zeros(num_heads * dv))
    np.testing.assert_array_equal(trace.output[2], np.zeros(d_model))


def test_multi_head_head_uses_its_column_block():
    """Head 1 is attention on column block 1 (columns dk..2dk, dv..2dv) of the projections."""
    rng = np.random.default_rng(24)
    n, m, d_model, num_heads, dk, dv = 3, 4, 4, 2, 2, 3
    query, key, value = rng.normal(size=(n, d_model)), rng.normal(size=(m, d_model)), rng.normal(size=(m, d_model))
    w_q, w_k, w_v, w_o = random_projections(rng, d_model, num_heads, dk, dv)
    trace = multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    head1 = attention_reference(query @ w_q[:, dk : 2 * dk], key @ w_k[:, dk : 2 * dk], value @ w_v[:, dv : 2 * dv])
    np.testing.assert_allclose(trace.heads.weights[1], head1["weights"], **FLOAT64_TOL)
    np.testing.assert_allclose(trace.concat[:, dv : 2 * dv], head1["output"], **FLOAT64_TOL)


def test_multi_head_float32_gives_float32_records():
    """All-float32 multi-head inputs give float32 heads, concat and output, matching the reference."""
    rng = np.random.default_rng(25)
    n, m, d_model, num_heads, dk, dv = 3, 4, 6, 2, 3, 2
    query, key, value = (rng.normal(size=s).astype(np.float32) for s in ((n, d_model), (m, d_model), (m, d_model)))
    w_q, w_k, w_v, w_o = random_projections(rng, d_model, num_heads, dk, dv, dtype=np.float32)
    trace = multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    assert trace.heads.weights.dtype == np.float32
    assert trace.concat.dtype == np.float32
    assert trace.output.dtype == np.float32
    ref = multi_head_reference(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    assert_multi_head_matches_reference(trace, ref, num_heads, FLOAT32_TOL)


def test_multi_head_paper_sizes():
    """The paper's sizes d_model = 512, h = 8 (dk = dv = 64): shapes and values match the reference."""
    rng = np.random.default_rng(26)
    n, m, d_model, num_heads = 3, 4, 512, 8
    dk = dv = d_model // num_heads
    assert dk == 64
    query, key, value = rng.normal(size=(n, d_model)), rng.normal(size=(m, d_model)), rng.normal(size=(m, d_model))
    w_q, w_k, w_v, w_o = random_projections(rng, d_model, num_heads, dk, dv)
    trace = multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    assert trace.heads.q.shape == (8, n, 64)
    assert trace.heads.k.shape == (8, m, 64)
    assert trace.heads.v.shape == (8, m, 64)
    assert trace.heads.weights.shape == (8, n, m)
    assert trace.heads.output.shape == (8, n, 64)
    assert trace.concat.shape == (n, 512)
    assert trace.output.shape == (n, 512)
    assert trace.w_o.shape == (512, 512)
    assert trace.heads.scale == pytest.approx(1 / 8)
    ref = multi_head_reference(query, key, value, w_q, w_k, w_v, w_o, num_heads)
    assert_multi_head_matches_reference(trace, ref, num_heads, {"rtol": 1e-10, "atol": 1e-10})
