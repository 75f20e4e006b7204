"""The lesson additions in headless Chromium (1280 × 720, a projector's size) against `streamlit run`."""

from __future__ import annotations

import math
import re

import numpy as np
from plotly_page import ARTIFACTS, graphs, heatmap_titled, wait_for_app, wait_until_repainted

from attention_core import MaskSpec, ToySettings, build_toy_trace

SHAPES_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(graph => ({
    title: (graph.layout && graph.layout.title && graph.layout.title.text) || '',
    shapes: ((graph.layout && graph.layout.shapes) || []).map(s => [s.x0, s.x1, s.y0, s.y1]),
}))
"""


def _open(page, path: str = "/") -> None:
    page.goto(page.app_url + path)
    wait_for_app(page)


def _shapes_of(page, title_start: str, timeout_ms: int = 20_000) -> list:
    """The outlines of the graph whose title starts with `title_start`, once it is drawn."""
    for _ in range(timeout_ms // 250):
        for graph in page.evaluate(SHAPES_JS):
            if re.sub(r"<[^>]+>", "", graph["title"]).startswith(title_start):
                return graph["shapes"]
        page.wait_for_timeout(250)
    raise AssertionError(f"no graph titled {title_start!r}")


def test_a_new_visitor_first_sees_the_hand_numbered_example(page):
    _open(page)
    example = page.get_by_test_id("stMain").get_by_test_id("stExpander").first
    assert "dk = 4" in example.inner_text()
    box = example.bounding_box()
    assert box["y"] < 720 / 2, "the example starts in the top half of the first screen"
    assert example.locator(".katex").count() >= 4, "its matrices are typeset"
    assert "0.79" in example.inner_text() and "9.39" in example.inner_text()
    page.screenshot(path=str(ARTIFACTS / "lesson_first_example.png"))

    graph = page.locator(".js-plotly-plot").first
    folded_before = graph.bounding_box()["y"]
    example.locator("summary").click()  # a class that knows it folds it away
    page.wait_for_timeout(600)
    assert graph.bounding_box()["y"] < folded_before - 150, "folding brings the sentence's matrices up"
    assert not page.console_errors
    assert not page.external_requests


def test_a_link_with_a_highlight_outlines_the_cell_and_its_rows(page):
    _open(page, "/?view=overview&highlight=true&highlight_i=3&highlight_j=6")
    assert _shapes_of(page, "Q ") == [[-0.5, 7.5, 2.5, 3.5]]
    assert _shapes_of(page, "K ") == [[-0.5, 7.5, 5.5, 6.5]]
    assert _shapes_of(page, "QKᵀ ") == [[5.5, 6.5, 2.5, 3.5]]
    assert "highlight_i=3" in page.url and "highlight_j=6" in page.url
    page.screenshot(path=str(ARTIFACTS / "lesson_highlight.png"), full_page=True)
    assert not page.console_errors


def test_the_qkv_stage_draws_x_times_w(page):
    _open(page, "/?stage=qkv")
    page.get_by_text("How Q, K and V are made").first.wait_for(timeout=20_000)
    for _ in range(80):  # the three panels are drawn once Plotly has the figure
        sizes = [[len(trace["y"]), len(trace["x"])] for graph in graphs(page) for trace in graph["traces"]]
        if [16, 8] in sizes:
            break
        page.wait_for_timeout(250)
    assert [11, 16] in sizes and [16, 8] in sizes, "X (11 × 16) and W (16 × 8) are drawn"
    page.get_by_text("How Q, K and V are made").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "lesson_projection.png"))
    assert not page.console_errors


def test_the_positional_page_draws_the_sinusoids(page):
    _open(page, "/positional")
    drawn = np.array(heatmap_titled(page, "PE   64")["z"])
    d_model = drawn.shape[1]
    by_hand = [
        [
            (math.sin if dim % 2 == 0 else math.cos)(pos / 10000 ** (2 * (dim // 2) / d_model))
            for dim in range(d_model)
        ]
        for pos in range(64)
    ]
    np.testing.assert_allclose(drawn, by_hand, atol=1e-9)
    page.screenshot(path=str(ARTIFACTS / "lesson_positional.png"), full_page=True)
    assert not page.console_errors
    assert not page.external_requests


def test_one_click_gives_the_decoder_self_attention_masks(page):
    _open(page, "/masks")
    before = heatmap_titled(page, "M ")["z"]
    page.get_by_role("button", name="Decoder self-attention: causal + padding").click()
    after = wait_until_repainted(page, "M ", before)
    tokens = build_toy_trace(ToySettings()).key_tokens
    expected = MaskSpec(causal=True, padding=(len(tokens) - 1,)).build(list(tokens), list(tokens))
    np.testing.assert_array_equal(np.array(after["z"]) > 0.5, expected)
    page.get_by_text("These masks are those of").first.wait_for(timeout=20_000)
    page.screenshot(path=str(ARTIFACTS / "lesson_mask_uses.png"))
    assert not page.console_errors


def test_switching_the_highlight_on_outlines_a_cell_and_writes_the_link(page):
    _open(page, "/?stage=weights")
    assert _shapes_of(page, "A = softmax") == []
    page.get_by_text("Highlight one cell (i, j)").click()
    for _ in range(80):
        shapes = _shapes_of(page, "A = softmax")
        if shapes:
            break
        page.wait_for_timeout(250)
    assert shapes == [[-0.5, 0.5, -0.5, 0.5]], "cell (0, 0) until another is chosen"
    page.wait_for_function("() => window.location.search.includes('highlight=true')", timeout=20_000)
    assert not page.console_errors
