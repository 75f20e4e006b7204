"""Multi-head attention (paper §3.2.2), built on the recorded single-head attention.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O,
    head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i)

All heads run as one `scaled_dot_product_attention` call with a leading head axis, so
each head's every stage is recorded. Head h uses column block h of each projection,
the usual way the per-head matrices W_Q^i are packed into one (d_model, h·dk) matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import AttentionTrace, _read_only, _result_dtype, scaled_dot_product_attention

__all__ = ["MultiHeadTrace", "multi_head_attention", "split_heads"]


@dataclass(frozen=True, eq=False)
class MultiHeadTrace:
    """Every stage of one multi-head attention."""

    heads: AttentionTrace
    """All heads' stages with a leading head axis: q (h, n, dk), weights (h, n, m), output (h, n, dv)."""
    concat: np.ndarray
    """The heads' outputs side by side, (n, h·dv): columns h·dv .. (h+1)·dv − 1 are head h."""
    output: np.ndarray
    """concat · W_O, (n, d_model): the layer's result."""
    w_o: np.ndarray
    """The output projection W_O, (h·dv, d_model)."""

    @property
    def num_heads(self) -> int:
        return self.heads.q.shape[0]


def split_heads(projected: np.ndarray, num_heads: int) -> np.ndarray:
    """(rows, h·size) → (h, rows, size): column block h becomes head h."""
    rows, width = projected.shape
    return projected.reshape(rows, num_heads, width // num_heads).transpose(1, 0, 2)  # (h, rows, size)


def _check_projection(name: str, matrix: np.ndarray, d_model: int, num_heads: int) -> None:
    if matrix.ndim != 2 or matrix.shape[0] != d_model or matrix.shape[1] % num_heads:
        raise ValueError(
            f"{name} must have shape (d_model={d_model}, num_heads={num_heads} × head size); "
            f"got {matrix.shape}"
        )


def multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads: int, mask=None) -> MultiHeadTrace:
    """Paper §3.2.2 with h = num_heads heads; every head's stages are recorded.

    query (n, d_model), key and value (m, d_model); w_q, w_k (d_model, h·dk),
    w_v (d_model, h·dv), w_o (h·dv, d_model); mask broadcastable to (n, m).
    """
    dtype = _result_dtype(query, key, value, w_q, w_k, w_v, w_o)
    query, key, value, w_q, w_k, w_v, w_o = (
        np.asarray(a, dtype=dtype) for a in (query, key, value, w_q, w_k, w_v, w_o)
    )
    num_heads = int(num_heads)
    if num_heads < 1:
        raise ValueError(f"num_heads must be at least 1; got {num_heads}")
    if query.ndim != 2 or key.ndim != 2 or value.ndim != 2:
        raise ValueError(
            f"query, key and value must be 2-D (tokens, d_model); got {query.shape}, {key.shape}, {value.shape}"
        )
    d_model = query.shape[1]
    if key.shape[1] != d_model or value.shape != key.shape:
        raise ValueError(f"key and value must both be (m, d_model={d_model}); got {key.shape} and {value.shape}")
    for name, matrix in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        _check_projection(name, matrix, d_model, num_heads)
    if w_q.shape != w_k.shape:
        raise ValueError(f"w_q and w_k must have the same shape; got {w_q.shape} and {w_k.shape}")
    if w_o.shape != (w_v.shape[1], d_model):
        raise ValueError(f"w_o must have shape ({w_v.shape[1]}, {d_model}); got {w_o.shape}")

    q_heads = split_heads(query @ w_q, num_heads)  # (h, n, dk)
    k_heads = split_heads(key @ w_k, num_heads)  # (h, m, dk)
    v_heads = split_heads(value @ w_v, num_heads)  # (h, m, dv)
    heads = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask=mask)
    n = query.shape[0]
    concat = heads.output.transpose(1, 0, 2).reshape(n, -1)  # (n, h·dv)
    output = concat @ w_o  # (n, d_model)
    return MultiHeadTrace(
        heads=heads,
        concat=_read_only(np.ascontiguousarray(concat)),
        output=_read_only(output),
        w_o=_read_only(w_o.copy()),
    )
