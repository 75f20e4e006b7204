"""The "Follow one cell" page in a real browser: its bar charts are drawn, picking another key
token in the selector (click, choose an option) redraws them with that key's numbers, and the
"Show step" buttons bring up each step's own chart."""

from __future__ import annotations

import numpy as np
import pytest
from plotly_page import wait_for_app

from attention_core import ToySettings, build_toy_trace

NOT_FOUND = "Failed to load resource: the server responded with a status of 404 (Not Found)"

BARS_JS = """
() => Object.fromEntries(Array.from(document.querySelectorAll('[class*="st-key-cell-"]')).filter(
    box => box.querySelector('.js-plotly-plot')).map(box => {
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
    """For each chart of the page (by key; other elements are left out): the y values of its bar
    traces and how many bars are painted."""
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


def show_step(page, label: str) -> None:
    """Click one of the "Show step" buttons, as a user does, and wait for the page to settle."""
    page.locator(".st-key-cell_part").get_by_role("radio", name=label, exact=True).click()
    wait_for_app(page)


def test_bar_charts_are_drawn_and_follow_the_key_selector(page):
    not_found: list[str] = []
    open_follow_cell(page, not_found)
    assert page.locator("h1").first.inner_text() == "Follow one cell"
    trace = build_toy_trace(ToySettings()).attention

    before = drawn_bars(page)
    assert sorted(before) == ["cell-locator", "cell-products", "cell-vectors"], "the chain opens on its first step"
    for key in ("cell-vectors", "cell-products"):
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
    for key in ("cell-vectors", "cell-products"):
        assert after[key]["drawn"] > 0
    metrics_after = metric_values(page)
    assert metrics_after != metrics_before
    shown_raw, shown_weight = (float(metrics_after[k].replace("−", "-")) for k in (0, 4))
    assert shown_raw == pytest.approx(trace.raw_scores[1, 5], abs=5e-5)  # printed with 4 decimals
    assert shown_weight == pytest.approx(trace.weights[1, 5], abs=5e-5)

    show_step(page, "④ Softmax")
    page.wait_for_selector(".st-key-cell-softmax .barlayer .point path", timeout=30_000)
    softmax = drawn_bars(page)
    assert sorted(softmax) == ["cell-locator", "cell-softmax"]
    row = np.asarray(trace.scaled_scores[1], dtype=float)
    np.testing.assert_allclose(softmax["cell-softmax"]["bars"][0], np.exp(row - row.max()), rtol=1e-9)
    assert softmax["cell-softmax"]["drawn"] == len(row)

    show_step(page, "⑤ Output")
    page.wait_for_selector(".st-key-cell-output .barlayer .point path", timeout=30_000)
    output = drawn_bars(page)
    assert sorted(output) == ["cell-locator", "cell-output"]
    assert output["cell-output"]["drawn"] > 0
    assert metric_values(page) == metrics_after, "the cell's numbers stay above every step"

    assert_no_console_errors(page, not_found)
