"""Head finder: what kind of head is each of the 30 × 9 heads, measured.

The standard test (Olsson et al. 2022, "In-context learning and induction heads"): a random
sequence of T tokens, repeated once, 2T tokens in all. Nothing in it is predictable except
the repetition, so a head that uses the repetition shows it clearly. For each head, with A
its (2T, 2T) attention weights and queries i:

- previous-token score: mean over i ≥ 1 of A[i, i − 1] (attends to the token just before);
- first-token score: mean over i ≥ 1 of A[i, 0] (parks its attention on the first token, an
  "attention sink"; query 0 is left out, it can only see itself);
- duplicate-token score: mean over the second copy (i ≥ T) of A[i, i − T], the earlier
  occurrence of the same token;
- induction score: mean over the second copy of A[i, i − T + 1], the token that *followed*
  the earlier occurrence: "last time after X came Y, so look at Y".

Each score is a share of one query's attention, in [0, 1]; 1 means the head does only that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FIRST_ORDINARY_ID", "SCORE_NAMES", "HeadScores", "head_scores", "repeated_random_ids"]

SCORE_NAMES = ("previous_token", "first_token", "duplicate_token", "induction")
FIRST_ORDINARY_ID = 17
"""Ids below this in SmolLM2's vocabulary are control tokens (<|endoftext|>, <|im_start|>, …)."""
DEFAULT_PERIOD = 50
DEFAULT_SEED = 12


def repeated_random_ids(vocab_size: int, period: int = DEFAULT_PERIOD, seed: int = DEFAULT_SEED,
                        first_id: int = FIRST_ORDINARY_ID) -> list[int]:
    """`period` random ordinary token ids, then the same ids again (2·period in all)."""
    ids = np.random.default_rng(seed).integers(first_id, vocab_size, period).tolist()
    return ids + ids


@dataclass(frozen=True, eq=False)
class HeadScores:
    """Every head's four scores, each (layers, heads), on a sequence of period T."""

    period: int
    scores: dict[str, np.ndarray]
    """Score name (one of SCORE_NAMES) → (layers, heads) float64 in [0, 1]."""

    def strongest(self, name: str) -> tuple[int, int, float]:
        """(layer, head, score) of the head with the highest `name` score (0-based)."""
        values = self.scores[name]
        layer, head = np.unravel_index(int(np.argmax(values)), values.shape)
        return int(layer), int(head), float(values[layer, head])

    def rows(self) -> list[dict]:
        """One row per head: layer and head (1-based, as shown) and the four scores."""
        layers, heads = self.scores[SCORE_NAMES[0]].shape
        return [
            {"layer": layer + 1, "head": head + 1,
             **{name: float(self.scores[name][layer, head]) for name in SCORE_NAMES}}
            for layer in range(layers)
            for head in range(heads)
        ]


def head_scores(weights: np.ndarray, period: int) -> HeadScores:
    """The four scores of every head from attention weights (layers, heads, 2T, 2T), T = `period`."""
    weights = np.asarray(weights, dtype=np.float64)
    length = weights.shape[-1]
    if length != 2 * period or weights.shape[-2] != length or period < 2:
        raise ValueError(f"weights must be (..., {2 * period}, {2 * period}) for period {period}; got {weights.shape}")
    queries = np.arange(1, length)  # every query but the first
    second = np.arange(period, length)  # the second copy
    scores = {
        "previous_token": weights[..., queries, queries - 1].mean(axis=-1),  # (layers, heads)
        "first_token": weights[..., queries, 0].mean(axis=-1),
        "duplicate_token": weights[..., second, second - period].mean(axis=-1),
        "induction": weights[..., second, second - period + 1].mean(axis=-1),
    }
    return HeadScores(period=period, scores=scores)
