"""The display settings: projector mode and palette, applied to the page and to figures."""

from __future__ import annotations

import dataclasses

import streamlit as st

from attention_core.figures import PALETTE_COLOURS, PALETTES, PROJECTOR, FigureStyle, FigureText

from .language import option_label, t
from .settings import DISPLAY_MODES


def projector_mode() -> bool:
    """True when the display is set up for a projector (large type everywhere)."""
    return st.session_state.get("display") == "projector"


def figure_style() -> FigureStyle:
    """The look of figures: palette and, in projector mode, large type and thick gaps."""
    palette = st.session_state.get("palette", "blue-red")
    palette = palette if palette in PALETTES else "blue-red"
    base = PROJECTOR if projector_mode() else FigureStyle()
    return dataclasses.replace(base, palette=palette)


PROJECTOR_CSS = (
    "<style>html { font-size: 20px; } [data-testid='stSidebar'] { min-width: 340px; }"
    " h1 { font-size: 2.2rem !important; }"
    " [data-testid='stHeader'] { height: 3rem; background: transparent; }"
    " [data-testid='stMainBlockContainer'] { padding: 3rem 1rem 2rem 1rem; }</style>"
)
"""Projector mode: Streamlit sizes its text in rem, so a larger root font scales the whole page;
narrow page margins leave the width to the matrices (1280 × 720 has none to spare)."""
SIDEBAR_CSS = "<style>[data-testid='stSidebar'] { transition: transform 0.3s; }</style>"
"""Both modes: the sidebar takes a new width at once. Streamlit animates a change of its width
over 0.3 s, and plotly.js drew every chart again at each step of that animation when projector
mode widened it (tests/browser/test_single_drawing.py). Opening the sidebar still slides it in;
closing it hides it at once."""
STALE_CSS = (
    "<style>[data-testid='stElementContainer'][data-stale='true']"
    " { transition: none !important; opacity: 1 !important; }</style>"
)
"""Both modes: old content does not fade while a rerun is on its way. From the start of a rerun
until an element's new copy arrives, Streamlit marks it stale and starts an opacity transition
to a third, delayed by 0.5 s. A control's rerun at 16 tokens ends long before that, so nothing
faded; yet Chromium gave each of the page's 40 or so elements a layer of its own and took it
back on every change, and painted the main area twice more: about a tenth of the browser's work
per dk move (benchmarks/README.md). A longer rerun is still shown by Streamlit's "Running…" sign
and by the pages' own "Working…" spinners around their computations."""


def panels(spec: int | list[float], stack: bool | None = None, **options) -> list:
    """Places for figures: side by side (`st.columns(spec)`, a count or relative widths), or one
    under the other when `stack` (by default on a projector, where side-by-side figures would be
    too narrow for their labels)."""
    count = spec if isinstance(spec, int) else len(spec)
    if stack is None:
        stack = projector_mode()
    if stack or count == 1:
        return [st.container() for _ in range(count)]
    return st.columns(spec, **options)


DISPLAY_SECTION_OPEN = "display-section-open"
"""Session flag: projector mode was on in this session, so the Display section is drawn open.
It stays set: Streamlit makes a new expander when `expanded` changes, which would close the
section under the pointer of someone switching back to Screen."""


def display_controls(sidebar) -> None:
    if projector_mode():
        st.session_state[DISPLAY_SECTION_OPEN] = True
    with sidebar.expander(t("control.display_section"), expanded=st.session_state.get(DISPLAY_SECTION_OPEN, False)):
        st.radio(
            t("control.display"),
            DISPLAY_MODES,
            format_func=option_label("display"),
            key="display",
            horizontal=True,
            persist_state="session",
        )
        st.selectbox(
            t("control.palette"),
            list(PALETTES),
            format_func=option_label("palette"),
            key="palette",
            help=t("control.palette.help"),
            persist_state="session",
        )
    st.html(SIDEBAR_CSS + STALE_CSS + (PROJECTOR_CSS if projector_mode() else ""))


def figure_text() -> FigureText:
    """The words inside figures, in the current language."""
    return FigureText(
        query=t("figure.query"),
        key=t("figure.key"),
        feature=t("figure.feature"),
        value=t("figure.value"),
        masked=t("figure.masked"),
        allowed=t("figure.allowed"),
        block_max=t("figure.block_max"),
        block_mean=t("figure.block_mean"),
        blocks=t("figure.blocks"),
        labels=tuple((name, t(f"matrix.{name}")) for name in ("masked_scores", "weights")),
    )


def colour_words() -> dict[str, str]:
    """The colours of the active palette, named in the current language: ``negative``, ``zero``
    and ``positive`` for signed matrices, ``low`` and ``high`` for weights (placeholders of
    sentences that describe a heatmap's colours)."""
    names = PALETTE_COLOURS[figure_style().palette]
    return {role: t(f"colour.{name}") for role, name in names.items()}

