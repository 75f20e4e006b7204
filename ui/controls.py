"""The shared sidebar controls that every page draws first.

The widgets have fixed keys and ``persist_state="session"``, so their values survive page
switches and language changes; pages never read `st.session_state` for settings themselves.
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from attention_core import MAX_DIM, MAX_TEXT_CHARS, MAX_TOKENS, MaskSpec, ToySettings, token_labels, tokenize

from .display import display_controls
from .i18n import DEFAULT_LANGUAGE, LANGUAGES
from .language import option_label, t
from .notices import start_run, unreadable_character_notice
from .page_scripts import whole_characters
from .settings import DEFAULTS, EXAMPLES, MASK_KINDS, PROJECTIONS
from .url import load_url_once, restore_settings, share_link, url_notices, write_url


def _load_example() -> None:
    example = st.session_state.get("example")
    if example:
        st.session_state["text"], st.session_state["query_text"] = EXAMPLES[example]
        st.session_state["cross"] = bool(EXAMPLES[example][1])
        st.session_state["example"] = None


SETTINGS = frozenset({"sentence", "dk", "mask", "padding", "projection", "d_model", "positional", "seed"})
"""The sidebar settings a page may use: "sentence" is the text (with the cross-attention
queries and the examples), "mask" the mask kind, "padding" the padding positions."""


def controls(max_tokens: int = MAX_TOKENS, uses: Collection[str] = SETTINGS) -> ToySettings:
    """Draw the shared sidebar controls and return the settings they describe.

    `max_tokens`: the longest input this page draws (pages built for small examples pass a
    smaller number; longer text is cut, with a notice saying so).
    `uses`: the settings (names from SETTINGS) this page reads. The others are drawn greyed
    out, with a caption saying so, so that no control silently does nothing; they keep their
    values for the other pages.

    The URL is written here too, with the page's own settings as they stood when this run
    started; a page that changes a setting itself calls `write_url()` again at its end.
    """
    unknown = set(uses) - SETTINGS
    assert not unknown, f"not sidebar settings: {unknown}"
    unused = {name: t("control.unused.help") for name in SETTINGS - set(uses)}  # name → help text
    load_url_once()
    restore_settings()
    start_run()  # a page may ask for several traces: say each thing once
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
    if unused:
        sidebar.caption(t("sidebar.unused"))
    no_sentence = "sentence" in unused
    text = sidebar.text_area(
        t("control.text"),
        DEFAULTS.text,
        height=80,
        max_chars=MAX_TEXT_CHARS,
        key="text",
        help=unused.get("sentence", t("control.text.help", limit=MAX_TEXT_CHARS)),
        disabled=no_sentence,
        persist_state="session",
    )
    cross = sidebar.toggle(
        t("control.cross"),
        key="cross",
        help=unused.get("sentence", t("control.cross.help")),
        disabled=no_sentence,
        persist_state="session",
    )
    query_text = ""
    if cross:
        st.session_state.setdefault("query_text", "")
        query_text = sidebar.text_area(
            t("control.query_text"),
            height=68,
            max_chars=MAX_TEXT_CHARS,
            key="query_text",
            disabled=no_sentence,
            persist_state="session",
        )
    sidebar.selectbox(
        t("control.example"),
        list(EXAMPLES),
        index=None,
        placeholder=t("control.example.placeholder"),
        key="example",
        on_change=_load_example,
        disabled=no_sentence,
    )
    dk = sidebar.slider(
        t("control.dk"),
        1,
        MAX_DIM,
        DEFAULTS.dk,
        key="dk",
        help=unused.get("dk", t("control.dk.help")),
        disabled="dk" in unused,
        persist_state="session",
    )
    # §3.2.3: the causal mask belongs to decoder self-attention; encoder–decoder attention sees every input position
    mask_kinds = [kind for kind in MASK_KINDS if not (cross and kind == "causal")]
    if st.session_state.get("mask_kind", mask_kinds[0]) not in mask_kinds:
        st.session_state["mask_kind"] = mask_kinds[0]
    mask_kind = sidebar.radio(
        t("control.mask"),
        mask_kinds,
        format_func=option_label("mask"),
        horizontal=True,
        key="mask_kind",
        help=unused.get("mask"),
        disabled="mask" in unused,
        persist_state="session",
    )
    padding: tuple[int, ...] = ()
    if cross and "mask" not in unused:
        sidebar.caption(t("control.mask.causal_cross"))
    if "padding" not in unused and (mask_kind == "padding" or "mask" in unused):  # (the page has its own masks)
        labels = token_labels(tokenize(text[:MAX_TEXT_CHARS])[:max_tokens])  # the tokens the page will use
        options = list(range(len(labels)))
        chosen = st.session_state.get("pad_positions", [])
        st.session_state["pad_positions"] = [p for p in chosen if 0 <= p < len(labels)]  # tokens may have changed
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
        format_func=option_label("projection"),
        key="projection",
        help=unused.get("projection"),
        disabled="projection" in unused,
        persist_state="session",
    )
    if projection == "identity" and "projection" not in unused:
        unused.setdefault("d_model", t("control.d_model.identity"))
    d_model = sidebar.slider(
        t("control.d_model"),
        1,
        MAX_DIM,
        DEFAULTS.d_model,
        key="d_model",
        disabled="d_model" in unused,
        help=unused.get("d_model"),
        persist_state="session",
    )
    positional = sidebar.toggle(
        t("control.positional"),
        key="positional",
        help=unused.get("positional"),
        disabled="positional" in unused,
        persist_state="session",
    )
    seed = sidebar.number_input(
        t("control.seed"), 0, 2**31 - 1, DEFAULTS.seed, step=1, key="seed",
        help=unused.get("seed", t("control.seed.help")), disabled="seed" in unused, persist_state="session",
    )
    display_controls(sidebar)
    url_notices()
    if not no_sentence:
        unreadable_character_notice(text, query_text)
    share_link(sidebar, write_url())
    whole_characters(sidebar)  # last: its empty element adds no gap between two controls
    return ToySettings(
        text=text,
        query_text=query_text,
        dk=int(dk),
        d_model=int(d_model),
        seed=int(seed),
        projection=projection,
        positional=bool(positional),
        mask=MaskSpec(causal=mask_kind == "causal", padding=padding),
        max_tokens=max_tokens,
    )

