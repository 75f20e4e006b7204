"""Reusable blocks of page content: a matrix as a heatmap with its table, and the exports."""

from __future__ import annotations

import streamlit as st

from attention_core import ToyTrace
from attention_core.export import csv_zip_bytes, json_text, latex_matrix, markdown_table, npz_bytes
from attention_core.figures import MAX_DRAWN_SIDE, heatmap, restyle, standalone_html
from attention_core.frames import matrix_frame
from attention_core.stages import MATRICES

from .display import figure_style, figure_text
from .language import t

MARKDOWN_SPECIALS = "\\`*_{}[]()#+-.!|~<>$"


def escape_markdown(text: str) -> str:
    """User text (a token, a typed cell) made literal inside Markdown: no bold, link, HTML or
    formula can come from it, and line breaks cannot end a paragraph early."""
    text = " ".join(text.split())
    return "".join(f"\\{char}" if char in MARKDOWN_SPECIALS else char for char in text)


def token_picker(label: str, labels: list[str], key: str, default: int, help: str | None = None) -> int:
    """A selectbox over token positions 0..len(labels)−1, shown as "i:token".

    The position is kept when the sentence changes and clamped to the last token when the
    sentence gets shorter (a selectbox alone would fall back to its first option).
    """
    previous = st.session_state.get(key, default)
    if not isinstance(previous, int) or isinstance(previous, bool):
        previous = default
    st.session_state[key] = min(max(previous, 0), len(labels) - 1)
    return st.selectbox(
        label, range(len(labels)), format_func=labels.__getitem__, key=key, help=help, persist_state="session"
    )


def chart(figure, key: str, **options) -> None:
    """Draw a Plotly figure in the chosen display style (projector mode, palette).

    Every page draws through this, so the display settings apply to every figure.
    """
    config = {"displaylogo": False, **options.pop("config", {})}
    st.plotly_chart(restyle(figure, figure_style()), key=key, config=config, **options)


NARROW_PANEL_COLUMNS = 6
"""In a stage that shows matrices side by side, cells are too narrow for printed numbers
beyond this many columns (the table tab has them all)."""


ZOOM_SIDE = 24
"""Rows and columns of the zoom window that shows a large matrix cell by cell."""
TABLE_FULL_SIDE = 64
"""Up to this many rows and columns the table holds the whole matrix; beyond, the zoom window
(thousands of table cells are slow to send and impossible to read)."""


def matrix_view(trace: ToyTrace, name: str, key: str, side_by_side: bool = False, square: bool = False) -> None:
    """The recorded matrix `name` as a heatmap, with a tab holding its exact numbers.

    `square`: in projector mode, square cells sized for the type instead of a height that fits
    the screen (for pages where the matrix need not share the first screen).

    A large matrix gets a zoom window under its heatmap (and in its table) showing a chosen
    region's exact values; beyond MAX_DRAWN_SIDE the heatmap itself is drawn in blocks.
    """
    values = trace.matrix(name)
    large = max(values.shape) > TABLE_FULL_SIDE
    heatmap_tab, table_tab = st.tabs([t("tab.heatmap"), t("tab.table")])
    text, style = figure_text(), figure_style()
    with heatmap_tab:
        narrow = side_by_side and values.shape[-1] > NARROW_PANEL_COLUMNS
        figure = heatmap(trace, name, text=text, style=style, show_numbers=False if narrow or large else None)
        if square:
            figure = restyle(figure, style)
        st.plotly_chart(figure, key=f"{key}-{name}", config={"displaylogo": False})
        window = _zoom_window(values.shape, key=f"{key}-{name}") if large else None
        if window is not None:
            zoomed = heatmap(trace, name, text=text, style=style, window=window, title=t("zoom.title"))
            st.plotly_chart(zoomed, key=f"{key}-{name}-zoom", config={"displaylogo": False})
    with table_tab:
        if large:
            st.caption(t("zoom.table"))
        frame = matrix_frame(trace, name, window=window)
        number_format = {column: st.column_config.NumberColumn(format="%.4f") for column in frame.columns}
        st.dataframe(frame, column_config=None if name == "mask" else number_format, key=f"{key}-{name}-table")


def _zoom_window(shape: tuple[int, int], key: str) -> tuple[slice, slice]:
    """Sliders choosing the first row and column of the zoom window; returns its slices."""
    rows, columns = shape
    st.caption(t("zoom.explain", side=ZOOM_SIDE, limit=MAX_DRAWN_SIDE))
    row_column, column_column = st.columns(2)
    first_row = row_column.slider(t("zoom.first_row"), 0, max(0, rows - ZOOM_SIDE), 0, key=f"{key}-zoom-row")
    first_column = 0
    if columns > ZOOM_SIDE:
        first_column = column_column.slider(
            t("zoom.first_column"), 0, columns - ZOOM_SIDE, 0, key=f"{key}-zoom-column"
        )
    return slice(first_row, first_row + ZOOM_SIDE), slice(first_column, first_column + ZOOM_SIDE)


def fully_masked_notice(trace: ToyTrace) -> None:
    """Say which query rows have every key masked, and what the engine does with them."""
    rows = [label for label, flag in zip(trace.query_labels, trace.attention.fully_masked_rows, strict=True) if flag]
    if rows:
        st.warning(t("warning.fully_masked", rows=", ".join(map(escape_markdown, rows))))


MAX_SNIPPET_SIDE = 12
"""LaTeX and Markdown snippets are offered for matrices up to this many rows and columns."""


def export_panel(trace: ToyTrace, matrices: tuple[str, ...], key: str) -> None:
    """Downloads of every recorded matrix (.npz, CSV files, JSON), and for the matrices on
    screen a LaTeX / Markdown snippet and an offline HTML figure.

    Files are built only when their button is clicked (callables), not on every rerun.
    """
    with st.expander(t("export.title"), icon=":material/download:"):
        st.caption(t("export.all"))
        npz_column, csv_column, json_column = st.columns(3)
        npz_column.download_button(
            ".npz", data=lambda: npz_bytes(trace), file_name="attention.npz", mime="application/octet-stream",
            key=f"{key}-npz", on_click="ignore", icon=":material/data_array:", width="stretch",
        )
        csv_column.download_button(
            t("export.csv"), data=lambda: csv_zip_bytes(trace), file_name="attention-csv.zip",
            mime="application/zip", key=f"{key}-csv", on_click="ignore", icon=":material/table:", width="stretch",
        )
        json_column.download_button(
            "JSON", data=lambda: json_text(trace), file_name="attention.json", mime="application/json",
            key=f"{key}-json", on_click="ignore", icon=":material/data_object:", width="stretch",
        )
        text, style = figure_text(), figure_style()
        for name in matrices:
            values = trace.matrix(name)
            rows, columns = trace.axis_labels(name)
            st.markdown(f"**{escape_markdown(MATRICES[name].label)}** · {values.shape[0]} × {values.shape[1]}")
            if max(values.shape) <= MAX_SNIPPET_SIDE:
                latex_tab, markdown_tab = st.tabs(["LaTeX", "Markdown"])
                latex_tab.code(latex_matrix(values, rows, columns), language="latex")
                markdown_tab.code(markdown_table(values, rows, columns), language="markdown")
            else:
                st.caption(t("export.too_big", limit=MAX_SNIPPET_SIDE))
            st.download_button(
                t("export.html"),
                data=lambda name=name: standalone_html(heatmap(trace, name, text=text, style=style)),
                file_name=f"{name}.html", mime="text/html", key=f"{key}-{name}-html", on_click="ignore",
                icon=":material/code:",
            )
