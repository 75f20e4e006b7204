"""Follow one cell (i, j): from q_i and k_j to its weight and its share of output row i."""

import math
from dataclasses import dataclass

import streamlit as st

from attention_core.figures.cell import (
    MAX_KEYS_IN_LEGEND,
    CellFigureText,
    cell_locator,
    contribution_bars,
    dot_product_latex,
    mask_latex,
    output_latex,
    product_bars,
    scale_latex,
    softmax_bars,
    softmax_latex,
    vector_bars,
)
from attention_core.lessons.cell import CellTrace, follow_cell
from attention_core.toy import ToySettings
from ui.cache import trace_or_stop
from ui.controls import controls
from ui.display import figure_text, panels
from ui.first_run import run_through_app
from ui.language import t
from ui.lesson_views import untrained_note
from ui.url import CELL_PARTS
from ui.views import chart, escape_markdown, part_strip, token_picker, view_picker

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

CELL_MAX_TOKENS = 256  # longer input is cut (with a notice): one bar per key in the softmax and output steps

DEFAULT_CELL = {"cell_i": 1, "cell_j": 0}  # a first visit: the second query token looking at the first key
PLOT_CONFIG = {"displaylogo": False}


def cell_text() -> CellFigureText:
    return CellFigureText(
        feature=t("follow_cell.figure.feature"),
        key=t("follow_cell.figure.key"),
        product=t("follow_cell.figure.product"),
        exp=t("follow_cell.figure.exp"),
        weight=t("follow_cell.figure.weight"),
        masked=t("figure.masked"),
        output=t("follow_cell.figure.output_name"),
        contribution=t("follow_cell.figure.contribution"),
    )


def key_numbers(cell: CellTrace) -> None:
    """The cell's chain of numbers as metrics: raw → scaled → mask → exp → weight."""
    raw, scaled, mask, exp, weight = st.columns(5)
    raw.metric(t("follow_cell.metric.raw"), cell.raw_score, format="%.4f", border=True, height="stretch")
    scaled.metric(t("follow_cell.metric.scaled"), cell.scaled_score, format="%.4f", border=True, height="stretch")
    mask.metric(
        t("follow_cell.metric.mask"),
        int(cell.allowed),
        delta=t("follow_cell.metric.allowed") if cell.allowed else t("follow_cell.metric.masked"),
        delta_color="green" if cell.allowed else "red",
        delta_arrow="off",
        border=True,
        height="stretch",
    )
    exp.metric(t("follow_cell.metric.exp"), float(cell.exp_row[cell.j]), format="%.4f", border=True, height="stretch")
    weight.metric(t("follow_cell.metric.weight"), cell.weight, format="%.4f", border=True, height="stretch")


def row_table(cell: CellTrace, key_labels: list[str]) -> None:
    """Every number of row i's softmax, one line per key."""
    numbers = {
        t("follow_cell.table.score"): cell.row_scores,
        t("follow_cell.table.shifted"): cell.shifted_scores,
        t("follow_cell.table.exp"): cell.exp_row,
        t("follow_cell.table.weight"): cell.weights_row,
    }
    st.dataframe(
        {t("follow_cell.table.key"): key_labels, t("follow_cell.table.allowed"): cell.row_allowed, **numbers},
        hide_index=True,
        column_config={name: st.column_config.NumberColumn(format="%.4f") for name in numbers},
        key="cell-row-table",
    )


@dataclass(frozen=True)
class Shown:
    """What the steps read: the settings, the cell, and its tokens' labels and names."""

    settings: ToySettings
    cell: CellTrace
    query_labels: list[str]
    key_labels: list[str]
    words: CellFigureText

    @property
    def plain(self) -> dict:
        """i, j and their tokens' labels, for figure titles."""
        i, j = self.cell.i, self.cell.j
        return {"i": i, "j": j, "query_token": self.query_labels[i], "key_token": self.key_labels[j]}

    @property
    def names(self) -> dict:
        """The same with the labels in bold, for Markdown sentences."""
        plain = self.plain
        return {
            **plain,
            "query_token": f"**{escape_markdown(plain['query_token'])}**",
            "key_token": f"**{escape_markdown(plain['key_token'])}**",
        }


def explain_row(shown: Shown, step: str, **numbers) -> None:
    """A step's sentence about row i, or a warning when every key of the row is masked."""
    if shown.cell.fully_masked:
        st.warning(t(f"follow_cell.step.{step}.fully_masked", **shown.names))
    else:
        st.markdown(t(f"follow_cell.step.{step}.explain", **numbers, **shown.names))


def show_step() -> str:
    """Which step of the cell's chain is shown under its numbers. Shown together they were five
    charts and five formulas, every one drawn again by the browser on any change of the cell, of
    dk or of the display (benchmarks/README.md, "the cell page one step at a time")."""
    return part_strip("follow_cell.part", CELL_PARTS, "cell_part")


def dot_step(shown: Shown) -> None:
    """① q_i · k_j: both vectors and their products, feature by feature."""
    cell, words = shown.cell, shown.words
    st.subheader(t("follow_cell.step.dot.title"))
    st.latex(dot_product_latex(cell))
    vectors_column, products_column = panels(2)
    with vectors_column:
        title = t("follow_cell.figure.vectors", **shown.plain)
        chart(
            vector_bars(cell, shown.query_labels[cell.i], shown.key_labels[cell.j], text=words, title=title),
            key="cell-vectors",
            config=PLOT_CONFIG,
        )
    with products_column:
        chart(
            product_bars(cell, text=words, title=t("follow_cell.figure.products", raw=cell.raw_score)),
            key="cell-products",
            config=PLOT_CONFIG,
        )
    st.markdown(t("follow_cell.step.dot.explain", raw=cell.raw_score, **shown.names))


def scale_step(shown: Shown) -> None:
    """② The raw score times 1/√dk."""
    cell, settings = shown.cell, shown.settings
    st.subheader(t("follow_cell.step.scale.title"))
    st.latex(scale_latex(cell, settings.dk))
    st.markdown(t("follow_cell.step.scale.explain", dk=settings.dk, scale=cell.scale))
    if settings.projection == "identity" and not settings.query_text.strip():
        st.caption(t("follow_cell.step.scale.identity", root=math.sqrt(settings.dk)))


def mask_step(shown: Shown) -> None:
    """③ Whether query i may look at key j: the scaled score, or −∞."""
    cell, names = shown.cell, shown.names
    st.subheader(
        t(
            "follow_cell.step.mask.title",
            i=cell.i,
            j=cell.j,
            query_token=escape_markdown(shown.query_labels[cell.i]),
            key_token=escape_markdown(shown.key_labels[cell.j]),
        )
    )
    st.latex(mask_latex(cell))
    if shown.settings.mask.is_empty:
        st.markdown(t("follow_cell.step.mask.none", scaled=cell.scaled_score))
    elif cell.allowed:
        st.success(t("follow_cell.step.mask.allowed", scaled=cell.scaled_score, **names))
    else:
        st.info(t("follow_cell.step.mask.masked", scaled=cell.scaled_score, **names), icon=":material/block:")


def softmax_step(shown: Shown) -> None:
    """④ Row i's softmax, as a chart or as its numbers."""
    cell, i = shown.cell, shown.cell.i
    st.subheader(t("follow_cell.step.softmax.title", i=i))
    st.latex(softmax_latex(cell))
    explain_row(shown, "softmax", row_max=cell.row_max, row_sum=cell.row_sum, weight=cell.weight)
    softmax_views = {"chart": t("follow_cell.tab.chart"), "table": t("follow_cell.tab.table", i=i)}
    if view_picker(softmax_views, key="cell-softmax-tab", label=t("follow_cell.tab.label", i=i)) == "chart":
        softmax_title = "follow_cell.figure.softmax.fully_masked" if cell.fully_masked else "follow_cell.figure.softmax"
        chart(
            softmax_bars(cell, shown.key_labels, text=shown.words, title=t(softmax_title, i=i)),
            key="cell-softmax",
            config=PLOT_CONFIG,
        )
    else:
        row_table(cell, shown.key_labels)


def output_step(shown: Shown) -> None:
    """⑤ Output row i as the weighted sum of the value rows, key j's share outlined."""
    cell = shown.cell
    st.subheader(t("follow_cell.step.output.title", i=cell.i))
    st.latex(output_latex(cell))
    explain_row(shown, "output", weight=cell.weight)
    chart(
        contribution_bars(cell, shown.key_labels, text=shown.words, title=t("follow_cell.figure.output", i=cell.i)),
        key="cell-output",
        config=PLOT_CONFIG,
    )
    if len(shown.key_labels) > MAX_KEYS_IN_LEGEND:
        st.caption(t("follow_cell.figure.output.no_legend", limit=MAX_KEYS_IN_LEGEND))


settings = controls(max_tokens=CELL_MAX_TOKENS)
st.title(t("page.follow_cell"))
st.markdown(t("follow_cell.intro"))
trace = trace_or_stop(settings)
untrained_note()  # the toy weights are random: say so, and link a trained model
attention = trace.attention
query_labels, key_labels = trace.query_labels, trace.key_labels

picker_column, locator_column = panels([2, 3], gap="large")  # stacked on a projector
with picker_column:
    i = token_picker(
        t("follow_cell.query"), query_labels, "cell_i", DEFAULT_CELL["cell_i"], t("follow_cell.query.help")
    )
    j = token_picker(t("follow_cell.key"), key_labels, "cell_j", DEFAULT_CELL["cell_j"], t("follow_cell.key.help"))
    if trace.is_cross_attention:
        st.caption(t("follow_cell.cross_note", n=len(query_labels), m=len(key_labels)))
cell = follow_cell(attention, i, j)  # a few dozen multiplications: no cache needed
shown = Shown(settings, cell, query_labels, key_labels, cell_text())
with picker_column:
    st.markdown(t("follow_cell.cell_meaning", **shown.names))
with locator_column:
    chart(
        cell_locator(trace, cell, text=figure_text(), title=t("follow_cell.locator.title", **shown.plain)),
        key="cell-locator",
        config=PLOT_CONFIG,
    )
key_numbers(cell)

steps = {"dot": dot_step, "scale": scale_step, "mask": mask_step, "softmax": softmax_step, "output": output_step}
steps[show_step()](shown)
