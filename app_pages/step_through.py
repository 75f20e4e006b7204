"""Step through Attention(Q, K, V) = softmax(QKᵀ/√dk)V, one recorded stage at a time."""

import math

import streamlit as st

from attention_core import STAGES
from ui.autoplay import autoplay, stop_autoplay_clock
from ui.cache import trace_or_stop
from ui.controls import controls
from ui.display import projector_mode
from ui.keys import NEXT_KEY, PREVIOUS_KEY, stage_keys
from ui.language import option_label, t
from ui.views import export_panel, fully_masked_notice, matrix_view

STAGE_NAMES = [stage.name for stage in STAGES]


AUTOPLAY_SECONDS = (1, 2, 3, 5, 8, 13)


def _move(step: int) -> None:
    index = STAGE_NAMES.index(st.session_state.get("stage", STAGE_NAMES[0]))
    st.session_state["stage"] = STAGE_NAMES[min(max(index + step, 0), len(STAGE_NAMES) - 1)]


def _next_in_loop() -> None:
    index = STAGE_NAMES.index(st.session_state.get("stage", STAGE_NAMES[0]))
    st.session_state["stage"] = STAGE_NAMES[(index + 1) % len(STAGE_NAMES)]


def stage_explanation(stage_name: str, trace) -> None:
    """The plain sentences under a stage's formula."""
    settings = trace.settings
    n, m = len(trace.query_tokens), len(trace.key_tokens)
    dk = settings.dk
    st.markdown(
        t(
            f"stage.{stage_name}.explain",
            n=n,
            m=m,
            dk=dk,
            dv=trace.attention.v.shape[-1],
            d_model=trace.x_query.shape[-1],
            scale=trace.attention.scale,
        )
    )
    if stage_name == "qkv" and settings.projection == "identity":
        st.caption(t("stage.qkv.identity"))
    if stage_name == "scaled_scores" and not math.isclose(trace.attention.scale, 1 / math.sqrt(dk)):
        st.caption(t("stage.scaled_scores.custom_scale", scale=trace.attention.scale))
    if stage_name == "masked_scores" and settings.mask.is_empty:
        st.caption(t("stage.masked_scores.none"))
    if stage_name in ("masked_scores", "weights", "output"):
        fully_masked_notice(trace)


def show_stage(stage, trace, key: str) -> None:
    """Title, formula, explanation and the stage's matrices side by side."""
    st.subheader(t(f"stage.{stage.name}.title"))
    st.latex(stage.formula)
    stage_explanation(stage.name, trace)
    for column, name in zip(st.columns(len(stage.matrices)), stage.matrices, strict=True):
        with column:
            matrix_view(trace, name, key=f"{key}-{stage.name}", side_by_side=len(stage.matrices) > 1)


settings = controls()
title_column, view_column = st.columns([1, 1] if projector_mode() else [3, 2], vertical_alignment="bottom")
title_column.title(t("app.title"))
view = view_column.segmented_control(
    t("step.view"),
    ["steps", "overview"],
    format_func=option_label("step.view"),
    default="steps",
    required=True,
    key="view",
    persist_state="session",
)
st.caption(t("app.tagline"))
trace = trace_or_stop(settings)

if view == "overview":
    for stage in STAGES:
        show_stage(stage, trace, key="overview")
        st.divider()
else:
    st.session_state.setdefault("stage", STAGE_NAMES[0])
    if projector_mode():  # large type: the stage picker gets a row of its own
        selector_column = st.container()
        previous_column, _, next_column = st.columns([1, 2, 1], vertical_alignment="bottom")
    else:
        previous_column, selector_column, next_column = st.columns([1.4, 7, 1.4], vertical_alignment="bottom")
    previous_column.button(t("step.previous"), on_click=_move, args=(-1,), key=PREVIOUS_KEY, width="stretch")
    next_column.button(t("step.next"), on_click=_move, args=(1,), key=NEXT_KEY, width="stretch")
    stage_keys()  # ← / → click these buttons, whatever control has the focus
    stage_name = selector_column.segmented_control(
        t("step.stage"),
        STAGE_NAMES,
        format_func=option_label("stage.short"),
        required=True,
        key="stage",
        persist_state="session",
        width="stretch",
    )
    index = STAGE_NAMES.index(stage_name)
    show_stage(STAGES[index], trace, key="step")
    progress_column, play_column, speed_column = st.columns([3, 2, 2], vertical_alignment="center")
    progress_column.caption(t("step.progress", number=index + 1, total=len(STAGES)) + " · " + t("step.keys"))
    playing = play_column.toggle(t("step.autoplay"), key="autoplay")
    seconds = speed_column.select_slider(
        t("step.autoplay_speed"), AUTOPLAY_SECONDS, value=3, key="autoplay_seconds", format_func="{} s".format,
        persist_state="session",
    )
    if playing:
        autoplay(seconds, _next_in_loop)
    else:
        stop_autoplay_clock()
    export_panel(trace, STAGES[index].matrices, key="step-export")
