"""Step through Attention(Q, K, V) = softmax(QKᵀ/√dk)V, one recorded stage at a time."""

import math

import streamlit as st

from attention_core import STAGES
from attention_core.lessons.scaling import self_diagonal
from ui.autoplay import advance_if_due, autoplay, stop_autoplay_clock
from ui.cache import trace_or_stop
from ui.controls import controls
from ui.display import panels, projector_mode
from ui.first_run import run_through_app
from ui.keys import NEXT_KEY, PREVIOUS_KEY, stage_keys
from ui.language import option_label, t
from ui.lesson_views import (
    first_example_panel,
    highlight_controls,
    mask_uses_note,
    output_next_note,
    projection_panel,
    untrained_note,
)
from ui.views import export_panel, fully_masked_notice, matrix_view, stage_numbers, stage_sentence

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

STAGE_NAMES = [stage.name for stage in STAGES]


AUTOPLAY_SECONDS = (1, 2, 3, 5, 8, 13)


def _move(step: int) -> None:
    index = STAGE_NAMES.index(st.session_state.get("stage", STAGE_NAMES[0]))
    st.session_state["stage"] = STAGE_NAMES[min(max(index + step, 0), len(STAGE_NAMES) - 1)]


def _next_in_loop() -> None:
    index = STAGE_NAMES.index(st.session_state.get("stage", STAGE_NAMES[0]))
    st.session_state["stage"] = STAGE_NAMES[(index + 1) % len(STAGE_NAMES)]


def is_cross(trace) -> bool:
    """Whether the queries come from a second sentence (cross-attention)."""
    return bool(trace.settings.query_text.strip())


def stage_explanation(stage_name: str, trace) -> None:
    """The plain sentences under a stage's formula."""
    settings = trace.settings
    numbers = stage_numbers(trace)
    identity_self = settings.projection == "identity" and not is_cross(trace)
    st.markdown(stage_sentence(stage_name, numbers))
    if stage_name == "embeddings" and is_cross(trace):
        st.caption(t("stage.embeddings.cross", n=numbers["n"], m=numbers["m"]))
    if stage_name == "raw_scores" and identity_self:
        st.caption(t("stage.raw_scores.identity"))
    if stage_name in ("scaled_scores", "weights") and identity_self:
        diagonal = self_diagonal(trace.attention)
        st.info(
            t(
                "stage.scaled_scores.identity",
                root=math.sqrt(numbers["dk"]),
                diagonal=diagonal.scaled_mean,
                self_weight=diagonal.self_weight_mean,
            )
        )
    if stage_name == "qkv" and settings.projection == "identity":
        st.caption(t("stage.qkv.identity"))
    if stage_name == "scaled_scores" and not math.isclose(numbers["scale"], 1 / math.sqrt(numbers["dk"])):
        st.caption(t("stage.scaled_scores.custom_scale", scale=numbers["scale"]))
    if stage_name == "masked_scores" and settings.mask.is_empty:
        st.caption(t("stage.masked_scores.none"))
    if stage_name in ("masked_scores", "weights", "output"):
        fully_masked_notice(trace)
    if stage_name == "qkv":
        projection_panel(trace)
    if stage_name == "masked_scores":
        mask_uses_note(trace)
    if stage_name == "output":
        output_next_note()


PANEL_COLUMN_PIXELS = 45  # width a heatmap column needs for its token label and a number ("-0.12")
MAIN_WIDTH_PIXELS = 900  # about the page's width for figures with the sidebar open (1280–1440 px screens)


def stacked(stage, trace) -> bool:
    """Whether the stage's matrices go one under the other: on a projector, or when side by
    side a panel would be too narrow to show every token label and the cell numbers."""
    if projector_mode():
        return True
    matrices = stage.matrices_for(is_cross(trace))
    widest = max(trace.matrix(name).shape[-1] for name in matrices)
    return len(matrices) * (widest + 3) * PANEL_COLUMN_PIXELS > MAIN_WIDTH_PIXELS


def show_matrices(stage, trace, key: str, highlight: tuple[int, int] | None = None) -> None:
    """The stage's matrices, side by side when they fit, else one under the other (`highlight`:
    the chosen (query i, key j), outlined in every matrix)."""
    matrices = stage.matrices_for(is_cross(trace))
    stack = stacked(stage, trace)
    side_by_side = not stack and len(matrices) > 1
    for place, name in zip(panels(len(matrices), stack=stack), matrices, strict=True):
        with place:
            matrix_view(trace, name, key=f"{key}-{stage.name}", side_by_side=side_by_side, highlight=highlight)


def show_stage(stage, trace, key: str, highlight: tuple[int, int] | None = None) -> None:
    """Title, formula, explanation and the stage's matrices."""
    st.subheader(t(f"stage.{stage.name}.title"))
    st.latex(stage.formula_for(is_cross(trace)))
    stage_explanation(stage.name, trace)
    show_matrices(stage, trace, key, highlight)


def stage_buttons(previous_place, next_place) -> None:
    previous_place.button(t("step.previous"), on_click=_move, args=(-1,), key=PREVIOUS_KEY, width="stretch")
    next_place.button(t("step.next"), on_click=_move, args=(1,), key=NEXT_KEY, width="stretch")
    stage_keys()  # ← / → click these buttons, whatever control has the focus


def stage_picker(place) -> str:
    return place.segmented_control(
        t("step.stage"),
        STAGE_NAMES,
        format_func=option_label("stage.short"),
        required=True,
        key="stage",
        persist_state="session",
        width="stretch",
    )


def title_row() -> str:
    """The app's title and the view picker (steps / overview); returns the view."""
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
    return view


settings = controls()
# On a projector the first screen is the lesson: the stage's title between Previous and Next,
# then the whole heatmap; the formula, the explanation, the stage picker, the app's title, the
# first example and the highlight follow below (at 1280 × 720 nothing else fits above the matrix).
projector_steps = projector_mode() and st.session_state.get("view", "steps") == "steps"
upper, lower = st.container(), st.container()
extras_area, main_area = (lower, upper) if projector_steps else (upper, lower)
with extras_area:
    if projector_steps:
        st.divider()
        title_row()
        view = "steps"
    else:
        view = title_row()
    first_example_panel()
with main_area:
    trace = trace_or_stop(settings)
with extras_area:
    untrained_note()
    highlight = highlight_controls(trace)

with main_area:
    if view == "overview":
        for stage in STAGES:
            show_stage(stage, trace, key="overview", highlight=highlight)
            st.divider()
    else:
        st.session_state.setdefault("stage", STAGE_NAMES[0])
        advance_if_due(_next_in_loop, playing=st.session_state.get("autoplay", False))  # before the picker
        if projector_steps:
            previous_column, title_column, next_column = st.columns([1, 3, 1], vertical_alignment="center")
            stage_buttons(previous_column, next_column)
            index = STAGE_NAMES.index(st.session_state["stage"])
            stage = STAGES[index]
            title_column.subheader(t(f"stage.{stage.name}.title"))
            show_matrices(stage, trace, key="step", highlight=highlight)
            st.latex(stage.formula_for(is_cross(trace)))
            stage_explanation(stage.name, trace)
            stage_picker(st.container())
        else:
            previous_column, selector_column, next_column = st.columns([1.4, 7, 1.4], vertical_alignment="bottom")
            stage_buttons(previous_column, next_column)
            index = STAGE_NAMES.index(stage_picker(selector_column))
            show_stage(STAGES[index], trace, key="step", highlight=highlight)
        progress_column, play_column, speed_column = st.columns([3, 2, 2], vertical_alignment="center")
        progress_column.caption(t("step.progress", number=index + 1, total=len(STAGES)) + " · " + t("step.keys"))
        playing = play_column.toggle(t("step.autoplay"), key="autoplay")
        seconds = speed_column.select_slider(
            t("step.autoplay_speed"), AUTOPLAY_SECONDS, value=3, key="autoplay_seconds", format_func="{} s".format,
            persist_state="session",
        )
        if playing:
            autoplay(seconds)
        else:
            stop_autoplay_clock()
        export_panel(trace, STAGES[index].matrices_for(is_cross(trace)), key="step-export")
