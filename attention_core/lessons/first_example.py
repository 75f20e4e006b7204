"""A first example small enough to check by hand: three tokens, dk = 4, small integers.

    Attention(Q, K, V) = softmax(QKᵀ / √dk) V,    here √dk = √4 = 2

Q, K and V are written by hand (not learned, not random) so that every number on the
page can be followed with pencil and paper: the raw scores are small even integers,
dividing by √4 = 2 gives integers again, and softmax turns a row (2, 0, 0) into
(0.79, 0.11, 0.11). The numbers shown are the engine's own (`scaled_dot_product_attention`);
the tests redo the arithmetic by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..attention import AttentionTrace, _read_only, scaled_dot_product_attention

__all__ = ["FIRST_EXAMPLE_TOKENS", "FirstExample", "bmatrix", "dot_product_terms", "first_example", "worked_row"]

FIRST_EXAMPLE_TOKENS = ("the", "cat", "sat")
"""The three tokens, one row each of Q, K and V."""

_QUERIES = ((1, 0, 1, 0), (0, 1, 0, 1), (1, 1, 0, 0))
"""Q, (3, 4): what each token looks for."""
_KEYS = ((2, 0, 2, 0), (0, 2, 0, 0), (0, 0, 0, 2))
"""K, (3, 4): what each token can be found by. K ≠ Q, so QKᵀ is not symmetric."""
_VALUES = ((1, 0, 2, 0), (0, 1, 0, 2), (1, 1, 0, 0))
"""V, (3, 4): what each token hands over when attended to."""


@dataclass(frozen=True, eq=False)
class FirstExample:
    """The hand-made Q, K, V and every stage the engine computes from them."""

    tokens: tuple[str, ...]
    """The token of each row."""
    attention: AttentionTrace
    """The engine's record: q, k, v (3, 4), raw_scores, scaled_scores, weights (3, 3), output (3, 4)."""

    @property
    def dk(self) -> int:
        return self.attention.dk

    @property
    def sqrt_dk(self) -> float:
        """√dk: the raw scores are divided by it (2 here)."""
        return math.sqrt(self.dk)

    @property
    def labels(self) -> list[str]:
        """"0:the", "1:cat", …: positions counted from 0, as every token label in the app."""
        return [f"{index}:{token}" for index, token in enumerate(self.tokens)]


def first_example() -> FirstExample:
    """The first example run through the engine (no mask, scale 1/√dk = 1/2)."""
    q = _read_only(np.array(_QUERIES, dtype=float))  # (3, 4)
    k = _read_only(np.array(_KEYS, dtype=float))  # (3, 4)
    v = _read_only(np.array(_VALUES, dtype=float))  # (3, 4)
    return FirstExample(tokens=FIRST_EXAMPLE_TOKENS, attention=scaled_dot_product_attention(q, k, v))


def _number(value: float, digits: int) -> str:
    """An integer without decimals, anything else with `digits` decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}"


def bmatrix(values: np.ndarray, digits: int = 2) -> str:
    """A matrix as a LaTeX ``bmatrix`` (integers printed as integers), for the page's formulas."""
    rows = [" & ".join(_number(float(value), digits) for value in row) for row in np.atleast_2d(values)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def dot_product_terms(example: FirstExample, i: int, j: int) -> str:
    """q_i · k_j written out term by term in LaTeX, e.g. ``1·2 + 0·0 + 1·2 + 0·0 = 4``."""
    q_row, k_row = example.attention.q[i], example.attention.k[j]  # (dk,), (dk,)
    terms = " + ".join(f"{_number(a, 2)}\\cdot{_number(b, 2)}" for a, b in zip(q_row, k_row, strict=True))
    return f"{terms} = {_number(example.attention.raw_scores[i, j], 2)}"


def _row_text(values) -> str:
    return ", ".join(_number(float(value), 2) for value in values)


def worked_row(example: FirstExample, i: int = 0) -> dict[str, str]:
    """Row i computed step by step, as text and LaTeX pieces for the page's sentence.

    dot: q_i · k_i term by term; scores / scaled: the row before and after ÷√dk; softmax:
    the first weight as e^s / Σ e^s with its numbers; mix: the output row as Σ_j A_ij v_j.
    """
    attention = example.attention
    scaled = attention.scaled_scores[i]  # (m,)
    exponentials = np.exp(scaled)  # (m,)
    total = float(exponentials.sum())
    weights = attention.weights[i]  # (m,)
    denominator = " + ".join(f"e^{{{_number(float(s), 2)}}}" for s in scaled)
    softmax = (
        f"\\frac{{e^{{{_number(float(scaled[i]), 2)}}}}}{{{denominator}}}"
        f" = \\frac{{{exponentials[i]:.2f}}}{{{total:.2f}}} = {weights[i]:.2f}"
        f",\\ A_{{{i}\\cdot}} = ({_row_text(np.round(weights, 2))})"
    )
    mix = " + ".join(f"{w:.2f}\\,v_{{{j}}}" for j, w in enumerate(weights))
    mix += f" = ({_row_text(np.round(attention.output[i], 2))})"
    return {
        "token": example.labels[i],
        "dot": f"q_{{{i}}} \\cdot k_{{{i}}} = " + dot_product_terms(example, i, i),
        "scores": _row_text(attention.raw_scores[i]),
        "scaled": _row_text(scaled),
        "softmax": softmax,
        "mix": mix,
    }
