"""Reading what Plotly drew in the browser: the data of every graph div on the page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
"""Screenshots and the server log of a browser test run land here (ignored by git)."""

HEATMAPS_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(graph => ({
    title: (graph.layout && graph.layout.title && graph.layout.title.text) || '',
    traces: (graph._fullData || []).filter(trace => trace.type === 'heatmap').map(trace => ({
        x: Array.from(trace.x || []).map(String),
        y: Array.from(trace.y || []).map(String),
        z: Array.from(trace.z || []).map(row => Array.from(row, value => value === null ? NaN : Number(value))),
    })),
    cells: graph.querySelectorAll('.heatmaplayer image, .heatmaplayer rect, .hm image').length,
}))
"""


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Wait until the app has finished running and drawn its charts."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && document.querySelectorAll('.js-plotly-plot').length > 0",
        timeout=timeout,
    )
    page.wait_for_timeout(500)  # let Plotly finish painting


def graphs(page) -> list[dict]:
    """Title and heatmap data (x, y labels and z values) of every Plotly graph on the page."""
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


MARGIN_REDRAWS_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(graph => {
    const layout = graph._fullLayout;
    if (!layout) return [];
    const title = (layout.title && layout.title.text || '').replace(/<[^>]+>/g, '');
    const found = [];
    for (const [id, pushes] of Object.entries(layout._pushmargin || {})) {
        if (!id.includes('automargin')) continue;  // axes only: colour bars and legends push before drawing
        for (const side of ['l', 'r', 't', 'b']) {
            const push = pushes[side];
            const atEdge = push && (side === 'l' || side === 'b' ? push.val < 0.001 : push.val > 0.999);
            if (atEdge && push.size > layout.margin[side] + 0.5) {
                found.push({title, axis: id, side, needed: Math.round(push.size), given: layout.margin[side]});
            }
        }
    }
    return found;
})
"""


def margin_redraws(page) -> list[dict]:
    """Figures whose axis labels or titles needed more margin than the figure gave: Plotly then
    widened the margin and drew the whole figure a second time (`reserve_label_room`)."""
    return page.evaluate(MARGIN_REDRAWS_JS)
