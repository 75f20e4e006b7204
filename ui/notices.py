"""Short notices about what became of the user's input, each said once per run.

A page may ask for several traces of the same text, and two text boxes may hold the same
problem: the notice is shown the first time only. `controls()` starts the count on each run.
"""

from __future__ import annotations

import streamlit as st

from .language import t

SHOWN = "_notices_shown"
"""Session key: the notices shown in this run."""

UNREADABLE = "\ufffd"
"""U+FFFD, what a text box puts in place of half an emoji (`ui.page_scripts.whole_characters`)."""


def start_run() -> None:
    """Forget the notices of the last run."""
    st.session_state[SHOWN] = set()


def notice_once(message: str, show=st.warning, **options) -> None:
    """`show(message, **options)` unless this run has shown `message` already."""
    shown = st.session_state.setdefault(SHOWN, set())
    if message not in shown:
        shown.add(message)
        show(message, **options)


def unreadable_character_notice(*texts: str) -> None:
    """Say that a text holds U+FFFD, the sign for a character that could not be read."""
    if any(UNREADABLE in text for text in texts):
        notice_once(t("notice.unreadable_character"), st.info, icon=":material/broken_image:")
