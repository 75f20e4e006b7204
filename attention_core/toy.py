"""The toy pipeline behind the app: sentence → tokens → embeddings X → Q, K, V → attention.

Nothing here is trained. Every random number is seeded so that the same settings give
the same matrices anywhere, and each control changes only what depends on it:
- a token's embedding depends on (token, seed) only, so "cat" has one vector in every
  sentence (case is ignored: "The" and "the" share a vector);
- column j of W_Q, W_K and W_V does not depend on dk, so raising dk from 8 to 9 adds a
  column to Q, K and V and leaves the others as they were;
- the mask does not touch Q, K or V.

With ``projection="identity"`` there are no projections: Q = K = V = X, with X of width
dk, and the scores are plain similarities of embeddings (a repeated token attends to
its twin as strongly as to itself).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .attention import AttentionTrace, _read_only, scaled_dot_product_attention
from .masks import block_mask, causal_mask, combine_masks, padding_mask, sliding_window_mask
from .stages import MATRICES
from .tokens import MAX_TEXT_CHARS, MAX_TOKENS, token_labels, tokenize

__all__ = [
    "MAX_DIM",
    "InputError",
    "MaskSpec",
    "ToySettings",
    "ToyTrace",
    "build_toy_trace",
    "embed",
    "positional_encoding",
    "read_tokens",
    "sentence_segments",
    "token_embedding",
]

MAX_DIM = 512
"""Largest d_model and dk the toy pipeline offers (the paper's d_model)."""
FLOAT32_ABOVE_CELLS = 256 * 256
"""Score matrices with more cells than this are computed in float32: half the memory
(a 2048 × 2048 trace keeps five such matrices), and still exact to about 7 digits."""

_SENTENCE_ENDS = frozenset(".!?。！？")


class InputError(ValueError):
    """Input the user can fix; `code` and `details` let the UI say so in their language."""

    def __init__(self, code: str, message: str, **details):
        super().__init__(message)
        self.code = code
        self.details = details


def _seeded_rng(*parts: object) -> np.random.Generator:
    """A generator that depends on `parts` only (stable across runs and machines)."""
    text = "\x1f".join(map(str, parts)).encode("utf-8", "surrogatepass")  # any str, even half a pair
    digest = hashlib.blake2b(text, digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def token_embedding(token: str, dim: int, seed: int = 0) -> np.ndarray:
    """The token's toy embedding, (dim,): standard normal components, fixed per (token, seed).

    The first `dim` components do not depend on `dim`, so a wider embedding extends a
    narrower one.
    """
    return _seeded_rng("embedding", seed, token.casefold()).standard_normal(dim)  # (dim,)


def positional_encoding(n: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encoding of paper §3.5, (n, d_model).

    PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
    """
    positions = np.arange(n)[:, None]  # (n, 1)
    pair_index = np.arange(d_model)[None, :] // 2  # (1, d_model)
    angles = positions / np.power(10000.0, 2 * pair_index / d_model)  # (n, d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))  # (n, d_model)


def _projection(name: str, seed: int, d_model: int, width: int) -> np.ndarray:
    """A random projection, (d_model, width), with N(0, 1/d_model) entries.

    That variance keeps the projected components at unit variance, so raw scores have
    variance dk, which is what √dk corrects. Column j does not depend on `width`.
    """
    columns = _seeded_rng("projection", name, seed, d_model).standard_normal((width, d_model))  # (width, d_model)
    return columns.T / math.sqrt(d_model)  # (d_model, width)


def sentence_segments(tokens: list[str]) -> list[int]:
    """Sentence number of each token; a sentence ends after . ! ? 。 ！ or ？."""
    segments, current = [], 0
    for token in tokens:
        segments.append(current)
        if token in _SENTENCE_ENDS:
            current += 1
    return segments


@dataclass(frozen=True)
class MaskSpec:
    """Which masks to apply; present ones combine with logical AND. Hashable (cache key)."""

    causal: bool = False
    """Look-ahead mask: query i sees keys 0..i."""
    padding: tuple[int, ...] = ()
    """Key positions that are padding: no query may attend to them."""
    window: int | None = None
    """Sliding window: query i sees keys with |i − j| < window."""
    same_sentence: bool = False
    """Block mask: tokens attend only within their own sentence."""
    custom: tuple[tuple[bool, ...], ...] | None = None
    """A full (n, m) grid typed by the user, True = may attend."""

    @property
    def is_empty(self) -> bool:
        return not (self.causal or self.padding or self.window or self.same_sentence or self.custom is not None)

    def build(self, query_tokens: list[str], key_tokens: list[str]) -> np.ndarray | None:
        """The combined (n, m) boolean mask, or None when nothing is masked."""
        n, m = len(query_tokens), len(key_tokens)
        masks = []
        if self.causal:
            masks.append(causal_mask(n, m))
        if self.padding:
            key_is_real = np.ones(m, dtype=bool)
            key_is_real[[p for p in self.padding if 0 <= p < m]] = False
            masks.append(padding_mask(key_is_real, n))
        if self.window:
            masks.append(sliding_window_mask(n, self.window, m))
        if self.same_sentence:
            masks.append(block_mask(sentence_segments(query_tokens), sentence_segments(key_tokens)))
        if self.custom is not None:
            custom = np.array(self.custom, dtype=bool)
            if custom.shape != (n, m):
                raise InputError(
                    "custom_mask_shape",
                    f"the custom mask is {custom.shape} but the scores are ({n}, {m})",
                    shape=custom.shape,
                    expected=(n, m),
                )
            masks.append(custom)
        return combine_masks(*masks)


@dataclass(frozen=True)
class ToySettings:
    """Everything that determines a toy trace; small and hashable, so it keys caches."""

    text: str = "The cat sat on the mat because it was tired."
    """The sentence; keys and values come from it (the encoder side)."""
    query_text: str = ""
    """Optional second sentence for the queries (decoder side of cross-attention); empty = self-attention."""
    dk: int = 8
    """Size of queries and keys (and values here: dv = dk)."""
    d_model: int = 16
    """Embedding size; with projection="identity" the embeddings have dk columns instead."""
    seed: int = 0
    """Seed of the embeddings and projections."""
    projection: Literal["random", "identity"] = "random"
    """random: Q = XW_Q, K = XW_K, V = XW_V with seeded random W; identity: Q = K = V = X."""
    positional: bool = False
    """Add the sinusoidal positional encoding (paper §3.5) to the embeddings."""
    mask: MaskSpec = field(default_factory=MaskSpec)
    """The mask to apply."""
    scale: float | None = None
    """Factor on the raw scores; None = 1/√dk (the paper)."""
    max_tokens: int = MAX_TOKENS
    """Longer sentences are cut to this many tokens (and the trace says so)."""


class TokenLabels:
    """Labels of a trace that holds `settings`, `query_tokens` and `key_tokens`."""

    settings: ToySettings
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]

    @property
    def is_cross_attention(self) -> bool:
        return bool(self.settings.query_text.strip())

    @property
    def query_labels(self) -> list[str]:
        """"position:token" for every query, so that two equal tokens stay two rows."""
        return token_labels(list(self.query_tokens))

    @property
    def key_labels(self) -> list[str]:
        return token_labels(list(self.key_tokens))


@dataclass(frozen=True, eq=False)
class ToyTrace(TokenLabels):
    """A toy sentence run through attention, with every matrix recorded."""

    settings: ToySettings
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
    w_q: np.ndarray | None
    """Projection W_Q, (d_model, dk); None when Q = X."""
    w_k: np.ndarray | None
    """Projection W_K, (d_model, dk); None when K = X."""
    w_v: np.ndarray | None
    """Projection W_V, (d_model, dv); None when V = X."""
    attention: AttentionTrace
    """Every stage of the attention itself."""
    ignored_characters: int = 0
    """Characters beyond MAX_TEXT_CHARS that were not read at all (0 if none)."""

    def matrix(self, name: str) -> np.ndarray:
        """The recorded matrix called `name` (a key of `attention_core.stages.MATRICES`)."""
        if name == "x_query":
            return self.x_query
        if name == "x_key":
            return self.x_key
        if name not in MATRICES:
            raise KeyError(f"unknown matrix {name!r}; known: {', '.join(MATRICES)}")
        return self.attention.stage(name)

    def axis_labels(self, name: str) -> tuple[list[str], list[str]]:
        """(row labels, column labels) of the matrix called `name`."""
        info = MATRICES[name]
        return self._labels(info.rows, name), self._labels(info.columns, name)

    def _labels(self, axis: str, name: str) -> list[str]:
        """The labels along one axis ("query", "key" or "dim") of the matrix `name`; only the
        axes asked for are built (a 2,048-token trace has 2,048 labels per axis)."""
        if axis == "query":
            return self.query_labels
        if axis == "key":
            return self.key_labels
        return [f"d{t}" for t in range(self.matrix(name).shape[-1])]


def _tokens_within_limit(text: str, side: str, max_tokens: int) -> tuple[list[str], int]:
    tokens = tokenize(text[:MAX_TEXT_CHARS])
    if not tokens:
        raise InputError(f"empty_{side}", f"the {side} text has no tokens", side=side)
    return tokens[:max_tokens], max(0, len(tokens) - max_tokens)


def read_tokens(settings: ToySettings) -> tuple[list[str], list[str], int]:
    """(query tokens, key tokens, tokens dropped) of the settings' sentences, cut to max_tokens.

    In self-attention the query tokens are the key tokens (the same list object). Raises
    InputError for an empty sentence, or a single token in self-attention.
    """
    key_tokens, dropped = _tokens_within_limit(settings.text, "keys", settings.max_tokens)
    if not settings.query_text.strip():
        if len(key_tokens) < 2:
            raise InputError("single_token", "self-attention needs at least two tokens", count=len(key_tokens))
        return key_tokens, key_tokens, dropped
    query_tokens, dropped_queries = _tokens_within_limit(settings.query_text, "queries", settings.max_tokens)
    return query_tokens, key_tokens, max(dropped, dropped_queries)


def embed(tokens: list[str], width: int, seed: int, positional: bool) -> np.ndarray:
    """The tokens' embeddings, (len, width), plus the positional encoding when asked."""
    x = np.stack([token_embedding(token, width, seed) for token in tokens])  # (len, width)
    if positional:
        x = x + positional_encoding(len(tokens), width)  # (len, width)
    return _read_only(x)


def build_toy_trace(settings: ToySettings) -> ToyTrace:
    """Run the settings' sentence through attention and record every matrix.

    Raises InputError (with a `code` the UI translates) for input the user must fix.
    """
    if not 1 <= settings.dk <= MAX_DIM or not 1 <= settings.d_model <= MAX_DIM:
        raise InputError("dimension", f"dk and d_model must be between 1 and {MAX_DIM}", limit=MAX_DIM)
    query_tokens, key_tokens, dropped = read_tokens(settings)

    identity = settings.projection == "identity"
    width = settings.dk if identity else settings.d_model
    x_key = embed(key_tokens, width, settings.seed, settings.positional)  # (m, width)
    x_query = x_key if query_tokens is key_tokens else embed(query_tokens, width, settings.seed, settings.positional)

    if identity:
        w_q = w_k = w_v = None
        q, k, v = x_query, x_key, x_key  # (n, dk), (m, dk), (m, dk)
    else:
        w_q = _read_only(_projection("W_Q", settings.seed, width, settings.dk))  # (d_model, dk)
        w_k = _read_only(_projection("W_K", settings.seed, width, settings.dk))  # (d_model, dk)
        w_v = _read_only(_projection("W_V", settings.seed, width, settings.dk))  # (d_model, dv)
        q = x_query @ w_q  # (n, dk)
        k = x_key @ w_k  # (m, dk)
        v = x_key @ w_v  # (m, dv)

    if len(query_tokens) * len(key_tokens) > FLOAT32_ABOVE_CELLS:
        q, k, v = (matrix.astype(np.float32) for matrix in (q, k, v))
    mask = settings.mask.build(query_tokens, key_tokens)  # (n, m) or None
    attention = scaled_dot_product_attention(q, k, v, mask=mask, scale=settings.scale)
    return ToyTrace(
        settings=settings,
        query_tokens=tuple(query_tokens),
        key_tokens=tuple(key_tokens),
        dropped_tokens=dropped,
        ignored_characters=max(0, len(settings.text) - MAX_TEXT_CHARS, len(settings.query_text) - MAX_TEXT_CHARS),
        x_query=x_query,
        x_key=x_key,
        w_q=w_q,
        w_k=w_k,
        w_v=w_v,
        attention=attention,
    )
