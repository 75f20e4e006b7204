"""Predict, then reveal: score a student's guesses against the attention weights.

Two kinds of guess, each scored against the weights A = softmax(QKᵀ/√dk) (n, m):

- **Strongest key.** For each query row i, the student names the key j it attends to
  most. The truth is argmax_j A[i, j]. Softmax keeps the order of the scores, so this is
  also the key with the largest dot product qᵢ·kⱼ among the keys query i may attend to.
  Ties: keys whose weight is within a relative `TIE_RTOL` of the row's largest weight are
  all "strongest", and naming any of them counts as right. Ties are common, not a corner
  case: "The" and "the" share one embedding (case is ignored), so in self-attention
  without positional encoding every query gives them exactly the same weight.
  Score = number of rows named right; a row left blank counts as wrong.

- **Sketched row.** For one query i the student spreads attention over its keys with
  non-negative amounts g; they are normalised to a distribution p = g / Σg and compared
  with the true row w = A[i]:

      overlap = Σⱼ min(pⱼ, wⱼ)                    (1 = identical, 0 = disjoint)
      total variation distance = ½ Σⱼ |pⱼ − wⱼ|   (= 1 − overlap)

Rows whose every key is masked are never asked: the engine gives them weights 0
everywhere (PyTorch's safe softmax), so there is no strongest key and no distribution to
sketch. Only the first `MAX_ASKED_ROWS` queries are asked, so a long sentence still
fits one screen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..attention import _read_only

__all__ = [
    "MAX_ASKED_ROWS",
    "TIE_RTOL",
    "Question",
    "QuizResult",
    "SketchResult",
    "question",
    "score_guesses",
    "score_sketch",
    "strongest_keys",
]

MAX_ASKED_ROWS = 12
"""Only query rows 0 … MAX_ASKED_ROWS − 1 are asked (one row of choices each)."""

TIE_RTOL = 1e-9
"""Keys whose weight is at least (1 − TIE_RTOL) × the row's largest weight tie for strongest.
Equal scores give equal weights up to rounding, far below this tolerance."""


def _checked(weights, mask) -> tuple[np.ndarray, np.ndarray]:
    """Weights as float (n, m) and the mask as bool (n, m) (all True when None)."""
    weights = np.asarray(weights, dtype=float)  # (n, m)
    if weights.ndim != 2:
        raise ValueError(f"weights must be one (n, m) matrix; got shape {weights.shape}")
    if mask is None:
        mask = np.ones(weights.shape, dtype=bool)  # (n, m)
    mask = np.asarray(mask)
    if mask.dtype != np.bool_ or mask.shape != weights.shape:
        raise ValueError(f"mask must be boolean with the weights' shape {weights.shape}; got {mask.dtype} {mask.shape}")
    return weights, mask


def strongest_keys(weights, mask=None) -> tuple[tuple[int, ...], ...]:
    """For each query row, the keys with the largest weight (several when tied), (n,) tuples.

    Only keys the mask allows count; a fully masked row has none: ``()``.
    """
    weights, mask = _checked(weights, mask)
    allowed = np.where(mask, weights, -np.inf)  # (n, m)
    row_max = allowed.max(axis=-1, keepdims=True)  # (n, 1), −inf for a fully masked row
    is_best = mask & (allowed >= row_max - TIE_RTOL * np.abs(row_max))  # (n, m)
    return tuple(tuple(int(j) for j in np.flatnonzero(row)) for row in is_best)


@dataclass(frozen=True)
class Question:
    """Which query rows are asked, and which keys each may name."""

    asked: tuple[int, ...]
    """Query positions asked, in order: the first MAX_ASKED_ROWS rows with two keys or more to choose from (r,)."""
    options: tuple[tuple[int, ...], ...]
    """For each asked row, the key positions its mask allows (r,): the choices offered."""
    fully_masked: tuple[int, ...]
    """Query positions among the first MAX_ASKED_ROWS that are not asked: every key is masked."""
    not_asked: int
    """How many query rows lie past the first MAX_ASKED_ROWS (0 for a short sentence)."""
    single_key: tuple[int, ...] = ()
    """Query positions among the first MAX_ASKED_ROWS not asked because their mask allows one
    key only (row 0 under a causal mask): the answer is given, its weight is 1."""


def question(mask, limit: int = MAX_ASKED_ROWS) -> Question:
    """The rows to ask for a boolean (n, m) mask (True = may attend)."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_ or mask.ndim != 2:
        raise ValueError(f"mask must be one boolean (n, m) matrix; got {mask.dtype} {mask.shape}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1; got {limit}")
    first = range(min(limit, mask.shape[0]))
    allowed = mask.sum(axis=1)  # (n,) keys each query may look at
    asked = tuple(i for i in first if allowed[i] > 1)
    return Question(
        asked=asked,
        options=tuple(tuple(int(j) for j in np.flatnonzero(mask[i])) for i in asked),
        fully_masked=tuple(i for i in first if allowed[i] == 0),
        not_asked=max(0, mask.shape[0] - limit),
        single_key=tuple(i for i in first if allowed[i] == 1),
    )


@dataclass(frozen=True, eq=False)
class QuizResult:
    """Strongest-key guesses next to the truth; r = number of asked rows."""

    rows: tuple[int, ...]
    """Query positions asked, in order (r,)."""
    guesses: tuple[int | None, ...]
    """The key position named for each asked row, or None if left blank (r,)."""
    best_keys: tuple[tuple[int, ...], ...]
    """For each asked row, every key with the row's largest weight (ties: more than one) (r,)."""
    correct: np.ndarray
    """Boolean, (r,): True where the guess is one of best_keys."""
    guess_weights: np.ndarray
    """Weight of the guessed key, (r,); NaN where no key was named."""
    best_weights: np.ndarray
    """The largest weight of each asked row, (r,)."""

    @property
    def score(self) -> int:
        """How many rows were named right."""
        return int(self.correct.sum())

    @property
    def total(self) -> int:
        """How many rows were asked."""
        return len(self.rows)

    @property
    def answered(self) -> int:
        """How many rows have a guess."""
        return sum(guess is not None for guess in self.guesses)

    @property
    def percent(self) -> float:
        """score / total in percent (0 when nothing was asked)."""
        return 100.0 * self.score / self.total if self.total else 0.0


def score_guesses(
    weights, mask, guesses: Mapping[int, int | None], limit: int = MAX_ASKED_ROWS
) -> QuizResult:
    """Score one guessed key per asked query row against the (n, m) weights.

    `guesses` maps a query position to the key position named (None or absent = blank).
    A guess for a row that is not asked, or a key outside 0 … m − 1, is a ValueError.
    """
    weights, mask = _checked(weights, mask)
    asked = question(mask, limit).asked
    unknown = sorted(set(guesses) - set(asked))
    if unknown:
        raise ValueError(f"rows {unknown} are not asked (asked: {list(asked)})")
    m = weights.shape[1]
    chosen = tuple(guesses.get(i) for i in asked)
    for key in chosen:
        if key is not None and not 0 <= key < m:
            raise ValueError(f"key {key} is outside 0 … {m - 1}")
    best = strongest_keys(weights, mask)
    return QuizResult(
        rows=asked,
        guesses=chosen,
        best_keys=tuple(best[i] for i in asked),
        correct=_read_only(np.array([key in best[i] for i, key in zip(asked, chosen, strict=True)], dtype=bool)),
        guess_weights=_read_only(
            np.array([np.nan if key is None else weights[i, key] for i, key in zip(asked, chosen, strict=True)])
        ),
        best_weights=_read_only(np.array([weights[i, best[i][0]] for i in asked], dtype=float)),
    )


@dataclass(frozen=True, eq=False)
class SketchResult:
    """One sketched weight row next to the true one; m = number of keys."""

    query: int
    """The query position whose row was sketched."""
    guess: np.ndarray
    """The sketch normalised to sum 1, (m,); 0 on masked keys."""
    truth: np.ndarray
    """The true weights of that row, (m,)."""
    total_variation: float
    """½ Σⱼ |guessⱼ − truthⱼ|: 0 for a perfect sketch, 1 for one that misses every key."""
    overlap: float
    """Σⱼ min(guessⱼ, truthⱼ) = 1 − total_variation: the share of attention placed right."""


def score_sketch(weights, mask, query: int, sketch: Sequence[float]) -> SketchResult:
    """Normalise the non-negative amounts `sketch` (one per key) and compare with row `query`.

    Amounts on masked keys are ignored (that attention cannot happen). At least one allowed
    key needs a positive amount, and the row must not be fully masked: otherwise ValueError.
    """
    weights, mask = _checked(weights, mask)
    n, m = weights.shape
    if not 0 <= query < n:
        raise ValueError(f"query {query} is outside 0 … {n - 1}")
    if not mask[query].any():
        raise ValueError(f"every key is masked for query {query}: its weights are all 0, nothing to sketch")
    amounts = np.asarray(sketch, dtype=float)  # (m,)
    if amounts.shape != (m,):
        raise ValueError(f"the sketch needs one amount per key, {m}; got shape {amounts.shape}")
    if not np.all(np.isfinite(amounts)) or np.any(amounts < 0):
        raise ValueError("sketch amounts must be finite and non-negative")
    amounts = np.where(mask[query], amounts, 0.0)  # (m,)
    total = amounts.sum()
    if total <= 0:
        raise ValueError("give at least one allowed key a positive amount")
    guess = amounts / total  # (m,)
    truth = weights[query].copy()  # (m,)
    distance = 0.5 * float(np.abs(guess - truth).sum())
    return SketchResult(
        query=query,
        guess=_read_only(guess),
        truth=_read_only(truth),
        total_variation=distance,
        overlap=float(np.minimum(guess, truth).sum()),
    )
