"""The mask lab's engine (`attention_core.lessons.mask_lab`) against explicit loops and the paper's softmax."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import MaskSpec, scaled_dot_product_attention
from attention_core.lessons.mask_lab import (
    MASK_PARTS,
    all_allowed,
    compare_fill,
    fill_softmax,
    fit_grid,
    grid_of,
    mask_parts,
)
from attention_core.tokens import tokenize


def loop_fill_softmax(scores, mask, fill_value):
    """softmax(where(mask, scores, fill)) one row at a time with math.exp: the obvious way."""
    n, m = len(scores), len(scores[0])
    result = np.zeros((n, m))
    for i in range(n):
        row = [float(scores[i][j]) if mask[i][j] else float(fill_value) for j in range(m)]
        top = max(row)
        exps = [math.exp(value - top) for value in row]
        total = sum(exps)
        for j in range(m):
            result[i, j] = exps[j] / total
    return result


def loop_and(*masks):
    """Cell-by-cell logical AND of equally shaped boolean grids."""
    n, m = len(masks[0]), len(masks[0][0])
    return np.array([[all(mask[i][j] for mask in masks) for j in range(m)] for i in range(n)])


# ----- fill_softmax -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda n: st.integers(1, 6).flatmap(
            lambda m: st.tuples(
                arrays(np.float64, (n, m), elements=st.floats(-30, 30)),
                arrays(np.bool_, (n, m)),
            )
        )
    ),
    st.sampled_from([-1e9, -1e4, -100.0]),
)
def test_fill_softmax_matches_the_explicit_loop(scores_and_mask, fill_value):
    """For any scores, mask and fill value, fill_softmax equals the row-by-row reference."""
    scores, mask = scores_and_mask
    np.testing.assert_allclose(
        fill_softmax(scores, mask, fill_value), loop_fill_softmax(scores, mask, fill_value), rtol=1e-12, atol=1e-300
    )


@pytest.mark.parametrize("m", [1, 2, 5, 11])
def test_a_fully_masked_row_is_uniform_under_a_fill_and_zero_in_the_engine(m):
    """Row 0 has every key masked: −1e9 fill gives 1/m per key, the engine gives 0 weights and 0 output."""
    rng = np.random.default_rng(m)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(m, 4)), rng.normal(size=(m, 2))
    mask = np.ones((3, m), dtype=bool)
    mask[0] = False
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    filled = fill_softmax(trace.scaled_scores, trace.mask, -1e9)
    np.testing.assert_array_equal(filled[0], np.full(m, 1.0 / m))
    np.testing.assert_array_equal(trace.weights[0], np.zeros(m))
    np.testing.assert_array_equal(trace.output[0], np.zeros(2))
    np.testing.assert_allclose(filled[1:], trace.weights[1:], rtol=1e-12)  # the other rows agree


def test_fill_softmax_is_stable_for_huge_scores():
    """Scores of ±1e6 do not overflow: the row maximum is subtracted before exp."""
    scores = np.array([[1e6, 1e6 - 1.0, -1e6]])
    got = fill_softmax(scores, np.array([[True, True, True]]))
    expected = np.array([[1.0, math.exp(-1.0), 0.0]]) / (1.0 + math.exp(-1.0))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.all(np.isfinite(got))


def test_fill_softmax_without_mask_is_the_plain_softmax():
    scores = np.array([[0.0, 1.0, 2.0], [3.0, 3.0, 3.0]])
    np.testing.assert_allclose(fill_softmax(scores), loop_fill_softmax(scores, np.ones((2, 3), bool), 0.0))


def test_fill_softmax_keeps_float32_and_leading_axes():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(2, 3, 4)).astype(np.float32)
    mask = rng.random((2, 3, 4)) > 0.3
    got = fill_softmax(scores, mask)
    assert got.dtype == np.float32
    for head in range(2):
        np.testing.assert_allclose(got[head], loop_fill_softmax(scores[head], mask[head], -1e9), rtol=1e-5)


def test_fill_softmax_rejects_a_non_boolean_mask():
    with pytest.raises(ValueError, match="boolean"):
        fill_softmax(np.zeros((2, 2)), np.ones((2, 2)))


# ----- compare_fill -----------------------------------------------------------------------------


def test_compare_fill_outputs_the_mean_of_the_values_for_a_fully_masked_row():
    """Under a −1e9 fill a fully masked query averages every value row; the engine outputs 0."""
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    mask = np.tril(np.ones((4, 5), dtype=bool))
    mask[:, 0] = False  # causal + key 0 is padding: query 0 sees nothing
    comparison = compare_fill(scaled_dot_product_attention(q, k, v, mask=mask))
    np.testing.assert_array_equal(comparison.fully_masked_rows, [True, False, False, False])
    mean_of_values = [sum(v[j][d] for j in range(5)) / 5 for d in range(2)]
    np.testing.assert_allclose(comparison.fill_output[0], mean_of_values, rtol=1e-12)
    np.testing.assert_array_equal(comparison.engine_output[0], [0.0, 0.0])
    np.testing.assert_allclose(comparison.fill_weights[1:], comparison.engine_weights[1:], rtol=1e-12)
    np.testing.assert_allclose(comparison.fill_output[1:], comparison.engine_output[1:], rtol=1e-12)
    assert comparison.fill_value == -1e9
    with pytest.raises(ValueError):
        comparison.fill_weights[0, 0] = 1.0  # records are read-only


# ----- mask_parts -------------------------------------------------------------------------------

TOKENS = tokenize("I saw a cat. The cat saw me. It ran away.")
QUERIES = tokenize("猫坐在垫子上。它累了。")


def loop_part(name, value, queries, keys):
    """One mask built cell by cell from its definition."""
    n, m = len(queries), len(keys)
    sentence_of = {}
    for side, tokens in (("q", queries), ("k", keys)):
        number, numbers = 0, []
        for token in tokens:
            numbers.append(number)
            number += token in ".!?。！？"
        sentence_of[side] = numbers
    rules = {
        "causal": lambda i, j: j <= i,
        "padding": lambda i, j: j not in value,
        "window": lambda i, j: abs(i - j) < value,
        "same_sentence": lambda i, j: sentence_of["q"][i] == sentence_of["k"][j],
        "custom": lambda i, j: value[i][j],
    }
    return np.array([[rules[name](i, j) for j in range(m)] for i in range(n)])


@pytest.mark.parametrize(("queries", "keys"), [(TOKENS, TOKENS), (QUERIES, TOKENS)], ids=["self", "cross"])
def test_mask_parts_are_each_mask_alone_and_their_and_is_the_combined_mask(queries, keys):
    n, m = len(queries), len(keys)
    rng = np.random.default_rng(n * m)
    custom = tuple(tuple(bool(cell) for cell in row) for row in rng.random((n, m)) > 0.2)
    values = {"causal": True, "padding": (0, 4), "window": 3, "same_sentence": True, "custom": custom}
    spec = MaskSpec(**values)
    parts = mask_parts(spec, queries, keys)
    assert [part.name for part in parts] == list(MASK_PARTS)
    for part in parts:
        np.testing.assert_array_equal(part.mask, loop_part(part.name, values[part.name], queries, keys))
    expected = loop_and(*[loop_part(name, values[name], queries, keys) for name in MASK_PARTS])
    np.testing.assert_array_equal(spec.build(queries, keys), expected)


def test_mask_parts_lists_only_the_masks_that_are_on():
    assert mask_parts(MaskSpec(), TOKENS, TOKENS) == ()
    parts = mask_parts(MaskSpec(window=2, padding=(1,)), TOKENS, TOKENS)
    assert [part.name for part in parts] == ["padding", "window"]


# ----- the custom grid --------------------------------------------------------------------------


def test_all_allowed_and_grid_of():
    assert all_allowed(2, 3) == ((True, True, True), (True, True, True))
    mask = np.array([[True, False], [False, True], [True, True]])
    assert grid_of(mask, 3, 2) == ((True, False), (False, True), (True, True))
    assert grid_of(None, 1, 2) == ((True, True),)
    with pytest.raises(ValueError):
        grid_of(mask, 2, 3)


@pytest.mark.parametrize(("n", "m"), [(3, 3), (2, 4), (4, 2)])
def test_fit_grid_keeps_a_grid_of_the_right_shape(n, m):
    grid = tuple(tuple((i + j) % 2 == 0 for j in range(m)) for i in range(n))
    assert fit_grid(grid, n, m) == (grid, False)


@pytest.mark.parametrize(("shape", "n", "m"), [((3, 3), 4, 4), ((3, 3), 3, 4), ((2, 4), 4, 2), ((0, 0), 2, 2)])
def test_fit_grid_resets_a_grid_of_another_shape(shape, n, m):
    rows, columns = shape
    grid = tuple((False,) * columns for _ in range(rows))
    assert fit_grid(grid, n, m) == (all_allowed(n, m), True)


def test_fit_grid_without_a_grid_starts_all_allowed_without_a_reset():
    assert fit_grid(None, 2, 3) == (all_allowed(2, 3), False)
