"""Attention Explorer's engine: attention that records every intermediate matrix.

Pure NumPy. Figures (`attention_core.figures`, Plotly) and tables
(`attention_core.frames`, pandas) are separate submodules, imported only when asked for.

    >>> import numpy as np
    >>> from attention_core import scaled_dot_product_attention
    >>> rng = np.random.default_rng(0)
    >>> trace = scaled_dot_product_attention(rng.normal(size=(3, 4)), rng.normal(size=(5, 4)),
    ...                                      rng.normal(size=(5, 2)))
    >>> trace.weights.shape, trace.output.shape
    ((3, 5), (3, 2))
"""

from .attention import AttentionTrace, masked_softmax, scaled_dot_product_attention
from .masks import block_mask, causal_mask, combine_masks, padding_mask, sliding_window_mask
from .multihead import MultiHeadTrace, multi_head_attention
from .stages import STAGES, Stage
from .tokens import MAX_TEXT_CHARS, MAX_TOKENS, token_labels, tokenize
from .toy import (
    MAX_DIM,
    InputError,
    MaskSpec,
    ToySettings,
    ToyTrace,
    build_toy_trace,
    positional_encoding,
    token_embedding,
)

__all__ = [
    "MAX_DIM",
    "MAX_TEXT_CHARS",
    "MAX_TOKENS",
    "STAGES",
    "AttentionTrace",
    "InputError",
    "MaskSpec",
    "MultiHeadTrace",
    "Stage",
    "ToySettings",
    "ToyTrace",
    "block_mask",
    "build_toy_trace",
    "causal_mask",
    "combine_masks",
    "masked_softmax",
    "multi_head_attention",
    "padding_mask",
    "positional_encoding",
    "scaled_dot_product_attention",
    "sliding_window_mask",
    "token_embedding",
    "token_labels",
    "tokenize",
]
