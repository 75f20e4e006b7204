"""Multi-head attention (paper §3.2.2): h smaller heads side by side, then W_O mixes them."""

from collections.abc import Callable

import streamlit as st

from attention_core import STAGES, InputError
from attention_core.figures.multihead import concat_heatmap, head_weights_grid, output_heatmap, w_o_heatmap
from attention_core.toy_multihead import (
    D_MODEL_CHOICES,
    HEADS_ERROR,
    MAX_HEADS,
    build_toy_multihead,
    clamp_heads,
    head_choices,
    head_size,
    head_trace,
)
from ui.cache import memo
from ui.controls import SETTINGS, controls
from ui.display import figure_style, figure_text
from ui.first_run import run_through_app
from ui.i18n import translate
from ui.language import language, t
from ui.lesson_views import untrained_note
from ui.url import MULTI_HEAD_PARTS, part_named_by_link
from ui.views import chart, choice_strip, fully_masked_notice, matrix_view, stage_numbers, stage_sentence

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

MULTI_HEAD_MAX_TOKENS = 64  # longer input is cut (with a notice): every head's weights are drawn side by side

HEAD_STAGES = [stage for stage in STAGES if stage.name != "embeddings"]  # X is shared by all heads
STAGE_NAMES = [stage.name for stage in HEAD_STAGES]
HEAD_QKV_FORMULA = r"Q_r = X W_r^Q,\quad K_r = X W_r^K,\quad V_r = X W_r^V"  # r: the head (i is a query)
MULTI_HEAD_FORMULA = (
    r"\begin{gathered}\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O \\"
    r"\mathrm{head}_r = \mathrm{Attention}(QW_r^Q,\ KW_r^K,\ VW_r^V),\quad r = 1, \dots, h\end{gathered}"
)
DEFAULT_D_MODEL, DEFAULT_HEADS = 64, 8
# The page's three parts are shown one at a time (MULTI_HEAD_PARTS): shown together they were fourteen
# heatmaps, every one drawn again by the browser when the sentence, the mask, the language or
# the display mode changed (benchmarks/README.md, "the multi-head and decoder pages one part at a time").
CHART_CONFIG = {"displaylogo": False}


def head_label() -> Callable[[int], str]:
    """A `format_func` naming head index i "head i+1" in the current language (bound now, see
    `ui.language.option_label`)."""
    lang = language()
    return lambda index: translate("multi_head.head", lang, number=index + 1)


def _move(step: int) -> None:
    index = STAGE_NAMES.index(st.session_state.get("mh_stage", STAGE_NAMES[0]))
    st.session_state["mh_stage"] = STAGE_NAMES[min(max(index + step, 0), len(STAGE_NAMES) - 1)]


def part_picker() -> str:
    """Which part of the page is shown (a link naming a head or a stage opens that head's)."""
    named = part_named_by_link({"one_head": ("mh_head", "mh_stage")}, MULTI_HEAD_PARTS[0])
    return choice_strip(t("multi_head.part"), MULTI_HEAD_PARTS, "mh_part", named, "multi_head.part")


def multihead_or_stop(settings, d_model: int, num_heads: int):
    """The cached multi-head trace; on input the user must fix, explain and stop the page."""
    try:
        trace = memo(build_toy_multihead, settings, d_model, num_heads)
    except InputError as problem:
        key = f"multi_head.error.{problem.code}" if problem.code == HEADS_ERROR else f"error.{problem.code}"
        st.info(t(key, **problem.details))
        st.stop()
    if trace.dropped_tokens:
        st.warning(t("notice.truncated", limit=settings.max_tokens, dropped=trace.dropped_tokens))
    return trace


def size_controls() -> tuple[int, int]:
    """d_model and h (a divisor of d_model), with dk = dv = d_model / h worked out beside them."""
    st.session_state.setdefault("mh_d_model", DEFAULT_D_MODEL)
    d_model_column, heads_column = st.columns([7, 5], vertical_alignment="bottom")
    d_model = d_model_column.segmented_control(
        t("multi_head.d_model"),
        D_MODEL_CHOICES,
        required=True,
        key="mh_d_model",
        help=t("multi_head.d_model.help"),
        persist_state="session",
        width="stretch",
    )
    # a choice of h made for another d_model may not divide this one: clamp it before drawing
    st.session_state["mh_heads"] = clamp_heads(st.session_state.get("mh_heads", DEFAULT_HEADS), d_model)
    num_heads = heads_column.segmented_control(
        t("multi_head.heads"),
        head_choices(d_model),
        required=True,
        key="mh_heads",
        help=t("multi_head.heads.help", limit=MAX_HEADS),
        persist_state="session",
        width="stretch",
    )
    size_column, note_column = st.columns([5, 7], vertical_alignment="center")
    with size_column:
        size = head_size(d_model, num_heads)
        st.latex(rf"d_k = d_v = \frac{{d_{{\mathrm{{model}}}}}}{{h}} = \frac{{{d_model}}}{{{num_heads}}} = {size}")
    note_column.caption(f"{t('multi_head.paper')} {t('multi_head.sidebar_note')}")
    return d_model, num_heads


def head_stage(stage, trace, head: int) -> None:
    """Title, formula, explanation and matrices of one stage of one head."""
    values = {"head": head + 1, **stage_numbers(trace)}
    if stage.name == "qkv":
        st.markdown(f"**{t('multi_head.stage.qkv.title', **values)}**")
        st.latex(HEAD_QKV_FORMULA)
        st.markdown(t("multi_head.stage.qkv.explain", **values))
    else:
        st.markdown(f"**{t('multi_head.head', number=values['head'])} · {t(f'stage.{stage.name}.title')}**")
        st.latex(stage.formula)
        st.markdown(stage_sentence(stage.name, values))
    if stage.name == "masked_scores" and trace.settings.mask.is_empty:
        st.caption(t("stage.masked_scores.none"))
    if stage.name in ("masked_scores", "weights", "output"):
        fully_masked_notice(trace)
    for name in stage.matrices:  # one per row: in a third of the page a head's cells and numbers get too small
        matrix_view(trace, name, key=f"mh-step-{stage.name}")


def one_head(trace) -> None:
    """Pick a head and step through its stages, as on the step-through page."""
    st.subheader(t("multi_head.one_head.title"))
    st.markdown(t("multi_head.one_head.explain", dk=trace.dk))
    heads = list(range(trace.num_heads))
    st.session_state["mh_head"] = min(st.session_state.get("mh_head", 0), trace.num_heads - 1)
    head = st.segmented_control(
        t("multi_head.one_head.pick"),
        heads,
        format_func=head_label(),
        required=True,
        key="mh_head",
        persist_state="session",
    )
    previous_column, selector_column, next_column = st.columns([1.4, 7, 1.4], vertical_alignment="bottom")
    previous_column.button(t("multi_head.previous"), on_click=_move, args=(-1,), key="mh_previous", width="stretch")
    next_column.button(t("multi_head.next"), on_click=_move, args=(1,), key="mh_next", width="stretch")
    stage_name = choice_strip(
        t("multi_head.stage"), STAGE_NAMES, "mh_stage", STAGE_NAMES[0], "multi_head.stage_short", place=selector_column
    )
    index = STAGE_NAMES.index(stage_name)
    head_stage(HEAD_STAGES[index], head_trace(trace, head), head)
    st.caption(t("multi_head.progress", head=head + 1, heads=trace.num_heads, number=index + 1, total=len(HEAD_STAGES)))
    if head == 0:
        sidebar = trace.settings  # the sidebar's settings, which the step-through page uses
        same = sidebar.d_model == trace.d_model and sidebar.dk == trace.dk and sidebar.projection == "random"
        identity = t("multi_head.one_head.first_is_single.identity") if sidebar.projection == "identity" else ""
        status = (
            t("multi_head.one_head.first_is_single.now")
            if same
            else t(
                "multi_head.one_head.first_is_single.differs",
                sidebar_d_model=sidebar.d_model,
                sidebar_dk=sidebar.dk,
                projection=identity,
            )
        )
        st.caption(t("multi_head.one_head.first_is_single", d_model=trace.d_model, dk=trace.dk) + " " + status)


def combine(trace) -> None:
    """Concat(head_1..head_h), W_O and the layer's output, with their shapes."""
    n, d_model, heads = len(trace.query_tokens), trace.d_model, trace.num_heads
    text, style = figure_text(), figure_style()
    st.subheader(t("multi_head.combine.title"))
    st.latex(r"\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O")
    st.markdown(t("multi_head.combine.shapes", n=n, heads=heads, dv=trace.dv, d_model=d_model))
    st.markdown(t("multi_head.combine.explain"))

    title = t("multi_head.concat.title", heads=heads, rows=n, columns=trace.attention.concat.shape[1])
    chart(concat_heatmap(trace, title=title, text=text, style=style), key="mh-concat", config=CHART_CONFIG)
    rows, columns = trace.w_o.shape
    title = t("multi_head.w_o.title", rows=rows, columns=columns)
    figure = w_o_heatmap(trace, title=title, text=text, style=style)
    if figure is None:
        st.info(t("multi_head.w_o.too_big", rows=rows, columns=columns))
    else:
        chart(figure, key="mh-w-o", config=CHART_CONFIG)
    title = t("multi_head.output.title", rows=n, columns=d_model)
    chart(output_heatmap(trace, title=title, text=text, style=style), key="mh-output", config=CHART_CONFIG)


def all_heads(trace) -> None:
    """Small multiples: every head's weights in one figure."""
    n, m = len(trace.query_tokens), len(trace.key_tokens)
    st.subheader(t("multi_head.grid.title"))
    st.markdown(t("multi_head.grid.explain", n=n, m=m))
    titles = [t("multi_head.head", number=head + 1) for head in range(trace.num_heads)]
    figure = head_weights_grid(trace, titles, text=figure_text(), style=figure_style())
    chart(figure, key="mh-grid", config=CHART_CONFIG)
    st.caption(t("multi_head.grid.random_note"))


settings = controls(max_tokens=MULTI_HEAD_MAX_TOKENS, uses=SETTINGS - {"dk", "d_model", "projection"})  # its own sizes
st.title(t("page.multi_head"))
untrained_note()  # the toy weights are random: say so, and link a trained model
st.caption(t("multi_head.tagline"))
st.latex(MULTI_HEAD_FORMULA)
st.markdown(t("multi_head.why"))
d_model, num_heads = size_controls()
trace = multihead_or_stop(settings, d_model, num_heads)
if trace.is_cross_attention:
    st.caption(t("multi_head.cross", n=len(trace.query_tokens), m=len(trace.key_tokens)))

part = part_picker()
{"heads": all_heads, "one_head": one_head, "combine": combine}[part](trace)
st.divider()
st.subheader(t("multi_head.cost.title"))
st.markdown(
    t(
        "multi_head.cost.explain",
        heads=num_heads,
        n=len(trace.query_tokens),
        m=len(trace.key_tokens),
        dk=trace.dk,
        d_model=d_model,
    )
)
