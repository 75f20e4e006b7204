"""A pretrained BERT encoder, run in NumPy, with every head sent through the app's own engine.

For a sentence of L WordPiece tokens (d = d_model, h heads of size dk = d / h):

    X⁰ = LayerNorm(E_word[ids] + E_position[0..L−1] + E_type[type_ids])         (L, d)
    for each layer ℓ:
        Q = X W_Q + b_Q,  K = X W_K + b_K,  V = X W_V + b_V                       (L, d) each
        head_i = Attention(Q_i, K_i, V_i) with the padding mask                   (L, dk)  ← the engine
        A = Concat(head_1 .. head_h) W_O + b_O                                    (L, d)
        Y = LayerNorm(X + A)                                                      (L, d)
        X' = LayerNorm(Y + GELU(Y W_in + b_in) W_out + b_out)                     (L, d)
    sentence embedding = normalise(mean of the last X over the real tokens)       (d,)

This is BERT (post-LayerNorm) followed by the sentence-transformers pipeline of
all-MiniLM-L6-v2 (mean pooling, L2 normalisation). Attention is
`attention_core.attention.scaled_dot_product_attention` with a leading head axis, so each
layer keeps an `AttentionTrace` whose every stage has shape (h, L, L) or (h, L, dk): the same
record the toy pages show, now for a model that was trained.

Padding: `encode` can pad the sentence to a fixed length with [PAD] tokens. Their keys
are masked (True = may attend, as everywhere in the engine), so the real tokens' numbers
do not change; the [PAD] query rows are still computed (BERT does the same) and pooling
ignores them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..attention import AttentionTrace, _read_only, scaled_dot_product_attention
from ..multihead import split_heads
from .checkpoint import BertCheckpoint, BertConfig, LayerWeights, load_checkpoint

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Encoding",
    "LayerRecord",
    "ModelRun",
    "encode",
    "erf",
    "gelu",
    "layer_norm",
    "run_model",
    "run_sentence",
]

DEFAULT_MAX_TOKENS = 256
"""all-MiniLM-L6-v2 reads at most 256 tokens (sentence-transformers' max_seq_length); longer
sentences are cut there, [SEP] kept last. The model's own limit is its position table (512)."""


# ---------------------------------------------------------------------------- tokens


@dataclass(frozen=True, eq=False)
class Encoding:
    """A sentence as the model reads it: WordPiece tokens, their ids, and which are padding.

    L = number of positions (real tokens, then [PAD] tokens if padded).
    """

    text: str
    """The sentence as typed."""
    tokens: tuple[str, ...]
    """The L WordPiece tokens, starting with [CLS], then the sentence's pieces ("##" marks a
    piece that continues a word), [SEP], then [PAD]s."""
    ids: np.ndarray
    """Vocabulary ids, (L,) int64."""
    type_ids: np.ndarray
    """Segment ids, (L,) int64: all 0 for one sentence."""
    is_real: np.ndarray
    """Boolean, (L,): True for a real token, False for [PAD] (BERT's attention_mask)."""
    dropped: int
    """Sentence tokens cut to respect the length limit (0 if none)."""

    @property
    def length(self) -> int:
        """L: the number of positions, padding included."""
        return len(self.tokens)

    @property
    def real_length(self) -> int:
        """Number of real tokens ([CLS] and [SEP] included)."""
        return int(self.is_real.sum())

    @property
    def labels(self) -> list[str]:
        """Axis labels "position:token"."""
        return [f"{position}:{token}" for position, token in enumerate(self.tokens)]


def encode(checkpoint: BertCheckpoint, text: str, pad_to: int = 0, max_tokens: int = DEFAULT_MAX_TOKENS) -> Encoding:
    """WordPiece-tokenise `text` as [CLS] pieces [SEP], cut to `max_tokens`, then pad with
    [PAD] up to `pad_to` positions (0 or anything ≤ the length: no padding)."""
    limit = checkpoint.config.max_positions
    if not 3 <= max_tokens <= limit:
        raise ValueError(f"max_tokens must be between 3 and {limit} (the model's positions); got {max_tokens}")
    if pad_to > limit:
        raise ValueError(f"pad_to={pad_to} is longer than the model's {limit} positions")
    encoded = checkpoint.tokenizer.encode(text)
    ids, tokens, type_ids = list(encoded.ids), list(encoded.tokens), list(encoded.type_ids)
    dropped = max(0, len(ids) - max_tokens)
    if dropped:  # keep [CLS] and the first pieces, end with [SEP], as the tokenizer's truncation does
        ids = [*ids[: max_tokens - 1], ids[-1]]
        tokens = [*tokens[: max_tokens - 1], tokens[-1]]
        type_ids = [*type_ids[: max_tokens - 1], type_ids[-1]]
    real = len(ids)
    padding = max(0, pad_to - real)
    pad_id = checkpoint.config.pad_token_id
    return Encoding(
        text=text,
        tokens=(*tokens, *([checkpoint.tokenizer.id_to_token(pad_id)] * padding)),
        ids=_read_only(np.array(ids + [pad_id] * padding, dtype=np.int64)),  # (L,)
        type_ids=_read_only(np.array(type_ids + [0] * padding, dtype=np.int64)),  # (L,)
        is_real=_read_only(np.arange(real + padding) < real),  # (L,)
        dropped=dropped,
    )


# ---------------------------------------------------------------------------- building blocks


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """(x − mean) / √(variance + ε) · γ + β over the last axis (biased variance, as PyTorch)."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    variance = np.square(x - mean).mean(axis=-1, keepdims=True)  # (..., 1)
    return (x - mean) / np.sqrt(variance + eps) * gain + bias  # (..., d)


# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7 for every x, far below float32 resolution.
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)  # a5 … a1


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, vectorised (Abramowitz & Stegun 7.1.26, in float64, |error| < 1.5e-7).

    math.erf element by element is exact but about fifty times slower on a (512, 1536) array.
    """
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * a)
    polynomial = np.zeros_like(t)
    for coefficient in _ERF_A:  # Horner: ((((a5 t + a4) t + a3) t + a2) t + a1) t
        polynomial = (polynomial + coefficient) * t
    return np.sign(x) * (1.0 - polynomial * np.exp(-a * a))


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU(x) = x · Φ(x) = x/2 · (1 + erf(x/√2)), the exact form BERT uses (not the tanh one)."""
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype)


# ---------------------------------------------------------------------------- the records


@dataclass(frozen=True, eq=False)
class LayerRecord:
    """Everything one encoder layer computed. L = positions, d = d_model, h = heads, f = d_ff."""

    index: int
    """0-based position of the layer in the encoder."""
    weights: LayerWeights
    """The layer's weights (shared with the checkpoint, read-only)."""
    input: np.ndarray
    """X, (L, d): what the layer reads (the embeddings for layer 0)."""
    attention: AttentionTrace
    """Every head's every stage, with a leading head axis: q, k (h, L, dk), v (h, L, dk),
    raw_scores … weights (h, L, L), output (h, L, dk). Q, K and V include their biases."""
    concat: np.ndarray
    """The heads' outputs side by side, (L, d): columns h·dk .. (h+1)·dk − 1 are head h."""
    attention_output: np.ndarray
    """Concat · W_O + b_O, (L, d)."""
    after_attention: np.ndarray
    """LayerNorm(X + attention_output), (L, d): the residual sum, normalised."""
    feed_forward_hidden: np.ndarray
    """GELU(after_attention · W_in + b_in), (L, f)."""
    output: np.ndarray
    """LayerNorm(after_attention + feed-forward output), (L, d): the next layer's input."""


@dataclass(frozen=True, eq=False)
class ModelRun:
    """A sentence run through the whole encoder, every layer and head recorded."""

    config: BertConfig
    """The model's sizes."""
    checkpoint_sha256: str
    """SHA-256 of the weights that produced these numbers."""
    encoding: Encoding
    """The tokens, ids and padding."""
    embeddings: np.ndarray
    """X⁰ = LayerNorm(word + position + type embeddings), (L, d)."""
    layers: tuple[LayerRecord, ...]
    """One record per layer, first to last."""
    pooled: np.ndarray
    """Mean of the last layer's output over the real tokens, (d,)."""
    sentence_embedding: np.ndarray
    """pooled / ‖pooled‖, (d,): the sentence embedding of all-MiniLM-L6-v2."""

    @property
    def weights(self) -> np.ndarray:
        """Every layer's every head's attention weights, (layers, h, L, L) (a new array)."""
        return np.stack([layer.attention.weights for layer in self.layers])  # (layers, h, L, L)


# ---------------------------------------------------------------------------- the forward pass


def _attention_layer(x: np.ndarray, weights: LayerWeights, config: BertConfig, key_mask: np.ndarray):
    """Multi-head self-attention of BERT: biased projections, the engine per head, W_O."""
    h = config.num_heads
    q = split_heads(x @ weights.w_q + weights.b_q, h)  # (h, L, dk)
    k = split_heads(x @ weights.w_k + weights.b_k, h)  # (h, L, dk)
    v = split_heads(x @ weights.w_v + weights.b_v, h)  # (h, L, dk)
    mask = None if key_mask.all() else key_mask[None, None, :]  # (1, 1, L): every query sees the real keys
    trace = scaled_dot_product_attention(q, k, v, mask=mask)  # stages (h, L, L), output (h, L, dk)
    concat = trace.output.transpose(1, 0, 2).reshape(x.shape[0], -1)  # (L, h·dk) = (L, d)
    attention_output = concat @ weights.w_o + weights.b_o  # (L, d)
    return trace, np.ascontiguousarray(concat), attention_output


def _encoder_layer(index: int, x: np.ndarray, weights: LayerWeights, config: BertConfig,
                   key_mask: np.ndarray) -> LayerRecord:
    eps = config.layer_norm_eps
    trace, concat, attention_output = _attention_layer(x, weights, config, key_mask)
    after_attention = layer_norm(x + attention_output, weights.attention_norm_gain, weights.attention_norm_bias, eps)
    hidden = gelu(after_attention @ weights.w_in + weights.b_in)  # (L, f)
    feed_forward = hidden @ weights.w_out + weights.b_out  # (L, d)
    output = layer_norm(after_attention + feed_forward, weights.output_norm_gain, weights.output_norm_bias, eps)
    return LayerRecord(
        index=index,
        weights=weights,
        input=x,
        attention=trace,
        concat=_read_only(concat),
        attention_output=_read_only(attention_output),
        after_attention=_read_only(after_attention),
        feed_forward_hidden=_read_only(hidden),
        output=_read_only(output),
    )


def run_model(checkpoint: BertCheckpoint, encoding: Encoding) -> ModelRun:
    """Run the encoder on one encoded sentence and record every layer and head."""
    config = checkpoint.config
    if encoding.length > config.max_positions:
        raise ValueError(f"{encoding.length} positions; the model has {config.max_positions}")
    summed = (
        checkpoint.word_embeddings[encoding.ids]  # (L, d)
        + checkpoint.position_embeddings[: encoding.length]  # (L, d)
        + checkpoint.token_type_embeddings[encoding.type_ids]  # (L, d)
    )
    x = _read_only(layer_norm(summed, checkpoint.embedding_norm_gain, checkpoint.embedding_norm_bias,
                              config.layer_norm_eps))  # (L, d)
    embeddings = x
    layers = []
    for index, weights in enumerate(checkpoint.layers):
        record = _encoder_layer(index, x, weights, config, encoding.is_real)
        layers.append(record)
        x = record.output  # (L, d)

    real = encoding.is_real.astype(x.dtype)  # (L,)
    pooled = (real @ x) / max(real.sum(), 1e-9)  # (d,): mean over the real tokens
    sentence_embedding = pooled / max(float(np.linalg.norm(pooled)), 1e-12)  # (d,)
    return ModelRun(
        config=config,
        checkpoint_sha256=checkpoint.sha256,
        encoding=encoding,
        embeddings=embeddings,
        layers=tuple(layers),
        pooled=_read_only(pooled),
        sentence_embedding=_read_only(sentence_embedding),
    )


@functools.lru_cache(maxsize=2)
def _shared_checkpoint(folder: str) -> BertCheckpoint:
    """One loaded copy per folder for the whole process (about 90 MB of read-only arrays)."""
    return load_checkpoint(folder)


def run_sentence(folder: str, text: str, pad_to: int = 0, max_tokens: int = DEFAULT_MAX_TOKENS) -> ModelRun:
    """encode + run_model for the checkpoint in `folder`, with small hashable arguments only,
    so that an app can cache the result by them. The checkpoint is read (and its SHA-256
    checked) once per folder."""
    checkpoint = _shared_checkpoint(str(Path(folder)))
    return run_model(checkpoint, encode(checkpoint, text, pad_to=pad_to, max_tokens=max_tokens))
