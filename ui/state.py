"""Streamlit glue: the shared sidebar controls, session state and the cached trace.

Every page calls `controls()` first. The widgets have fixed keys and
``persist_state="session"``, so their values survive page switches and language
changes; pages never read `st.session_state` for settings themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from attention_core import MAX_DIM, InputError, MaskSpec, ToySettings, ToyTrace, build_toy_trace, token_labels, tokenize
from attention_core.figures import FigureText

from .i18n import DEFAULT_LANGUAGE, LANGUAGES, translate

EXAMPLES: dict[str, tuple[str, str]] = {
    # shown name: (sentence for keys and values, sentence for queries or "" for self-attention)
    "The cat sat on the mat because it was tired.": ("The cat sat on the mat because it was tired.", ""),
    "The animal didn't cross the street because it was too tired.": (
        "The animal didn't cross the street because it was too tired.",
        "",
    ),
    "I saw a cat. The cat saw me. It ran away.": ("I saw a cat. The cat saw me. It ran away.", ""),
    "猫坐在垫子上，因为它累了。": ("猫坐在垫子上，因为它累了。", ""),
    "我爱自然语言处理。": ("我爱自然语言处理。", ""),
    "The cat sat on the mat. → 猫坐在垫子上。": ("The cat sat on the mat.", "猫坐在垫子上。"),
}
DEFAULTS = ToySettings()
MASK_KINDS = ("none", "causal", "padding")
T = TypeVar("T")
PROJECTIONS = ("random", "identity")


def language() -> str:
    """The interface language chosen in the sidebar ("en" or "zh")."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def t(key: str, **values) -> str:
    """`key` translated into the current interface language."""
    return translate(key, language(), **values)


def figure_text() -> FigureText:
    """The words inside figures, in the current language."""
    return FigureText(
        query=t("figure.query"),
        key=t("figure.key"),
        feature=t("figure.feature"),
        value=t("figure.value"),
        masked=t("figure.masked"),
        allowed=t("figure.allowed"),
    )


def _load_example() -> None:
    example = st.session_state.get("example")
    if example:
        st.session_state["text"], st.session_state["query_text"] = EXAMPLES[example]
        st.session_state["cross"] = bool(EXAMPLES[example][1])
        st.session_state["example"] = None


def _pad_position_options(text: str) -> list[int]:
    return list(range(len(tokenize(text))))


def controls() -> ToySettings:
    """Draw the shared sidebar controls and return the settings they describe."""
    sidebar = st.sidebar
    sidebar.segmented_control(
        t("control.language"),
        list(LANGUAGES),
        format_func=LANGUAGES.get,
        default=DEFAULT_LANGUAGE,
        required=True,
        key="lang",
        persist_state="session",
    )
    sidebar.header(t("sidebar.settings"))
    st.session_state.setdefault("text", DEFAULTS.text)  # not value=: examples also write this key
    text = sidebar.text_area(
        t("control.text"),
        height=80,
        key="text",
        help=t("control.text.help"),
        persist_state="session",
    )
    cross = sidebar.toggle(t("control.cross"), key="cross", help=t("control.cross.help"), persist_state="session")
    query_text = ""
    if cross:
        st.session_state.setdefault("query_text", "")
        query_text = sidebar.text_area(t("control.query_text"), height=68, key="query_text", persist_state="session")
    sidebar.selectbox(
        t("control.example"),
        list(EXAMPLES),
        index=None,
        placeholder=t("control.example.placeholder"),
        key="example",
        on_change=_load_example,
    )
    dk = sidebar.slider(
        t("control.dk"), 1, MAX_DIM, DEFAULTS.dk, key="dk", help=t("control.dk.help"), persist_state="session"
    )
    mask_kind = sidebar.radio(
        t("control.mask"),
        MASK_KINDS,
        format_func=lambda kind: t(f"mask.{kind}"),
        horizontal=True,
        key="mask_kind",
        persist_state="session",
    )
    padding: tuple[int, ...] = ()
    if mask_kind == "causal" and cross:
        sidebar.caption(t("control.mask.causal_cross"))
    if mask_kind == "padding":
        options = _pad_position_options(text)
        labels = token_labels(tokenize(text))
        chosen = st.session_state.get("pad_positions", [])
        st.session_state["pad_positions"] = [p for p in chosen if p in options]  # tokens may have changed
        padding = tuple(
            sidebar.multiselect(
                t("control.pad_positions"),
                options,
                format_func=lambda position: labels[position],
                key="pad_positions",
                persist_state="session",
            )
        )
        if not padding:
            sidebar.caption(t("control.pad_positions.hint"))
    projection = sidebar.radio(
        t("control.projection"),
        PROJECTIONS,
        format_func=lambda kind: t(f"projection.{kind}"),
        key="projection",
        persist_state="session",
    )
    d_model = sidebar.slider(
        t("control.d_model"),
        1,
        MAX_DIM,
        DEFAULTS.d_model,
        key="d_model",
        disabled=projection == "identity",
        help=t("control.d_model.identity") if projection == "identity" else None,
        persist_state="session",
    )
    positional = sidebar.toggle(t("control.positional"), key="positional", persist_state="session")
    seed = sidebar.number_input(
        t("control.seed"), 0, 2**31 - 1, DEFAULTS.seed, step=1, key="seed", help=t("control.seed.help"),
        persist_state="session",
    )
    return ToySettings(
        text=text,
        query_text=query_text,
        dk=int(dk),
        d_model=int(d_model),
        seed=int(seed),
        projection=projection,
        positional=bool(positional),
        mask=MaskSpec(causal=mask_kind == "causal", padding=padding),
    )


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
    try:
        trace = memo(build_toy_trace, settings)
    except InputError as problem:
        st.info(t(f"error.{problem.code}", **problem.details))
        st.stop()
    if trace.dropped_tokens:
        st.warning(t("notice.truncated", limit=settings.max_tokens, dropped=trace.dropped_tokens))
    return trace
