"""The quiz's scoring against hand-worked examples and a loop-by-loop reference.

Expected values are worked out by hand in the comments, or computed here with plain
Python loops over the cells; never with the module's own helpers.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attention_core import MaskSpec, ToySettings, build_toy_trace, masked_softmax
from attention_core.figures.quiz import GUESS_COLOURS, guesses_heatmap
from attention_core.lessons.quiz import (
    MAX_ASKED_ROWS,
    TIE_RTOL,
    question,
    score_guesses,
    score_sketch,
    strongest_keys,
)

# Four queries, four keys. Row 0 ties keys 1 and 2; row 2 may see nothing (all weights 0);
# row 3 may not attend to key 0 (masked), so its largest allowed weight is key 3's.
WEIGHTS = np.array(
    [
        [0.1, 0.4, 0.4, 0.1],
        [0.7, 0.1, 0.1, 0.1],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.2, 0.3, 0.5],
    ]
)
MASK = np.array(
    [
        [True, True, True, True],
        [True, True, True, True],
        [False, False, False, False],
        [False, True, True, True],
    ]
)


def reference_strongest(weights, mask) -> list[tuple[int, ...]]:
    """Keys with the largest allowed weight, row by row, by explicit loops."""
    best = []
    for i in range(len(weights)):
        allowed = [j for j in range(len(weights[i])) if mask[i][j]]
        if not allowed:
            best.append(())
            continue
        top = max(weights[i][j] for j in allowed)
        best.append(tuple(j for j in allowed if weights[i][j] >= top - TIE_RTOL * abs(top)))
    return best


# ----- strongest keys and ties --------------------------------------------------------------------


def test_strongest_keys_of_the_hand_example():
    assert strongest_keys(WEIGHTS, MASK) == ((1, 2), (0,), (), (3,))


def test_without_a_mask_every_key_counts():
    assert strongest_keys(WEIGHTS[:2]) == ((1, 2), (0,))


def test_rounding_level_differences_tie_but_real_differences_do_not():
    almost = np.array([[0.3, 0.3 * (1 + 1e-13), 0.1]])
    assert strongest_keys(almost) == ((0, 1),)
    apart = np.array([[0.3, 0.3001, 0.1]])
    assert strongest_keys(apart) == ((1,),)


@pytest.mark.parametrize("seed", range(6))
def test_strongest_keys_match_the_loop_reference_on_random_masked_softmax(seed):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 9, size=2)
    scores = rng.normal(size=(n, m)).round(1)  # rounding makes exact ties likely
    mask = rng.random((n, m)) < 0.7
    weights = masked_softmax(scores, mask)
    assert strongest_keys(weights, mask) == tuple(reference_strongest(weights, mask))


def test_twin_tokens_tie_in_the_toy_sentence():
    """'The' (0) and 'the' (4) share an embedding: every query weighs them alike."""
    trace = build_toy_trace(ToySettings())
    assert trace.key_tokens[0].casefold() == trace.key_tokens[4].casefold()
    for keys in strongest_keys(trace.attention.weights, trace.attention.mask):
        assert (0 in keys) == (4 in keys)


# ----- which rows are asked --------------------------------------------------------------------------


def test_fully_masked_rows_are_not_asked_and_options_are_the_allowed_keys():
    asked = question(MASK)
    assert asked.asked == (0, 1, 3)
    assert asked.fully_masked == (2,)
    assert asked.not_asked == 0
    assert asked.options == ((0, 1, 2, 3), (0, 1, 2, 3), (1, 2, 3))


def test_only_the_first_rows_are_asked_in_a_long_sentence():
    n = MAX_ASKED_ROWS + 3
    mask = np.ones((n, 5), dtype=bool)
    mask[1] = False
    asked = question(mask)
    assert asked.asked == tuple(i for i in range(MAX_ASKED_ROWS) if i != 1)
    assert asked.fully_masked == (1,)
    assert asked.not_asked == 3


def test_causal_padding_leaves_the_first_query_nothing():
    trace = build_toy_trace(ToySettings(mask=MaskSpec(causal=True, padding=(0,))))
    asked = question(trace.attention.mask)
    assert asked.fully_masked == (0,)
    assert asked.single_key == (1,)  # query 1 may see keys 0 and 1, and 0 is padding: nothing to guess
    assert asked.asked[0] == 2 and asked.options[0] == (1, 2)


def test_a_query_with_one_possible_key_is_not_asked():
    """Under a causal mask row 0 may only look at key 0: its answer is given, not a question
    that counts wrong when left blank."""
    mask = np.tril(np.ones((4, 4), dtype=bool))
    asked = question(mask)
    assert asked.single_key == (0,)
    assert asked.asked == (1, 2, 3)
    assert score_guesses(np.tril(np.full((4, 4), 0.25)), mask, {}).total == 3


# ----- scoring strongest-key guesses --------------------------------------------------------------


def test_score_counts_right_rows_and_accepts_either_tied_key():
    # row 0: key 2 is one of the tied pair (right); row 1: key 3 is not key 0 (wrong);
    # row 3: key 3 is its strongest allowed key (right). Score 2 of 3.
    result = score_guesses(WEIGHTS, MASK, {0: 2, 1: 3, 3: 3})
    assert result.rows == (0, 1, 3)
    assert result.correct.tolist() == [True, False, True]
    assert (result.score, result.total, result.answered) == (2, 3, 3)
    assert result.percent == pytest.approx(200 / 3)
    assert result.guess_weights.tolist() == [0.4, 0.1, 0.5]
    assert result.best_weights.tolist() == [0.4, 0.7, 0.5]
    assert result.best_keys == ((1, 2), (0,), (3,))


def test_the_other_tied_key_is_right_too_and_blank_rows_are_wrong():
    result = score_guesses(WEIGHTS, MASK, {0: 1, 1: None})
    assert result.correct.tolist() == [True, False, False]
    assert result.guesses == (1, None, None)
    assert (result.score, result.answered) == (1, 1)
    assert result.guess_weights[0] == 0.4 and np.isnan(result.guess_weights[1:]).all()


def test_a_masked_key_is_never_right():
    result = score_guesses(WEIGHTS, MASK, {3: 0})
    assert not result.correct[2]
    assert result.guess_weights[2] == 0.0


def test_guesses_for_rows_not_asked_or_keys_out_of_range_are_refused():
    with pytest.raises(ValueError, match="not asked"):
        score_guesses(WEIGHTS, MASK, {2: 0})  # fully masked
    with pytest.raises(ValueError, match="outside"):
        score_guesses(WEIGHTS, MASK, {0: 4})


@pytest.mark.parametrize("seed", range(4))
def test_score_matches_a_loop_reference_on_a_toy_trace(seed):
    trace = build_toy_trace(ToySettings(seed=seed, mask=MaskSpec(causal=seed % 2 == 1)))
    weights, mask = trace.attention.weights, trace.attention.mask
    rng = np.random.default_rng(seed)
    m = weights.shape[1]
    guesses = {i: int(rng.integers(m)) for i in range(min(len(weights), MAX_ASKED_ROWS)) if mask[i].sum() > 1}
    best = reference_strongest(weights.tolist(), mask.tolist())
    expected = sum(key in best[i] for i, key in guesses.items())
    assert score_guesses(weights, mask, guesses).score == expected


# ----- a sketched row ---------------------------------------------------------------------------------


def test_sketch_is_normalised_and_scored_by_hand():
    # Row 3 is [0, 0.2, 0.3, 0.5] with key 0 masked. Sketch [9, 1, 1, 2]: the 9 on the masked
    # key is ignored, so the guess is [0, 1, 1, 2] / 4 = [0, 0.25, 0.25, 0.5].
    # TV = ½ (0 + 0.05 + 0.05 + 0) = 0.05; overlap = 0 + 0.2 + 0.25 + 0.5 = 0.95.
    result = score_sketch(WEIGHTS, MASK, 3, [9, 1, 1, 2])
    np.testing.assert_allclose(result.guess, [0, 0.25, 0.25, 0.5])
    np.testing.assert_array_equal(result.truth, WEIGHTS[3])
    assert result.total_variation == pytest.approx(0.05)
    assert result.overlap == pytest.approx(0.95)


def test_a_perfect_sketch_and_a_disjoint_one():
    perfect = score_sketch(WEIGHTS, MASK, 1, [7, 1, 1, 1])
    assert perfect.total_variation == pytest.approx(0) and perfect.overlap == pytest.approx(1)
    rows = np.array([[1.0, 0.0], [0.5, 0.5]])
    disjoint = score_sketch(rows, None, 0, [0, 3])
    assert disjoint.total_variation == pytest.approx(1) and disjoint.overlap == pytest.approx(0)


@pytest.mark.parametrize("seed", range(5))
def test_sketch_distance_matches_loops_and_overlap_is_one_minus_distance(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 10))
    truth = masked_softmax(rng.normal(size=(1, m)))
    sketch = rng.integers(0, 100, size=m).tolist()
    sketch[0] += 1  # at least one positive amount
    result = score_sketch(truth, None, 0, sketch)
    total = sum(sketch)
    guess = [amount / total for amount in sketch]
    distance = 0.5 * sum(abs(guess[j] - truth[0, j]) for j in range(m))
    overlap = sum(min(guess[j], truth[0, j]) for j in range(m))
    assert result.total_variation == pytest.approx(distance)
    assert result.overlap == pytest.approx(overlap)
    assert result.overlap == pytest.approx(1 - result.total_variation)


@pytest.mark.parametrize(
    ("query", "sketch", "message"),
    [
        (2, [1, 1, 1, 1], "every key is masked"),
        (3, [5, 0, 0, 0], "positive"),  # only the masked key has an amount
        (0, [1, -1, 0, 0], "non-negative"),
        (0, [1, 1], "one amount per key"),
        (4, [1, 1, 1, 1], "outside"),
    ],
)
def test_sketches_that_cannot_be_scored_are_refused(query, sketch, message):
    with pytest.raises(ValueError, match=message):
        score_sketch(WEIGHTS, MASK, query, sketch)


def test_records_are_frozen_and_read_only():
    result = score_guesses(WEIGHTS, MASK, {0: 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.rows = ()
    with pytest.raises(ValueError):
        result.correct[0] = False
    sketch = score_sketch(WEIGHTS, MASK, 0, [1, 1, 1, 1])
    with pytest.raises(ValueError):
        sketch.guess[0] = 1.0


# ----- the answer figure marks what the records say ---------------------------------------------------


def test_the_answer_figure_frames_every_strongest_key_and_underlines_every_guess():
    trace = build_toy_trace(ToySettings())
    weights, mask = trace.attention.weights, trace.attention.mask
    best = reference_strongest(weights.tolist(), mask.tolist())
    guesses = {0: 1, 1: min(best[1]), 5: max(best[5])}
    figure = guesses_heatmap(trace, score_guesses(weights, mask, guesses))
    frames = sorted(
        (round((shape.y0 + shape.y1) / 2), round((shape.x0 + shape.x1) / 2))
        for shape in figure.layout.shapes
        if shape.fillcolor is None
    )
    assert frames == sorted((i, j) for i in range(len(best)) for j in best[i])
    bars = {
        (round(shape.y1), round((shape.x0 + shape.x1) / 2)): shape.fillcolor
        for shape in figure.layout.shapes
        if shape.fillcolor is not None
    }
    assert bars == {(i, j): GUESS_COLOURS[j in best[i]] for i, j in guesses.items()}
