"""The mask builders in `attention_core.masks` against explicit loops over (i, j)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.attention import scaled_dot_product_attention
from attention_core.masks import block_mask, causal_mask, combine_masks, padding_mask, sliding_window_mask

SIZES = [(1, 1), (1, 4), (4, 1), (3, 3), (5, 5), (3, 6), (6, 3), (2, 7)]


def loop_mask(n: int, m: int, allowed) -> np.ndarray:
    """(n, m) boolean array with cell (i, j) = allowed(i, j), built cell by cell."""
    result = np.zeros((n, m), dtype=bool)
    for i in range(n):
        for j in range(m):
            result[i, j] = bool(allowed(i, j))
    return result


def assert_same_mask(got, expected) -> None:
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.bool_
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


# ----- causal -------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "m"), SIZES)
def test_causal_mask_lets_query_i_see_keys_up_to_i(n, m):
    """causal_mask(n, m)[i, j] is True iff j <= i (upper-left aligned, also for n != m)."""
    assert_same_mask(causal_mask(n, m), loop_mask(n, m, lambda i, j: j <= i))


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_causal_mask_defaults_to_square(n):
    """causal_mask(n) is the (n, n) lower triangle including the diagonal."""
    assert_same_mask(causal_mask(n), loop_mask(n, n, lambda i, j: j <= i))


def test_causal_mask_first_query_sees_only_first_key():
    """Row 0 of a causal mask allows key 0 only; the last row of a square mask allows all keys."""
    mask = causal_mask(4)
    np.testing.assert_array_equal(mask[0], [True, False, False, False])
    np.testing.assert_array_equal(mask[-1], [True, True, True, True])


def test_causal_mask_zeroes_future_weights_in_engine():
    """With a causal mask the engine gives weight 0 to every key j > i and no row is fully masked."""
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    trace = scaled_dot_product_attention(q, k, v, mask=causal_mask(4, 6))
    for i in range(4):
        for j in range(6):
            if j > i:
                assert trace.weights[i, j] == 0.0
            else:
                assert trace.weights[i, j] > 0.0
    assert not trace.fully_masked_rows.any()


# ----- padding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key_is_real",
    [[True], [False], [True, True, False], [False, True, False, True], [True] * 5, [False] * 3],
)
@pytest.mark.parametrize("n", [1, 3, 6])
def test_padding_mask_allows_exactly_the_real_keys(key_is_real, n):
    """padding_mask(key_is_real, n)[i, j] == key_is_real[j] for every query i."""
    m = len(key_is_real)
    expected = loop_mask(n, m, lambda i, j: key_is_real[j])
    assert_same_mask(padding_mask(key_is_real, n), expected)
    assert_same_mask(padding_mask(np.array(key_is_real), n), expected)


def test_padding_mask_result_is_independent_of_input():
    """Changing the key_is_real array afterwards does not change the returned mask."""
    key_is_real = np.array([True, False, True])
    mask = padding_mask(key_is_real, 2)
    key_is_real[:] = False
    np.testing.assert_array_equal(mask, [[True, False, True], [True, False, True]])


def test_padding_mask_with_all_padding_fully_masks_engine_rows():
    """All-padding keys: every query row is fully masked in the engine, with zero output."""
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(2, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
    trace = scaled_dot_product_attention(q, k, v, mask=padding_mask([False, False, False], 2))
    assert trace.fully_masked_rows.all()
    np.testing.assert_array_equal(trace.output, np.zeros((2, 2)))


@pytest.mark.parametrize("bad", [[1, 0, 1], [0.0, 1.0], np.array([1, 0]), ["yes", "no"]])
def test_padding_mask_rejects_non_boolean_key_is_real(bad):
    """key_is_real given as ints, floats or strings raises ValueError."""
    with pytest.raises(ValueError):
        padding_mask(bad, 2)


def test_padding_mask_rejects_two_dimensional_key_is_real():
    """A 2-D key_is_real raises ValueError."""
    with pytest.raises(ValueError):
        padding_mask(np.ones((2, 3), dtype=bool), 2)


@pytest.mark.parametrize("n", [0, -1])
def test_padding_mask_rejects_non_positive_n(n):
    """n = 0 or negative raises ValueError."""
    with pytest.raises(ValueError):
        padding_mask([True, False], n)


# ----- sliding window -------------------------------------------------------------------


@pytest.mark.parametrize(("n", "m"), SIZES)
@pytest.mark.parametrize("width", [1, 2, 3, 10])
def test_sliding_window_mask_allows_keys_closer_than_width(n, m, width):
    """sliding_window_mask(n, width, m)[i, j] is True iff |i - j| < width."""
    expected = loop_mask(n, m, lambda i, j: abs(i - j) < width)
    assert_same_mask(sliding_window_mask(n, width, m), expected)
    assert_same_mask(sliding_window_mask(n, width, m=m, causal=False), expected)


@pytest.mark.parametrize(("n", "m"), SIZES)
@pytest.mark.parametrize("width", [1, 2, 3, 10])
def test_causal_sliding_window_looks_back_only(n, m, width):
    """sliding_window_mask(..., causal=True)[i, j] is True iff i - width < j <= i."""
    expected = loop_mask(n, m, lambda i, j: i - width < j <= i)
    assert_same_mask(sliding_window_mask(n, width, m, causal=True), expected)


@pytest.mark.parametrize("n", [1, 4, 7])
def test_sliding_window_defaults_to_square(n):
    """Without m the window mask is (n, n)."""
    assert_same_mask(sliding_window_mask(n, 2), loop_mask(n, n, lambda i, j: abs(i - j) < 2))


def test_wide_causal_window_equals_causal_mask():
    """A causal window at least as wide as the sequence is the plain causal mask."""
    np.testing.assert_array_equal(sliding_window_mask(5, 5, causal=True), causal_mask(5))
    np.testing.assert_array_equal(sliding_window_mask(3, 9, m=6, causal=True), causal_mask(3, 6))


def test_width_one_window_is_the_diagonal():
    """Width 1 keeps only j == i (both variants)."""
    np.testing.assert_array_equal(sliding_window_mask(4, 1), np.eye(4, dtype=bool))
    np.testing.assert_array_equal(sliding_window_mask(4, 1, causal=True), np.eye(4, dtype=bool))


@pytest.mark.parametrize(("n", "width", "m"), [(0, 2, None), (3, 0, None), (3, -1, None), (3, 2, 0), (-2, 2, 3)])
def test_sliding_window_rejects_non_positive_sizes(n, width, m):
    """n, width or m below 1 raises ValueError."""
    with pytest.raises(ValueError):
        sliding_window_mask(n, width, m)


@pytest.mark.parametrize(("n", "m"), [(0, None), (-1, None), (3, 0), (0, 3)])
def test_causal_mask_rejects_non_positive_sizes(n, m):
    """n or m below 1 raises ValueError."""
    with pytest.raises(ValueError):
        causal_mask(n, m)


# ----- block (segments) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "segments",
    [[0], [0, 0, 0], [0, 1, 2], [0, 0, 1, 1, 1], [2, 1, 2, 1], [5, 5, 7]],
)
def test_block_mask_allows_same_segment_only(segments):
    """block_mask(segments)[i, j] is True iff segments[i] == segments[j]."""
    n = len(segments)
    expected = loop_mask(n, n, lambda i, j: segments[i] == segments[j])
    assert_same_mask(block_mask(segments), expected)
    assert_same_mask(block_mask(np.array(segments)), expected)


@pytest.mark.parametrize(
    ("query_segments", "key_segments"),
    [([0, 1], [0, 0, 1, 1, 1]), ([0, 0, 1, 2], [1, 2]), ([3], [0, 3, 3]), ([0, 1], [2, 3])],
)
def test_block_mask_with_separate_key_segments(query_segments, key_segments):
    """block_mask(q_seg, k_seg)[i, j] is True iff q_seg[i] == k_seg[j], with n != m allowed."""
    n, m = len(query_segments), len(key_segments)
    expected = loop_mask(n, m, lambda i, j: query_segments[i] == key_segments[j])
    assert_same_mask(block_mask(query_segments, key_segments), expected)


def test_block_mask_accepts_generators():
    """Segments given as any iterable (here a generator) work like lists."""
    expected = loop_mask(4, 4, lambda i, j: i // 2 == j // 2)
    assert_same_mask(block_mask(i // 2 for i in range(4)), expected)


# ----- combine ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_combine_masks_is_elementwise_and(seed):
    """combine_masks(a, b, c)[i, j] == a[i, j] and b[i, j] and c[i, j]."""
    rng = np.random.default_rng(seed)
    a, b, c = (rng.random((4, 5)) < 0.6 for _ in range(3))
    expected = loop_mask(4, 5, lambda i, j: a[i, j] and b[i, j] and c[i, j])
    assert_same_mask(combine_masks(a, b, c), expected)
    assert_same_mask(combine_masks(a, b), loop_mask(4, 5, lambda i, j: a[i, j] and b[i, j]))


def test_combine_masks_ignores_none():
    """None arguments are skipped: combine(None, a, None, b) == a AND b, combine(a, None) == a."""
    a = causal_mask(4)
    b = padding_mask([True, True, False, True], 4)
    expected = loop_mask(4, 4, lambda i, j: a[i, j] and b[i, j])
    assert_same_mask(combine_masks(None, a, None, b), expected)
    assert_same_mask(combine_masks(a, None), a.copy())
    assert_same_mask(combine_masks(None, b), b.copy())


def test_combine_masks_of_nothing_is_none():
    """No masks, or only None, gives None (meaning "no mask")."""
    assert combine_masks() is None
    assert combine_masks(None) is None
    assert combine_masks(None, None, None) is None


def test_combine_masks_does_not_modify_its_inputs():
    """Combining leaves the given masks unchanged."""
    a = causal_mask(3)
    b = sliding_window_mask(3, 1)
    a_before, b_before = a.copy(), b.copy()
    combine_masks(a, b)
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(b, b_before)


def test_combined_causal_and_padding_in_engine():
    """causal AND padding: the engine attends only to real keys at or before each query."""
    rng = np.random.default_rng(2)
    key_is_real = [True, True, False, True]
    mask = combine_masks(causal_mask(4), padding_mask(key_is_real, 4))
    q, k, v = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for i in range(4):
        for j in range(4):
            assert (trace.weights[i, j] > 0) == (j <= i and key_is_real[j])
