"""Autoplay: a slide show that advances the page on a timer."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

ADVANCE_DUE = "_autoplay_advance_due"
"""Session key: the slide-show clock has run out and the page should show the next slide."""


def autoplay(seconds: float) -> None:
    """While drawn, ask for the next slide every `seconds` and rerun the page (a slide show).

    A fragment that reruns on a timer; its first run only starts the clock, so that drawing the
    page does not itself advance it. It does not move the page itself: the fragment also runs
    inside every full rerun, after the page's widgets are drawn, and Streamlit refuses a change
    to a drawn widget's value. It leaves a note that the page acts on, before drawing them, with
    `advance_if_due()`.
    """

    @st.fragment(run_every=seconds)
    def tick() -> None:
        now = time.monotonic()
        started = st.session_state.get("_autoplay_clock")
        if started is None or now - started < 0.9 * seconds:
            st.session_state.setdefault("_autoplay_clock", now)
            return
        st.session_state["_autoplay_clock"] = now
        st.session_state[ADVANCE_DUE] = True
        st.rerun(scope="app")

    tick()


def advance_if_due(advance: Callable[[], None], playing: bool) -> None:
    """Call `advance()` once if the slide show asked for the next slide and is still `playing`.
    Call it before drawing the widgets whose values `advance` changes."""
    if st.session_state.pop(ADVANCE_DUE, False) and playing:
        advance()


def stop_autoplay_clock() -> None:
    """Forget the slide-show clock (autoplay is off), so that turning it on starts afresh."""
    st.session_state.pop("_autoplay_clock", None)
