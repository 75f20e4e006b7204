"""Follow one cell (i, j) of scaled dot-product attention from q_i and k_j to output row i.

    S_ij  = q_i · k_j = Σ_t q_it k_jt                      raw score: compatibility of query i with key j (unnormalised)
    S̃_ij  = S_ij · scale          (scale = 1/√dk)          scaled score
    S̃_ij  ← −∞ where the mask forbids (i, j)               masked score
    A_ij  = exp(S̃_ij − max_j' S̃_ij') / Σ_j' exp(S̃_ij' − max_j' S̃_ij')    softmax weight
    o_i   = Σ_j A_ij v_j                                   output row i

`follow_cell` reads the records of an `AttentionTrace` (Q, K, V, the mask, the scale and
row i of the masked scores) and redoes the computation for one cell, one small step at a
time, keeping every intermediate number in a `CellTrace`. The page "Follow one cell"
shows these numbers; the tests check that each of them equals the trace's own record.

A row whose every key is masked follows the engine (and PyTorch): there is nothing to
share attention between, so its weights and its output row are 0, never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..attention import AttentionTrace

__all__ = ["CellTrace", "follow_cell"]


@dataclass(frozen=True, eq=False)
class CellTrace:
    """One cell (i, j) of attention, decomposed into the numbers that produce it.

    Shapes use m = number of keys (and values), dk = query/key size, dv = value size.
    Arrays are read-only.
    """

    i: int
    """Position of the query token (row of the score matrix)."""
    j: int
    """Position of the key token (column of the score matrix)."""
    q_i: np.ndarray
    """Query vector of token i, (dk,): row i of Q."""
    k_j: np.ndarray
    """Key vector of token j, (dk,): row j of K."""
    products: np.ndarray
    """q_i * k_j feature by feature, (dk,): positive where both agree in sign."""
    raw_score: float
    """Σ products = q_i · k_j: the raw score S_ij, the similarity of query i and key j."""
    scale: float
    """The factor applied to the raw score (1/√dk unless the trace used another)."""
    scaled_score: float
    """raw_score · scale: the scaled score S̃_ij (before the mask)."""
    allowed: bool
    """Whether the mask lets query i attend to key j."""
    row_allowed: np.ndarray
    """Boolean, (m,): which keys query i may attend to (row i of the mask)."""
    row_scores: np.ndarray
    """Row i of the masked scores, (m,): S̃_ij', or −inf where key j' is masked."""
    fully_masked: bool
    """True when query i may attend to no key at all (then weights and output are 0)."""
    row_max: float
    """Largest allowed score of row i, subtracted before exp() for numerical safety;
    0.0 for a fully masked row (there is nothing to subtract)."""
    shifted_scores: np.ndarray
    """row_scores − row_max, (m,): at most 0 for allowed keys, −inf for masked ones."""
    exp_row: np.ndarray
    """exp(shifted_scores), (m,): 0 for masked keys, exactly 1 for the row's largest score."""
    row_sum: float
    """Σ exp_row: what every exp is divided by (0 for a fully masked row)."""
    weights_row: np.ndarray
    """exp_row / row_sum, (m,): the softmax weights of row i (all 0 if fully masked)."""
    weight: float
    """weights_row[j] = A_ij: the share of query i's attention that goes to key j."""
    v: np.ndarray
    """Values V, (m, dv): row j' is what key token j' hands over."""
    contributions: np.ndarray
    """weights_row[:, None] * v, (m, dv): row j' is key j''s share A_ij' · v_j' of the output."""
    output_row: np.ndarray
    """Σ_j' contributions[j'] = o_i, (dv,): row i of the attention output."""

    @property
    def contribution(self) -> np.ndarray:
        """The picked key's share of the output, A_ij · v_j, (dv,)."""
        return self.contributions[self.j]


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _check_position(name: str, value, size: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer position; got {value!r}")
    if not 0 <= value < size:
        raise ValueError(f"{name}={value} is out of range: the trace has {size} {what} (positions 0 to {size - 1})")
    return int(value)


def follow_cell(trace: AttentionTrace, i: int, j: int) -> CellTrace:
    """Decompose cell (i, j) of a single-head trace, q: (n, dk), k: (m, dk), v: (m, dv).

    Raises ValueError when the trace has leading dimensions (pick one head first) or
    when i is not a query position 0..n−1 or j not a key position 0..m−1.
    """
    if trace.q.ndim != 2:
        raise ValueError(
            f"follow_cell needs a single attention matrix, q (n, dk); got q of shape {trace.q.shape} "
            "(select one head first)"
        )
    n, m = trace.weights.shape
    i = _check_position("i", i, n, "queries")
    j = _check_position("j", j, m, "keys")

    q_i = trace.q[i]  # (dk,)
    k_j = trace.k[j]  # (dk,)
    products = q_i * k_j  # (dk,)
    raw_score = float(products.sum())
    scaled_score = raw_score * trace.scale

    row_allowed = np.asarray(trace.mask[i])  # (m,)
    row_scores = np.asarray(trace.masked_scores[i])  # (m,), −inf where masked
    fully_masked = not row_allowed.any()
    row_max = 0.0 if fully_masked else float(row_scores[row_allowed].max())
    shifted_scores = row_scores - row_max  # (m,)
    exp_row = np.exp(shifted_scores)  # (m,), exp(−inf) = 0
    row_sum = float(exp_row.sum())
    weights_row = exp_row / row_sum if row_sum > 0 else np.zeros_like(exp_row)  # (m,)
    contributions = weights_row[:, None] * trace.v  # (m, dv)
    output_row = contributions.sum(axis=0)  # (dv,)

    return CellTrace(
        i=i,
        j=j,
        q_i=q_i,
        k_j=k_j,
        products=_read_only(products),
        raw_score=raw_score,
        scale=float(trace.scale),
        scaled_score=float(scaled_score),
        allowed=bool(row_allowed[j]),
        row_allowed=row_allowed,
        row_scores=row_scores,
        fully_masked=fully_masked,
        row_max=row_max,
        shifted_scores=_read_only(shifted_scores),
        exp_row=_read_only(exp_row),
        row_sum=row_sum,
        weights_row=_read_only(weights_row),
        weight=float(weights_row[j]),
        v=trace.v,
        contributions=_read_only(contributions),
        output_row=_read_only(output_row),
    )
