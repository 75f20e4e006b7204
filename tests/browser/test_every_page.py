"""Every page in a real browser: it draws, keeps the shared settings, and loads nothing from
the internet; the arrow keys step through the stages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from plotly_page import dk_slider, graphs, margin_redraws, wait_for_app

ROOT = Path(__file__).resolve().parents[2]


def _pages() -> list[tuple[str, str]]:
    """(file, URL path) of every page registered in app.py's PAGES."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    pages = next(
        node.value for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id == "PAGES"
    )
    return [(entry.elts[0].value, entry.elts[3].value) for entry in pages.elts]


PAGES = _pages()


def _open(page, url_path: str, query: str = "") -> None:
    page.goto(page.app_url + "/")  # the first page learns the routes (see README, Known limits)
    wait_for_app(page)
    if url_path != PAGES[0][1]:
        page.goto(f"{page.app_url}/{url_path}{query}")
    elif query:
        page.goto(f"{page.app_url}/{query}")


@pytest.mark.parametrize(("path", "url_path"), PAGES, ids=[path for path, _ in PAGES])
def test_every_page_draws_without_errors_or_internet(page, path, url_path):
    _open(page, url_path)
    if path == "pages/quiz.py":  # the quiz draws nothing before the answer is revealed
        page.get_by_role("button", name="Reveal").wait_for(timeout=60_000)
    elif path == "pages/decoder.py":  # the first visit reads and dequantizes the 98 MB model
        wait_for_app(page, timeout=240_000)
    else:
        wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    if path != "pages/quiz.py":
        assert any(graph["drawn"] for graph in graphs(page)), "a figure is drawn"
        assert not margin_redraws(page), "every figure leaves room for its labels: Plotly draws it once"
    assert not page.console_errors
    assert not page.external_requests, "nothing is loaded from a CDN or any other host"
    assert not page.dialogs


def test_page_switches_keep_the_shared_settings(page):
    _open(page, "", "?text=one+two+three+four&dk=5")
    wait_for_app(page)
    page.get_by_role("link", name="Follow one cell").click()
    page.get_by_text("Follow one cell", exact=True).first.wait_for()
    wait_for_app(page)
    assert dk_slider(page).locator("input[type=range]").input_value() == "5"
    assert page.get_by_role("textbox", name="Sentence", exact=True).input_value() == "one two three four"
    page.get_by_role("link", name="Step through").click()
    page.get_by_text("Tokens and embeddings X").first.wait_for()
    wait_for_app(page)
    assert graphs(page)[0]["traces"][0]["y"] == ["0:one", "1:two", "2:three", "3:four"]
    assert "dk=5" in page.url


def _press_until(page, key: str, heading: str) -> None:
    """Press `key` on the page until `heading` shows: a key pressed while the app is still
    starting a run can be dropped by the browser page, so it is pressed again (at most 3 times)."""
    for _ in range(3):
        page.keyboard.press(key)
        try:
            page.get_by_text(heading).first.wait_for(timeout=8_000)
            return
        except PlaywrightTimeoutError:  # press again
            continue
    raise AssertionError(f"{key} did not lead to {heading!r}")


def test_the_right_arrow_key_steps_to_the_next_stage(page):
    _open(page, "")
    page.get_by_role("button", name="Next →").wait_for()
    page.locator("h1").first.click()  # focus the page, not a widget
    _press_until(page, "ArrowRight", "Queries Q, keys K, values V")
    _press_until(page, "ArrowRight", "Raw scores QKᵀ")
    _press_until(page, "ArrowLeft", "Queries Q, keys K, values V")


def test_autoplay_walks_through_the_stages_by_itself(page):
    _open(page, "")
    page.get_by_text("Autoplay", exact=True).click()
    page.get_by_text("Queries Q, keys K, values V").first.wait_for(timeout=20_000)
    page.get_by_text("Raw scores QKᵀ").first.wait_for(timeout=20_000)
    page.get_by_text("Autoplay", exact=True).click()  # stop: the stage stays where it is
    page.wait_for_timeout(1500)
    stage = page.locator("h3").first.inner_text()
    page.wait_for_timeout(2500)
    assert page.locator("h3").first.inner_text() == stage
