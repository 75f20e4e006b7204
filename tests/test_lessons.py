"""The lesson additions' computations and figures: projections, the linked highlight, the uses of attention."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import MaskSpec, ToySettings, build_toy_trace
from attention_core.figures import heatmap
from attention_core.figures.lessons import projection_figure
from attention_core.lessons.mask_lab import ATTENTION_USES, attention_use, mask_parts, use_of_parts
from attention_core.lessons.projections import most_asymmetric_pair, self_weight


def _outlines(figure) -> list[tuple[float, float, float, float]]:
    return [(shape.x0, shape.x1, shape.y0, shape.y1) for shape in figure.layout.shapes]


# ----- the linked highlight ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # (query i = 2, key j = 5): rows of query-side matrices are i, of key-side ones j; n × m: the cell
        ("x_query", "row 2"),
        ("q", "row 2"),
        ("k", "row 5"),
        ("v", "row 5"),
        ("output", "row 2"),
        ("raw_scores", "cell"),
        ("weights", "cell"),
        ("mask", "cell"),
    ],
)
def test_highlight_outlines_what_cell_i_j_is_made_of(name, expected):
    trace = build_toy_trace(ToySettings())  # 11 tokens, dk = 8
    columns = trace.matrix(name).shape[1]
    outlines = _outlines(heatmap(trace, name, highlight=(2, 5)))
    if expected == "cell":
        assert outlines == [(4.5, 5.5, 1.5, 2.5)]  # column j = 5, row i = 2, category k spans k ± 0.5
    else:
        row = int(expected.split()[1])
        assert outlines == [(-0.5, columns - 0.5, row - 0.5, row + 0.5)]


def test_no_highlight_draws_no_outline_and_the_figure_is_otherwise_unchanged():
    trace = build_toy_trace(ToySettings())
    plain, outlined = heatmap(trace, "weights"), heatmap(trace, "weights", highlight=(1, 1))
    assert _outlines(plain) == []
    np.testing.assert_array_equal(np.asarray(plain.data[0].z), np.asarray(outlined.data[0].z))


def test_highlight_in_cross_attention_uses_the_key_sentence_for_k():
    trace = build_toy_trace(ToySettings(text="a b c d e", query_text="x y"))
    assert _outlines(heatmap(trace, "k", highlight=(1, 4)))[0][2:] == (3.5, 4.5)
    assert _outlines(heatmap(trace, "q", highlight=(1, 4)))[0][2:] == (0.5, 1.5)


def test_highlight_follows_the_zoom_window_and_skips_cells_outside_it():
    trace = build_toy_trace(ToySettings(text=" ".join(f"w{index}" for index in range(40))))
    window = (slice(10, 20), slice(30, 40))
    assert _outlines(heatmap(trace, "weights", window=window, highlight=(12, 33))) == [(2.5, 3.5, 1.5, 2.5)]
    assert _outlines(heatmap(trace, "weights", window=window, highlight=(2, 33))) == []


# ----- X · W = Q -----------------------------------------------------------------------------------


def test_projection_figure_draws_x_w_and_their_product():
    trace = build_toy_trace(ToySettings())
    figure = projection_figure(trace.x_query, trace.w_q, trace.attention.q, trace.query_labels)
    x, w, q = (np.asarray(panel.z, dtype=float) for panel in figure.data)
    np.testing.assert_allclose(x @ w, q, atol=1e-12)  # the drawn matrices multiply to the drawn product
    assert x.shape == (11, 16) and w.shape == (16, 8) and q.shape == (11, 8)
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert titles[0].endswith("11×16") and titles[1].endswith("16×8") and titles[2].endswith("11×8")
    with pytest.raises(ValueError):
        projection_figure(trace.x_query, trace.w_q.T, trace.attention.q, trace.query_labels)


def test_toy_trace_records_the_projections_read_only():
    trace = build_toy_trace(ToySettings())
    for w, matrix in ((trace.w_q, trace.attention.q), (trace.w_k, trace.attention.k), (trace.w_v, trace.attention.v)):
        assert not w.flags.writeable
        np.testing.assert_allclose(trace.x_query @ w, matrix, atol=1e-12)
    assert build_toy_trace(ToySettings(projection="identity")).w_q is None


# ----- what W does to the scores ------------------------------------------------------------------


def test_most_asymmetric_pair_is_found_by_brute_force():
    scores = build_toy_trace(ToySettings()).attention.raw_scores
    n = len(scores)
    largest_gap = max(abs(scores[i][j] - scores[j][i]) for i in range(n) for j in range(i + 1, n))
    pair = most_asymmetric_pair(scores)
    assert pair.i < pair.j
    assert abs(scores[pair.i][pair.j] - scores[pair.j][pair.i]) == pytest.approx(largest_gap)  # ties: any of them
    assert pair.score_ij == scores[pair.i][pair.j] and pair.score_ji == scores[pair.j][pair.i]
    assert pair.score_ij != pytest.approx(pair.score_ji), "random W_Q ≠ W_K: QKᵀ is not symmetric"
    assert most_asymmetric_pair(np.ones((2, 3))) is None


@pytest.mark.parametrize("n", [2, 3, 127, 128, 129, 300])
@pytest.mark.parametrize("kind", ["random", "symmetric", "few values"])
def test_most_asymmetric_pair_is_the_first_largest_gap_in_reading_order(n, kind):
    rng = np.random.default_rng(n)
    scores = rng.normal(size=(n, n)).astype(np.float32)
    if kind == "symmetric":  # every gap 0: the first pair, (0, 1)
        scores = scores + scores.T
    if kind == "few values":  # many equal gaps
        scores = rng.integers(-2, 3, size=(n, n)).astype(np.float32)
    gaps = [(abs(float(scores[i, j]) - float(scores[j, i])), -i, -j) for i in range(n) for j in range(i + 1, n)]
    _, minus_i, minus_j = max(gaps)  # the largest gap; of equal ones, the smallest i, then j
    pair = most_asymmetric_pair(scores)
    assert (pair.i, pair.j) == (-minus_i, -minus_j)
    assert (pair.score_ij, pair.score_ji) == (scores[pair.i, pair.j], scores[pair.j, pair.i])


def test_without_projections_the_scores_are_symmetric_and_weight_piles_on_the_diagonal():
    trace = build_toy_trace(ToySettings(projection="identity"))
    scores = trace.attention.raw_scores
    np.testing.assert_allclose(scores, scores.T, atol=1e-12)
    weights = trace.attention.weights
    n = len(weights)
    measured = self_weight(weights)
    assert measured.mean_self_weight == pytest.approx(sum(weights[i][i] for i in range(n)) / n)
    assert measured.rows_where_self_is_largest == sum(weights[i][i] == max(weights[i]) for i in range(n))
    assert measured.mean_self_weight > 3 * measured.uniform_weight  # "piles weight on itself", here
    random = self_weight(build_toy_trace(ToySettings()).attention.weights)
    assert measured.mean_self_weight > random.mean_self_weight


def test_self_weight_leaves_out_fully_masked_rows():
    weights = np.array([[0.0, 0.0], [0.25, 0.75]])
    measured = self_weight(weights, np.array([True, False]))
    assert measured.mean_self_weight == 0.75 and measured.rows == 1
    assert self_weight(np.ones((2, 3)) / 3) is None


# ----- the paper's three uses of attention ---------------------------------------------------------


def test_three_uses_and_their_masks():
    assert list(ATTENTION_USES) == ["encoder_self", "decoder_self", "encoder_decoder"]
    assert ATTENTION_USES["decoder_self"].parts == ("causal", "padding")
    assert "causal" not in ATTENTION_USES["encoder_decoder"].parts  # every input position is visible
    assert attention_use(causal=False, cross=False) == "encoder_self"
    assert attention_use(causal=True, cross=False) == "decoder_self"
    assert attention_use(causal=False, cross=True) == "encoder_decoder"
    assert attention_use(causal=True, cross=True) is None


def test_each_use_is_recognised_from_the_masks_it_builds():
    tokens = ["The", "cat", "sat", "on", "the", "mat", "."]
    for use in ATTENTION_USES.values():
        spec = MaskSpec(causal="causal" in use.parts, padding=(len(tokens) - 1,))
        queries = ["x", "y"] if use.cross else tokens
        names = [part.name for part in mask_parts(spec, queries, tokens)]
        assert use_of_parts(names, use.cross) == use.name
    assert use_of_parts(["causal"], cross=False) is None
    assert use_of_parts(["padding", "window"], cross=False) is None


def test_without_projections_the_diagonal_is_about_dk_and_the_rest_about_plus_minus_root_dk():
    """The identity-mode sentence: S_ii = |x_i|² ≈ dk, off-diagonal scores spread ≈ √dk (unit-variance features)."""
    dk = 64
    words = " ".join(f"w{index}" for index in range(300))  # distinct words: no twin rows
    scores = build_toy_trace(ToySettings(text=words, dk=dk, projection="identity")).attention.raw_scores
    diagonal = np.diagonal(scores)
    off_diagonal = scores[~np.eye(len(scores), dtype=bool)]
    assert abs(diagonal.mean() - dk) < 0.1 * dk
    assert abs(off_diagonal.mean()) < 0.1 * np.sqrt(dk)
    assert abs(off_diagonal.std() - np.sqrt(dk)) < 0.1 * np.sqrt(dk)
