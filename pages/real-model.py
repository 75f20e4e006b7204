"""Inside a real model: every head of a pretrained encoder (all-MiniLM-L6-v2), through the same engine."""

import streamlit as st

from attention_core import STAGES, MaskSpec
from attention_core.figures.cell import CellFigureText, cell_locator, dot_product_latex, softmax_bars, softmax_latex
from attention_core.figures.real_model import RealModelFigureText, embedding_strip, weights_mosaic
from attention_core.lessons.cell import follow_cell
from attention_core.real_model import checkpoint
from attention_core.real_model.forward import run_sentence
from attention_core.real_model.heads import head_trace, remask_head, shown_positions
from ui.cache import memo
from ui.controls import controls
from ui.display import colour_words, figure_text, panels
from ui.first_run import run_through_app
from ui.language import option_label, t
from ui.notices import unreadable_character_notice
from ui.url import REAL_MODEL_PARTS
from ui.views import (
    chart,
    checkpoint_problem_and_stop,
    choice_strip,
    fully_masked_notice,
    install_notice_and_stop,
    matrix_views,
    part_strip,
    token_picker,
)

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py


MAX_LENGTH = 64  # longest input drawn here, padding included: 72 heads of 64 × 64 are already 300 000 cells
STAGE_NAMES = [stage.name for stage in STAGES]


def formulas() -> dict[str, str]:
    """The real layer's own formulas where they differ from the paper's plain ones; the words
    in their subscripts follow the interface language."""
    word, position, segment = (t(f"real_model.formula.{name}") for name in ("word", "position", "segment"))
    return {
        "embeddings": rf"X^{{(1)}} = \mathrm{{LayerNorm}}(E_{{\text{{{word}}}}} + E_{{\text{{{position}}}}}"
        rf" + E_{{\text{{{segment}}}}}),\qquad X^{{(\ell+1)}} = \mathrm{{Layer}}_\ell(X^{{(\ell)}})",
        "qkv": r"Q_h = XW^Q_h + b^Q_h,\quad K_h = XW^K_h + b^K_h,\quad V_h = XW^V_h + b^V_h",
    }


def pooling_formula(layers: int) -> str:
    """Mean over the real tokens of the last layer's output X^(layers + 1), scaled to length 1."""
    real = t("real_model.formula.real")
    return (
        rf"e = \frac{{\bar x}}{{\lVert \bar x \rVert}},\qquad \bar x = \frac{{1}}{{n_{{\text{{{real}}}}}}}"
        rf"\sum_{{i\ \text{{{real}}}}} X^{{({layers + 1})}}_i"
    )

CHART_CONFIG = {"displaylogo": False}


def checkpoint_or_stop() -> str:
    """The installed checkpoint's folder; without one, say how to install it and stop the page."""
    folder = checkpoint.locate_checkpoint()
    if folder is None:
        install_notice_and_stop("real_model", checkpoint.INSTALL_COMMAND)
    return str(folder)


def run_or_stop(folder: str, text: str, pad_to: int):
    """The cached forward pass; a broken or different checkpoint is explained, not a traceback."""
    try:
        return memo(run_sentence, folder, text, pad_to, MAX_LENGTH)
    except Exception as problem:
        checkpoint_problem_and_stop(
            problem, "real_model", checkpoint.ERROR_CODES, "safetensors, tokenizers", checkpoint.INSTALL_COMMAND
        )


def sentence(settings) -> str:
    """The page's own sentence, or the sidebar's when it is left empty."""
    own = st.text_input(
        t("real_model.text"),
        key="rm_text",
        placeholder=t("real_model.text.placeholder"),
        help=t("real_model.text.help"),
        persist_state="session",
    )
    unreadable_character_notice(own)
    if own.strip():
        return own
    if settings.query_text.strip():
        st.caption(t("real_model.cross_note"))
    return settings.text


TABLE_CHARACTER_WIDTH = 9  # pixels per character of the table's font, generous (wide CJK characters count twice)
TABLE_CELL_PADDING = 28  # pixels of a table cell's padding and sort icon


def token_column_width(cells: list[str]) -> int:
    """Pixels for a column of the token table showing its longest cell uncut."""
    characters = max(sum(2 if ord(char) > 0x2E80 else 1 for char in cell) for cell in cells)
    return TABLE_CHARACTER_WIDTH * characters + TABLE_CELL_PADDING


def token_table(run) -> None:
    """The WordPiece tokens with their ids, one column per position."""
    encoding = run.encoding
    padding = encoding.length - encoding.real_length
    extra = t("real_model.tokens.padding", count=padding, length=encoding.length) if padding else ""
    st.markdown(t("real_model.tokens.explain", real=encoding.real_length, padding=extra))
    columns = {"": [t("real_model.tokens.row.token"), t("real_model.tokens.row.id")]}
    ids = encoding.ids.tolist()
    columns.update({str(p): [token, str(ids[p])] for p, token in enumerate(encoding.tokens)})
    widths = {name: st.column_config.Column(width=token_column_width(cells)) for name, cells in columns.items()}
    st.dataframe(columns, hide_index=True, key="rm-tokens", column_config=widths)
    if "[UNK]" in encoding.tokens:
        st.caption(t("real_model.tokens.unknown"))


def stage_text(stage_name: str, view, run, layer: int) -> None:
    """The sentences under a stage's formula, with this head's sizes."""
    config = run.config
    values = dict(
        layer=layer + 1,
        head=view.head + 1,
        n=len(view.query_tokens),
        dk=config.dk,
        d_model=config.d_model,
        root=config.sqrt_dk,
        scale=view.attention.scale,
    )
    if stage_name == "embeddings":
        origin = t("real_model.stage.embeddings.first" if layer == 0 else "real_model.stage.embeddings.later")
        st.markdown(t("real_model.stage.embeddings.explain", origin=origin + " ", **values))
    elif stage_name == "masked_scores" and run.encoding.is_real.all():
        st.markdown(t("real_model.stage.masked_scores.none"))
    else:
        st.markdown(t(f"real_model.stage.{stage_name}.explain", **values))
    if stage_name in ("masked_scores", "weights", "output"):
        fully_masked_notice(view)


def one_head(run, layer: int, head: int, hide_special: bool) -> None:
    """The chosen head's stages, one at a time, with the toy pages' heatmaps and tables."""
    st.subheader(t("real_model.pick.title"))
    st.markdown(t("real_model.pick.explain"))
    view = head_trace(run, layer, head, hide_special=hide_special)
    stage_name = choice_strip(t("real_model.stage"), STAGE_NAMES, "rm_stage", "weights", "stage.short")
    stage = STAGES[STAGE_NAMES.index(stage_name)]
    if stage_name == "embeddings":
        st.subheader(t("real_model.stage.embeddings.title", layer=layer + 1))
    else:
        st.subheader(f"{t('real_model.chosen', layer=layer + 1, head=head + 1)} · {t(f'stage.{stage_name}.title')}")
    st.latex(formulas().get(stage_name, stage.formula))
    stage_text(stage_name, view, run, layer)
    if hide_special and stage_name in ("weights", "output"):
        st.caption(t("real_model.hidden_note"))
    matrix_views(view, stage.matrices, key="rm-step")


MASK_TRIALS = ("causal", "window", "same_sentence")


def mask_trial(run, layer: int, head: int) -> None:
    """The mask lab on the chosen head: add masks to its real padding mask and see the weights."""
    st.subheader(t("real_model.masks.title"))
    st.markdown(t("real_model.masks.explain"))
    chosen = st.pills(
        t("real_model.masks.pick"),
        MASK_TRIALS,
        selection_mode="multi",
        format_func=option_label("mask_lab.part"),
        key="rm_masks",
        persist_state="session",
    )
    window = None
    if "window" in chosen:
        window = st.slider(t("mask_lab.window"), 1, run.encoding.length, 2, key="rm_window", persist_state="session")
    spec = MaskSpec(causal="causal" in chosen, window=window, same_sentence="same_sentence" in chosen)
    if spec.is_empty:
        st.caption(t("real_model.masks.none"))
        return
    trial = remask_head(run, layer, head, spec)
    fully_masked_notice(trial)
    matrix_views(trial, ("masked_scores", "weights"), key="rm-masks")


def one_cell(run, layer: int, head: int) -> None:
    """Follow one cell (i, j) of the chosen head, with the page "Follow one cell"'s figures."""
    st.subheader(t("real_model.cell.title"))
    full = head_trace(run, layer, head)  # every position: the softmax of a row needs all its keys
    labels = full.query_labels
    st.markdown(t("real_model.cell.explain", dk=run.config.dk))
    picker_column, locator_column = panels([2, 3], gap="large")  # stacked on a projector
    with picker_column:
        i = token_picker(t("real_model.cell.query"), labels, "rm_cell_i", 1)
        j = token_picker(t("real_model.cell.key"), labels, "rm_cell_j", 2)
    cell = follow_cell(full.attention, i, j)  # a few hundred multiplications: no cache needed
    with locator_column:
        chart(
            cell_locator(full, cell, text=figure_text(), title=t("real_model.cell.locator", i=i, j=j)),
            key="rm-cell-locator",
            config=CHART_CONFIG,
        )
    raw, scaled, mask, weight = st.columns(4)
    raw.metric(t("real_model.cell.metric.raw"), cell.raw_score, format="%.4f", border=True)
    scaled.metric(t("real_model.cell.metric.scaled"), cell.scaled_score, format="%.4f", border=True)
    mask.metric(t("real_model.cell.metric.mask"), int(cell.allowed), border=True)
    weight.metric(t("real_model.cell.metric.weight"), cell.weight, format="%.4f", border=True)
    st.latex(dot_product_latex(cell))
    st.latex(softmax_latex(cell))
    words = CellFigureText(
        key=t("real_model.figure.key_token"),
        exp=t("real_model.figure.exp"),
        weight=t("real_model.figure.weight"),
        masked=t("figure.masked"),
    )
    chart(
        softmax_bars(cell, labels, text=words, title=t("real_model.cell.softmax", i=i)),
        key="rm-cell-softmax",
        config=CHART_CONFIG,
    )


def sentence_embedding(run, words: RealModelFigureText) -> None:
    """The last layer's token vectors pooled into the sentence's one embedding."""
    st.subheader(t("real_model.embedding.title"))
    st.latex(pooling_formula(run.config.num_layers))
    st.markdown(t("real_model.embedding.explain", real=run.encoding.real_length, d_model=run.config.d_model))
    chart(
        embedding_strip(run, text=words, title=t("real_model.embedding.figure", d_model=run.config.d_model)),
        key="rm-embedding",
        config=CHART_CONFIG,
    )


def show_part() -> str:
    """Which part is shown below the overview. Shown together they were four charts and four
    formulas under the overview's 72 heatmaps, every one drawn again by the browser on any change
    of the head, the language or the display (benchmarks/README.md, "one part at a time")."""
    return part_strip("real_model.part", REAL_MODEL_PARTS, "rm_part")


settings = controls(uses={"sentence"})  # the trained model has its own sizes and weights
st.title(t("page.real_model"))
st.caption(t("real_model.tagline"))
folder = checkpoint_or_stop()

text_column, pad_column, hide_column = st.columns([5, 3, 3], vertical_alignment="bottom", gap="medium")
with text_column:
    text = sentence(settings)
pad_to = pad_column.slider(
    t("real_model.pad"), 0, MAX_LENGTH, 0, key="rm_pad", help=t("real_model.pad.help"), persist_state="session"
)
hide_special = hide_column.toggle(
    t("real_model.hide_special"), key="rm_hide", help=t("real_model.hide_special.help"), persist_state="session"
)
if not text.strip():
    st.info(t("real_model.empty"))
    st.stop()
run = run_or_stop(folder, text, pad_to)
config = run.config
st.caption(
    t("real_model.sizes", layers=config.num_layers, heads=config.num_heads, d_model=config.d_model, dk=config.dk,
      root=config.sqrt_dk)
    + " "
    + t("real_model.sidebar_note")
)
if run.encoding.dropped:
    st.warning(t("real_model.truncated", limit=MAX_LENGTH, dropped=run.encoding.dropped))

st.subheader(t("real_model.tokens.title"))
token_table(run)

layer_column, head_column = st.columns([6, 12], vertical_alignment="bottom")
layer, head = (
    column.segmented_control(
        t(f"real_model.{name}"),
        range(count),
        format_func=lambda index: str(index + 1),  # numbered from 1 on screen
        default=0,
        required=True,
        key=f"rm_{name}",
        persist_state="session",
        width="stretch",
    )
    for column, name, count in ((layer_column, "layer", config.num_layers), (head_column, "head", config.num_heads))
)

st.subheader(t("real_model.overview.title"))
st.markdown(t("real_model.overview.explain", **colour_words()))
words = RealModelFigureText(
    layer=t("real_model.figure.layer"),
    head=t("real_model.figure.head"),
    query=t("figure.query"),
    key=t("figure.key"),
    weight=t("real_model.figure.weight"),
    dimension=t("real_model.figure.dimension"),
    value=t("figure.value"),
)
chart(
    weights_mosaic(run, shown_positions(run, hide_special), chosen=(layer, head), text=words),
    key="rm-overview",
    config=CHART_CONFIG,
)

st.divider()
parts = {
    "one_head": lambda: one_head(run, layer, head, hide_special),
    "cell": lambda: one_cell(run, layer, head),
    "masks": lambda: mask_trial(run, layer, head),
    "embedding": lambda: sentence_embedding(run, words),
}
parts[show_part()]()
