"""The step-through page in headless Chromium against `streamlit run`, as a student uses it."""

from __future__ import annotations

import numpy as np
from plotly_page import ARTIFACTS, dk_slider, heatmap_titled, wait_for_app, wait_until_repainted

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

    slider = dk_slider(page).get_by_role("slider")
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


def test_a_chosen_zoom_gives_way_to_the_heatmap_when_the_sentence_gets_short(page):
    """The Zoom view exists only for a long sentence. Once a short sentence is typed, the
    picker falls back to Heatmap, and the browser shows that choice too (Streamlit resets a
    kept value that is no longer an option and tells the browser), with no error."""
    long_text = " ".join(f"w{position}" for position in range(80))
    _open(page, f"/?stage=weights&text={long_text.replace(' ', '+')}")
    picker = page.locator(".st-key-step-weights-weights-tab")
    picker.locator("button").filter(has_text="Zoom").click()
    page.locator(".st-key-step-weights-weights-zoom-row").wait_for(timeout=20_000)
    wait_for_app(page)

    box = page.get_by_role("textbox", name="Sentence", exact=True)
    box.fill("a b c")
    box.press("Control+Enter")
    page.locator(".st-key-step-weights-weights-zoom-row").wait_for(state="detached", timeout=20_000)
    wait_for_app(page)
    assert heatmap_titled(page, "A = softmax")["y"] == ["0:a", "1:b", "2:c"]
    assert picker.locator("button").all_inner_texts() == ["Heatmap", "Table"]
    chosen = picker.get_by_role("radio", checked=True)
    assert chosen.all_inner_texts() == ["Heatmap"], "the browser shows the choice the server fell back to"
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.console_errors
