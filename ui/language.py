"""The interface language: which one is chosen, and strings looked up in it."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from .i18n import DEFAULT_LANGUAGE, LANGUAGES, translate


def language() -> str:
    """The interface language chosen in the sidebar ("en" or "zh")."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def t(key: str, **values) -> str:
    """`key` translated into the current interface language."""
    return translate(key, language(), **values)


def option_label(prefix: str) -> Callable[[str], str]:
    """A `format_func` labelling option x with the string ``<prefix>.<x>`` in the current language.

    The language is bound now, not looked up when called: AppTest calls format functions
    outside the script run, where session state is not available.
    """
    lang = language()
    return lambda option: translate(f"{prefix}.{option}", lang)

