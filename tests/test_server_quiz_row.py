"""The quiz's sketched row survives a shorter sentence and an out-of-range link (AppTest).

Before the fix, a remembered row past the end of the new sentence became None and the
page failed with a ValueError (a 2-D mask row).
"""

from __future__ import annotations

from apptest_helpers import APP, run_app
from streamlit.testing.v1 import AppTest

from attention_core import ToySettings, build_toy_trace

LONG = ToySettings().text  # 11 tokens
SHORT = "one two three"


def sketch_row(at: AppTest):
    return next(box for box in at.selectbox if box.key == "quiz_row")


def test_a_late_row_is_clamped_when_the_sentence_gets_shorter():
    at = run_app(page="quiz", text=LONG, quiz_mode="sketch")
    sketch_row(at).set_value(10).run()
    assert not at.exception and sketch_row(at).value == 10
    at.session_state["text"] = SHORT
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    last = len(build_toy_trace(ToySettings(text=SHORT)).query_tokens) - 1
    assert sketch_row(at).value == last == 2


def test_a_link_with_a_row_past_the_end_opens_on_the_last_row():
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["quiz_mode"] = "sketch"
    at.query_params["quiz_row"] = "20"
    at.run()
    at.switch_page("pages/quiz.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert sketch_row(at).value == len(build_toy_trace(ToySettings()).query_tokens) - 1
