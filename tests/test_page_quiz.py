"""The quiz page as a student drives it (AppTest): nothing is given away before Reveal, and the
score shown is the one worked out here from the engine's weights with plain loops.

The page runs through app.py once app.py lists it; until then it runs on its own (the page
file is a complete Streamlit script: it draws the shared sidebar itself).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import chart_ids, decode_array, heatmap_z, plotly_specs, run_app
from streamlit.testing.v1 import AppTest

from attention_core import ToySettings, build_toy_trace, token_labels, tokenize
from ui.i18n import translate

TEXT = ToySettings().text  # 11 tokens
QUERY_TEXT = "猫坐在垫子上。"
LIMIT = 12  # rows asked, as the page promises in its caption


def open_quiz(**session) -> AppTest:
    session.setdefault("text", TEXT)
    return run_app(page="quiz", **session)


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def reveal(at: AppTest) -> AppTest:
    at.button(key="quiz_reveal").click()
    return rerun(at)


def strongest_by_loops(weights, mask) -> list[set[int]]:
    """Each row's keys of largest allowed weight (ties within 1e-9 relative), by plain loops."""
    best = []
    for i in range(len(weights)):
        allowed = [j for j in range(len(weights[i])) if mask[i][j]]
        top = max((weights[i][j] for j in allowed), default=None)
        best.append({j for j in allowed if weights[i][j] >= top - 1e-9 * abs(top)} if allowed else set())
    return best


def guess_keys(at: AppTest) -> list[str]:
    """Keys of the guess widgets drawn in the last run (buttons in a row, or drop-down lists)."""
    widgets = [*at.pills, *at.selectbox]
    return sorted(widget.key for widget in widgets if str(widget.key).startswith("quiz_guess_"))


def unescaped(texts) -> list[str]:
    """Button texts as the user reads them (Markdown backslash escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", text) for text in texts]


def drawn_weights(at: AppTest) -> np.ndarray:
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith("quiz-weights"):
            return heatmap_z(spec)
    raise AssertionError(f"no weights chart: {chart_ids(at)}")


def page_text(at: AppTest) -> str:
    parts = [e.value for kind in ("title", "markdown", "caption", "info", "warning") for e in at.get(kind)]
    return " ".join(str(part) for part in parts)


# ----- it runs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("cross", [False, True])
def test_page_runs_before_and_after_reveal(lang, cross):
    session = {"lang": lang, "cross": cross}
    if cross:
        session["query_text"] = QUERY_TEXT
    at = open_quiz(**session)
    assert at.title[0].value == translate("page.quiz", lang)
    reveal(at)
    assert at.metric, "the score is shown after Reveal"
    if lang == "zh":
        assert "Reveal" not in [button.label for button in at.button]
        assert any("\u4e00" <= char <= "\u9fff" for char in at.metric[0].label)


# ----- before reveal: nothing given away ---------------------------------------------------------------


def test_no_weights_are_drawn_before_reveal_even_with_every_guess_made():
    trace = build_toy_trace(ToySettings())
    at = open_quiz(**{f"quiz_guess_{i}": 0 for i in range(len(trace.query_tokens))})
    assert not plotly_specs(at), "no chart before Reveal"
    assert not at.dataframe and not at.metric
    assert not [spec for spec in plotly_specs(at) for data in spec["data"] if data.get("type") == "heatmap"]
    assert at.button(key="quiz_reveal").disabled is False


def test_sketch_mode_draws_nothing_before_reveal_and_needs_an_amount():
    at = open_quiz(quiz_mode="sketch")
    assert not plotly_specs(at)
    assert at.button(key="quiz_reveal").disabled, "an empty sketch cannot be revealed"
    at.session_state["quiz_sketch_3"] = 40
    rerun(at)
    assert not plotly_specs(at)
    assert not at.button(key="quiz_reveal").disabled


# ----- reveal: the engine's weights and the right score ------------------------------------------


def test_reveal_shows_the_weights_and_the_score_worked_out_by_loops():
    attention = build_toy_trace(ToySettings()).attention
    weights, mask = attention.weights.tolist(), attention.mask.tolist()
    best = strongest_by_loops(weights, mask)
    m = len(weights[0])
    # Right on even rows, wrong on odd rows (a key that is not among the strongest), row 9 blank.
    guesses = {}
    for i in range(len(weights)):
        if i == 9:
            continue
        guesses[i] = min(best[i]) if i % 2 == 0 else next(j for j in range(m) if j not in best[i])
    at = open_quiz(**{f"quiz_guess_{i}": key for i, key in guesses.items()})
    reveal(at)
    expected = sum(key in best[i] for i, key in guesses.items())
    assert at.metric[0].value == f"{expected} / {len(weights)}"
    np.testing.assert_allclose(drawn_weights(at), attention.weights)
    table = at.dataframe[0].value
    assert table.iloc[:, -1].tolist() == ["✓" if i in guesses and guesses[i] in best[i] else "✗"
                                          for i in range(len(weights))]
    assert "1 left blank" in page_text(at)
    assert at.pills(key="quiz_guess_0").disabled, "guesses are locked once the answer is shown"


def test_tied_keys_both_count_as_right():
    trace = build_toy_trace(ToySettings())
    attention = trace.attention
    best = strongest_by_loops(attention.weights.tolist(), attention.mask.tolist())
    tied_row = next(i for i, keys in enumerate(best) if len(keys) > 1)
    for key in sorted(best[tied_row]):
        at = reveal(open_quiz(**{f"quiz_guess_{tied_row}": key}))
        assert at.metric[0].value == f"1 / {len(trace.query_tokens)}"
        assert translate("quiz.ties", "en") in page_text(at)


def test_cross_attention_asks_the_query_sentence_and_draws_n_by_m():
    trace = build_toy_trace(ToySettings(query_text=QUERY_TEXT))
    n, m = len(trace.query_tokens), len(trace.key_tokens)
    assert n != m
    best = strongest_by_loops(trace.attention.weights.tolist(), trace.attention.mask.tolist())
    at = open_quiz(cross=True, query_text=QUERY_TEXT, quiz_guess_2=min(best[2]))
    assert guess_keys(at) == sorted(f"quiz_guess_{i}" for i in range(n))
    assert unescaped(at.pills(key="quiz_guess_0").options) == trace.key_labels
    reveal(at)
    assert at.metric[0].value == f"1 / {n}"
    drawn = drawn_weights(at)
    assert drawn.shape == (n, m)
    np.testing.assert_allclose(drawn, trace.attention.weights)


def test_the_sketched_row_is_scored_against_the_true_row():
    trace = build_toy_trace(ToySettings())
    truth = trace.attention.weights[2].tolist()
    amounts = {0: 30, 3: 50, 7: 20}  # out of 100: already normalised
    at = open_quiz(quiz_mode="sketch", quiz_row=2, **{f"quiz_sketch_{j}": a for j, a in amounts.items()})
    reveal(at)
    guess = [amounts.get(j, 0) / 100 for j in range(len(truth))]
    overlap = sum(min(g, w) for g, w in zip(guess, truth, strict=True))
    distance = 0.5 * sum(abs(g - w) for g, w in zip(guess, truth, strict=True))
    assert at.metric[0].value == f"{100 * overlap:.1f} %"
    assert at.metric[1].value == f"{100 * distance:.1f} %"
    bars = [data for data in plotly_specs(at)[0]["data"] if data["type"] == "bar"]
    np.testing.assert_allclose(decode_array(bars[0]["y"]), guess)
    np.testing.assert_allclose(decode_array(bars[1]["y"]), truth)


# ----- the question changes ----------------------------------------------------------------------


def test_changing_the_sentence_hides_the_answer_and_keeps_guesses_that_still_fit():
    at = reveal(open_quiz(quiz_guess_1=0, quiz_guess_10=3))
    assert plotly_specs(at)
    shorter = "The dog sat on the rug."  # 7 tokens: row 10 is gone, row 1 may still name key 0
    at.text_area(key="text").input(shorter)
    rerun(at)
    assert not plotly_specs(at) and not at.metric, "the answer is hidden again"
    assert translate("quiz.changed", "en") in page_text(at)
    assert guess_keys(at) == [f"quiz_guess_{i}" for i in range(7)]
    assert at.pills(key="quiz_guess_1").value == 0
    assert unescaped(at.pills(key="quiz_guess_0").options) == token_labels(tokenize(shorter))


def test_changing_a_setting_or_the_mode_hides_the_answer():
    at = reveal(open_quiz())
    assert plotly_specs(at)
    at.slider(key="dk").set_value(4)
    rerun(at)
    assert not plotly_specs(at)
    reveal(at)
    assert plotly_specs(at)
    at.session_state["quiz_mode"] = "sketch"
    at.session_state["quiz_sketch_0"] = 10
    rerun(at)
    assert not plotly_specs(at)


def test_guess_again_hides_the_answer_and_clears_the_guesses():
    at = reveal(open_quiz(quiz_guess_1=0))
    at.button(key="quiz_again").click()
    rerun(at)
    assert not plotly_specs(at)
    assert at.pills(key="quiz_guess_1").value is None
    assert not at.pills(key="quiz_guess_1").disabled


# ----- rows that are not asked --------------------------------------------------------------------


def test_when_every_key_is_padding_nothing_is_asked_and_the_page_says_why():
    """The sidebar's masks leave a query with no key only when every key is padding (then
    every query is fully masked); partly masked quizzes are covered by the engine's tests."""
    tokens = tokenize(TEXT)
    at = open_quiz(mask_kind="padding", pad_positions=list(range(len(tokens))))
    assert not guess_keys(at)
    assert not at.button and not plotly_specs(at)
    assert translate("quiz.nothing_to_ask", "en") in page_text(at)


def test_a_long_sentence_asks_the_first_rows_with_drop_down_lists():
    text = " ".join(f"w{i}" for i in range(20))  # 20 keys: too many for a row of buttons
    trace = build_toy_trace(ToySettings(text=text))
    best = strongest_by_loops(trace.attention.weights.tolist(), trace.attention.mask.tolist())
    at = open_quiz(text=text)
    assert guess_keys(at) == sorted(f"quiz_guess_{i}" for i in range(LIMIT))
    assert translate("quiz.not_asked", "en", n=20, limit=LIMIT) in page_text(at)
    assert not at.pills, "drop-down lists, not rows of buttons"
    at.selectbox(key="quiz_guess_11").select(min(best[11]))
    rerun(at)
    reveal(at)
    assert at.metric[0].value == f"1 / {LIMIT}"
    np.testing.assert_allclose(drawn_weights(at), trace.attention.weights[:LIMIT])


# ----- token text stays text ---------------------------------------------------------------------


def test_token_text_is_never_rendered_as_markdown():
    sentence = "$ x *a* _b_ [c] ~`"  # 13 tokens: buttons, and few enough keys to sketch
    labels = token_labels(tokenize(sentence))
    risky = [label for label in labels if set(label.split(":", 1)[1]) & set("`*_[]$~()")]
    assert risky
    for session in ({}, {"quiz_mode": "sketch", "quiz_sketch_1": 50}):
        at = reveal(open_quiz(text=sentence, **{"quiz_guess_0": 1, **session}))
        kinds = ("markdown", "caption", "info", "warning", "subheader")
        bodies = [str(element.value) for kind in kinds for element in at.get(kind)]
        bodies += [widget.label for widget in [*at.slider, *at.selectbox] if widget.key]
        assert not [(label, body) for label in risky for body in bodies if label in body]
    at = open_quiz(text=sentence)
    assert unescaped(at.pills(key="quiz_guess_0").options) == labels
