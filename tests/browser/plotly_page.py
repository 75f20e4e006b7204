"""Reading what Plotly drew in the browser: the data of every graph div on the page."""

from __future__ import annotations

from pathlib import Path

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
