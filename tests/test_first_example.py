"""The hand-numbered first example: the engine's numbers against the paper's formula done by hand."""

from __future__ import annotations

import math

import numpy as np

from attention_core.lessons.first_example import bmatrix, dot_product_terms, first_example

# Q, K, V as printed on the page (written again here, not read from the module).
Q = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]]
K = [[2, 0, 2, 0], [0, 2, 0, 0], [0, 0, 0, 2]]
V = [[1, 0, 2, 0], [0, 1, 0, 2], [1, 1, 0, 0]]


def test_the_example_is_three_tokens_with_dk_4():
    example = first_example()
    assert len(example.tokens) == 3
    assert example.dk == 4 and example.sqrt_dk == 2
    np.testing.assert_array_equal(example.attention.q, Q)
    np.testing.assert_array_equal(example.attention.k, K)
    np.testing.assert_array_equal(example.attention.v, V)


def test_scores_by_hand():
    attention = first_example().attention
    # q1·k1 = 1·2 + 0·0 + 1·2 + 0·0 = 4, q1·k2 = 0, q1·k3 = 0; q2·k2 = 2, q2·k3 = 2; q3·k1 = 2, q3·k2 = 2
    raw_by_hand = [[4, 0, 0], [0, 2, 2], [2, 2, 0]]
    np.testing.assert_array_equal(attention.raw_scores, raw_by_hand)
    scaled_by_hand = [[2, 0, 0], [0, 1, 1], [1, 1, 0]]  # ÷ √4 = ÷ 2
    np.testing.assert_array_equal(attention.scaled_scores, scaled_by_hand)
    assert not np.array_equal(attention.raw_scores, attention.raw_scores.T), "W_Q ≠ W_K: QKᵀ is not symmetric"


def test_softmax_and_output_by_hand():
    attention = first_example().attention
    e = math.e
    row_200 = [e**2 / (e**2 + 2), 1 / (e**2 + 2), 1 / (e**2 + 2)]  # softmax(2, 0, 0)
    row_011 = [1 / (1 + 2 * e), e / (1 + 2 * e), e / (1 + 2 * e)]  # softmax(0, 1, 1)
    row_110 = [e / (2 * e + 1), e / (2 * e + 1), 1 / (2 * e + 1)]  # softmax(1, 1, 0)
    weights_by_hand = [row_200, row_011, row_110]
    np.testing.assert_allclose(attention.weights, weights_by_hand, rtol=1e-12)
    # the numbers the page prints, rounded to two decimals
    assert [round(w, 2) for w in row_200] == [0.79, 0.11, 0.11]
    output_by_hand = [
        [sum(weights_by_hand[i][j] * V[j][t] for j in range(3)) for t in range(4)] for i in range(3)
    ]
    np.testing.assert_allclose(attention.output, output_by_hand, rtol=1e-12)


def test_formulas_print_integers_plainly():
    assert bmatrix(np.array([[4.0, 0.0], [0.5, 2.0]])) == r"\begin{bmatrix}4 & 0 \\ 0.50 & 2\end{bmatrix}"
    assert dot_product_terms(first_example(), 0, 0) == r"1\cdot2 + 0\cdot0 + 1\cdot2 + 0\cdot0 = 4"


def test_the_readme_numbers_are_the_example_s():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    attention = first_example().attention
    first_row = ", ".join(f"{value:g}" for value in attention.raw_scores[0])
    scaled_row = ", ".join(f"{value:g}" for value in attention.scaled_scores[0])
    weights = " / ".join(f"{value:.2f}" for value in attention.weights[0])
    assert f"scores ({first_row}) ÷ √4 = ({scaled_row}), softmax {weights}" in readme
