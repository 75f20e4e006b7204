"""Caching: the engine's results computed once per distinct small arguments and shared."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from attention_core import MAX_TEXT_CHARS, InputError, ToySettings, ToyTrace, build_toy_trace

from .language import t

T = TypeVar("T")


@st.cache_resource(max_entries=128, show_spinner=False)
def _memo(name: str, _function: Callable[..., T], args: tuple[Hashable, ...]) -> T:
    # cache_resource shares one object instead of copying it: safe, because the engine's
    # records are frozen and their arrays read-only. `name` keys the function.
    return _function(*args)


def memo(function: Callable[..., T], *args: Hashable) -> T:
    """function(*args), computed once per distinct small, hashable arguments and shared.

    For the engine's pure functions only (their results are immutable records).
    """
    return _memo(f"{function.__module__}.{function.__qualname__}", function, args)


def trace_or_stop(settings: ToySettings) -> ToyTrace:
    """The cached trace for `settings`; on input the user must fix, explain and stop the page."""
    ignored = max(len(settings.text), len(settings.query_text)) - MAX_TEXT_CHARS
    if ignored > 0:  # said first: it may be why the text below is not what the user expects
        _notice_once(t("notice.characters", limit=MAX_TEXT_CHARS, ignored=ignored))
    try:
        with st.spinner(t("working")):
            trace = memo(build_toy_trace, settings)
    except InputError as problem:
        st.info(t(f"error.{problem.code}", **problem.details))
        st.stop()
    if trace.dropped_tokens:
        _notice_once(t("notice.truncated", limit=settings.max_tokens, dropped=trace.dropped_tokens))
    return trace


def _notice_once(message: str) -> None:
    shown = st.session_state.setdefault("_notices_shown", set())
    if message not in shown:
        shown.add(message)
        st.warning(message)



# ---------------------------------------------------------------------------- the decoder page

DECODER_RUNS = 3
"""Decoder runs kept (a run of 256 tokens holds about 110 MB of records; 64 tokens, 14 MB)."""


@st.cache_resource(max_entries=1, show_spinner=False)
def decoder_checkpoint(path: str):
    """SmolLM2-135M read, SHA-256 checked and dequantized once per server process (about
    540 MB of read-only float32 arrays), shared by every session."""
    from attention_core.decoder import load_decoder

    return load_decoder(path)


@st.cache_resource(max_entries=DECODER_RUNS, ttl=3600, show_spinner=False)
def decoder_run(path: str, text: str, max_tokens: int):
    """The decoder's forward pass on `text`, every layer and head recorded, shared by sessions."""
    from attention_core.decoder import encode_prompt, run_decoder

    checkpoint = decoder_checkpoint(path)
    return run_decoder(checkpoint, encode_prompt(checkpoint, text, max_tokens))


@st.cache_resource(max_entries=32, ttl=3600, show_spinner=False)
def decoder_greedy(path: str, text: str, steps: int, max_tokens: int):
    """`steps` greedy next tokens after `text` (small: token ids and probabilities only)."""
    from attention_core.decoder import greedy_continuation

    return greedy_continuation(decoder_checkpoint(path), text, steps, max_tokens)


@st.cache_resource(max_entries=1, show_spinner=False)
def decoder_head_scores(path: str):
    """The head finder's scores on the repeated random sequence, and that sequence's run's
    encoding and weights of every head (computed once per process)."""
    from attention_core.decoder import encode_ids, head_scores, repeated_random_ids, run_decoder
    from attention_core.decoder.finder import DEFAULT_PERIOD

    checkpoint = decoder_checkpoint(path)
    ids = repeated_random_ids(checkpoint.config.vocab_size, DEFAULT_PERIOD)
    run = run_decoder(checkpoint, encode_ids(checkpoint, ids))
    return head_scores(run.weights, DEFAULT_PERIOD), run
