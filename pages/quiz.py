"""Predict, then reveal: guess where each query's attention goes before the weights are shown.

Nothing on this page draws the weights until the student presses Reveal. The question is
the sidebar's settings (and the quiz mode); when it changes, the answer is hidden again.
"""

import pandas as pd
import streamlit as st

from attention_core.figures.quiz import QuizText, guesses_heatmap, sketch_bars, sketch_heatmap
from attention_core.lessons.quiz import MAX_ASKED_ROWS, question, score_guesses, score_sketch
from ui.cache import trace_or_stop
from ui.controls import controls
from ui.display import figure_style, figure_text
from ui.first_run import run_through_app
from ui.language import option_label, t
from ui.lesson_views import untrained_note
from ui.views import chart, escape_markdown, token_picker

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

QUIZ_MAX_TOKENS = 64  # longer input is cut (with a notice): long sentences make poor questions

MODES = ("argmax", "sketch")
LONGEST_SHOWN_LABEL = 24  # characters of a token shown on a button or slider (the full token is in the table)
PILLS_MAX_KEYS = 16  # up to this many keys a row of buttons; beyond, a drop-down list
MAX_SKETCH_KEYS = 16  # one slider per key
SLIDERS_PER_ROW = 4
REVEALED = "quiz_revealed"  # the question (settings, mode, sketched row) whose answer is shown
GUESS_PREFIX, SKETCH_PREFIX = "quiz_guess_", "quiz_sketch_"


def shortened(label: str) -> str:
    """A token label cut to LONGEST_SHOWN_LABEL characters (a pasted "word" may be thousands long)."""
    return label if len(label) <= LONGEST_SHOWN_LABEL else label[: LONGEST_SHOWN_LABEL - 1] + "…"



def as_markdown(label: str) -> str:
    """A token label to show inside Markdown: shortened, then escaped."""
    return escape_markdown(shortened(label))


def _reveal(asked) -> None:
    """Remember which question the answer is shown for (a changed question hides it again)."""
    st.session_state[REVEALED] = asked


def _start_over() -> None:
    """Hide the answer and forget every guess."""
    st.session_state.pop(REVEALED, None)
    for key in [key for key in st.session_state if str(key).startswith((GUESS_PREFIX, SKETCH_PREFIX))]:
        del st.session_state[key]


def quiz_text() -> QuizText:
    """The words inside the quiz figures, in the current language."""
    return QuizText(
        strongest=t("quiz.figure.strongest"),
        right=t("quiz.figure.right"),
        wrong=t("quiz.figure.wrong"),
        sketch=t("quiz.figure.sketch"),
        truth=t("quiz.figure.truth"),
        weight=t("quiz.figure.weight"),
    )


def keep_if_valid(key: str, options) -> None:
    """Drop a remembered guess that is no longer a choice (the sentence or the mask changed)."""
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = None


def guess_grid(trace, asked, locked: bool) -> dict[int, int | None]:
    """One row of choices per asked query; returns {query: key or None}."""
    query_labels, key_labels = trace.query_labels, trace.key_labels
    st.markdown(f"**{t('quiz.grid.label')}**")
    st.caption(t("quiz.grid.caption"))
    guesses = {}
    for row, options in zip(asked.asked, asked.options, strict=True):
        key = f"{GUESS_PREFIX}{row}"
        keep_if_valid(key, options)
        label_column, choice_column = st.columns([1.6, 8.4], vertical_alignment="center")
        label = as_markdown(query_labels[row])
        label_column.markdown(f"**{label}** →")
        common = dict(key=key, label_visibility="collapsed", disabled=locked, persist_state="session")
        if len(trace.key_tokens) <= PILLS_MAX_KEYS:  # button texts are Markdown
            shown = [as_markdown(key_label) for key_label in key_labels]
            guesses[row] = choice_column.pills(label, options, format_func=shown.__getitem__, wrap=True, **common)
        else:  # a long sentence: a searchable drop-down list (plain-text options) instead of a wall of buttons
            shown = [shortened(key_label) for key_label in key_labels]
            guesses[row] = choice_column.selectbox(
                label, options, format_func=shown.__getitem__, index=None, placeholder=t("quiz.guess.placeholder"),
                **common,
            )
    return guesses


def argmax_answer(trace, guesses) -> None:
    """Score, the weights with the guesses marked, and a row-by-row table."""
    attention = trace.attention
    result = score_guesses(attention.weights, attention.mask, guesses)
    score_column, note_column = st.columns([1, 3], vertical_alignment="center")
    score_column.metric(t("quiz.score"), f"{result.score} / {result.total}", border=True)
    notes = [t("quiz.score.percent", percent=result.percent)]
    if result.answered < result.total:
        notes.append(t("quiz.blank", blank=result.total - result.answered))
    note_column.markdown(" ".join(notes))
    note_column.markdown(t("quiz.explain.argmax"))
    chart(
        guesses_heatmap(trace, result, text=figure_text(), quiz_text=quiz_text(), style=figure_style()),
        key="quiz-weights",
        config={"displaylogo": False},
    )
    if any(len(keys) > 1 for keys in result.best_keys):
        st.caption(t("quiz.ties"))
    query_labels, key_labels = trace.query_labels, trace.key_labels

    def weighed(key: int | None, weight: float) -> str:
        return t("quiz.table.blank") if key is None else f"{key_labels[key]} · {weight:.3f}"

    table = pd.DataFrame(
        {
            t("quiz.table.query"): [query_labels[i] for i in result.rows],
            t("quiz.table.guess"): [weighed(j, w) for j, w in zip(result.guesses, result.guess_weights, strict=True)],
            t("quiz.table.best"): [
                ", ".join(key_labels[j] for j in keys) + f" · {w:.3f}"
                for keys, w in zip(result.best_keys, result.best_weights, strict=True)
            ],
            t("quiz.table.result"): ["✓" if right else "✗" for right in result.correct],
        }
    )
    st.dataframe(table, hide_index=True, height="content", key="quiz-table")


def sketch_controls(trace, rows: tuple[int, ...], locked: bool) -> tuple[int, list[float]]:
    """Which query to sketch and one slider per key it may attend to; returns (query, amounts)."""
    query_labels, key_labels = trace.query_labels, trace.key_labels
    shown = [shortened(label) for label in query_labels]
    query = token_picker(  # kept, or clamped to a row that exists, when the sentence changes
        t("quiz.sketch.query"), shown, key="quiz_row", default=rows[0], positions=list(rows), disabled=locked
    )
    st.caption(t("quiz.sketch.caption"))
    allowed = [bool(flag) for flag in trace.attention.mask[query]]
    if not all(allowed):
        st.caption(t("quiz.sketch.masked"))
    amounts = [0.0] * len(key_labels)
    allowed_keys = [j for j, flag in enumerate(allowed) if flag]
    for start in range(0, len(allowed_keys), SLIDERS_PER_ROW):
        row_keys = allowed_keys[start : start + SLIDERS_PER_ROW]
        for column, j in zip(st.columns(SLIDERS_PER_ROW), row_keys, strict=False):
            amounts[j] = float(
                column.slider(
                    as_markdown(key_labels[j]), 0, 100, 0, step=5, key=f"{SKETCH_PREFIX}{j}", disabled=locked,
                    persist_state="session",
                )
            )
    return query, amounts


def sketch_answer(trace, query: int, amounts: list[float]) -> None:
    """Overlap and distance, the two rows side by side, and the weights around the row."""
    attention = trace.attention
    result = score_sketch(attention.weights, attention.mask, query, amounts)
    overlap_column, distance_column, note_column = st.columns([1, 1, 2], vertical_alignment="center")
    overlap_column.metric(t("quiz.overlap"), f"{100 * result.overlap:.1f} %", border=True)
    distance_column.metric(t("quiz.tv"), f"{100 * result.total_variation:.1f} %", border=True)
    note_column.markdown(t("quiz.sketch.explain"))
    style = figure_style()
    chart(sketch_bars(trace, result, quiz_text=quiz_text(), style=style), key="quiz-sketch",
                    config={"displaylogo": False})
    chart(sketch_heatmap(trace, result, text=figure_text(), style=style), key="quiz-weights",
                    config={"displaylogo": False})


settings = controls(max_tokens=QUIZ_MAX_TOKENS)
st.title(t("page.quiz"))
st.caption(t("quiz.intro"))
trace = trace_or_stop(settings)
untrained_note()  # the toy weights are random: say so, and link a trained model
n, m = len(trace.query_tokens), len(trace.key_tokens)

mode = st.segmented_control(
    t("quiz.mode"), MODES, format_func=option_label("quiz.mode"), default="argmax", required=True,
    key="quiz_mode", persist_state="session",
)
sketchable = question(trace.attention.mask, limit=n).asked  # every row with two keys or more to share among
asked = question(trace.attention.mask)
if not (asked.asked if mode == "argmax" else sketchable):
    st.info(t("quiz.nothing_to_ask"))
    st.stop()

with st.expander(t("quiz.hint.title"), icon=":material/lightbulb:"):
    st.markdown(t("quiz.hint", page=t("page.step_through")))
    st.caption(t("quiz.ties"))

if mode == "sketch" and m > MAX_SKETCH_KEYS:
    st.info(t("quiz.sketch.too_many", limit=MAX_SKETCH_KEYS, m=m))
    st.stop()

current = (settings, mode, st.session_state.get("quiz_row") if mode == "sketch" else None)
shown_for = st.session_state.get(REVEALED)
if shown_for is not None and shown_for != current:
    st.session_state.pop(REVEALED)
    if shown_for[1] == mode:  # switching between the two kinds of quiz is not a changed question
        st.info(t("quiz.changed"), icon=":material/restart_alt:")
revealed = st.session_state.get(REVEALED) == current

if mode == "argmax":
    if asked.fully_masked:
        rows = ", ".join(as_markdown(trace.query_labels[i]) for i in asked.fully_masked)
        st.caption(t("quiz.fully_masked", rows=rows))
    if asked.single_key:
        rows = ", ".join(as_markdown(trace.query_labels[i]) for i in asked.single_key)
        st.caption(t("quiz.single_key", rows=rows))
    if asked.not_asked:
        st.caption(t("quiz.not_asked", n=n, limit=MAX_ASKED_ROWS))
    guesses = guess_grid(trace, asked, locked=revealed)
    ready = True
    progress = t("quiz.answered", answered=sum(g is not None for g in guesses.values()), total=len(guesses))
else:
    query, amounts = sketch_controls(trace, sketchable, locked=revealed)
    current = (settings, mode, query)  # the selectbox may just have settled on its first row
    ready = any(amounts)
    progress = "" if ready else t("quiz.sketch.empty")

with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
    st.button(
        t("quiz.reveal"), type="primary", icon=":material/visibility:", key="quiz_reveal", on_click=_reveal,
        args=(current,), disabled=revealed or not ready,
    )
    st.button(
        t("quiz.again") if revealed else t("quiz.clear"), icon=":material/restart_alt:", key="quiz_again",
        on_click=_start_over,
    )
    st.caption(progress)

if not revealed:
    st.info(t("quiz.hidden"), icon=":material/visibility_off:")
else:
    st.subheader(t("quiz.answer"))
    if mode == "argmax":
        argmax_answer(trace, guesses)
    else:
        sketch_answer(trace, query, amounts)
