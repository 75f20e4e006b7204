"""Every chart is computed once by plotly.js when it appears, in Chromium against `streamlit run`.

Streamlit's chart hands plotly.js a second copy of each figure right after the first drawing.
plotly.js compares it with the first and recomputes and redraws the whole chart if anything
differs in its eyes: a new template object (Streamlit's theme), typed arrays, arrays without a
`datarevision`, or a reversed axis whose range plotly.js had written back. `ui.views.draw`
sends figures without any of these (tests/test_chart_transport.py); this test watches the
charts themselves: each drawing's computed data (`calcdata`) must be the first one's.

The page around the charts should cost no more drawing than it must either: a change of display
mode draws no chart more often than a dk move, and a rerun does not start a fade on every element.
"""

from __future__ import annotations

import pytest
from plotly_page import dk_slider, wait_for_app

from ui.i18n import translate

# Counts each chart's drawings (plotly.js's "plotly_afterplot" event) and whether a drawing
# recomputed the chart (a new `calcdata` array). plotly.js gives every chart its `emit`
# method when it first draws it: the setter below wraps it before the first event.
WATCH_DRAWINGS_JS = """
window.__drawings = [];
Object.defineProperty(HTMLElement.prototype, 'emit', {configurable: true, set(emit) {
    const record = {drawings: 0, recomputed: 0, calcdata: null};
    window.__drawings.push(record);
    Object.defineProperty(this, 'emit', {configurable: true, writable: true, value: function(name, data) {
        if (name === 'plotly_afterplot') {
            if (record.drawings > 0 && this.calcdata !== record.calcdata) record.recomputed++;
            record.drawings++;
            record.calcdata = this.calcdata;
        }
        return emit.call(this, name, data);
    }});
}});
"""


@pytest.mark.parametrize("path", ["/?stage=weights", "/why-sqrt-dk", "/cell", "/multi-head"])
def test_no_chart_is_recomputed_after_its_first_drawing(page, path):
    page.add_init_script(WATCH_DRAWINGS_JS)
    page.goto(page.app_url + path)
    wait_for_app(page)
    page.wait_for_timeout(1500)  # the second copy arrives after the first drawing
    drawings = page.evaluate("window.__drawings.map(({drawings, recomputed}) => ({drawings, recomputed}))")
    assert len(drawings) == page.locator(".js-plotly-plot").count() > 0
    assert all(chart["drawings"] >= 1 for chart in drawings), drawings
    assert all(chart["recomputed"] == 0 for chart in drawings), f"charts computed again: {drawings}"
    assert not page.console_errors


def _drawings_after(page, change) -> list[int]:
    """How many times plotly.js drew each chart that appeared after `change()`, once the page is quiet."""
    before = page.evaluate("window.__drawings.length")
    change()
    page.wait_for_timeout(300)
    wait_for_app(page)
    page.wait_for_timeout(1500)  # a width that moves after the rerun redraws its charts later
    return page.evaluate(f"window.__drawings.slice({before}).map(record => record.drawings)")


@pytest.mark.parametrize("path", ["/?stage=weights", "/cell"])
def test_switching_the_display_mode_draws_each_chart_no_more_often_than_moving_dk(page, path):
    """Projector mode widens the sidebar. While Streamlit animated that width over 0.3 s, the
    main area narrowed step by step and plotly.js drew every chart again at each step (4 or 5
    times against a dk move's 2): a quarter of a second more for the teacher's click."""
    page.add_init_script(WATCH_DRAWINGS_JS)
    page.goto(page.app_url + path)
    wait_for_app(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text(translate("control.display_section", "en"), exact=True).click()
    dk = dk_slider(page).get_by_role("slider")
    dk_before = int(dk.input_value())
    moved = _drawings_after(page, lambda: dk.press("ArrowUp"))  # ← and → step the stages (ui/keys.py)
    projector = _drawings_after(page, lambda: sidebar.get_by_text(translate("display.projector", "en")).click())
    screen = _drawings_after(page, lambda: sidebar.get_by_text(translate("display.screen", "en"), exact=True).click())
    assert int(dk.input_value()) == dk_before + 1, "dk did not move"
    assert moved and projector and screen
    assert max(projector) <= max(moved), f"dk moved: {moved}; to projector: {projector}"
    assert max(screen) <= max(moved), f"dk moved: {moved}; back to screen: {screen}"
    assert not page.console_errors


# Records, for every element Streamlit marks stale during a rerun, its computed opacity at that
# moment and whether a transition of its opacity has begun (a delayed one included).
WATCH_STALE_JS = """
window.__stale = [];
document.addEventListener('DOMContentLoaded', () => new MutationObserver(records => {
    for (const record of records) {
        if (record.target.getAttribute('data-stale') !== 'true') continue;
        const style = getComputedStyle(record.target);
        const durations = style.transitionDuration.split(', ').map(parseFloat);
        const fades = style.transitionProperty.split(', ').some(
            (property, i) => ['opacity', 'all'].includes(property) && durations[i % durations.length] > 0);
        window.__stale.push({opacity: style.opacity, fades, transition: style.transition});
    }
}).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-stale']}));
"""


@pytest.mark.parametrize("path", ["/?stage=weights", "/?display=projector"])
def test_a_rerun_starts_no_fade_on_the_elements_it_marks_stale(page, path):
    """Streamlit gives each stale element an opacity transition, delayed by 0.5 s. A rerun at 16
    tokens ends long before it shows, yet Chromium moved every element to a layer of its own and
    back on every change (`ui.display.STALE_CSS`)."""
    page.add_init_script(WATCH_STALE_JS)
    page.goto(page.app_url + path)
    wait_for_app(page)
    dk_slider(page).get_by_role("slider").press("ArrowUp")
    page.wait_for_timeout(300)
    wait_for_app(page)
    stale = page.evaluate("window.__stale")
    assert len(stale) >= 10, f"the rerun marked {len(stale)} elements stale"
    fading = [element for element in stale if element["fades"] or element["opacity"] != "1"]
    assert not fading, f"{len(fading)} of {len(stale)} stale elements fade: {fading[:3]}"
    assert not page.console_errors
