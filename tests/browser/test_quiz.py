"""The quiz in headless Chromium against `streamlit run`: pick a guess, reveal, see the weights."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from plotly_page import ARTIFACTS, graphs

from attention_core import ToySettings, build_toy_trace

APP = Path(__file__).resolve().parents[2] / "app.py"
pytestmark = pytest.mark.skipif(
    '"pages/quiz.py"' not in APP.read_text(encoding="utf-8"),
    reason="pages/quiz.py is not listed in app.py's PAGES yet, so there is no /quiz page to open",
)
TITLE = "Predict, then reveal"


def _open_quiz(page) -> list[str]:
    """Open /quiz (after the home page, see test_mask_lab) and return the URLs that answered 4xx."""
    failures: list[str] = []
    page.on("response", lambda response: response.status >= 400 and failures.append(response.url))
    page.goto(page.app_url)
    page.wait_for_selector('[data-testid="stApp"]')
    page.goto(f"{page.app_url}/quiz")
    page.get_by_role("heading", name=TITLE).wait_for(timeout=60_000)
    page.locator(".st-key-quiz_guess_0").wait_for()
    return failures


def _assert_clean(page, failures: list[str]) -> None:
    """Only the two expected deep-link probes failed; no other console error, no dialog, no internet."""
    probes = [url for url in failures if re.search(r"/quiz/_stcore/(health|host-config)$", url)]
    assert probes == failures, f"unexpected failed requests: {failures}"
    not_found = [text for text in page.console_errors if "status of 404" in text]
    assert len(not_found) <= len(probes), page.console_errors
    assert not [text for text in page.console_errors if "status of 404" not in text], page.console_errors
    assert not page.dialogs, page.dialogs
    assert not page.external_requests, "nothing is loaded from the internet"


def test_pick_a_guess_reveal_and_see_the_engine_weights(page):
    failures = _open_quiz(page)
    trace = build_toy_trace(ToySettings())
    weights = trace.attention.weights
    n = len(trace.query_tokens)
    assert page.locator(".js-plotly-plot").count() == 0, "no chart before Reveal"

    right_key = int(np.argmax(weights[2]))  # row 2 has one strongest key (no tie)
    assert np.sum(weights[2] == weights[2, right_key]) == 1
    choice = page.locator(".st-key-quiz_guess_2").get_by_role("radio", name=trace.key_labels[right_key], exact=True)
    choice.click()
    page.wait_for_function(
        "() => document.querySelector('.st-key-quiz_guess_2 [aria-checked=\"true\"]') !== null"
    )
    page.get_by_text(f"1 of {n} queries answered").wait_for()
    assert page.locator(".js-plotly-plot").count() == 0, "still nothing drawn before Reveal"

    page.get_by_role("button", name="Reveal").click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .heatmaplayer').length > 0")
    page.wait_for_timeout(500)  # let Plotly finish painting
    (heat,) = [trace for graph in graphs(page) for trace in graph["traces"]]
    assert heat["y"] == trace.query_labels
    assert heat["x"] == trace.key_labels
    np.testing.assert_allclose(np.array(heat["z"]), weights, rtol=1e-12)
    score = page.get_by_test_id("stMetricValue").first.inner_text()
    assert score.replace(" ", "") == f"1/{n}"
    page.screenshot(path=str(ARTIFACTS / "quiz-revealed.png"), full_page=True)
    _assert_clean(page, failures)
