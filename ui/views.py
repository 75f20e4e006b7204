"""Reusable blocks of page content: a matrix shown as a heatmap with its table."""

from __future__ import annotations

import streamlit as st

from attention_core import ToyTrace
from attention_core.figures import heatmap
from attention_core.frames import matrix_frame

from .state import figure_text, t

NARROW_PANEL_COLUMNS = 6
"""In a stage that shows matrices side by side, cells are too narrow for printed numbers
beyond this many columns (the table tab has them all)."""


def matrix_view(trace: ToyTrace, name: str, key: str, side_by_side: bool = False) -> None:
    """The recorded matrix `name` as a heatmap, with a tab holding its exact numbers."""
    heatmap_tab, table_tab = st.tabs([t("tab.heatmap"), t("tab.table")])
    with heatmap_tab:
        narrow = side_by_side and trace.matrix(name).shape[-1] > NARROW_PANEL_COLUMNS
        figure = heatmap(trace, name, text=figure_text(), show_numbers=False if narrow else None)
        st.plotly_chart(figure, key=f"{key}-{name}", config={"displaylogo": False})
    with table_tab:
        frame = matrix_frame(trace, name)
        st.dataframe(frame.style.format("{:.4f}") if name != "mask" else frame, key=f"{key}-{name}-table")


def fully_masked_notice(trace: ToyTrace) -> None:
    """Say which query rows have every key masked, and what the engine does with them."""
    rows = [label for label, flag in zip(trace.query_labels, trace.attention.fully_masked_rows, strict=True) if flag]
    if rows:
        st.warning(t("warning.fully_masked", rows=", ".join(rows)))
