"""Reading what Plotly drew in the browser: the data of every graph div on the page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ui.i18n import translate

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
"""Screenshots and the server log of a browser test run land here (ignored by git)."""

HEATMAPS_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(graph => ({
    title: (graph.layout && graph.layout.title && graph.layout.title.text) || '',
    drawn: (graph._fullData || []).length,
    traces: (graph._fullData || []).filter(trace => trace.type === 'heatmap').map(trace => ({
        x: Array.from(trace.x || []).map(String),
        y: Array.from(trace.y || []).map(String),
        z: Array.from(trace.z || []).map(row => Array.from(row, value => value === null ? NaN : Number(value))),
    })),
    cells: graph.querySelectorAll('.heatmaplayer image, .heatmaplayer rect, .hm image').length,
}))
"""


def dk_slider(page, language: str = "en"):
    """The sidebar's dk slider (its Streamlit box: `.get_by_role("slider")` is the handle to press,
    `.locator("input[type=range]")` holds its value), found by its label in `language`."""
    label = translate("control.dk", language)
    return page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text=label)


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Wait until the app has finished running and drawn its charts."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && document.querySelectorAll('.js-plotly-plot').length > 0",
        timeout=timeout,
    )
    page.wait_for_timeout(500)  # let Plotly finish painting


def wait_for_row_labels(page, expected: list[str], timeout: float = 30_000) -> None:
    """Wait until the page's first heatmap has exactly the row labels `expected`."""
    page.wait_for_function(
        "(expected) => { const g = document.querySelector('.js-plotly-plot');"
        " const t = g && (g._fullData || []).find(t => t.type === 'heatmap');"
        " return t && Array.from(t.y).join('|') === expected.join('|'); }",
        arg=expected, timeout=timeout,
    )


def closed_connections(page) -> list[str]:
    """A list that fills with the console's reports of the app's WebSocket closing."""
    closed: list[str] = []
    page.on("console", lambda message: "WebSocket onclose" in message.text and closed.append(message.text))
    return closed


def graphs(page) -> list[dict]:
    """Title, number of traces drawn and heatmap data (x, y labels and z values) of every Plotly graph."""
    return page.evaluate(HEATMAPS_JS)


def first_heatmap(page) -> dict:
    """The first heatmap trace on the page."""
    return next(trace for graph in graphs(page) for trace in graph["traces"])


def heatmap_titled(page, title_start: str) -> dict:
    """The first heatmap trace of the graph whose title (tags removed) starts with `title_start`."""
    for graph in graphs(page):
        if re.sub(r"<[^>]+>", "", graph["title"]).startswith(title_start) and graph["traces"]:  # titles arrive bold
            return graph["traces"][0]
    raise AssertionError(f"no heatmap titled {title_start!r}: {[g['title'] for g in graphs(page)]}")


def wait_until_repainted(page, title_start: str, before: list, timeout_ms: int = 20_000) -> dict:
    """Poll until the heatmap titled `title_start` holds data other than `before` (NaN-aware)."""
    for _ in range(timeout_ms // 250):
        page.wait_for_timeout(250)
        try:
            current = heatmap_titled(page, title_start)
        except AssertionError:
            continue
        if not np.array_equal(np.array(current["z"]), np.array(before), equal_nan=True):
            return current
    raise AssertionError(f"the heatmap {title_start!r} was not repainted")


MARGIN_REDRAWS_JS = (Path(__file__).with_name("margin_redraws.js")).read_text(encoding="utf-8")
"""A script taking one graph div to its axes that needed a wider margin (also used by
`benchmarks/plotly_margins.py`)."""


def margin_redraws(page) -> list[dict]:
    """Figures whose axis labels or titles needed more margin than the figure gave: Plotly then
    widened the margin and drew the whole figure a second time (`reserve_label_room`)."""
    return page.evaluate(
        f"() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap({MARGIN_REDRAWS_JS})"
    )
