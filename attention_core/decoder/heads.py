"""One head of the decoder as `ToyTrace`s, so the toy pages' heatmaps, tables, exports and cell
trace draw it, plus per-prompt head summaries for the 30 × 9 overview.

`head_views(run, layer, head)` recomputes the layer's stages (`layer_detail`) and returns the
head three ways, all with the readable tokens as labels:

- ``main``: X = RMSNorm(input), W_Q/W_K/W_V the head's columns, and the engine's record for
  this head: Q̃ and K̃ after rotary, every score stage under the causal mask, weights, output;
- ``before_rotary``: the same with Q and K as they were before the rotation;
- ``residual``: X = the residual stream entering the layer, before RMSNorm.

K and V are those of the key/value head the query head shares (grouped-query attention).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..attention import AttentionTrace
from ..toy import MaskSpec, ToySettings, ToyTrace
from .forward import DecoderRun, layer_detail

__all__ = ["STAGE_MATRICES", "DecoderHeadTrace", "HeadViews", "head_views", "prompt_head_summary", "query_groups"]

STAGE_MATRICES = {
    # the decoder's steps, in order: stage name → matrices drawn (keys of attention_core.stages.MATRICES)
    "embeddings": ("x_query",),
    "qkv": ("q", "k", "v"),
    "rotary": ("q", "k"),
    "raw_scores": ("raw_scores",),
    "scaled_scores": ("scaled_scores",),
    "masked_scores": ("mask", "masked_scores"),
    "weights": ("weights",),
    "output": ("weights", "v", "output"),
}
SUMMARY_NAMES = ("previous_token", "first_token", "current_token", "distance")


@dataclass(frozen=True, eq=False, kw_only=True)
class DecoderHeadTrace(ToyTrace):
    """A `ToyTrace` of one query head of the decoder."""

    layer: int
    """0-based layer."""
    head: int
    """0-based query head."""
    kv_head: int
    """0-based key/value head it reads."""


@dataclass(frozen=True, eq=False)
class HeadViews:
    main: DecoderHeadTrace
    before_rotary: DecoderHeadTrace
    residual: DecoderHeadTrace


def _head(trace: AttentionTrace, head: int) -> AttentionTrace:
    return AttentionTrace(**{name: getattr(trace, name)[head] for name in
                             ("q", "k", "v", "raw_scores", "scaled_scores", "mask", "masked_scores", "weights",
                              "output", "fully_masked_rows")}, scale=trace.scale)


def head_views(run: DecoderRun, layer: int, head: int) -> HeadViews:
    """Query head `head` of layer `layer` (0-based), (L, L), three ways (see the module doc)."""
    config = run.config
    if not 0 <= head < config.num_heads:
        raise IndexError(f"head must be in 0..{config.num_heads - 1}; got {head}")
    detail = layer_detail(run, layer)
    record = run.layers[layer]
    kv_head, dk = config.kv_head(head), config.dk
    q_columns, kv_columns = slice(head * dk, (head + 1) * dk), slice(kv_head * dk, (kv_head + 1) * dk)
    tokens = run.encoding.shown
    main = DecoderHeadTrace(
        settings=ToySettings(text=run.encoding.text, dk=dk, d_model=config.d_model, mask=MaskSpec(causal=True),
                             max_tokens=max(run.encoding.length, 1)),
        query_tokens=tokens,
        key_tokens=tokens,
        dropped_tokens=run.encoding.dropped,
        x_query=detail.normed,  # (L, d)
        x_key=detail.normed,  # (L, d)
        w_q=record.weights.w_q[:, q_columns],  # (d, dk)
        w_k=record.weights.w_k[:, kv_columns],  # (d, dk)
        w_v=record.weights.w_v[:, kv_columns],  # (d, dk)
        attention=_head(detail.attention, head),
        layer=layer,
        head=head,
        kv_head=kv_head,
    )
    before = replace(main.attention, q=detail.q_before_rotary[head], k=detail.k_before_rotary[kv_head])
    return HeadViews(
        main=main,
        before_rotary=replace(main, attention=before),
        residual=replace(main, x_query=record.input, x_key=record.input),
    )


def query_groups(num_heads: int, num_kv_heads: int) -> list[list[int]]:
    """For each key/value head, the query heads that read it (0-based): [[0, 1, 2], [3, 4, 5], [6, 7, 8]]."""
    group = num_heads // num_kv_heads
    return [list(range(kv * group, (kv + 1) * group)) for kv in range(num_kv_heads)]


def prompt_head_summary(weights: np.ndarray) -> dict[str, np.ndarray]:
    """What each head does on this prompt, from weights (layers, heads, L, L), each (layers, heads):

    previous_token / first_token / current_token: mean over queries i ≥ 1 of A[i, i−1], A[i, 0],
    A[i, i]; distance: mean over queries i ≥ 1 of Σ_j A[i, j]·(i − j), how far back it looks.
    Query 0 is left out: it can only see itself. With one token every summary is 0.
    """
    weights = np.asarray(weights, dtype=np.float64)
    length = weights.shape[-1]
    shape = weights.shape[:-2]
    if length < 2:
        return {name: np.zeros(shape) for name in SUMMARY_NAMES}
    queries = np.arange(1, length)
    back = (np.arange(length)[:, None] - np.arange(length)[None, :]).clip(min=0)  # (L, L): i − j
    return {
        "previous_token": weights[..., queries, queries - 1].mean(axis=-1),
        "first_token": weights[..., queries, 0].mean(axis=-1),
        "current_token": weights[..., queries, queries].mean(axis=-1),
        "distance": (weights * back)[..., 1:, :].sum(axis=-1).mean(axis=-1),
    }
