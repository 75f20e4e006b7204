"""The toy sentence through multi-head attention (paper §3.2.2), every head recorded.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O,
    head_i = Attention(X W_Q^i, X W_K^i, X W_V^i),      dk = dv = d_model / h

The sidebar's `ToySettings` give the tokens, the seed, the positional encoding, the mask
and the optional second sentence of cross-attention; `d_model` and the number of heads
are chosen on the multi-head page. (The sidebar's dk, d_model and projection choice do
not apply here: each head's size is d_model / h, and the projections are always random.)

The matrices are the toy pipeline's own (`attention_core.toy`):
- embeddings come from `token_embedding` (+ `positional_encoding`), so a word has the
  same vector as on every other page;
- W_Q, W_K, W_V are (d_model, h·dk) = (d_model, d_model) with N(0, 1/d_model) entries,
  and column j is the same as column j of the single-head W_Q. Head i uses column block
  i, so head 1 is exactly the single-head trace with dk = d_model / h, and changing h
  only regroups the same columns into heads;
- W_O is (h·dv, d_model) with N(0, 1/(h·dv)) entries (fan-in scaling), fixed per seed.

The attention itself is `attention_core.multihead.multi_head_attention`; nothing here
re-implements it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .attention import AttentionTrace, _read_only
from .multihead import MultiHeadTrace, multi_head_attention
from .toy import (
    MAX_DIM,
    InputError,
    TokenLabels,
    ToySettings,
    ToyTrace,
    _projection,
    embed,
    read_tokens,
)

__all__ = [
    "D_MODEL_CHOICES",
    "HEADS_ERROR",
    "MAX_HEADS",
    "ToyMultiHeadTrace",
    "build_toy_multihead",
    "clamp_heads",
    "head_choices",
    "head_size",
    "head_trace",
]

D_MODEL_CHOICES = (8, 16, 32, 64, 128, 256, 512)
"""The d_model values the page offers, up to the paper's 512."""
MAX_HEADS = 16
"""Most heads the page offers, so that every head's small multiple stays readable."""
HEADS_ERROR = "heads_do_not_divide"
"""`InputError.code` when the number of heads is not a divisor of d_model."""


def head_choices(d_model: int, max_heads: int = MAX_HEADS) -> tuple[int, ...]:
    """Numbers of heads h that split d_model evenly (dk = d_model / h whole), up to max_heads."""
    return tuple(h for h in range(1, min(d_model, max_heads) + 1) if d_model % h == 0)


def clamp_heads(stale: int | None, d_model: int, max_heads: int = MAX_HEADS) -> int:
    """A valid number of heads for d_model close to `stale`: itself if allowed, else the
    largest allowed number below it (the smallest one if none is below, or if `stale` is None)."""
    choices = head_choices(d_model, max_heads)
    if stale is None:
        return choices[0]
    below = [h for h in choices if h <= stale]
    return below[-1] if below else choices[0]


def head_size(d_model: int, num_heads: int) -> int:
    """dk = dv = d_model / h; InputError (code HEADS_ERROR) when h does not divide d_model."""
    if num_heads < 1 or d_model % num_heads:
        raise InputError(
            HEADS_ERROR,
            f"the number of heads must divide d_model; got d_model={d_model}, h={num_heads}",
            d_model=d_model,
            num_heads=num_heads,
        )
    return d_model // num_heads


@dataclass(frozen=True, eq=False)
class ToyMultiHeadTrace(TokenLabels):
    """A toy sentence run through multi-head attention, with every matrix recorded.

    Shapes use n = number of query tokens, m = number of key/value tokens, h = number of
    heads, dk = dv = d_model / h.
    """

    settings: ToySettings
    """The sidebar settings this trace was built from (their dk, d_model and projection are not used)."""
    d_model: int
    """Width of the embeddings and of the layer's output."""
    num_heads: int
    """Number of heads h; it divides d_model."""
    query_tokens: tuple[str, ...]
    """The n tokens whose rows are queries."""
    key_tokens: tuple[str, ...]
    """The m tokens whose rows are keys and values (the same as query_tokens in self-attention)."""
    dropped_tokens: int
    """How many tokens were cut from the longer input to respect max_tokens (0 if none)."""
    x_query: np.ndarray
    """Embeddings of the query tokens, (n, d_model)."""
    x_key: np.ndarray
    """Embeddings of the key/value tokens, (m, d_model)."""
    w_q: np.ndarray
    """All heads' query projections side by side, (d_model, h·dk): column block i is W_Q^i."""
    w_k: np.ndarray
    """All heads' key projections side by side, (d_model, h·dk): column block i is W_K^i."""
    w_v: np.ndarray
    """All heads' value projections side by side, (d_model, h·dv): column block i is W_V^i."""
    w_o: np.ndarray
    """Output projection W_O, (h·dv, d_model): row block i multiplies head i's output."""
    attention: MultiHeadTrace
    """Every stage of every head (leading head axis), the concatenation (n, h·dv) and the output (n, d_model)."""

    @property
    def dk(self) -> int:
        """Size of each head's queries and keys, d_model / h."""
        return self.w_q.shape[1] // self.num_heads

    @property
    def dv(self) -> int:
        """Size of each head's values and outputs, d_model / h."""
        return self.w_v.shape[1] // self.num_heads


    @property
    def feature_labels(self) -> list[str]:
        """Labels of the d_model features of the output: d0, d1, …"""
        return [f"d{t}" for t in range(self.d_model)]

    @property
    def concat_labels(self) -> list[str]:
        """Labels of the h·dv columns of the concatenation: "h1·d0" is head 1's feature 0."""
        return [f"h{head + 1}·d{t}" for head in range(self.num_heads) for t in range(self.dv)]


def _check_dimensions(d_model: int, num_heads: int) -> None:
    if not 1 <= d_model <= MAX_DIM:
        raise InputError("dimension", f"d_model must be between 1 and {MAX_DIM}; got {d_model}", limit=MAX_DIM)
    head_size(d_model, num_heads)


def build_toy_multihead(settings: ToySettings, d_model: int, num_heads: int) -> ToyMultiHeadTrace:
    """Run the settings' sentence through h-head attention of width d_model, recording everything.

    Raises InputError (with a `code` the UI translates) for input the user must fix: the
    codes of `build_toy_trace` for the text, "dimension" for d_model outside 1..MAX_DIM,
    HEADS_ERROR when num_heads does not divide d_model.
    """
    d_model, num_heads = int(d_model), int(num_heads)
    _check_dimensions(d_model, num_heads)
    query_tokens, key_tokens, dropped = read_tokens(settings)

    x_key = embed(key_tokens, d_model, settings.seed, settings.positional)  # (m, d_model)
    if query_tokens is key_tokens:
        x_query = x_key  # (n, d_model), n = m
    else:
        x_query = embed(query_tokens, d_model, settings.seed, settings.positional)  # (n, d_model)

    # h·dk = h·dv = d_model: every projection is square, and does not depend on h
    w_q = _read_only(_projection("W_Q", settings.seed, d_model, d_model))  # (d_model, h·dk)
    w_k = _read_only(_projection("W_K", settings.seed, d_model, d_model))  # (d_model, h·dk)
    w_v = _read_only(_projection("W_V", settings.seed, d_model, d_model))  # (d_model, h·dv)
    w_o = _read_only(_projection("W_O", settings.seed, d_model, d_model))  # (h·dv, d_model), fan-in h·dv

    mask = settings.mask.build(query_tokens, key_tokens)  # (n, m) or None
    attention = multi_head_attention(x_query, x_key, x_key, w_q, w_k, w_v, w_o, num_heads, mask=mask)
    return ToyMultiHeadTrace(
        settings=settings,
        d_model=d_model,
        num_heads=num_heads,
        query_tokens=tuple(query_tokens),
        key_tokens=tuple(key_tokens),
        dropped_tokens=dropped,
        x_query=x_query,
        x_key=x_key,
        w_q=w_q,
        w_k=w_k,
        w_v=w_v,
        w_o=w_o,
        attention=attention,
    )


def head_trace(trace: ToyMultiHeadTrace, head: int) -> ToyTrace:
    """Head `head` (0-based) as a single-head `ToyTrace`, so the single-head figures and
    tables draw its stages with token labels.

    Its attention is that head's slice of every recorded stage (read-only views, no
    copies); its W_Q, W_K, W_V are the head's column blocks, (d_model, dk). Its settings
    are the sidebar's with dk = d_model / h and random projections, i.e. what
    `build_toy_trace` would need to compute the same head on its own.
    """
    if not 0 <= head < trace.num_heads:
        raise IndexError(f"head must be in 0..{trace.num_heads - 1}; got {head}")
    heads = trace.attention.heads
    dk, dv = trace.dk, trace.dv
    qk_columns = slice(head * dk, (head + 1) * dk)
    v_columns = slice(head * dv, (head + 1) * dv)
    attention = AttentionTrace(
        q=heads.q[head],  # (n, dk)
        k=heads.k[head],  # (m, dk)
        v=heads.v[head],  # (m, dv)
        raw_scores=heads.raw_scores[head],  # (n, m)
        scaled_scores=heads.scaled_scores[head],  # (n, m)
        mask=heads.mask[head],  # (n, m)
        masked_scores=heads.masked_scores[head],  # (n, m)
        weights=heads.weights[head],  # (n, m)
        output=heads.output[head],  # (n, dv)
        fully_masked_rows=heads.fully_masked_rows[head],  # (n,)
        scale=heads.scale,
    )
    return ToyTrace(
        settings=replace(trace.settings, dk=dk, d_model=trace.d_model, projection="random", scale=None),
        query_tokens=trace.query_tokens,
        key_tokens=trace.key_tokens,
        dropped_tokens=trace.dropped_tokens,
        x_query=trace.x_query,
        x_key=trace.x_key,
        w_q=trace.w_q[:, qk_columns],  # (d_model, dk)
        w_k=trace.w_k[:, qk_columns],  # (d_model, dk)
        w_v=trace.w_v[:, v_columns],  # (d_model, dv)
        attention=attention,
    )
