"""The mask lab: masks taken apart, and what a fully masked query row turns into.

A `MaskSpec` combines several masks with logical AND. `mask_parts` builds each present
mask on its own, so that a page can show the parts next to their combination:

    M = M_causal ∧ M_padding ∧ M_window ∧ M_sentence ∧ M_custom        (n, m)

A query row whose every key is masked has nothing to attend to. The engine follows
PyTorch's safe softmax: weights 0 and output 0. Many implementations instead fill
masked scores with a large negative number such as −1e9 before an ordinary softmax:

    weights_fill = softmax(where(M, S, −1e9))

For a row with at least one allowed key, exp(−1e9 − max) is exactly 0 in floating
point and both ways agree. For a fully masked row every score is −1e9, all scores are
equal, and softmax spreads the weight evenly: 1/m on every key, including the keys
the mask was meant to hide. `compare_fill` records both side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..attention import AttentionTrace, _read_only
from ..toy import MaskSpec

__all__ = [
    "ATTENTION_USES",
    "MASK_PARTS",
    "AttentionUse",
    "FillComparison",
    "MaskPart",
    "all_allowed",
    "attention_use",
    "compare_fill",
    "fill_softmax",
    "fit_grid",
    "grid_of",
    "mask_parts",
    "use_of_parts",
]

MASK_PARTS = ("causal", "padding", "window", "same_sentence", "custom")
"""Names of the `MaskSpec` fields that each add one mask, in the order they are applied."""



@dataclass(frozen=True)
class AttentionUse:
    """One of the paper's three uses of attention (§3.2.3) and the masks it needs."""

    name: str
    """Stable name: "encoder_self", "decoder_self" or "encoder_decoder"."""
    parts: tuple[str, ...]
    """The masks it applies, names from `MASK_PARTS`."""
    cross: bool
    """True when queries come from another sequence than keys and values (the decoder)."""


ATTENTION_USES: dict[str, AttentionUse] = {
    use.name: use
    for use in (
        AttentionUse("encoder_self", ("padding",), cross=False),  # every real word sees every real word
        AttentionUse("decoder_self", ("causal", "padding"), cross=False),  # no looking ahead
        AttentionUse("encoder_decoder", ("padding",), cross=True),  # every input position is visible
    )
}
"""Encoder self-attention, decoder self-attention and encoder–decoder attention, in the paper's order."""


def attention_use(causal: bool, cross: bool) -> str | None:
    """Which of the paper's uses a setting is: self-attention with a causal mask is the decoder's,
    without one the encoder's; cross-attention is encoder–decoder (None if it has a causal mask,
    which the paper never uses there)."""
    if cross:
        return None if causal else "encoder_decoder"
    return "decoder_self" if causal else "encoder_self"


def use_of_parts(parts, cross: bool) -> str | None:
    """The use whose masks are exactly `parts` (padding + causal, in any order), or None."""
    chosen = set(parts)
    for use in ATTENTION_USES.values():
        if use.cross == cross and set(use.parts) == chosen:
            return use.name
    return None


Grid = tuple[tuple[bool, ...], ...]
"""An (n, m) boolean grid as nested tuples (hashable, so it can sit in a `MaskSpec`)."""


@dataclass(frozen=True, eq=False)
class MaskPart:
    """One mask of a combination, built on its own."""

    name: str
    """The `MaskSpec` field that asked for it: one of `MASK_PARTS`."""
    mask: np.ndarray
    """Boolean, (n, m): True where query i may attend to key j, for this mask alone."""


@dataclass(frozen=True, eq=False)
class FillComparison:
    """The engine's safe softmax next to the −1e9-fill softmax, for the same scores and mask."""

    fill_value: float
    """The number written over masked scores before the ordinary softmax (e.g. −1e9)."""
    mask: np.ndarray
    """Boolean, (n, m): the mask both sides used, True = may attend."""
    fully_masked_rows: np.ndarray
    """Boolean, (n,): queries whose every key is masked; the only rows where the two differ."""
    engine_weights: np.ndarray
    """The engine's weights, (n, m): rows sum to 1, fully masked rows are all 0."""
    fill_weights: np.ndarray
    """softmax(where(mask, scaled_scores, fill_value)), (n, m): fully masked rows are 1/m."""
    engine_output: np.ndarray
    """The engine's output, (n, dv): 0 in fully masked rows."""
    fill_output: np.ndarray
    """fill_weights · V, (n, dv): a fully masked row becomes the mean of all the value rows."""


def fill_softmax(scaled_scores, mask=None, fill_value: float = -1e9) -> np.ndarray:
    """softmax(where(mask, scaled_scores, fill_value)) over the last axis, (..., n, m).

    The common alternative to the engine's masking: masked scores become `fill_value`
    (finite), then an ordinary, numerically stable softmax (the row maximum is
    subtracted first). Every row sums to 1, fully masked ones too: there all scores
    equal `fill_value`, so each of the m keys gets 1/m.
    """
    scores = np.asarray(scaled_scores)
    if not np.issubdtype(scores.dtype, np.floating):
        scores = scores.astype(float)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"mask must be boolean (True = may attend); got dtype {mask.dtype}")
        scores = np.where(mask, scores, scores.dtype.type(fill_value))  # (..., n, m)
    if not np.all(np.isfinite(scores)):
        raise ValueError("fill_softmax needs finite scores and a finite fill value")
    row_max = np.max(scores, axis=-1, keepdims=True)  # (..., n, 1)
    exp_scores = np.exp(scores - row_max)  # (..., n, m), the largest entry of each row is exp(0) = 1
    return exp_scores / np.sum(exp_scores, axis=-1, keepdims=True)  # (..., n, m)


def compare_fill(trace: AttentionTrace, fill_value: float = -1e9) -> FillComparison:
    """The engine's weights and output next to what a `fill_value` fill would have given."""
    fill_weights = fill_softmax(trace.scaled_scores, trace.mask, fill_value)  # (..., n, m)
    fill_output = fill_weights @ trace.v  # (..., n, dv)
    return FillComparison(
        fill_value=float(fill_value),
        mask=trace.mask,
        fully_masked_rows=trace.fully_masked_rows,
        engine_weights=trace.weights,
        fill_weights=_read_only(fill_weights),
        engine_output=trace.output,
        fill_output=_read_only(fill_output),
    )


def mask_parts(spec: MaskSpec, query_tokens, key_tokens) -> tuple[MaskPart, ...]:
    """Each mask that `spec` asks for, built on its own, in the order of `MASK_PARTS`.

    Their logical AND is `spec.build(query_tokens, key_tokens)`. An empty spec has no parts.
    """
    query_tokens, key_tokens = list(query_tokens), list(key_tokens)
    defaults = MaskSpec()
    parts = []
    for field in fields(MaskSpec):
        value = getattr(spec, field.name)
        if value == getattr(defaults, field.name):
            continue  # this mask is off
        alone = MaskSpec(**{field.name: value})
        mask = alone.build(query_tokens, key_tokens)  # (n, m) or None (e.g. window 0)
        if mask is not None:
            parts.append(MaskPart(name=field.name, mask=_read_only(np.array(mask, dtype=bool))))
    return tuple(parts)


def all_allowed(n: int, m: int) -> Grid:
    """The (n, m) grid where every query may attend to every key."""
    return tuple((True,) * m for _ in range(n))


def grid_of(mask: np.ndarray | None, n: int, m: int) -> Grid:
    """A boolean mask (n, m) as a grid of nested tuples; None (no mask) is all True."""
    if mask is None:
        return all_allowed(n, m)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (n, m):
        raise ValueError(f"the mask has shape {mask.shape}, expected ({n}, {m})")
    return tuple(tuple(bool(cell) for cell in row) for row in mask)


def fit_grid(grid: Grid | None, n: int, m: int) -> tuple[Grid, bool]:
    """`grid` if it is (n, m), else a fresh all-True (n, m) grid; and whether it was replaced.

    A grid typed for one sentence cannot be carried to a sentence of another length, since
    its rows and columns belonged to other tokens. No grid yet (None) is not a replacement.
    """
    if grid is None:
        return all_allowed(n, m), False
    rows = [tuple(row) for row in grid]
    if len(rows) == n and all(len(row) == m for row in rows):
        return tuple(tuple(bool(cell) for cell in row) for row in rows), False
    return all_allowed(n, m), True
