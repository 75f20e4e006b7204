"""What one more element costs the browser on every rerun, kind by kind (Chromium's trace).

    python benchmarks/widget_cost.py [--count 10] [--rounds 3] [--changes 8] [--kinds selectbox radio ...]

A page's controls and text are sent again on every rerun, changed or not, and the browser
draws them again (`browser_profile.py`: React, styling and Streamlit's components take most
of a dk move's extra time on the app's pages against the floor app). This script serves
`widgets_app.py`: the floor app with `--count` elements of one kind that do not depend on dk,
and for each kind records `--changes` dk moves in Chrome's trace (no sampling profiler), as
`browser_profile.py --trace` does. The kinds are taken in turn, `--rounds` times, and each
row is the median over the rounds of the main thread's ms per dk move: its tasks, and their
script, style, layout and paint. The last column is the kind's extra over `none` (the floor
app alone, measured in the same rounds), divided by the count: one element's cost per rerun.
The machine is shared: compare rows of one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    CHROMIUM_LAUNCH,
    LOAD_TIMEOUT_S,
    VIEWPORT,
    StreamlitServer,
    exit_without_chromium,
    machine_line,
    sentence,
)
from browser_profile import TRACE_COLUMNS, profile_dk, summarise_trace, traced

WIDGETS_APP = Path(__file__).with_name("widgets_app.py")
KINDS = ("none", "selectbox", "radio", "segmented_control", "toggle", "slider", "select_slider", "number_input",
         "text_area", "button", "markdown", "caption", "latex", "expander", "tabs", "tabs_lazy", "columns", "popover")
"""What `widgets_app.py` can draw: each but "none" is a branch of its `draw`."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10, help="elements of each kind")
    parser.add_argument("--rounds", type=int, default=3, help="times each kind is measured, in turn")
    parser.add_argument("--changes", type=int, default=8, help="dk moves traced per measurement")
    parser.add_argument("--n", type=int, default=12, help="tokens in the sentence")
    parser.add_argument("--kinds", nargs="+", choices=KINDS[1:], default=list(KINDS[1:]))
    parser.add_argument("--timeout", type=float, default=LOAD_TIMEOUT_S, help="seconds a page may take")
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import sync_playwright

    print(machine_line())
    print(f"{args.count} elements of each kind, {args.n} tokens, {args.changes} dk moves per measurement, "
          f"{args.rounds} rounds; ms of the main thread per dk move, median over the rounds\n")
    kinds = ["none", *args.kinds]
    measured: dict[str, list[list[float]]] = {kind: [] for kind in kinds}
    timeout_ms = args.timeout * 1000
    with sync_playwright() as playwright, StreamlitServer(app=WIDGETS_APP) as server:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        for _ in range(args.rounds):
            for kind in kinds:
                context = browser.new_context(viewport=VIEWPORT)
                url = f"{server.url}/?numbers=1&kind={kind}&count={args.count}"
                events = profile_dk(context, url, sentence(args.n), args.changes, timeout_ms, record=traced)
                context.close()
                by_kind = summarise_trace(events)
                measured[kind].append([by_kind[column] / args.changes for column in TRACE_COLUMNS])
        browser.close()

    medians = {kind: [statistics.median(row[i] for row in rows) for i in range(len(TRACE_COLUMNS))]
               for kind, rows in measured.items()}
    base_tasks = medians["none"][0]
    print(f"{'kind':18} " + " ".join(f"{column:>8}" for column in TRACE_COLUMNS) + f" {'each':>8}")
    for kind in kinds:
        each = "" if kind == "none" else f"{(medians[kind][0] - base_tasks) / args.count:8.1f}"
        print(f"{kind:18} " + " ".join(f"{value:8.0f}" for value in medians[kind]) + f" {each:>8}")
    print("\neach: (tasks − none's tasks) / count, ms per element per rerun")


if __name__ == "__main__":
    main()
