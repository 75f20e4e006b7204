"""Type Q, K and V yourself and watch every stage of attention recomputed from them."""

import pandas as pd
import streamlit as st

from attention_core.lessons.custom import (
    EXAMPLES,
    MAX_SIZE,
    axis_names,
    cell_errors,
    cell_texts,
    custom_trace,
    dot_product_latex,
    parse_matrix,
    resize_cells,
)
from attention_core.stages import stage_by_name
from ui.controls import controls
from ui.first_run import run_through_app
from ui.language import language, option_label, t
from ui.views import escape_markdown, fully_masked_notice, matrix_view

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

# Session keys (plain values, not widgets; a page's bare strings would be drawn, hence comments):
CELLS = "your_numbers.cells"  # the typed tables {"q", "k", "v"}: lists of rows, as last seen in the editors
NAMES = "your_numbers.names"  # the example whose words label the axes (None: generic labels q0, k0, d0)
GENERATION = "your_numbers.generation"  # a counter in the editors' keys: loading an example starts fresh editors
DEFAULT_EXAMPLE = next(iter(EXAMPLES))
NARROW_COLUMN = 50  # pixels per table column when a table has more than 4 columns
SIZE_KEYS = {"n": ("q", 0), "dk": ("q", 1), "m": ("k", 0), "dv": ("v", 1)}  # size control → (table, axis)


def _table_size(table: list[list], axis: int) -> int:
    return len(table) if axis == 0 else len(table[0])


def _load_example(name: str) -> None:
    example = EXAMPLES[name]
    st.session_state[CELLS] = example.cells
    st.session_state[NAMES] = name if example.query_names else None
    st.session_state[GENERATION] = st.session_state.get(GENERATION, 0) + 1
    for size, (table, axis) in SIZE_KEYS.items():
        st.session_state[f"your_numbers.{size}"] = _table_size(example.cells[table], axis)


def _on_example() -> None:
    name = st.session_state.get("your_numbers.example")
    if name:
        _load_example(name)
        st.session_state["your_numbers.example"] = None


def _names(kind: str) -> list[str]:
    """Translated words of the current example for one axis kind (empty for generic labels)."""
    example = EXAMPLES.get(st.session_state.get(NAMES) or "")
    return [t(f"your_numbers.word.{word}") for word in getattr(example, f"{kind}_names", ())]


def matrix_editor(table: str, rows: list[list], row_labels: list[str], column_labels: list[str]) -> list[list]:
    """An editable text table for one matrix; returns its cells as typed (strings or None)."""
    st.markdown(t(f"your_numbers.table.{table}", rows=len(rows), columns=len(column_labels)))
    frame = pd.DataFrame(cell_texts(rows), index=row_labels, columns=column_labels, dtype=object)
    column_width = "small" if len(column_labels) <= 4 else NARROW_COLUMN  # 8 columns still fit half the page
    edited = st.data_editor(
        frame,
        key=f"your_numbers.editor.{table}.{st.session_state[GENERATION]}",
        num_rows="fixed",
        column_config={
            "_index": st.column_config.TextColumn(t(f"your_numbers.table.{table}.rows"), disabled=True),
            **{label: st.column_config.TextColumn(label, width=column_width) for label in column_labels},
        },
        width="stretch",
    )
    return edited.values.tolist()


def stage_block(stage: str, trace, matrices: tuple[str, ...], **values) -> None:
    """A stage's title, formula and explanation, then its matrices side by side."""
    st.markdown(f"#### {t(f'stage.{stage}.title')}")
    st.latex(stage_by_name(stage).formula)
    st.caption(t(f"your_numbers.explain.{stage}", **values))
    if len(matrices) == 1:
        matrix_view(trace, matrices[0], key=f"your_numbers-{stage}")
        return
    for column, name in zip(st.columns(len(matrices)), matrices, strict=True):
        with column:
            matrix_view(trace, name, key=f"your_numbers-{stage}")


settings = controls(uses=())  # the sidebar stays available for the other pages; this page uses none of it
st.title(t("page.your_numbers"))
st.caption(t("your_numbers.intro", limit=MAX_SIZE))

if CELLS not in st.session_state:
    _load_example(DEFAULT_EXAMPLE)
st.session_state.setdefault(GENERATION, 0)
cells = st.session_state[CELLS]
for size, (table, axis) in SIZE_KEYS.items():  # sizes follow tables preset through session state
    st.session_state.setdefault(f"your_numbers.{size}", _table_size(cells[table], axis))

example_column, *size_columns, causal_column = st.columns([3, 1, 1, 1, 1, 2], vertical_alignment="bottom")
example_column.selectbox(
    t("your_numbers.example"),
    list(EXAMPLES),
    index=None,
    format_func=option_label("your_numbers.example"),
    placeholder=t("your_numbers.example.placeholder"),
    key="your_numbers.example",
    on_change=_on_example,
)
sizes = {
    size: int(
        column.number_input(
            t(f"your_numbers.size.{size}"),
            min_value=1,
            max_value=MAX_SIZE,
            step=1,
            key=f"your_numbers.{size}",
            help=t(f"your_numbers.size.{size}.help"),
            persist_state="session",
        )
    )
    for column, size in zip(size_columns, SIZE_KEYS, strict=True)
}
causal = causal_column.toggle(t("your_numbers.causal"), key="your_numbers.causal", persist_state="session")

n, m, dk, dv = sizes["n"], sizes["m"], sizes["dk"], sizes["dv"]
labels = {
    "query": axis_names(_names("query"), n, "q"),
    "key": axis_names(_names("key"), m, "k"),
    "feature": axis_names(_names("feature"), dk, "d", numbered=False),
    "value": axis_names(_names("value"), dv, "d", numbered=False),
}
shapes = {"q": (n, dk, "query", "feature"), "k": (m, dk, "key", "feature"), "v": (m, dv, "key", "value")}

typed = {}
q_column, k_column = st.columns(2, gap="medium")  # Q and K side by side: they share the dk features
v_column, hint_column = st.columns(2, gap="medium")
for column, (table, (rows, columns, row_kind, column_kind)) in zip(
    (q_column, k_column, v_column), shapes.items(), strict=True
):
    with column:
        typed[table] = matrix_editor(
            table, resize_cells(cells.get(table, []), rows, columns), labels[row_kind], labels[column_kind]
        )
st.session_state[CELLS] = typed  # resizing keeps what was typed; page switches keep it too
with hint_column:
    st.caption(t("your_numbers.typing_hint"))
    st.markdown(t("your_numbers.try"))

errors = [error for table in shapes for error in cell_errors(typed[table], table.upper())]
if errors:
    kinds = {"Q": ("query", "feature"), "K": ("key", "feature"), "V": ("key", "value")}
    for error in errors[:6]:
        row_kind, column_kind = kinds[error.matrix]
        st.error(
            t(
                f"your_numbers.error.{error.code}",
                matrix=error.matrix,
                row=escape_markdown(labels[row_kind][error.row]),
                column=escape_markdown(labels[column_kind][error.column]),
                value=escape_markdown(str(error.value)),
            ),
            icon="✏️",
        )
    if len(errors) > 6:
        st.caption(t("your_numbers.error.more", count=len(errors) - 6))
    st.info(t("your_numbers.error.fix"))
    st.stop()

trace = custom_trace(
    parse_matrix(typed["q"], "Q"),
    parse_matrix(typed["k"], "K"),
    parse_matrix(typed["v"], "V"),
    causal=causal,
    query_labels=labels["query"],
    key_labels=labels["key"],
    feature_labels=labels["feature"],
    value_labels=labels["value"],
)

st.divider()
left, right = st.columns(2)
with left:
    stage_block("raw_scores", trace, ("raw_scores",), dk=dk)
with right:
    stage_block("scaled_scores", trace, ("scaled_scores",), dk=dk, scale=trace.attention.scale)
query_column, key_column, worked_column = st.columns([1, 1, 4], vertical_alignment="center")
# The language is part of the keys: a selectbox keeps showing its old option text otherwise.
i = query_column.selectbox(
    t("your_numbers.worked.query"),
    range(n),
    format_func=labels["query"].__getitem__,
    key=f"your_numbers.i.{language()}",
)
j = key_column.selectbox(
    t("your_numbers.worked.key"),
    range(m),
    format_func=labels["key"].__getitem__,
    key=f"your_numbers.j.{language()}",
)
with worked_column:
    st.latex(dot_product_latex(trace, i, j))
if causal:
    stage_block("masked_scores", trace, ("mask", "masked_scores"))
else:
    st.caption(t("your_numbers.no_mask"))
left, right = st.columns(2)
with left:
    stage_block("weights", trace, ("weights",))
with right:
    stage_block("output", trace, ("output",), n=n, dv=dv)
fully_masked_notice(trace)
