"""Reusable blocks of page content: a matrix as a heatmap with its table, the exports, and what
a trained model's page says when its checkpoint is missing or broken."""

from __future__ import annotations

import base64
import logging
import math
import re
from collections.abc import Collection
from typing import NoReturn

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attention_core import ToyTrace, build_toy_trace
from attention_core.export import (
    MAX_TEXT_EXPORT_CELLS,
    csv_zip_bytes,
    json_text,
    latex_matrix,
    markdown_table,
    npz_bytes,
    text_export_fits,
)
from attention_core.figures import MAX_DRAWN_SIDE, heatmap, reserve_label_room, restyle, standalone_html
from attention_core.figures.look import with_app_look
from attention_core.figures.matrices import MAX_MARKED_SIDE
from attention_core.frames import matrix_frame
from attention_core.stages import MATRICES

from .cache import memo, memo_on
from .display import colour_words, figure_style, figure_text, panels, projector_mode
from .language import option_label, t
from .url import URL_PARAMS

MARKDOWN_SPECIALS = "\\`*_{}[]()#+-.!|~<>$"


def escape_markdown(text: str) -> str:
    """User text (a token, a typed cell) made literal inside Markdown: no bold, link, HTML or
    formula can come from it, and line breaks cannot end a paragraph early."""
    text = " ".join(text.split())
    return "".join(f"\\{char}" if char in MARKDOWN_SPECIALS else char for char in text)


def kept_int(key: str, default: int) -> int:
    """The whole number a widget kept under `key` in session state, else `default` (a link or
    an old session may have left anything there)."""
    value = st.session_state.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def choice_strip(label: str, options, key: str, default, labels: str, *, width: str = "stretch", place=None):
    """A required segmented control kept for the session, labelling option x with the string
    ``<labels>.<x>``. It opens on `default` unless a link or an earlier visit left a choice
    under `key`; `place` is a column to draw it in (the page's main area when None)."""
    st.session_state.setdefault(key, default)
    return (place or st).segmented_control(
        label, options, format_func=option_label(labels), required=True, key=key, persist_state="session", width=width
    )


def part_strip(labels: str, parts, key: str) -> str:
    """The control that picks which part of a page is shown, one at a time: a `choice_strip` over
    `parts` titled by the string `labels`, kept in the link under `key` and opening on its default."""
    return choice_strip(t(labels), parts, key, URL_PARAMS[key].default, labels)


def token_picker(
    label: str, labels: list[str], key: str, default: int, help: str | None = None,
    positions: list[int] | None = None, disabled: bool = False,
) -> int:
    """A selectbox over token positions 0..len(labels)−1 (or only `positions`), shown as "i:token".

    The position is kept when the sentence changes and clamped to the last token when the
    sentence gets shorter (a selectbox alone would fall back to its first option); with
    `positions`, to the last allowed one before it (or the first allowed).
    """
    options = list(range(len(labels))) if positions is None else sorted(positions)
    previous = kept_int(key, default)
    st.session_state[key] = max((p for p in options if p <= previous), default=options[0])
    return st.selectbox(
        label, options, format_func=labels.__getitem__, key=key, help=help, disabled=disabled,
        persist_state="session",
    )


def chart(figure, key: str, **options) -> None:
    """Draw a Plotly figure in the chosen display style (projector mode, palette).

    Every page draws through this, so the display settings apply to every figure.
    """
    draw(restyle(figure, figure_style()), key, **options)


def draw(figure, key: str, **options) -> None:
    """Send a figure built in the display style, ready to be drawn once in the browser.

    Its margins fit its labels (`reserve_label_room`), and it carries the app's look itself
    (`with_app_look`) instead of Streamlit's chart theme. Streamlit's chart hands plotly.js a
    second copy of every figure right after the first drawing; plotly.js redraws the whole
    figure if that copy holds a new template, typed arrays, or arrays without a
    `datarevision` (`browser_ready`). Without them the second pass costs next to nothing.
    """
    send(ready_spec(figure), key=key, **options)


def send(spec: dict, key: str, **options) -> None:
    """Send a spec made by `ready_spec` (`draw` without building it: a kept spec sent again)."""
    config = {"displaylogo": False, **options.pop("config", {})}
    st.plotly_chart(_ReadyFigure(spec), key=key, config=config, theme=None, **options)


def ready_spec(figure) -> dict:
    """The spec `draw` sends for `figure`: its labels' margins reserved, the app's look in it,
    ready to be drawn once (`browser_ready`), and its template null (sent as null: no template
    at all, not even Plotly's default)."""
    spec = browser_ready(with_app_look(reserve_label_room(figure).to_dict()))
    spec["layout"]["template"] = None  # browser_ready's layout is a new dict
    return spec


class _ReadyFigure(go.Figure):
    """A figure's final spec, handed to `st.plotly_chart` as it is.

    Every part of the spec comes from a figure Plotly has already validated. Wrapped in a
    plain `go.Figure`, it was deep-copied twice more (on construction, and when Streamlit
    asks for `to_dict()`): item by item for the lists `browser_ready` makes, 5–6 ms for the √dk
    page's histograms.
    """

    def __init__(self, spec: dict):
        super().__init__(layout={"template": {}}, _validate=False)  # an empty template: Plotly's default is not loaded
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec


MAX_LISTED_NUMBERS = 4096
"""Numeric arrays up to this size go to the browser as JSON lists; larger ones stay typed
arrays (base64), which are several times smaller but make plotly.js redraw the figure once
more when it first appears."""


def browser_ready(spec: dict) -> dict:
    """`spec` with its small typed arrays as lists and a fixed `datarevision`.

    plotly.js compares a figure with the copy it is handed next: a typed array always counts
    as changed, and so does a list that is a new object unless the layout has a
    `datarevision`. A chart's figure never changes while it is shown (a new figure is a new
    chart), so one fixed revision is true. Returns a new dict; the numbers are the same.
    """
    traces = [_listed(trace) for trace in spec["data"]]
    layout = {**_listed(spec["layout"]), "datarevision": 0}
    for name, axis in layout.items():
        if AXIS_NAME.match(name) and isinstance(axis, dict) and axis.get("autorange") == "reversed":
            count = _category_count(traces, name)
            if axis.get("type") == "category" and count:
                layout[name] = {**axis, "autorange": False, "range": [count - 0.5, -0.5]}
    return {**spec, "data": traces, "layout": layout}


AXIS_NAME = re.compile(r"([xy])axis(\d*)$")


def _category_count(traces: list[dict], axis_name: str) -> int:
    """How many categories the traces drawn on `axis_name` ("yaxis2") put on it.

    A reversed category axis is given its range outright, the one autorange would find:
    plotly.js writes the range it found back into the figure, and the copy it is handed
    next then differs from the first and is drawn again."""
    letter, number = AXIS_NAME.match(axis_name).groups()
    reference = letter + (number if number not in ("", "1") else "")
    categories: dict = {}
    for trace in traces:
        if (trace.get(f"{letter}axis") or letter) == reference and isinstance(trace.get(letter), list):
            categories.update(dict.fromkeys(trace[letter]))
    return len(categories)


def _listed(value):
    """`value` with every typed array of at most MAX_LISTED_NUMBERS numbers as a nested list."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            if array.size > MAX_LISTED_NUMBERS:
                return value
            if "shape" in value:
                array = array.reshape([int(size) for size in str(value["shape"]).split(",")])
            return array.tolist()
        return {key: _listed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_listed(item) for item in value]
    return value


NARROW_PANEL_COLUMNS = 6
"""In a stage that shows matrices side by side, cells are too narrow for printed numbers
beyond this many columns (the Table view has them all)."""


ZOOM_SIDE = 24
"""Rows and columns of the zoom window that shows a large matrix cell by cell."""
TABLE_FULL_SIDE = 64
"""Up to this many rows and columns the table holds the whole matrix; beyond, the zoom window
(thousands of table cells are slow to send and impossible to read)."""


def matrix_view(
    trace: ToyTrace,
    name: str,
    key: str,
    side_by_side: bool = False,
    highlight: tuple[int, int] | None = None,
    square: bool = False,
) -> None:
    """The recorded matrix `name` as a heatmap, with a table of its exact numbers a click away.

    `highlight` = (query i, key j) outlines what cell (i, j) is made of (see `heatmap`).
    `square`: in projector mode, square cells sized for the type instead of a height that fits
    the screen (for pages where the matrix need not share the first screen).

    A large matrix gets a third view, a zoom window showing a chosen region's cells exactly
    (the table shows the same window); beyond MAX_DRAWN_SIDE the heatmap itself is drawn
    in blocks. Only the chosen view is built and sent (`view_picker`): a change of settings repaints one figure,
    and a stage or the overview draws one figure per matrix (each one costs the browser
    about 0.05 s to mount, whatever its size: `benchmarks/figure_cost.py`).
    """
    values = trace.matrix(name)
    large = max(values.shape) > TABLE_FULL_SIDE
    views = {"heatmap": t("tab.heatmap"), **({"zoom": t("tab.zoom", side=ZOOM_SIDE)} if large else {}),
             "table": t("tab.table")}
    shown = view_picker(views, key=f"{key}-{name}-tab")
    text, style = figure_text(), figure_style()
    if shown == "heatmap":
        narrow = side_by_side and values.shape[-1] > NARROW_PANEL_COLUMNS
        show_numbers = False if narrow or large else None
        spec = memo_on(trace, _heatmap_spec, name, text, style, show_numbers, highlight, square)
        send(spec, key=f"{key}-{name}")
        if large:
            st.caption(t("zoom.hint"))
    elif shown == "zoom":
        window = _zoom_window(values.shape, key=f"{key}-{name}")
        zoomed = heatmap(trace, name, text=text, style=style, window=window, title=t("zoom.title"), highlight=highlight)
        draw(zoomed, key=f"{key}-{name}-zoom")
    else:
        window = None
        if large:
            st.caption(t("zoom.table"))
            window = _chosen_zoom_window(values.shape, key=f"{key}-{name}")
        frame = matrix_frame(trace, name, window=window)
        number_format = {column: st.column_config.NumberColumn(format="%.4f") for column in frame.columns}
        st.dataframe(frame, column_config=None if name == "mask" else number_format, key=f"{key}-{name}-table")


def view_picker(views: dict[str, str], key: str, label: str | None = None) -> str:
    """Which of a figure's views to show (`views`: name → label; the first is the default), as
    a row of buttons above it; returns the chosen name. Only the chosen view is built and sent.

    Not `st.tabs`: Streamlit draws a tab bar again on every rerun at about 12 ms of the
    browser's time, changed or not, a segmented control at about 1 ms
    (`benchmarks/widget_cost.py`), and a page shows up to twelve matrices. The choice is
    kept by name, so it survives a change of language; a view the figure no longer has (the
    zoom of a matrix that is now small) gives way to the default: Streamlit checks a kept
    value against the options and resets it, in the browser too.
    """
    return st.segmented_control(
        label or t("tab.label"),
        list(views),
        format_func=views.get,
        default=next(iter(views)),
        required=True,
        key=key,
        label_visibility="collapsed",
    )


def _heatmap_spec(trace, name: str, text, style, show_numbers: bool | None, highlight, square: bool) -> dict:
    """The spec `matrix_view` sends for its heatmap view: built once per trace and settings
    (`memo_on`), since a rerun that changes neither (the overview opened again, a stage
    revisited, a control that changes no figure) sends the same one. At 2,048 tokens the
    overview's twelve took about 60 % of its rerun to build."""
    figure = heatmap(trace, name, text=text, style=style, show_numbers=show_numbers, highlight=highlight)
    return ready_spec(restyle(figure, style) if square else figure)


def matrix_views(trace: ToyTrace, names: tuple[str, ...] | list[str], key: str) -> None:
    """Several recorded matrices, each a `matrix_view`: side by side, or one under the other on
    a projector (side by side, projector type would not fit their token labels)."""
    stack = projector_mode() or len(names) == 1
    for place, name in zip(panels(len(names), stack=stack), names, strict=True):
        with place:
            matrix_view(trace, name, key=key, side_by_side=not stack)


def _zoom_window(shape: tuple[int, int], key: str) -> tuple[slice, slice]:
    """Sliders choosing the first row and column of the zoom window; returns its slices.

    An axis that already fits in the window gets no slider (it would slide from 0 to 0,
    which Streamlit refuses): a wide matrix with few rows (Q at dk = 512) only scrolls across.
    The sliders keep their place while the Table view is chosen (its table shows the same window).
    """
    rows, columns = shape
    st.caption(t("zoom.explain", side=ZOOM_SIDE, limit=MAX_DRAWN_SIDE))
    row_column, column_column = st.columns(2)
    first_row = _window_start(rows, row_column, t("zoom.first_row"), key=f"{key}-zoom-row")
    first_column = _window_start(columns, column_column, t("zoom.first_column"), key=f"{key}-zoom-column")
    return _window(first_row, first_column)


def _window_start(length: int, column, label: str, key: str) -> int:
    """The zoom window's first index along one axis: 0 when the axis fits, else a slider's."""
    if length <= ZOOM_SIDE:
        return 0
    st.session_state[key] = _remembered_start(length, key)  # clamped: the sentence may be shorter now
    return column.slider(label, 0, length - ZOOM_SIDE, key=key, persist_state="session")


def _chosen_zoom_window(shape: tuple[int, int], key: str) -> tuple[slice, slice]:
    """The zoom window last chosen under the heatmap (the top-left corner if none was)."""
    rows, columns = shape
    return _window(_remembered_start(rows, f"{key}-zoom-row"), _remembered_start(columns, f"{key}-zoom-column"))


def _window(first_row: int, first_column: int) -> tuple[slice, slice]:
    return slice(first_row, first_row + ZOOM_SIDE), slice(first_column, first_column + ZOOM_SIDE)


def _remembered_start(length: int, key: str) -> int:
    """A zoom slider's kept value, within the axis it now slides along (the sentence may
    have become shorter since)."""
    return min(max(kept_int(key, 0), 0), max(length - ZOOM_SIDE, 0))


FULLY_MASKED_NAMED = 10
"""The fully masked rows named in the notice (the count says how many there are): a short
sentence is named whole, a long one stays a few lines."""
LONGEST_NAMED_LABEL = 24
"""Characters of a token label named in a notice (a pasted "word" may be thousands long)."""


def stage_numbers(trace: ToyTrace) -> dict[str, int | float]:
    """The numbers a stage's sentences quote, read from the trace itself: n queries, m keys, dk,
    dv, d_model (the embeddings' width: dk's with identity projections) and the scale."""
    attention = trace.attention
    return {
        "n": len(trace.query_tokens),
        "m": len(trace.key_tokens),
        "dk": attention.dk,
        "dv": attention.v.shape[-1],
        "d_model": trace.x_query.shape[-1],
        "scale": attention.scale,
    }


def stage_sentence(stage_name: str, numbers: dict[str, int | float]) -> str:
    """The plain sentence under a stage's formula (`stage.<name>.explain`), on every page that
    steps through the stages. `numbers` are the trace's (`stage_numbers`, which the page reads
    once for all its sentences), with any of the page's own (a head's number). The words no page
    chooses (the palette's colours, up to how many tokens a masked cell carries a ×) are added
    here, so that no page can leave one out."""
    return t(f"stage.{stage_name}.explain", **{"marked": MAX_MARKED_SIDE, **colour_words(), **numbers})


def fully_masked_notice(trace: ToyTrace) -> None:
    """Say how many query rows have every key masked (naming the first few), and what the
    engine does with them. Brief at any size: at 2,048 tokens a list of every row was a
    15,000-character warning."""
    flags = trace.attention.fully_masked_rows
    count = int(np.count_nonzero(flags))
    if not count:
        return
    labels = trace.query_labels
    named = [labels[i] for i in np.flatnonzero(flags)[:FULLY_MASKED_NAMED]]
    shown = [label if len(label) <= LONGEST_NAMED_LABEL else label[: LONGEST_NAMED_LABEL - 1] + "…" for label in named]
    rows = ", ".join(map(escape_markdown, shown)) + (", …" if count > len(named) else "")
    st.warning(t("warning.fully_masked", count=count, total=len(labels), rows=rows))


MAX_SNIPPET_SIDE = 12
"""LaTeX and Markdown snippets are offered for matrices up to this many rows and columns."""


def export_panel(trace: ToyTrace, matrices: tuple[str, ...], key: str) -> None:
    """Downloads of every recorded matrix (.npz, CSV files, JSON), and for the matrices on
    screen a LaTeX / Markdown snippet and an offline HTML figure.

    The panel's content is made only while it is open. Files are built only when their
    button is clicked (callables), not on every rerun. The callables hold the trace's small
    settings, not the trace: Streamlit keeps a session's download callables as long as the
    session (and 2 minutes after its tab closed), and a 2,048-token trace is 72 MB; on a click
    the trace comes from the shared cache (or is recomputed, identically). CSV and JSON only
    up to MAX_TEXT_EXPORT_CELLS.
    """
    settings = trace.settings

    def the_trace() -> ToyTrace:
        return memo(build_toy_trace, settings)

    panel = st.expander(t("export.title"), icon=":material/download:", key=f"{key}-export", on_change="rerun")
    if not panel.open:
        return  # closed: nothing in it is built or sent (its snippets are long text)
    text_fits = text_export_fits(trace)
    with panel:
        st.caption(t("export.all"))
        npz_column, csv_column, json_column = st.columns(3)
        npz_column.download_button(
            ".npz", data=lambda: npz_bytes(the_trace()), file_name="attention.npz",
            mime="application/octet-stream", key=f"{key}-npz", on_click="ignore", icon=":material/data_array:",
            width="stretch",
        )
        csv_column.download_button(
            t("export.csv"), data=lambda: csv_zip_bytes(the_trace()), file_name="attention-csv.zip",
            mime="application/zip", key=f"{key}-csv", on_click="ignore", icon=":material/table:", width="stretch",
            disabled=not text_fits,
        )
        json_column.download_button(
            "JSON", data=lambda: json_text(the_trace()), file_name="attention.json", mime="application/json",
            key=f"{key}-json", on_click="ignore", icon=":material/data_object:", width="stretch",
            disabled=not text_fits,
        )
        side = math.isqrt(MAX_TEXT_EXPORT_CELLS)
        n, m = len(trace.query_tokens), len(trace.key_tokens)
        st.caption(t("export.text_limit" if text_fits else "export.text_too_big", side=side, n=n, m=m))
        text, style = figure_text(), figure_style()
        for name in matrices:
            values = trace.matrix(name)
            rows, columns = trace.axis_labels(name)
            st.markdown(f"**{escape_markdown(MATRICES[name].label)}** · {values.shape[0]} × {values.shape[1]}")
            if max(values.shape) <= MAX_SNIPPET_SIDE:
                snippets = {"latex": "LaTeX", "markdown": "Markdown"}
                if view_picker(snippets, key=f"{key}-{name}-snippet", label=t("export.snippet")) == "latex":
                    st.code(latex_matrix(values, rows, columns), language="latex")
                else:
                    st.code(markdown_table(values, rows, columns), language="markdown")
            else:
                st.caption(t("export.too_big", limit=MAX_SNIPPET_SIDE))
            st.download_button(
                t("export.html"),
                data=lambda name=name: standalone_html(heatmap(the_trace(), name, text=text, style=style)),
                file_name=f"{name}.html", mime="text/html", key=f"{key}-{name}-html", on_click="ignore",
                icon=":material/code:",
            )


def install_notice_and_stop(strings: str, command: str) -> NoReturn:
    """A trained model's page without its checkpoint: what to install, the command, and stop.
    `strings` is the page's string prefix ("real_model", "decoder")."""
    st.info(t(f"{strings}.missing"))
    st.code(command, language="bash")
    st.stop()


def checkpoint_problem_and_stop(
    problem: Exception, strings: str, codes: Collection[str], libraries: str, command: str
) -> NoReturn:
    """A broken, different or unreadable checkpoint explained in the reader's language, with the
    command that reinstalls it, and stop the page. A problem whose `code` is in `codes` has its
    own sentence (filled from its details: file names, never the server's folders); a missing
    library is named; anything else gets a general sentence, and its own message, which may name
    the server's folders, goes to the server's log only."""
    code = getattr(problem, "code", None)
    if code in codes:
        st.error(t(f"{strings}.error.{code}", **problem.details))
    elif isinstance(problem, ImportError):
        st.error(t(f"{strings}.error.library", library=problem.name or libraries))
    else:
        logging.getLogger(__name__).error("the %s checkpoint failed", strings, exc_info=problem)
        st.error(t(f"{strings}.error.other"))
    st.code(command, language="bash")
    st.stop()
