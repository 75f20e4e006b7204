"""Scaled dot-product attention (paper §3.2.1) that keeps every intermediate matrix.

    Attention(Q, K, V) = softmax(Q Kᵀ / √dk) V

`scaled_dot_product_attention` computes exactly that formula, one named stage at a
time, and returns an `AttentionTrace`: a frozen record of every stage with read-only
arrays, so that a page, a notebook or a test can look at any of them.

Conventions follow PyTorch's `scaled_dot_product_attention`:
- a boolean mask's ``True`` means "query i may attend to key j";
- ``scale=None`` means 1/√dk;
- a query row whose keys are all masked gets weights 0 and output 0 (never NaN),
  and is flagged in `AttentionTrace.fully_masked_rows`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from .record_memory import record_buffer

__all__ = ["AttentionTrace", "masked_softmax", "scaled_dot_product_attention"]


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Every stage of one scaled dot-product attention, in the paper's order.

    Shapes use n = number of queries, m = number of keys (and values), dk = query/key
    size, dv = value size; ``...`` are leading dimensions such as heads.
    """

    q: np.ndarray
    """Queries Q, (..., n, dk): row i is what token i is looking for."""
    k: np.ndarray
    """Keys K, (..., m, dk): row j is what token j offers to be found by."""
    v: np.ndarray
    """Values V, (..., m, dv): row j is what token j hands over when attended to."""
    raw_scores: np.ndarray
    """Q Kᵀ, (..., n, m): cell (i, j) is the dot product of query i and key j."""
    scaled_scores: np.ndarray
    """raw_scores · scale, (..., n, m); with the default scale, Q Kᵀ / √dk."""
    mask: np.ndarray
    """Effective boolean mask, (..., n, m): True where query i may attend to key j."""
    masked_scores: np.ndarray
    """scaled_scores with −inf where the mask is False, (..., n, m)."""
    weights: np.ndarray
    """softmax of masked_scores over the keys, (..., n, m): each row sums to 1, or is all
    0 for a fully masked row."""
    output: np.ndarray
    """weights · V, (..., n, dv): row i is a weighted mix of the rows of V."""
    fully_masked_rows: np.ndarray
    """Boolean, (..., n): True for a query whose every key is masked (weights and
    output of that row are 0)."""
    scale: float
    """The number the raw scores were multiplied by (1/√dk unless given)."""

    @property
    def dk(self) -> int:
        """Size of the query and key vectors."""
        return self.q.shape[-1]

    def stage(self, name: str) -> np.ndarray:
        """The recorded matrix called `name` (e.g. ``"weights"``)."""
        if name not in _ARRAY_FIELDS:
            raise KeyError(f"unknown stage {name!r}; known: {', '.join(_ARRAY_FIELDS)}")
        return getattr(self, name)


_ARRAY_FIELDS = tuple(f.name for f in fields(AttentionTrace) if f.name != "scale")


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _as_matrix_stack(name: str, value, dtype) -> np.ndarray:
    array = np.array(value, dtype=dtype, copy=True)
    if array.ndim < 2:
        raise ValueError(f"{name} must have at least 2 dimensions (..., rows, size); got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def _result_dtype(*arrays) -> np.dtype:
    """float32 when every input is float32 (memory matters for long inputs), else float64."""
    if all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in arrays):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _scores_may_overflow(q: np.ndarray, k: np.ndarray, scale: float, score_count: int) -> bool:
    """Whether some |q_i · k_j · scale| could exceed the dtype's range, so that the scores
    must be read to find out.

    By Cauchy–Schwarz |q_i · k_j| ≤ ‖q_i‖ ‖k_j‖, so the largest row norms bound every score:
    an O((n + m) dk) check that spares a pass over the (n, m) scores in all ordinary cases.
    With no more scores than inputs (the √dk lesson's samples: one query against 16 keys of
    1,024 numbers, 500 times) reading the scores is the cheaper check, so the bound is skipped.
    """
    if score_count <= q.size + k.size:
        return True
    largest = float(np.finfo(q.dtype).max)
    q_norm = float(np.sqrt(np.max(np.sum(np.square(q, dtype=np.float64), axis=-1))))
    k_norm = float(np.sqrt(np.max(np.sum(np.square(k, dtype=np.float64), axis=-1))))
    return q_norm * k_norm * abs(scale) >= largest / 2


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Numerically stable softmax over the last axis, ignoring masked entries.

    Subtracting the row maximum keeps exp() from overflowing (scores of ±1e6 are fine).
    A row with no allowed entry (all −inf) gets all zeros instead of 0/0 = NaN.
    """
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = np.asarray(scores)
    weights = np.empty(scores.shape, dtype=np.result_type(scores, np.float32))  # `scores` may be a record
    _softmax_into(scores, weights)
    return weights


def _softmax_into(scores: np.ndarray, weights: np.ndarray) -> None:
    """Write softmax(scores) over the last axis into `weights` (same shape); see `masked_softmax`.

    Every step after the subtraction works in place, so `weights` is the only (n, m) array touched
    besides `scores`.
    """
    row_max = np.max(scores, axis=-1, keepdims=True)  # (..., n, 1), −inf for a fully masked row
    row_max[~np.isfinite(row_max)] = 0
    np.subtract(scores, row_max, out=weights)  # (..., n, m)
    np.exp(weights, out=weights)  # exp(−inf) = 0
    row_sum = np.sum(weights, axis=-1, keepdims=True)  # (..., n, 1)
    row_sum[row_sum == 0] = 1  # a fully masked row: 0 / 1 = 0
    np.divide(weights, row_sum, out=weights)


def _effective_mask(mask, scores_shape: tuple[int, ...]) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise ValueError(
            f"mask must be boolean (True = may attend); got dtype {mask.dtype} with shape {mask.shape}"
        )
    try:
        return np.broadcast_to(mask, scores_shape).copy()  # own copy: the caller may edit theirs
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the scores' shape {scores_shape} "
            "(..., n queries, m keys)"
        ) from None


_BLOCK_BYTES = 1 << 20
"""Bytes of one block of score rows (1 MiB): the scaled and masked scores and the weights
of one block stay in a core's cache from the first step to the last, so each (n, m) record is
written to memory once instead of being read back and written again for every step."""


def _score_steps(raw_scores, scale, scaled_scores, mask, masked_scores, weights) -> None:
    """scaled = raw · scale, masked = −inf where the mask is False, weights = softmax(masked),
    block of rows by block of rows, each written straight into its record's buffer.

    Every array is (rows, m), C-contiguous; `mask` is None when nothing is masked (then
    `masked_scores` is `scaled_scores`, and is not written twice). No temporary of size (rows, m) is made.
    """
    rows, m = raw_scores.shape
    block = max(1, _BLOCK_BYTES // (m * raw_scores.itemsize))
    for start in range(0, rows, block):
        part = slice(start, start + block)
        scaled = np.multiply(raw_scores[part], scale, out=scaled_scores[part])  # (r, m)
        masked = masked_scores[part]  # (r, m)
        if mask is not None:
            np.copyto(masked, -np.inf)
            np.copyto(masked, scaled, where=mask[part])
        _softmax_into(masked, weights[part])  # (r, m)


def scaled_dot_product_attention(q, k, v, mask=None, scale: float | None = None) -> AttentionTrace:
    """Attention(Q, K, V) = softmax(mask(Q Kᵀ · scale)) V, recording every stage.

    q: (..., n, dk), k: (..., m, dk), v: (..., m, dv); leading dimensions broadcast.
    mask: boolean, broadcastable to (..., n, m), True = may attend; None = no mask.
    scale: None for 1/√dk, otherwise the factor applied to the raw scores.
    """
    dtype = _result_dtype(q, k, v)
    q = _as_matrix_stack("q", q, dtype)
    k = _as_matrix_stack("k", k, dtype)
    v = _as_matrix_stack("v", v, dtype)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last size dk; got q {q.shape} and k {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have one row per key; got k {k.shape} and v {v.shape}")
    if q.shape[-1] == 0 or q.shape[-2] == 0 or k.shape[-2] == 0:
        raise ValueError(f"attention needs at least one query, one key and dk ≥ 1; got q {q.shape}, k {k.shape}")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading dimensions do not broadcast: q {q.shape}, k {k.shape}, v {v.shape}"
        ) from None

    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scale = float(scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number; got {scale}")

    score_batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    n, m = q.shape[-2], k.shape[-2]
    scores_shape = (*score_batch, n, m)
    # Buffers for the records (large ones may reuse the memory of dropped records: every cell
    # is written below); the steps after Q Kᵀ write straight into them, block of rows by block
    # of rows. An overflow (inf, and inf − inf = NaN after it) is reported below.
    with np.errstate(over="ignore", invalid="ignore"):
        raw_scores = np.matmul(q, np.swapaxes(k, -1, -2), out=record_buffer(scores_shape, dtype))  # (..., n, m)
        scaled_scores = record_buffer(scores_shape, dtype)  # (..., n, m)
        weights = record_buffer(scores_shape, dtype)  # (..., n, m)
        if mask is None:
            mask = np.broadcast_to(np.True_, scores_shape)  # (..., n, m), read-only, no memory
            masked_scores = scaled_scores  # nothing masked: the same (read-only) record
            mask_rows = None
        else:
            mask = _effective_mask(mask, scores_shape)  # (..., n, m)
            masked_scores = record_buffer(scores_shape, dtype)  # (..., n, m)
            mask_rows = mask.reshape(-1, m)  # (rows, m), a view of the fresh copy
        _score_steps(
            raw_scores.reshape(-1, m),  # (rows, m) views of the buffers: every stack of rows at once
            dtype.type(scale),
            scaled_scores.reshape(-1, m),
            mask_rows,
            masked_scores.reshape(-1, m),  # the scaled scores' own buffer when nothing is masked
            weights.reshape(-1, m),
        )
    if _scores_may_overflow(q, k, scale, scaled_scores.size) and not np.isfinite(scaled_scores).all():
        raise ValueError(f"scores overflowed {dtype.name}; use smaller inputs or float64")
    output = weights @ v  # (..., n, dv)
    if masked_scores is scaled_scores:
        fully_masked_rows = np.zeros(scores_shape[:-1], dtype=bool)  # (..., n)
    else:
        fully_masked_rows = ~mask.any(axis=-1)  # (..., n)

    return AttentionTrace(
        q=_read_only(q),
        k=_read_only(k),
        v=_read_only(v),
        raw_scores=_read_only(raw_scores),
        scaled_scores=_read_only(scaled_scores),
        mask=_read_only(mask) if mask.flags.writeable else mask,  # a broadcast view is already read-only
        masked_scores=_read_only(masked_scores),
        weights=_read_only(weights),
        output=_read_only(output),
        fully_masked_rows=_read_only(fully_masked_rows),
        scale=scale,
    )
