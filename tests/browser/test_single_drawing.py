"""Every chart is computed once by plotly.js when it appears, in Chromium against `streamlit run`.

Streamlit's chart hands plotly.js a second copy of each figure right after the first drawing.
plotly.js compares it with the first and recomputes and redraws the whole chart if anything
differs in its eyes: a new template object (Streamlit's theme), typed arrays, arrays without a
`datarevision`, or a reversed axis whose range plotly.js had written back. `ui.views.draw`
sends figures without any of these (tests/test_chart_transport.py); this test watches the
charts themselves: each drawing's computed data (`calcdata`) must be the first one's.
"""

from __future__ import annotations

import pytest
from plotly_page import wait_for_app

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
