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
    Of equal gaps, the first in reading order. The upper triangle is compared a band of rows at a
    time, so that no (n, n) temporary is made (at 2,048 tokens those took 73 ms on every rerun).
    """
    scores = np.asarray(raw_scores)  # (n, n)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1] or scores.shape[0] < 2:
        return None
    n = scores.shape[0]
    largest, pair = -1.0, (0, 1)
    for start in range(0, n - 1, _BAND_ROWS):
        stop = min(start + _BAND_ROWS, n)
        s_ij = scores[start:stop, start:].astype(float)  # (b, n − start): rows i of the band, columns j ≥ start
        s_ji = scores[start:, start:stop].T.astype(float)  # (b, n − start): the same cells mirrored
        gap = np.abs(s_ij - s_ji)
        gap[np.tril_indices(stop - start, m=n - start)] = -1.0  # keep j > i only
        flat = int(np.argmax(gap))
        if gap.flat[flat] > largest:  # strictly: an equal gap in a later band comes later in reading order
            row, column = divmod(flat, n - start)
            largest, pair = float(gap.flat[flat]), (start + row, start + column)
    i, j = pair
    return Asymmetry(i=i, j=j, score_ij=float(scores[i, j]), score_ji=float(scores[j, i]))


_BAND_ROWS = 128
"""Rows of the score matrix compared at once by `most_asymmetric_pair`."""


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
