"""A copied address restores the same view in another browser (real Chromium, real server)."""

from __future__ import annotations

from plotly_page import dk_slider, graphs, wait_for_app


def _drawn(page) -> list:
    return [(graph["title"], trace["y"], trace["z"]) for graph in graphs(page) for trace in graph["traces"]]


def test_a_copied_link_restores_the_view_in_a_new_browser(page, browser):
    page.goto(page.app_url + "/")
    wait_for_app(page)
    page.get_by_text("Causal (no looking ahead)").click()
    page.wait_for_timeout(500)
    slider = dk_slider(page).get_by_role("slider")
    value = dk_slider(page).locator("input[type=range]")
    slider.focus()
    for expected in ("9", "10", "11"):  # dk 8 → 11, one step at a time: each press starts a run
        slider.press("ArrowUp")  # ← / → step the stages on this page
        page.wait_for_function(
            "([element, expected]) => element.value === expected", arg=[value.element_handle(), expected]
        )
        wait_for_app(page)
    page.get_by_text("6 · softmax", exact=True).click()
    page.wait_for_timeout(500)
    page.get_by_text("中文", exact=True).click()
    page.get_by_text("Softmax 注意力权重 A").first.wait_for(timeout=20_000)
    wait_for_app(page)
    page.wait_for_timeout(1000)  # the URL is written at the end of the run
    page.get_by_text("本视图的链接").click()
    link = page.locator('[data-testid="stPopoverBody"] code').inner_text().strip()
    assert link == page.url, "the share box shows the address bar's link"
    assert "dk=11" in link and "mask_kind=causal" in link and "stage=weights" in link and "lang=zh" in link
    expected = _drawn(page)

    other = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    other.goto(link)
    wait_for_app(other)
    other.get_by_text("Softmax 注意力权重 A").first.wait_for(timeout=20_000)
    assert _drawn(other) == expected
    assert other.get_by_role("button", name="下一步 →").is_visible()
    other.context.close()


def test_a_link_with_bad_values_explains_them_and_still_draws(page):
    page.goto(page.app_url + "/?dk=99999&seed=abc&mask_kind=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    wait_for_app(page)
    alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
    assert "out of range" in alerts and "not understood" in alerts
    assert "<img src=x onerror=alert(1)>" in alerts, "the value is shown as text"
    assert page.locator("img[src='x']").count() == 0, "and never rendered as HTML"
    assert graphs(page)
    assert not page.dialogs
