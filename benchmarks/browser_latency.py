"""How long a student waits after moving dk until the heatmap is repainted: headless Chromium against `streamlit run`.

    python benchmarks/browser_latency.py [--sizes 16 2048] [--repeats 7]

A real server (`streamlit run app.py` on a free local port, the project's
`.streamlit/config.toml` applied) and Debian's Chromium driven by Playwright. For each
sentence length n the step-through page opens at its "weights" stage (`/?stage=weights`),
the sentence of n distinct words is typed into the sidebar's text area (Control+Enter
applies it) and drawn once. Then, `repeats` times: wait until Streamlit is idle, take a
fingerprint of the first heatmap's z values, focus the dk slider, press ArrowUp (so
dk = 9, 10, …: a new trace each time) and poll the page every 20 ms until Plotly's data
for that heatmap has changed. The time from the key press to that moment covers the
WebSocket round trip, the script rerun, the figure's JSON and Plotly's repaint. One
warm-up change is not counted, nor the server's first visit (it imports the app; its time is
printed after the table, and it may take `--load-timeout`). The default sizes are 16 and the largest n the app accepts
(its token cap). The machine is shared: compare rows of one run, not runs of two days.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    CHANGED_JS,
    CHROMIUM_LAUNCH,
    EXCEPTIONS_JS,
    FIRST_HEATMAP_JS,
    FIRST_VISIT_PREFIX,
    IDLE_JS,
    LOAD_TIMEOUT_S,
    VIEWPORT,
    StreamlitServer,
    app_token_cap,
    exit_without_chromium,
    first_visit,
    machine_line,
    sentence,
    slider_locator,
    text_area_locator,
)


def last_position(labels: list[str]) -> int:
    """The position of the last row: labels are "position:token" or "first–last" for a block."""
    return int(re.match(r"\d+", labels[-1].split("–")[-1]).group()) if labels else -1


def wait_idle(page, timeout_ms: float) -> None:
    page.wait_for_function(IDLE_JS, timeout=timeout_ms, polling=50)


def open_with_sentence(page, url: str, n: int, expected_tokens: int, timeout_ms: float) -> dict:
    """Open the weights stage, type the sentence and wait until its heatmap is drawn."""
    page.goto(f"{url}/?stage=weights", timeout=timeout_ms)
    page.wait_for_selector(".js-plotly-plot", timeout=timeout_ms)
    wait_idle(page, timeout_ms)
    box = text_area_locator(page)
    box.fill(sentence(n))
    box.press("Control+Enter")
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        drawn = page.evaluate(FIRST_HEATMAP_JS)
        if drawn and last_position(drawn["labels"]) == expected_tokens - 1:
            wait_idle(page, timeout_ms)
            return page.evaluate(FIRST_HEATMAP_JS)
        page.wait_for_timeout(200)
    raise TimeoutError(f"the sentence of {n} words was not drawn within {timeout_ms / 1000:.0f} s")


def timed_change(page, timeout_ms: float) -> float:
    """Press ArrowUp on the dk slider (← / → step the stages on this page); seconds until the
    first heatmap's data has changed."""
    wait_idle(page, timeout_ms)
    before = page.evaluate(FIRST_HEATMAP_JS)["fingerprint"]
    slider = slider_locator(page)
    slider.focus()
    started = time.perf_counter()
    slider.press("ArrowUp")
    page.wait_for_function(CHANGED_JS, arg=[before, None], timeout=timeout_ms, polling=20)
    return time.perf_counter() - started


def measure(browser, url: str, n: int, cap: int, repeats: int, timeout_ms: float) -> dict:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        expected = min(n, cap)
        drawn = open_with_sentence(page, url, n, expected, timeout_ms)
        timed_change(page, timeout_ms)  # warm-up
        times = [timed_change(page, timeout_ms) for _ in range(repeats)]
        exceptions = page.evaluate(EXCEPTIONS_JS)
    finally:
        context.close()
    return {
        "kept": last_position(drawn["labels"]) + 1,
        "rows": len(drawn["labels"]),
        "times": times,
        "errors": exceptions + len(errors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", help="sentence lengths (default: 16 and the app's cap)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=180, help="seconds one change may take")
    parser.add_argument("--load-timeout", type=float, default=LOAD_TIMEOUT_S,
                        help="seconds the server's first visit may take (it imports the app)")
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import sync_playwright

    cap = app_token_cap()
    sizes = args.sizes or sorted({16, cap})
    print(machine_line())
    print(f"the app's token cap: {cap}; {args.repeats} timed dk changes per row after one warm-up\n")
    print(f"{'n asked':>7} {'kept':>5} {'rows':>5} {'changes':>7} {'median ms':>9} {'min ms':>7} {'max ms':>7} "
          f"{'× n=16':>6} {'errors':>6}")
    with StreamlitServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        try:
            first_visit_s = first_visit(browser, server, "/?stage=weights", args.load_timeout)
            baseline = None
            for n in sizes:
                result = measure(browser, server.url, n, cap, args.repeats, args.timeout * 1000)
                median = statistics.median(result["times"])
                baseline = baseline or (median if n == 16 else None)
                ratio = f"{median / baseline:>6.1f}" if baseline else f"{'—':>6}"
                print(
                    f"{n:>7} {result['kept']:>5} {result['rows']:>5} {len(result['times']):>7} "
                    f"{median * 1e3:>9.0f} {min(result['times']) * 1e3:>7.0f} {max(result['times']) * 1e3:>7.0f} "
                    f"{ratio} {result['errors']:>6}",
                    flush=True,
                )
        finally:
            browser.close()
    print(f"{FIRST_VISIT_PREFIX}{first_visit_s:.1f} s")


if __name__ == "__main__":
    main()
