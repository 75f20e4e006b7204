"""What one more figure costs the browser: 1, 4 and 12 copies of the app's heatmap mounted at once.

    python benchmarks/figure_cost.py [--sizes 16 2048] [--counts 1 4 12] [--mounts 4]

A real server runs `benchmarks/figures_app.py`, and Debian's Chromium ticks its "Draw" box:
that mounts `count` copies of the app's weights heatmap for a sentence of `n` words (a
16 × 16 heatmap with its numbers, or 2,048 tokens drawn as 187 × 187 blocks). Each mount is
timed from the click to the last change of the page's DOM (nothing changes for 500 ms after
it), then the box is cleared again; the first mount, which also loads plotly.js, is left
out, and the table gives the median of `--mounts` more. "per extra figure" is
(time for the most figures − time for one) ÷ (their difference): what a page pays for each
figure it adds, whatever the figure holds. A stage of the step-through draws one to three
figures, the overview one per matrix. The machine is shared: compare rows of one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    CHROMIUM_LAUNCH,
    DRAW_LABEL,
    FIGURES_APP,
    IDLE_JS,
    LAST_CHANGE_JS,
    QUIET_MS,
    VIEWPORT,
    StreamlitServer,
    exit_without_chromium,
    machine_line,
)


def mount_ms(page, mounts: int, timeout_ms: float) -> list[float]:
    """Milliseconds from ticking "Draw" to the page's last DOM change, for each of `mounts` mounts."""
    box = page.get_by_text(DRAW_LABEL, exact=True)
    times = []
    for mount in range(mounts + 1):  # the first also loads plotly.js: left out
        for ticked in (True, False):
            start = page.evaluate("performance.now()")
            box.click()
            page.wait_for_timeout(100)  # the rerun has begun
            page.wait_for_function(IDLE_JS, timeout=timeout_ms, polling=20)
            last = page.evaluate(LAST_CHANGE_JS)
            if ticked and mount > 0:
                times.append(last - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 2048], help="tokens in the sentence")
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 12], help="figures mounted at once")
    parser.add_argument("--mounts", type=int, default=4, help="timed mounts per row (after one left out)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds one mount may take")
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import sync_playwright

    print(machine_line())
    print(f"time = tick of 'Draw' → last DOM change (quiet {QUIET_MS} ms); median of {args.mounts} mounts\n")
    print(f"{'n':>5} {'figures':>8} {'median ms':>10} {'per figure':>11}   mounts (ms)")
    counts = sorted(args.counts)
    with StreamlitServer(app=FIGURES_APP) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        for n in args.sizes:
            medians = {}
            for count in counts:
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                page.goto(f"{server.url}/?count={count}&n={n}", timeout=args.timeout * 1000)
                page.get_by_text(DRAW_LABEL, exact=True).wait_for(timeout=args.timeout * 1000)
                times = mount_ms(page, args.mounts, args.timeout * 1000)
                context.close()
                medians[count] = statistics.median(times)
                print(f"{n:5} {count:8} {medians[count]:10.0f} {medians[count] / count:11.0f}   "
                      + " ".join(f"{time:.0f}" for time in times), flush=True)
            if len(counts) > 1:
                extra = (medians[counts[-1]] - medians[counts[0]]) / (counts[-1] - counts[0])
                print(f"{n:5} per extra figure ({counts[0]} → {counts[-1]}): {extra:.0f} ms\n", flush=True)


if __name__ == "__main__":
    main()
