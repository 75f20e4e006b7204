"""What keeping each plot across a rerun would save: dk moved under 1, 5 and 12 heatmaps, drawn two ways.

    python benchmarks/kept_charts.py [--counts 1 5 12] [--changes 7] [--rounds 2]

A real server runs `benchmarks/kept_chart_app.py`: `count` copies of the app's weights heatmap
(16 tokens, numbers printed) under a dk slider, drawn by the app's `ui.views.draw` ("app":
Streamlit's chart, which mounts a new plotly.js plot for every changed figure) or by a component
that keeps its plot and calls `Plotly.react` ("kept"). In Debian's Chromium, dk is moved one step
`--changes` times (forwards, back, …); each change is timed from the key press to the page's last
DOM change (quiet 500 ms after Streamlit's "Running…" is gone). The two ways take turns, `--rounds`
times each, so that both see the same load; the table gives the median of all their changes.
After its changes each way must show the numbers of the dk the slider ends on: the first
heatmap's first row as plotly.js computed it, against the same figure built here. If it does not
within `--timeout`, the script stops.

The step-through draws 1 to 3 figures per stage, the follow-one-cell page 5, multi-head 7, the
overview 12. A page's control has met its target when its median is at most 250 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    CHROMIUM_LAUNCH,
    IDLE_JS,
    LAST_CHANGE_JS,
    QUIET_MS,
    ROOT,
    VIEWPORT,
    StreamlitServer,
    exit_without_chromium,
    machine_line,
    sentence,
    slider_locator,
)

KEPT_CHART_APP = ROOT / "benchmarks" / "kept_chart_app.py"
WAYS = ("app", "kept")
DRAWN_JS = """(count) => {
    const graphs = document.querySelectorAll('.js-plotly-plot');
    return graphs.length === count && [...graphs].every(graph => graph.calcdata && graph.querySelector('.hm image'));
}"""
"""True once `count` heatmaps are drawn."""
SHOWS_ROW_JS = """(expected) => {
    const graph = document.querySelector('.js-plotly-plot');
    const row = graph && graph.calcdata ? graph.calcdata[0][0].z[0].map(value => value.toFixed(6)) : [];
    return JSON.stringify(row) === JSON.stringify(expected);
}"""
"""True once the first heatmap's first row, as plotly.js computed it (not as it was sent), is `expected`."""
SLIDER_AT_JS = "([handle, value]) => (handle.getAttribute('aria-valuenow') ?? handle.value) === value"
"""True once the slider's handle (a range input or an ARIA slider) is at `value`."""
FIRST_DK = 8
"""The slider's starting dk (kept_chart_app.py)."""


def expected_first_row(dk: int) -> list[str]:
    """The first row of the weights heatmap at `dk`, built as kept_chart_app.py builds it."""
    sys.path.insert(0, str(ROOT))  # the app's packages, without installing
    from attention_core import ToySettings, build_toy_trace
    from attention_core.figures import heatmap
    from ui.views import ready_spec

    spec = ready_spec(heatmap(build_toy_trace(ToySettings(text=sentence(16), dk=dk)), "weights"))
    return [f"{value:.6f}" for value in spec["data"][0]["z"][0]]


def change_ms(page, changes: int, timeout_ms: float) -> list[float]:
    """Milliseconds from each press of an arrow key on the dk slider to the page's last DOM change."""
    handle = slider_locator(page)
    element = handle.element_handle()
    times = []
    for change in range(changes):
        start = page.evaluate("performance.now()")
        handle.press("ArrowRight" if change % 2 == 0 else "ArrowLeft")
        page.wait_for_function(SLIDER_AT_JS, arg=[element, str(FIRST_DK + (change + 1) % 2)], timeout=timeout_ms)
        page.wait_for_timeout(100)  # the rerun has begun
        page.wait_for_function(IDLE_JS, timeout=timeout_ms, polling=20)
        times.append(page.evaluate(LAST_CHANGE_JS) - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 5, 12], help="heatmaps on the page")
    parser.add_argument("--changes", type=int, default=7, help="dk changes per round and way")
    parser.add_argument("--rounds", type=int, default=2, help="turns of each way per count")
    parser.add_argument("--timeout", type=float, default=120, help="seconds one change may take")
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    timeout_ms = args.timeout * 1000
    print(machine_line())
    print(f"time = arrow key on the dk slider → last DOM change (quiet {QUIET_MS} ms); 16 tokens, numbers printed; "
          f"median of {args.rounds} × {args.changes} changes\n")
    print(f"{'figures':>7} {'app ms':>7} {'kept ms':>8} {'kept ÷ app':>11}")
    counts = sorted(args.counts)
    medians: dict[tuple[str, int], float] = {}
    with StreamlitServer(app=KEPT_CHART_APP) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        for count in counts:
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            last_dk = FIRST_DK + args.changes % 2
            expected = expected_first_row(last_dk)
            for round_ in range(args.rounds):
                for way in WAYS if round_ % 2 == 0 else WAYS[::-1]:  # in turn
                    context = browser.new_context(viewport=VIEWPORT)
                    page = context.new_page()
                    page.goto(f"{server.url}/?count={count}&chart={way}", timeout=timeout_ms)
                    page.wait_for_function(DRAWN_JS, arg=count, timeout=timeout_ms, polling=50)
                    page.evaluate(LAST_CHANGE_JS)  # settled
                    times[way] += change_ms(page, args.changes, timeout_ms)
                    try:
                        page.wait_for_function(SHOWS_ROW_JS, arg=expected, timeout=timeout_ms, polling=50)
                    except PlaywrightTimeout:
                        sys.exit(f"{count} figures, {way}: the heatmap does not show the numbers of dk = {last_dk}")
                    context.close()
            for way in WAYS:
                medians[way, count] = statistics.median(times[way])
            print(f"{count:>7} {medians['app', count]:>7.0f} {medians['kept', count]:>8.0f} "
                  f"{medians['kept', count] / medians['app', count]:>11.2f}", flush=True)
        browser.close()
    if len(counts) > 1:
        low, high = counts[0], counts[-1]
        extra = {way: (medians[way, high] - medians[way, low]) / (high - low) for way in WAYS}
        print(f"per extra figure ({low} → {high}): app {extra['app']:.0f} ms, kept {extra['kept']:.0f} ms")


if __name__ == "__main__":
    main()
