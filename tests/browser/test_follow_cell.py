"""The "Follow one cell" page in a real browser: its bar charts are drawn, and picking another
key token in the selector (click, choose an option) redraws them with that key's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from plotly_page import wait_for_app

from attention_core import ToySettings, build_toy_trace

NOT_FOUND = "Failed to load resource: the server responded with a status of 404 (Not Found)"

BARS_JS = """
() => Object.fromEntries(Array.from(document.querySelectorAll('[class*="st-key-cell-"]')).map(box => {
    const key = Array.from(box.classList).find(name => name.startsWith('st-key-')).slice('st-key-'.length);
    const graph = box.querySelector('.js-plotly-plot');
    const bars = ((graph && graph._fullData) || []).filter(trace => trace.type === 'bar');
    return [key, {
        bars: bars.map(trace => Array.from(trace.y, Number)),
        drawn: graph ? graph.querySelectorAll('.barlayer .point path').length : 0,
    }];
}))
"""


def drawn_bars(page) -> dict[str, dict]:
    """For each chart of the page (by key): the y values of its bar traces and how many bars are painted."""
    return page.evaluate(BARS_JS)


def metric_values(page) -> list[str]:
    return page.locator('[data-testid="stMetricValue"]').all_inner_texts()


def open_follow_cell(page, not_found: list[str]) -> None:
    page.on("response", lambda response: response.status == 404 and not_found.append(response.url))
    # The first session of a fresh server answers a deep link with a "page not found" notice
    # before running the right page; open the app once so that the test sees the page itself.
    page.goto(page.app_url)
    wait_for_app(page)
    page.goto(f"{page.app_url}/cell")
    wait_for_app(page)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .barlayer .point').length > 0")


def assert_no_console_errors(page, not_found: list[str]) -> None:
    """No console error, except the 404s of Streamlit's probe for a base path under /cell."""
    probes = [url for url in not_found if url.startswith(f"{page.app_url}/cell/_stcore/")]
    assert probes == not_found, f"unexpected 404s: {not_found}"
    errors = list(page.console_errors)
    for _ in probes:
        if NOT_FOUND in errors:
            errors.remove(NOT_FOUND)
    assert errors == [], errors
    assert page.external_requests == [], page.external_requests


def test_bar_charts_are_drawn_and_follow_the_key_selector(page):
    not_found: list[str] = []
    open_follow_cell(page, not_found)
    assert page.locator("h1").first.inner_text() == "Follow one cell"
    trace = build_toy_trace(ToySettings()).attention

    before = drawn_bars(page)
    for key in ("cell-vectors", "cell-products", "cell-softmax", "cell-output"):
        assert before[key]["drawn"] > 0, f"{key} has no painted bars"
    np.testing.assert_allclose(before["cell-vectors"]["bars"][0], trace.q[1])  # default cell (1, 0)
    np.testing.assert_allclose(before["cell-vectors"]["bars"][1], trace.k[0])
    metrics_before = metric_values(page)

    page.locator(".st-key-cell_j [role=combobox]").click()
    page.get_by_role("option", name="5:mat", exact=True).click()
    page.wait_for_function(
        """([expected]) => {
            const box = document.querySelector('.st-key-cell-vectors .js-plotly-plot');
            const bars = box && box._fullData && box._fullData.filter(trace => trace.type === 'bar');
            return bars && bars.length === 2 && Math.abs(Number(bars[1].y[0]) - expected) < 1e-9;
        }""",
        arg=[float(trace.k[5, 0])],
        timeout=30_000,
    )
    wait_for_app(page)

    after = drawn_bars(page)
    assert page.locator(".st-key-cell_j [role=combobox]").input_value() == "5:mat"
    np.testing.assert_allclose(after["cell-vectors"]["bars"][0], trace.q[1])  # the query did not change
    np.testing.assert_allclose(after["cell-vectors"]["bars"][1], trace.k[5])
    np.testing.assert_allclose(after["cell-products"]["bars"][0], trace.q[1] * trace.k[5], rtol=1e-12)
    assert not np.allclose(after["cell-products"]["bars"][0], before["cell-products"]["bars"][0])
    np.testing.assert_allclose(after["cell-softmax"]["bars"][0], before["cell-softmax"]["bars"][0])  # same row
    for key in ("cell-vectors", "cell-products", "cell-softmax", "cell-output"):
        assert after[key]["drawn"] > 0
    metrics_after = metric_values(page)
    assert metrics_after != metrics_before
    shown_raw, shown_weight = (float(metrics_after[k].replace("−", "-")) for k in (0, 4))
    assert shown_raw == pytest.approx(trace.raw_scores[1, 5], abs=5e-5)  # printed with 4 decimals
    assert shown_weight == pytest.approx(trace.weights[1, 5], abs=5e-5)

    assert_no_console_errors(page, not_found)
