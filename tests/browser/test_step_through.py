"""The step-through page in headless Chromium against `streamlit run`, as a student uses it."""

from __future__ import annotations

import numpy as np
from plotly_page import ARTIFACTS, heatmap_titled, wait_for_app, wait_until_repainted

from attention_core import ToySettings, build_toy_trace


def _open(page, path: str = "/") -> None:
    page.goto(page.app_url + path)
    wait_for_app(page)


def test_first_stage_draws_the_embeddings_of_the_sentence(page):
    _open(page)
    heat = heatmap_titled(page, "X")
    expected = build_toy_trace(ToySettings())
    assert heat["y"] == expected.query_labels
    np.testing.assert_allclose(np.array(heat["z"]), expected.x_query, rtol=1e-12)
    assert page.locator(".katex").count() >= 1, "the stage's formula is typeset"
    page.screenshot(path=str(ARTIFACTS / "step_through.png"))
    assert not page.console_errors
    assert not page.external_requests, "nothing is loaded from the internet"


def test_next_button_and_dk_slider_repaint_the_scores(page):
    _open(page)
    for _ in range(2):
        page.get_by_role("button", name="Next →").click()
        page.wait_for_timeout(400)
    wait_for_app(page)
    before = heatmap_titled(page, "QKᵀ")
    np.testing.assert_allclose(np.array(before["z"]), build_toy_trace(ToySettings()).attention.raw_scores)

    slider = page.locator('[data-testid="stSlider"]').filter(has_text="dk:").get_by_role("slider")
    slider.focus()
    slider.press("ArrowUp")  # dk 8 → 9 (on this page ← / → step the stages)
    after = wait_until_repainted(page, "QKᵀ", before["z"])
    np.testing.assert_allclose(np.array(after["z"]), build_toy_trace(ToySettings(dk=9)).attention.raw_scores)
    assert not page.console_errors


def test_switching_to_chinese_translates_the_page_and_keeps_the_stage(page):
    _open(page)
    page.get_by_role("button", name="Next →").click()
    page.wait_for_timeout(400)
    page.get_by_text("中文", exact=True).click()
    page.get_by_text("查询 Q、键 K、值 V").first.wait_for(timeout=20_000)
    wait_for_app(page)
    assert page.get_by_role("button", name="下一步 →").is_visible()
    page.screenshot(path=str(ARTIFACTS / "step_through_zh.png"))
    assert not page.console_errors
