"""What the projections W_Q, W_K, W_V do to the scores, measured on a trace.

    S_ij = q_i · k_j = x_i W_Q W_Kᵀ x_jᵀ,      S_ji = x_j W_Q W_Kᵀ x_iᵀ

With two different random matrices W_Q ≠ W_K, W_Q W_Kᵀ is not symmetric, so S_ij ≠ S_ji in
general: "i looks for j" is not "j looks for i". Without projections (Q = K = V = X) the
scores are S_ij = x_i · x_j, symmetric, and the diagonal S_ii = |x_i|² is the largest
entry of its row more often than not (about dk for unit-variance components, against
about ±√dk off the diagonal), so every token piles weight on itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Asymmetry", "SelfWeight", "most_asymmetric_pair", "self_weight"]


@dataclass(frozen=True)
class Asymmetry:
    """The pair (i, j) whose scores differ most between S_ij and S_ji."""

    i: int
    j: int
    score_ij: float
    """S_ij = q_i · k_j."""
    score_ji: float
    """S_ji = q_j · k_i."""


@dataclass(frozen=True)
class SelfWeight:
    """How much attention tokens give themselves, against an even spread."""

    mean_self_weight: float
    """Mean over the query rows of A_ii (rows with every key masked are left out)."""
    uniform_weight: float
    """1/m: what each key would get if attention were spread evenly."""
    rows_where_self_is_largest: int
    """How many rows give their largest weight to the token itself."""
    rows: int
    """How many rows were counted."""


def most_asymmetric_pair(raw_scores: np.ndarray) -> Asymmetry | None:
    """The pair i < j with the largest |S_ij − S_ji| of a square score matrix (self-attention).

    None for a non-square matrix (cross-attention has no S_ji to compare) or fewer than 2 rows.
    """
    scores = np.asarray(raw_scores, dtype=float)  # (n, n)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1] or scores.shape[0] < 2:
        return None
    gap = np.abs(scores - scores.T)  # (n, n), symmetric, 0 on the diagonal
    gap[np.tril_indices_from(gap)] = -1.0  # keep i < j only
    i, j = np.unravel_index(int(np.argmax(gap)), gap.shape)
    return Asymmetry(i=int(i), j=int(j), score_ij=float(scores[i, j]), score_ji=float(scores[j, i]))


def self_weight(weights: np.ndarray, fully_masked_rows: np.ndarray | None = None) -> SelfWeight | None:
    """The mean diagonal weight A_ii of a square weight matrix, and how often it is the row's largest.

    None for a non-square matrix (cross-attention: query i and key i are different tokens).
    """
    weights = np.asarray(weights, dtype=float)  # (n, n)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1]:
        return None
    counted = np.ones(weights.shape[0], dtype=bool) if fully_masked_rows is None else ~np.asarray(fully_masked_rows)
    if not counted.any():
        return None
    diagonal = np.diagonal(weights)[counted]  # (rows,)
    largest = np.max(weights, axis=1)[counted]  # (rows,)
    return SelfWeight(
        mean_self_weight=float(diagonal.mean()),
        uniform_weight=1.0 / weights.shape[1],
        rows_where_self_is_largest=int(np.sum(diagonal >= largest)),
        rows=int(counted.sum()),
    )
