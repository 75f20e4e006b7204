"""Independent reference for the attention engine, written from the paper's formulas.

    Attention(Q, K, V) = softmax(Q Kᵀ · scale) V                      (paper §3.2.1)
    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O               (paper §3.2.2)
    head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i)

Everything is spelled out with Python loops over queries i, keys j and vector entries t
(and over leading dimensions with `np.ndindex`), in float64 via Python floats and
`math.exp`. Deliberately slow and obvious; it does not import `attention_core`, so the
engine's tests compare two implementations that share no code.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["attention_reference", "multi_head_reference"]


def _broadcast_leading(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The leading shape that NumPy broadcasting rules give for the given leading shapes."""
    ndim = max((len(shape) for shape in shapes), default=0)
    result = []
    for axis in range(ndim):
        sizes = set()
        for shape in shapes:
            offset = axis - (ndim - len(shape))
            if offset >= 0:
                sizes.add(shape[offset])
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError(f"leading shapes {shapes} do not broadcast")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _source_index(index: tuple[int, ...], leading: tuple[int, ...]) -> tuple[int, ...]:
    """Index into an operand with leading shape `leading` for the broadcast index `index`."""
    dropped = len(index) - len(leading)
    return tuple(0 if size == 1 else i for i, size in zip(index[dropped:], leading, strict=True))


def _softmax_row(scores: list[float], allowed: list[bool]) -> list[float]:
    """Stable softmax over the allowed entries of one row; all zeros if none is allowed."""
    if not any(allowed):
        return [0.0] * len(scores)
    top = max(s for s, ok in zip(scores, allowed, strict=True) if ok)
    exps = [math.exp(s - top) if ok else 0.0 for s, ok in zip(scores, allowed, strict=True)]
    total = sum(exps)
    return [e / total for e in exps]


def _single_matrix_attention(q, k, v, mask, scale) -> dict[str, np.ndarray]:
    """Attention for one (n, dk), (m, dk), (m, dv) triple and an (n, m) boolean mask."""
    n, dk = q.shape
    m, dv = v.shape
    raw = np.zeros((n, m))
    scaled = np.zeros((n, m))
    masked = np.zeros((n, m))
    weights = np.zeros((n, m))
    output = np.zeros((n, dv))
    fully_masked = np.zeros(n, dtype=bool)
    for i in range(n):
        row_scores = []
        for j in range(m):
            dot = 0.0
            for t in range(dk):
                dot += float(q[i, t]) * float(k[j, t])
            raw[i, j] = dot
            scaled[i, j] = dot * scale
            masked[i, j] = scaled[i, j] if mask[i, j] else -math.inf
            row_scores.append(scaled[i, j])
        allowed = [bool(mask[i, j]) for j in range(m)]
        fully_masked[i] = not any(allowed)
        row_weights = _softmax_row(row_scores, allowed)
        for j in range(m):
            weights[i, j] = row_weights[j]
        for c in range(dv):
            total = 0.0
            for j in range(m):
                total += row_weights[j] * float(v[j, c])
            output[i, c] = total
    return {
        "raw_scores": raw,
        "scaled_scores": scaled,
        "mask": np.array(mask, dtype=bool),
        "masked_scores": masked,
        "weights": weights,
        "output": output,
        "fully_masked_rows": fully_masked,
    }


def attention_reference(q, k, v, mask=None, scale: float | None = None) -> dict:
    """Every stage of scaled dot-product attention, computed with explicit loops.

    q (..., n, dk), k (..., m, dk), v (..., m, dv); leading dimensions broadcast. mask is
    boolean and broadcastable to (..., n, m), True = may attend. Returns a dict with the
    keys raw_scores, scaled_scores, mask, masked_scores, weights, output,
    fully_masked_rows (float64 / bool arrays) and scale (a float).
    """
    q = np.array(q, dtype=np.float64)
    k = np.array(k, dtype=np.float64)
    v = np.array(v, dtype=np.float64)
    n, dk = q.shape[-2:]
    m, dv = v.shape[-2:]
    if k.shape[-1] != dk or k.shape[-2] != m:
        raise ValueError(f"reference: incompatible q {q.shape}, k {k.shape}, v {v.shape}")
    if scale is None:
        scale = 1.0 / math.sqrt(dk)
    scale = float(scale)

    score_lead = _broadcast_leading(q.shape[:-2], k.shape[:-2])
    if mask is None:
        mask = np.ones((n, m), dtype=bool)
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise ValueError("reference: mask must be boolean")
    mask_lead = mask.shape[:-2] if mask.ndim >= 2 else ()
    mask_rows = mask.shape[-2] if mask.ndim >= 2 else 1
    mask_cols = mask.shape[-1] if mask.ndim >= 1 else 1
    if mask_rows not in (1, n) or mask_cols not in (1, m):
        raise ValueError(f"reference: mask {mask.shape} does not fit (n={n}, m={m})")
    mask = mask.reshape((*mask_lead, mask_rows, mask_cols))
    score_lead = _broadcast_leading(score_lead, mask_lead)
    out_lead = _broadcast_leading(score_lead, v.shape[:-2])

    result = {
        "raw_scores": np.zeros((*score_lead, n, m)),
        "scaled_scores": np.zeros((*score_lead, n, m)),
        "mask": np.zeros((*score_lead, n, m), dtype=bool),
        "masked_scores": np.zeros((*score_lead, n, m)),
        "weights": np.zeros((*score_lead, n, m)),
        "output": np.zeros((*out_lead, n, dv)),
        "fully_masked_rows": np.zeros((*score_lead, n), dtype=bool),
        "scale": scale,
    }
    for index in np.ndindex(*out_lead):
        score_index = _source_index(index, score_lead)
        q_mat = q[_source_index(index, q.shape[:-2])]
        k_mat = k[_source_index(index, k.shape[:-2])]
        v_mat = v[_source_index(index, v.shape[:-2])]
        mask_mat = mask[_source_index(index, mask_lead)]
        full_mask = np.zeros((n, m), dtype=bool)
        for i in range(n):
            for j in range(m):
                full_mask[i, j] = mask_mat[0 if mask_rows == 1 else i, 0 if mask_cols == 1 else j]
        single = _single_matrix_attention(q_mat, k_mat, v_mat, full_mask, scale)
        result["output"][index] = single["output"]
        for name in ("raw_scores", "scaled_scores", "mask", "masked_scores", "weights", "fully_masked_rows"):
            result[name][score_index] = single[name]
    return result


def multi_head_reference(query, key, value, w_q, w_k, w_v, w_o, num_heads: int, mask=None) -> dict:
    """Multi-head attention with a loop over heads; head h uses column block h.

    Returns a dict: ``heads`` (a list of `attention_reference` dicts, one per head),
    ``concat`` (n, h·dv) and ``output`` (n, d_model).
    """
    query, key, value, w_q, w_k, w_v, w_o = (
        np.array(a, dtype=np.float64) for a in (query, key, value, w_q, w_k, w_v, w_o)
    )
    n = query.shape[0]
    m = key.shape[0]
    dk = w_q.shape[1] // num_heads
    dv = w_v.shape[1] // num_heads
    heads = []
    head_outputs = []
    for h in range(num_heads):
        qk_cols = slice(h * dk, (h + 1) * dk)
        v_cols = slice(h * dv, (h + 1) * dv)
        q_h = np.array([np.dot(query[i], w_q[:, qk_cols]) for i in range(n)]).reshape(n, dk)
        k_h = np.array([np.dot(key[j], w_k[:, qk_cols]) for j in range(m)]).reshape(m, dk)
        v_h = np.array([np.dot(value[j], w_v[:, v_cols]) for j in range(m)]).reshape(m, dv)
        head = attention_reference(q_h, k_h, v_h, mask=mask)
        head["q"], head["k"], head["v"] = q_h, k_h, v_h
        heads.append(head)
        head_outputs.append(head["output"])
    concat = np.zeros((n, num_heads * dv))
    for h, out in enumerate(head_outputs):
        for i in range(n):
            for c in range(dv):
                concat[i, h * dv + c] = out[i, c]
    output = np.array([np.dot(concat[i], w_o) for i in range(n)])
    return {"heads": heads, "concat": concat, "output": output}
