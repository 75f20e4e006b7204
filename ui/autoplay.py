"""Autoplay: a slide show that advances the page on a timer."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st


def autoplay(seconds: float, advance: Callable[[], None]) -> None:
    """While drawn, call `advance()` every `seconds` and rerun the page (a slide show).

    A fragment that reruns on a timer; its first run only starts the clock, so that
    drawing the page does not itself advance it.
    """

    @st.fragment(run_every=seconds)
    def tick() -> None:
        now = time.monotonic()
        started = st.session_state.get("_autoplay_clock")
        if started is None or now - started < 0.9 * seconds:
            st.session_state.setdefault("_autoplay_clock", now)
            return
        st.session_state["_autoplay_clock"] = now
        advance()
        st.rerun(scope="app")

    tick()


def stop_autoplay_clock() -> None:
    """Forget the slide-show clock (autoplay is off), so that turning it on starts afresh."""
    st.session_state.pop("_autoplay_clock", None)
