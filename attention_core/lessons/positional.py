"""Positional encoding (paper §3.5) made visible, and what goes wrong without it.

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
    X = E + PE        (n, d_model): token embedding plus the encoding of its position

Attention itself does not know the order of its inputs: each score is q_i · k_j whatever
i and j are. Without PE, a repeated word ("The" … "the") has the same row in X, hence
the same query, key and value, hence the same output row in self-attention without a
mask: the two are indistinguishable. With PE their rows differ. `positional_lesson`
measures both.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..attention import _read_only
from ..toy import MaskSpec, ToySettings, build_toy_trace, positional_encoding

__all__ = ["PositionalLesson", "RepeatedPair", "positional_lesson", "sinusoids", "wavelengths"]


@dataclass(frozen=True)
class RepeatedPair:
    """Two positions holding the same word, and how far apart their rows are with and without PE."""

    first: int
    second: int
    x_distance_without: float
    """‖x_first − x_second‖ without PE (0: the rows are equal)."""
    x_distance_with: float
    """The same distance with PE added."""
    output_distance_without: float
    """‖o_first − o_second‖ of the attention outputs without PE (self-attention, no mask)."""
    output_distance_with: float
    """The same with PE."""


@dataclass(frozen=True, eq=False)
class PositionalLesson:
    """The sentence's embeddings E, its encoding PE, X = E + PE, and the repeated words measured."""

    labels: tuple[str, ...]
    """"position:token" of each row."""
    embeddings: np.ndarray
    """E, (n, width): the token embeddings alone (a repeated word has a repeated row)."""
    encoding: np.ndarray
    """PE, (n, width): the sinusoids of positions 0..n−1."""
    x: np.ndarray
    """X = E + PE, (n, width): what the step-through's stage 1 shows with positional encoding on."""
    repeated: tuple[RepeatedPair, ...]
    """Every pair of positions holding the same word (case ignored, as the embeddings do)."""


def sinusoids(positions: int, d_model: int) -> np.ndarray:
    """PE for positions 0..positions−1, (positions, d_model): the picture of the formula."""
    return _read_only(positional_encoding(positions, d_model))


def wavelengths(d_model: int) -> np.ndarray:
    """Wavelength in positions of each sin/cos pair i = 0, 1, …: 2π · 10000^(2i / d_model), (⌈d_model/2⌉,).

    The first pair repeats every 2π ≈ 6.3 positions, the last one only after thousands.
    """
    pair_index = np.arange((d_model + 1) // 2)  # (pairs,)
    return 2 * np.pi * np.power(10000.0, 2 * pair_index / d_model)  # (pairs,)


def positional_lesson(settings: ToySettings) -> PositionalLesson:
    """The settings' sentence (the keys' text, as self-attention) with and without PE.

    The outputs are compared without a mask, so that only the positional encoding can tell
    two equal words apart. Raises InputError for input the user must fix.
    """
    base = dataclasses.replace(settings, query_text="", mask=MaskSpec(), scale=None)
    without = build_toy_trace(dataclasses.replace(base, positional=False))
    with_pe = build_toy_trace(dataclasses.replace(base, positional=True))
    embeddings = without.x_query  # (n, width)
    x = with_pe.x_query  # (n, width)
    encoding = _read_only(x - embeddings)  # (n, width), equal to positional_encoding(n, width)
    words = [token.casefold() for token in without.query_tokens]
    pairs = []
    for first, word in enumerate(words):
        for second in range(first + 1, len(words)):
            if words[second] == word:
                pairs.append(
                    RepeatedPair(
                        first=first,
                        second=second,
                        x_distance_without=_distance(embeddings, first, second),
                        x_distance_with=_distance(x, first, second),
                        output_distance_without=_distance(without.attention.output, first, second),
                        output_distance_with=_distance(with_pe.attention.output, first, second),
                    )
                )
    return PositionalLesson(
        labels=tuple(without.query_labels),
        embeddings=embeddings,
        encoding=encoding,
        x=x,
        repeated=tuple(pairs),
    )


def _distance(matrix: np.ndarray, first: int, second: int) -> float:
    """Euclidean distance between two rows of a matrix."""
    return float(np.linalg.norm(np.asarray(matrix[first], dtype=float) - np.asarray(matrix[second], dtype=float)))
