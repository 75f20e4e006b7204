"""One head of the real model as a `ToyTrace`, so the toy pages' heatmaps and tables draw it.

`head_trace(run, layer, head)` gives head `head` of layer `layer`: its attention is that
head's slice of the layer's recorded `AttentionTrace` (read-only views, no copy), its tokens
are the WordPiece tokens, its X is the layer's input and its W_Q, W_K, W_V are the head's
column blocks. With ``hide_special=True`` the [CLS] and [SEP] rows and columns are left out,
for display only: the numbers shown are the recorded ones, so a weights row then sums to
less than 1 (the hidden columns keep their share).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..attention import AttentionTrace, _read_only, scaled_dot_product_attention
from ..masks import combine_masks
from ..toy import MaskSpec, ToySettings, ToyTrace
from .forward import ModelRun

__all__ = ["SPECIAL_TOKENS", "RealHeadTrace", "head_trace", "remask_head", "shown_positions"]

SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]"})
"""Tokens the display can hide: BERT adds them around every sentence and many heads park
their attention on them."""


@dataclass(frozen=True, eq=False, kw_only=True)
class RealHeadTrace(ToyTrace):
    """A `ToyTrace` of one head of the real model; labels keep the tokens' real positions.

    Its own fields are keyword-only, so they may follow any defaulted field of `ToyTrace`.
    """

    layer: int
    """0-based layer of the head."""
    head: int
    """0-based head within the layer."""
    positions: tuple[int, ...]
    """The positions shown (all of them, or all but [CLS] and [SEP])."""
    w_q_bias: np.ndarray
    """The head's query bias, (dk,): Q = X W_Q + b_Q."""
    w_k_bias: np.ndarray
    """The head's key bias, (dk,)."""
    w_v_bias: np.ndarray
    """The head's value bias, (dk,)."""

    @property
    def query_labels(self) -> list[str]:
        return [f"{position}:{token}" for position, token in zip(self.positions, self.query_tokens, strict=True)]

    @property
    def key_labels(self) -> list[str]:
        return self.query_labels


def shown_positions(run: ModelRun, hide_special: bool) -> tuple[int, ...]:
    """Positions drawn: every one, or every one but [CLS] and [SEP] when `hide_special`."""
    tokens = run.encoding.tokens
    return tuple(p for p, token in enumerate(tokens) if not (hide_special and token in SPECIAL_TOKENS))


def _rows(array: np.ndarray, positions: tuple[int, ...], everything: bool) -> np.ndarray:
    return array if everything else _read_only(array[list(positions)])


def _cells(array: np.ndarray, positions: tuple[int, ...], everything: bool) -> np.ndarray:
    return array if everything else _read_only(array[np.ix_(positions, positions)])


def head_trace(run: ModelRun, layer: int, head: int, hide_special: bool = False) -> RealHeadTrace:
    """Head `head` of layer `layer` (both 0-based) as a single-head trace, (n, n) with n the
    positions shown."""
    if not 0 <= layer < len(run.layers):
        raise IndexError(f"layer must be in 0..{len(run.layers) - 1}; got {layer}")
    if not 0 <= head < run.config.num_heads:
        raise IndexError(f"head must be in 0..{run.config.num_heads - 1}; got {head}")
    record = run.layers[layer]
    heads = record.attention
    positions = shown_positions(run, hide_special)
    if not positions:
        raise ValueError("no position left to show")
    everything = len(positions) == run.encoding.length
    attention = AttentionTrace(
        q=_rows(heads.q[head], positions, everything),  # (n, dk)
        k=_rows(heads.k[head], positions, everything),  # (n, dk)
        v=_rows(heads.v[head], positions, everything),  # (n, dk)
        raw_scores=_cells(heads.raw_scores[head], positions, everything),  # (n, n)
        scaled_scores=_cells(heads.scaled_scores[head], positions, everything),  # (n, n)
        mask=_cells(heads.mask[head], positions, everything),  # (n, n)
        masked_scores=_cells(heads.masked_scores[head], positions, everything),  # (n, n)
        weights=_cells(heads.weights[head], positions, everything),  # (n, n)
        output=_rows(heads.output[head], positions, everything),  # (n, dk)
        fully_masked_rows=_rows(heads.fully_masked_rows[head], positions, everything),  # (n,)
        scale=heads.scale,
    )
    dk = run.config.dk
    columns = slice(head * dk, (head + 1) * dk)
    tokens = tuple(run.encoding.tokens[p] for p in positions)
    pads = tuple(index for index, p in enumerate(positions) if not run.encoding.is_real[p])
    x = _rows(record.input, positions, everything)  # (n, d)
    weights = record.weights
    return RealHeadTrace(
        settings=ToySettings(text=run.encoding.text, dk=dk, d_model=run.config.d_model, mask=MaskSpec(padding=pads),
                             max_tokens=run.config.max_positions),
        query_tokens=tokens,
        key_tokens=tokens,
        dropped_tokens=run.encoding.dropped,
        x_query=x,
        x_key=x,
        w_q=weights.w_q[:, columns],  # (d, dk)
        w_k=weights.w_k[:, columns],  # (d, dk)
        w_v=weights.w_v[:, columns],  # (d, dk)
        attention=attention,
        layer=layer,
        head=head,
        positions=positions,
        w_q_bias=weights.b_q[columns],  # (dk,)
        w_k_bias=weights.b_k[columns],  # (dk,)
        w_v_bias=weights.b_v[columns],  # (dk,)
    )



def remask_head(run: ModelRun, layer: int, head: int, spec: MaskSpec) -> RealHeadTrace:
    """The head's attention recomputed with `spec`'s mask ANDed with the real padding mask.

    A what-if for this head alone: its recorded Q, K and V are kept, and the layers after it
    are not rerun (the model was trained without such a mask).
    """
    full = head_trace(run, layer, head)
    tokens = list(full.query_tokens)
    mask = combine_masks(np.asarray(full.attention.mask), spec.build(tokens, tokens))  # (n, n)
    attention = scaled_dot_product_attention(
        full.attention.q, full.attention.k, full.attention.v, mask=mask, scale=full.attention.scale
    )
    return replace(full, attention=attention)
