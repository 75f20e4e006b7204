"""SmolLM2-135M run in NumPy, every head's attention through the app's own engine, causal mask.

For a prompt of L tokens (d = 576, h = 9 query heads, g = 3 key/value heads, dk = 64):

    X⁰ = E[ids]                                                             (L, d)
    for each layer ℓ:
        N = RMSNorm(X) · γ_attn                                             (L, d)
        Q = N W_Q → h heads, K = N W_K, V = N W_V → g heads                 (h, L, dk), (g, L, dk)
        Q̃ = rotary(Q), K̃ = rotary(K): pair (2i, 2i+1) of position p
            turned by the angle p · base^(−2i/dk)                           same shapes
        head_i = Attention(Q̃_i, K̃_{i // 3}, V_{i // 3}) with the causal mask  (L, dk)  ← the engine
        X = X + Concat(head_1 .. head_h) W_O                                (L, d)
        M = RMSNorm(X) · γ_ffn
        X = X + (SiLU(M W_gate) ⊙ (M W_up)) W_down                          (L, d)
    final = RMSNorm(X) · γ_out;   logits = final[L−1] Eᵀ  (tied embedding)  (V,)

Grouped-query attention: the 9 query heads share 3 key/value heads, heads 0–2 reading K/V
head 0, 3–5 head 1, 6–8 head 2 (as Hugging Face's ``repeat_kv``). The engine's
`scaled_dot_product_attention` gets the key/value heads repeated to 9 (views, no copy).

What is kept for every layer: its input X, the attention weights A of every head, and the
residual stream after attention and after the feed-forward layer. Every stage of every layer
would be about 480 MB per prompt at 256 tokens; `layer_detail(run, layer)` recomputes one
layer's stages (RMSNorm, Q, K, V, rotary, every engine stage) from its recorded input with the
same functions, so the numbers are the same (a test checks that they are identical).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ..attention import AttentionTrace, _read_only, scaled_dot_product_attention
from ..masks import causal_mask
from .checkpoint import DecoderCheckpoint, DecoderConfig, DecoderLayerWeights
from .readable import readable_tokens

__all__ = [
    "MAX_PROMPT_TOKENS",
    "DecoderEncoding",
    "DecoderLayerRecord",
    "DecoderRun",
    "LayerDetail",
    "Prediction",
    "encode_ids",
    "encode_prompt",
    "greedy_continuation",
    "layer_detail",
    "rms_norm",
    "rotary",
    "rotary_angles",
    "run_decoder",
    "silu",
    "top_predictions",
]

MAX_PROMPT_TOKENS = 256
"""Longest prompt the page reads (the model itself was trained on 8192)."""


# ---------------------------------------------------------------------------- tokens


@dataclass(frozen=True, eq=False)
class DecoderEncoding:
    """A prompt as the model reads it. L = number of tokens."""

    text: str
    """The prompt as typed ("" when given as ids)."""
    ids: np.ndarray
    """Token ids, (L,) int64."""
    tokens: tuple[str, ...]
    """The byte-level BPE tokens as the vocabulary spells them ("Ġcat")."""
    shown: tuple[str, ...]
    """The same tokens readably ("␣cat", "猫(1/3)"): see `attention_core.decoder.readable`."""
    dropped: int
    """Tokens cut to respect the length limit (0 if none)."""

    @property
    def length(self) -> int:
        return len(self.tokens)

    @property
    def labels(self) -> list[str]:
        """Axis labels "position:token"."""
        return [f"{position}:{token}" for position, token in enumerate(self.shown)]


def encode_ids(checkpoint: DecoderCheckpoint, ids, text: str = "", dropped: int = 0) -> DecoderEncoding:
    """An encoding of given token ids (e.g. a random sequence)."""
    ids = [int(i) for i in ids]
    if any(not 0 <= i < checkpoint.config.vocab_size for i in ids):
        raise ValueError(f"token ids must be in 0..{checkpoint.config.vocab_size - 1}")
    tokenizer = checkpoint.tokenizer
    tokens = tuple(tokenizer.id_to_token(i) for i in ids)
    special = frozenset(tokenizer.id_to_token(i) for i in checkpoint.special_ids)
    return DecoderEncoding(
        text=text,
        ids=_read_only(np.array(ids, dtype=np.int64)),  # (L,)
        tokens=tokens,
        shown=tuple(readable_tokens(tokens, special)),
        dropped=dropped,
    )


def encode_prompt(checkpoint: DecoderCheckpoint, text: str, max_tokens: int = MAX_PROMPT_TOKENS) -> DecoderEncoding:
    """Tokenise `text` (no BOS token: SmolLM2 adds none), keeping the first `max_tokens` tokens."""
    ids = checkpoint.tokenizer.encode(text).ids
    return encode_ids(checkpoint, ids[:max_tokens], text=text, dropped=max(0, len(ids) - max_tokens))


# ---------------------------------------------------------------------------- building blocks


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """x / √(mean(x²) + ε) · γ over the last axis (no mean subtracted, no bias)."""
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)  # (..., 1)
    return (x / np.sqrt(mean_square + eps) * gain).astype(np.float32)


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU(x) = x · σ(x), the gate of SwiGLU."""
    return (x / (1.0 + np.exp(-x))).astype(np.float32)


def rotary_angles(length: int, dk: int, base: float) -> np.ndarray:
    """Angle by which pair i of position p turns: p · base^(−2i/dk), (L, dk/2) float32.

    Computed as PyTorch does (float32 inverse frequencies times float32 positions)."""
    inverse_frequency = (1.0 / base ** (np.arange(0, dk, 2, dtype=np.int64).astype(np.float32) / dk)).astype(
        np.float32)  # (dk/2,)
    positions = np.arange(length, dtype=np.float32)  # (L,)
    return np.outer(positions, inverse_frequency).astype(np.float32)  # (L, dk/2)


def rotary(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rotate each adjacent pair (x_2i, x_2i+1) of every row by its position's angle.

    x: (..., L, dk), angles: (L, dk/2). A rotation keeps every vector's length; what it
    changes is the dot product q_p · k_r, which then depends on p − r only.
    """
    cos, sin = np.cos(angles), np.sin(angles)  # (L, dk/2)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., L, dk/2)
    turned = np.empty_like(x)
    turned[..., 0::2] = even * cos - odd * sin
    turned[..., 1::2] = even * sin + odd * cos
    return turned


# ---------------------------------------------------------------------------- the records


@dataclass(frozen=True, eq=False)
class DecoderLayerRecord:
    """What one decoder layer computed, kept for every layer. L = tokens, h = 9, d = 576.

    The per-head details (N, Q, K, V before and after rotary, every engine stage) are not kept
    for all 30 layers: `layer_detail` recomputes them for one layer from `input`, with the same
    functions, so the numbers are the same (a test checks that they are identical).
    """

    index: int
    weights: DecoderLayerWeights
    """The layer's weights (shared with the checkpoint, read-only)."""
    input: np.ndarray
    """X, (L, d): the residual stream entering the layer (the token embeddings for layer 0)."""
    attention_weights: np.ndarray
    """A = softmax(causal(Q̃ K̃ᵀ / √dk)) of every query head, (h, L, L), from the engine."""
    after_attention: np.ndarray
    """X + Concat(heads) W_O, (L, d)."""
    output: np.ndarray
    """after_attention + feed-forward, (L, d): the next layer's input."""


@dataclass(frozen=True, eq=False)
class LayerDetail:
    """Every stage of one layer's attention. h = 9 query heads, g = 3 key/value heads."""

    normed: np.ndarray
    """N = RMSNorm(X) · γ_attn, (L, d): what Q, K and V are computed from."""
    q_before_rotary: np.ndarray
    """Q = N W_Q split into heads, (h, L, dk)."""
    k_before_rotary: np.ndarray
    """K = N W_K, (g, L, dk)."""
    q: np.ndarray
    """Q̃ = rotary(Q), (h, L, dk): the queries the engine uses."""
    k: np.ndarray
    """K̃ = rotary(K), (g, L, dk)."""
    v: np.ndarray
    """V = N W_V, (g, L, dk) (values are not rotated)."""
    attention: AttentionTrace
    """The engine's record for all query heads: q (h, L, dk), k and v repeated to (h, L, dk),
    raw_scores … weights (h, L, L), output (h, L, dk)."""


@dataclass(frozen=True, eq=False)
class DecoderRun:
    """A prompt run through the whole decoder, every layer and head recorded."""

    config: DecoderConfig
    checkpoint_sha256: str
    encoding: DecoderEncoding
    layers: tuple[DecoderLayerRecord, ...]
    final_hidden: np.ndarray
    """RMSNorm(last X) · γ_out, (L, d): Hugging Face's ``last_hidden_state``."""
    next_logits: np.ndarray
    """Logits of the token after the last one, (V,) float32."""

    @property
    def weights(self) -> np.ndarray:
        """Every layer's every head's attention weights, (layers, h, L, L) (a new array)."""
        return np.stack([layer.attention_weights for layer in self.layers])  # (layers, h, L, L)

    @property
    def nbytes(self) -> int:
        """Bytes of the recorded arrays (weights of the model not counted)."""
        arrays = {id(self.final_hidden): self.final_hidden, id(self.next_logits): self.next_logits}
        for layer in self.layers:  # a layer's input is the previous layer's output: count it once
            arrays.update((id(a), a) for a in (layer.input, layer.attention_weights, layer.after_attention,
                                               layer.output))
        return sum(array.nbytes for array in arrays.values())


# ---------------------------------------------------------------------------- the forward pass


def _split(x: np.ndarray, heads: int) -> np.ndarray:
    length, width = x.shape
    return np.ascontiguousarray(x.reshape(length, heads, width // heads).transpose(1, 0, 2))  # (heads, L, dk)


def _repeat_kv(x: np.ndarray, group: int) -> np.ndarray:
    """(g, L, dk) → (g·group, L, dk): K/V head j serves query heads j·group .. (j+1)·group − 1."""
    return np.repeat(x, group, axis=0)


def _attention(x: np.ndarray, weights: DecoderLayerWeights, config: DecoderConfig, angles: np.ndarray,
               mask: np.ndarray) -> LayerDetail:
    """RMSNorm → Q, K, V → rotary → the engine (causal mask), for every head of one layer."""
    normed = rms_norm(x, weights.attention_norm, config.norm_eps)  # (L, d)
    q_plain = _split(normed @ weights.w_q, config.num_heads)  # (h, L, dk)
    k_plain = _split(normed @ weights.w_k, config.num_kv_heads)  # (g, L, dk)
    v = _split(normed @ weights.w_v, config.num_kv_heads)  # (g, L, dk)
    q = rotary(q_plain, angles)  # (h, L, dk)
    k = rotary(k_plain, angles)  # (g, L, dk)
    group = config.group_size
    trace = scaled_dot_product_attention(q, _repeat_kv(k, group), _repeat_kv(v, group), mask=mask)  # (h, L, L)
    return LayerDetail(normed=_read_only(normed), q_before_rotary=_read_only(q_plain),
                       k_before_rotary=_read_only(k_plain), q=_read_only(q), k=_read_only(k), v=_read_only(v),
                       attention=trace)


def _decoder_layer(index: int, x: np.ndarray, weights: DecoderLayerWeights, config: DecoderConfig,
                   angles: np.ndarray, mask: np.ndarray) -> DecoderLayerRecord:
    length = x.shape[0]
    trace = _attention(x, weights, config, angles, mask).attention
    concat = trace.output.transpose(1, 0, 2).reshape(length, -1)  # (L, h·dk)
    attention_output = concat @ weights.w_o  # (L, d)
    after_attention = x + attention_output  # (L, d)
    m = rms_norm(after_attention, weights.ffn_norm, config.norm_eps)  # (L, d)
    hidden = silu(m @ weights.w_gate) * (m @ weights.w_up)  # (L, f)
    feed_forward = hidden @ weights.w_down  # (L, d)
    return DecoderLayerRecord(
        index=index,
        weights=weights,
        input=x,
        attention_weights=trace.weights,
        after_attention=_read_only(after_attention),
        output=_read_only(after_attention + feed_forward),
    )


def one_blas_thread():
    """A context in which BLAS (numpy's matrix products) uses one thread, if ``threadpoolctl``
    is installed (requirements-model.txt), else nothing.

    Measured on the 2-core machine while other processes kept it busy (load average about
    18): a 64-token forward pass took 0.75–1.2 s with one BLAS thread and 11–21 s with two,
    which then spin-wait for each other. The limit is process-wide while it lasts.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def run_decoder(checkpoint: DecoderCheckpoint, encoding: DecoderEncoding) -> DecoderRun:
    """Run the decoder on one encoded prompt and record every layer and head (BLAS on one thread)."""
    with one_blas_thread():
        return _run_decoder(checkpoint, encoding)


def _run_decoder(checkpoint: DecoderCheckpoint, encoding: DecoderEncoding) -> DecoderRun:
    config = checkpoint.config
    if not 1 <= encoding.length <= config.context_length:
        raise ValueError(f"a prompt needs 1 to {config.context_length} tokens; got {encoding.length}")
    angles = rotary_angles(encoding.length, config.dk, config.rope_base)  # (L, dk/2)
    mask = causal_mask(encoding.length)  # (L, L): True on and below the diagonal
    x = _read_only(checkpoint.token_embeddings[encoding.ids])  # (L, d)
    layers = []
    for index, weights in enumerate(checkpoint.layers):
        record = _decoder_layer(index, x, weights, config, angles, mask)
        layers.append(record)
        x = record.output  # (L, d)
    final = rms_norm(x, checkpoint.output_norm, config.norm_eps)  # (L, d)
    logits = checkpoint.token_embeddings @ final[-1]  # (V,)
    return DecoderRun(
        config=config,
        checkpoint_sha256=checkpoint.sha256,
        encoding=encoding,
        layers=tuple(layers),
        final_hidden=_read_only(final),
        next_logits=_read_only(logits.astype(np.float32)),
    )


def layer_detail(run: DecoderRun, layer: int) -> LayerDetail:
    """Every stage of layer `layer`'s attention, recomputed from the recorded input X with the
    forward pass's own functions (so identical to what the forward pass computed)."""
    if not 0 <= layer < len(run.layers):
        raise IndexError(f"layer must be in 0..{len(run.layers) - 1}; got {layer}")
    record, config, length = run.layers[layer], run.config, run.encoding.length
    angles = rotary_angles(length, config.dk, config.rope_base)  # (L, dk/2)
    with one_blas_thread():
        return _attention(record.input, record.weights, config, angles, causal_mask(length))


# ---------------------------------------------------------------------------- predictions


@dataclass(frozen=True)
class Prediction:
    """One candidate next token."""

    id: int
    token: str
    """As the vocabulary spells it."""
    shown: str
    """Readably (see `readable_tokens`)."""
    probability: float
    logit: float


def top_predictions(run: DecoderRun, tokenizer, count: int = 10) -> list[Prediction]:
    """The `count` most likely next tokens, softmax(logits) over the whole vocabulary."""
    logits = run.next_logits.astype(np.float64)  # (V,)
    probabilities = np.exp(logits - logits.max())
    probabilities /= probabilities.sum()  # (V,)
    best = np.argsort(-logits, kind="stable")[:count]
    result = []
    for token_id in best.tolist():
        token = tokenizer.id_to_token(token_id)
        result.append(Prediction(token_id, token, readable_tokens([token])[0], float(probabilities[token_id]),
                                 float(logits[token_id])))
    return result


# ---------------------------------------------------------------------------- generating


def greedy_continuation(checkpoint: DecoderCheckpoint, text: str, steps: int, max_tokens: int = MAX_PROMPT_TOKENS
                        ) -> tuple[DecoderEncoding, list[Prediction]]:
    """The prompt continued by `steps` greedy steps (each the most likely next token, the whole
    prompt rerun each time: no key/value cache, to keep the forward pass the one shown).

    Returns the final encoding (prompt + chosen tokens) and the chosen predictions; stops early
    at a control token such as <|im_end|> or at `max_tokens`."""
    encoding = encode_prompt(checkpoint, text, max_tokens)
    ids, chosen = encoding.ids.tolist(), []
    for _ in range(min(steps, max(0, max_tokens - len(ids)))):
        run = run_decoder(checkpoint, encode_ids(checkpoint, ids))
        best = top_predictions(run, checkpoint.tokenizer, 1)[0]
        chosen.append(best)
        ids.append(best.id)
        if best.id in checkpoint.special_ids:
            break
    return encode_ids(checkpoint, ids, text=text), chosen
