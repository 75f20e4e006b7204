"""The mask lab in headless Chromium against `streamlit run`: click masks on, watch the matrices change."""

from __future__ import annotations

import re

import numpy as np
from plotly_page import ARTIFACTS, heatmap_titled, wait_for_app, wait_until_repainted

from attention_core import MaskSpec, ToySettings, build_toy_trace

MASK_TITLE = "M   "
WEIGHTS_TITLE = "A = softmax"


def _open_lab(page) -> list[str]:
    """Open /masks and return the URLs that answered 4xx.

    The home page is opened first: the first session after a server start can show
    Streamlit's "page not found" dialog for a deep link before the pages are registered.
    On a deep link the frontend also probes `/masks/_stcore/health` and `/masks/_stcore/host-config`
    (404) before it finds the server's root; those two are expected.
    """
    failures: list[str] = []
    page.on("response", lambda response: response.status >= 400 and failures.append(response.url))
    page.goto(page.app_url)
    wait_for_app(page)
    page.goto(f"{page.app_url}/masks")
    wait_for_app(page)
    page.get_by_role("heading", name="Mask lab").wait_for()
    return failures


def _assert_clean(page, failures: list[str]) -> None:
    """No console error other than the two expected deep-link probes, and nothing from the internet."""
    probes = [url for url in failures if re.search(r"/masks/_stcore/(health|host-config)$", url)]
    assert probes == failures, f"unexpected failed requests: {failures}"
    not_found = [text for text in page.console_errors if "status of 404" in text]
    assert len(not_found) <= len(probes), page.console_errors
    other_errors = [text for text in page.console_errors if "status of 404" not in text]
    assert not other_errors, other_errors
    assert not page.external_requests, "nothing is loaded from the internet"






def test_clicking_the_causal_preset_repaints_mask_and_weights(page):
    failures = _open_lab(page)
    mask_before = heatmap_titled(page, MASK_TITLE)
    weights_before = heatmap_titled(page, WEIGHTS_TITLE)
    plain = build_toy_trace(ToySettings()).attention
    assert mask_before["y"] == build_toy_trace(ToySettings()).query_labels
    np.testing.assert_array_equal(np.array(mask_before["z"]), np.ones_like(plain.weights))
    np.testing.assert_allclose(np.array(weights_before["z"]), plain.weights, rtol=1e-12)

    page.get_by_role("button", name="Causal", exact=True).click()
    mask_after = wait_until_repainted(page, MASK_TITLE, mask_before["z"])
    weights_after = wait_until_repainted(page, WEIGHTS_TITLE, weights_before["z"])
    causal = build_toy_trace(ToySettings(mask=MaskSpec(causal=True))).attention
    n, m = causal.mask.shape
    by_definition = np.array([[j <= i for j in range(m)] for i in range(n)], dtype=float)
    np.testing.assert_array_equal(np.array(mask_after["z"]), by_definition)
    np.testing.assert_allclose(
        np.array(weights_after["z"]), np.where(causal.mask, causal.weights, np.nan), rtol=1e-12
    )
    page.screenshot(path=str(ARTIFACTS / "mask_lab.png"))
    _assert_clean(page, failures)


def test_the_example_button_shows_a_fully_masked_row_and_the_fill_comparison(page):
    failures = _open_lab(page)
    page.get_by_role("button", name=re.compile("Show an example")).click()
    page.get_by_text("this query may attend to nothing").wait_for(timeout=20_000)
    wait_for_app(page)
    rows = wait_until_repainted(page, "The fully masked row", [])
    m = len(rows["x"])
    np.testing.assert_array_equal(np.array(rows["z"][0]), np.zeros(m))  # the engine: weights 0
    np.testing.assert_allclose(np.array(rows["z"][1]), np.full(m, 1 / m), rtol=1e-12)  # −1e9 fill: 1/m each
    assert page.get_by_role("button", name="Causal", exact=True).is_visible()
    _assert_clean(page, failures)


def test_unticking_a_box_of_the_custom_grid_masks_that_cell(page):
    """Click the checkbox of query 3 / key 2 in the data editor; the weights follow."""
    failures = _open_lab(page)
    page.get_by_role("button", name="Custom grid", exact=True).click()
    editor = page.locator('[data-testid="stDataFrame"]').first
    editor.wait_for()
    wait_for_app(page)
    before = heatmap_titled(page, WEIGHTS_TITLE)
    editor.scroll_into_view_if_needed()  # a click outside the viewport is lost
    page.wait_for_timeout(300)
    box = editor.bounding_box()
    # The page fixes the editor's layout: index column 100 px, key columns 75 px, rows (and header) 35 px.
    row, column = 3, 2
    page.mouse.click(box["x"] + 1 + 100 + 75 * column + 37, box["y"] + 35 * (row + 1) + 17)
    after = wait_until_repainted(page, WEIGHTS_TITLE, before["z"])

    n = len(after["y"])
    grid = [[True] * n for _ in range(n)]
    grid[row][column] = False
    attention = build_toy_trace(ToySettings(mask=MaskSpec(custom=tuple(map(tuple, grid))))).attention
    np.testing.assert_allclose(np.array(after["z"]), np.where(attention.mask, attention.weights, np.nan), rtol=1e-12)
    page.screenshot(path=str(ARTIFACTS / "mask_lab_grid.png"))
    _assert_clean(page, failures)
