"""Where the browser's time goes: Chromium's CPU profile of dk changes and of a first paint.

    python benchmarks/browser_profile.py [--page /] [--n 16] [--changes 6] [--apps app floor floor+numbers]
                                         [--scenarios dk first-paint] [--top 6]

`control_latency.py` times each control from the action to the last repaint; this script
says what the page's main thread did in that time. For each app (the app on `--page`, the
one-heatmap floor app, and the floor app with its weights printed in the cells, as the app
prints them) and each scenario, Chromium's sampling profiler (0.2 ms) records:

- `dk`: a sentence of `--n` words typed in, then `--changes` moves of the dk slider
  (ArrowUp, ArrowDown, ...: on the step-through ← / → step the stages), each waited out until
  Streamlit is idle and the page has been quiet for a moment; the script stops if the slider
  did not move. The table shows milliseconds per change.
- `first-paint`: the page opened with its default sentence in a tab of a browser that has loaded it twice before (its
  scripts cached, as for a returning student), until the first heatmap's image is drawn;
  the table shows milliseconds for the one opening.

Busy time is split by whose code ran: Plotly (plotly.js, bundled in Streamlit's
`PlotlyChart` chunk), React (`react-dom`), styling (Streamlit's emotion and
styled-components chunks; the latter also bundles react-aria's focus helpers), Markdown
(Streamlit's Markdown renderer and KaTeX), the rest of Streamlit's own code, the browser's
native work not called from a script (style, layout and paint: V8's "(program)") and
garbage collection. A native call made by a script (getBoundingClientRect, toDataURL, ...)
counts for the script that made it. Below the table, the calls that took longest, each
with the chunk that made it. `--trace` records the dk moves once more in Chrome's trace (no
sampling profiler slowing the scripts down) and prints the main thread's tasks per change with
the time spent in style, layout, paint and garbage collection; the rest is script. Idle time
is left out. `--threads` records them a third time with Chrome's task events of every thread
of every process (the renderer's main thread, its raster workers and compositor, the browser
process, the GPU process) and prints each thread's busy milliseconds per change and their sum:
what one change costs the machine's cores, where the profile shows the main thread only. The
machine is shared: compare rows of one run.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    CHROMIUM_LAUNCH,
    FLOOR_APP,
    IDLE_JS,
    LOAD_TIMEOUT_S,
    VIEWPORT,
    StreamlitServer,
    exit_without_chromium,
    machine_line,
    sentence,
    slider_locator,
    text_area_locator,
)

APPS = {"app": (None, ""), "floor": (FLOOR_APP, ""), "floor+numbers": (FLOOR_APP, "numbers=1")}
"""Name → (app file, None for app.py; extra query). The floor app's page is always /."""

CATEGORIES = ("plotly", "react", "styling", "markdown", "streamlit", "browser", "gc")
CHUNK_CATEGORIES = (
    ("PlotlyChart", "plotly"),
    ("react-dom", "react"),
    ("emotion", "styling"),
    ("styled-components", "styling"),
    ("StreamlitMarkdown", "markdown"),
    ("katex", "markdown"),
)
"""A chunk's file name start (or part) → its category; any other script is Streamlit's own."""

SAMPLING_MICROSECONDS = 200
QUIET_MS = 700
"""How long the page must stay idle after a change before the next one."""
DRAWN_JS = "() => !!document.querySelector('.js-plotly-plot .heatmaplayer image')"


def chunk(url: str) -> str:
    """A script URL's file name without its content hash ('PlotlyChart' for PlotlyChart.D9Z0_fxz.js)."""
    return url.rsplit("/", 1)[-1].split(".", 1)[0]


def category(url: str, function: str) -> str | None:
    """The category of a frame with code at `url`; None for a native call (counted for its caller)."""
    if function == "(program)":
        return "browser"
    if function == "(garbage collector)":
        return "gc"
    if function == "(idle)":
        return "idle"
    if not url:
        return None
    for part, name in CHUNK_CATEGORIES:
        if part in url.rsplit("/", 1)[-1]:
            return name
    return "streamlit"


def summarise(profile: dict) -> tuple[collections.Counter, collections.Counter]:
    """Milliseconds by category, and by (call, the chunk that made it), from a CPU profile."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parents = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    by_category: collections.Counter = collections.Counter()
    by_call: collections.Counter = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        milliseconds = delta / 1000
        frame = nodes[sample]["callFrame"]
        function = frame["functionName"] or "(anonymous)"
        kind = category(frame["url"], function)
        caller_url = frame["url"]
        node_id = sample
        while kind is None and node_id in parents:  # a native call: count it for the script that made it
            node_id = parents[node_id]
            caller_url = nodes[node_id]["callFrame"]["url"]
            kind = category(caller_url, nodes[node_id]["callFrame"]["functionName"])
        kind = kind or "browser"
        by_category[kind] += milliseconds
        if kind != "idle":
            by_call[(function, chunk(caller_url) if caller_url else "")] += milliseconds
    return by_category, by_call


def profiled(page, action) -> dict:
    """Chromium's CPU profile of `action()` on `page`."""
    session = page.context.new_cdp_session(page)
    session.send("Profiler.enable")
    session.send("Profiler.setSamplingInterval", {"interval": SAMPLING_MICROSECONDS})
    session.send("Profiler.start")
    action()
    profile = session.send("Profiler.stop")["profile"]
    session.detach()
    return profile


TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute"]
TRACE_KINDS = (
    ("style", ("UpdateLayoutTree", "RecalculateStyles", "ParseAuthorStyleSheet")),
    ("layout", ("Layout", "UpdateLayerTree", "HitTest")),
    ("paint", ("Paint", "PrePaint", "Layerize", "Commit", "PaintImage", "Decode Image", "ImageDecodeTask")),
    ("gc", ("MinorGC", "MajorGC", "BlinkGC.AtomicPhase", "V8.GC_SCAVENGER", "V8.GC_MARK_COMPACTOR")),
)
"""Chrome's trace events of the renderer's main thread by kind; the rest of a task's time is script."""
TRACE_COLUMNS = ("tasks", "script", "style", "layout", "paint", "gc")


THREAD_CATEGORIES = [*TRACE_CATEGORIES, "toplevel", "cc", "gpu", "viz"]
"""`--threads`: the task events of every thread as well (the raster workers', the GPU process's, ...)."""


def traced(page, action, categories=TRACE_CATEGORIES) -> list[dict]:
    """Chrome's trace events of `action()` on `page` (no sampling profiler slowing the scripts)."""
    browser = page.context.browser
    browser.start_tracing(page=page, categories=categories)
    action()
    return json.loads(browser.stop_tracing())["traceEvents"]


def traced_threads(page, action) -> list[dict]:
    """`traced` with the task events of every thread of every process."""
    return traced(page, action, THREAD_CATEGORIES)


def thread_names(events: list[dict]) -> dict[tuple, str]:
    """(process id, thread id) → the thread's name, from the trace's metadata events."""
    return {(event["pid"], event["tid"]): event["args"].get("name", "?")
            for event in events if event.get("name") == "thread_name"}


def events_by_thread(events: list[dict], threads=None):
    """Each thread's complete events (those of `threads` only, if given) as ((pid, tid), events),
    in the order they began, an enclosing event before the events inside it."""
    complete = sorted((event for event in events if event.get("ph") == "X" and "dur" in event
                       and (threads is None or (event["pid"], event["tid"]) in threads)),
                      key=lambda event: (event["pid"], event["tid"], event["ts"], -event["dur"]))
    return itertools.groupby(complete, key=lambda event: (event["pid"], event["tid"]))


def busy_by_thread(events: list[dict]) -> collections.Counter:
    """Milliseconds of each thread's outermost events (its tasks), by thread name, every process."""
    names = thread_names(events)
    busy: collections.Counter = collections.Counter()
    for thread, thread_events in events_by_thread(events):
        end = -1.0
        for event in thread_events:
            if event["ts"] >= end:  # an outermost event; the ones inside it are its parts
                busy[names.get(thread, "?")] += event["dur"] / 1000
                end = event["ts"] + event["dur"]
    return busy


def summarise_trace(events: list[dict]) -> collections.Counter:
    """Milliseconds of the main thread's tasks, and each event's own time (nested events left out) by kind."""
    main = {thread for thread, name in thread_names(events).items() if name == "CrRendererMain"}
    kind_of = {name: kind for kind, names in TRACE_KINDS for name in names}
    by_kind: collections.Counter = collections.Counter()
    for _, thread_events in events_by_thread(events, main):
        own: list[list] = []  # [event, its own microseconds]: its duration less its nested events'
        open_events: list[tuple[float, list]] = []  # (end, its entry in own), innermost last
        for event in thread_events:
            while open_events and event["ts"] >= open_events[-1][0]:
                open_events.pop()
            if open_events:
                open_events[-1][1][1] -= event["dur"]
            else:
                by_kind["tasks"] += event["dur"] / 1000
            entry = [event, event["dur"]]
            own.append(entry)
            open_events.append((event["ts"] + event["dur"], entry))
        for event, microseconds in own:
            by_kind[kind_of.get(event["name"], "script")] += microseconds / 1000
    return by_kind


def settle(page, timeout_ms: float) -> None:
    page.wait_for_timeout(100)  # the rerun has begun
    page.wait_for_function(IDLE_JS, timeout=timeout_ms, polling=20)
    page.wait_for_timeout(QUIET_MS)


def profile_dk(context, url: str, text: str, changes: int, timeout_ms: float, record=None):
    """`changes` dk moves on a page showing `text`, recorded by `record(page, action)` (the CPU profiler)."""
    record = record or profiled
    page = context.new_page()
    page.goto(url, timeout=timeout_ms)
    page.wait_for_function(DRAWN_JS, timeout=timeout_ms)
    box = text_area_locator(page)
    box.fill(text)
    box.press("Control+Enter")  # typed, as control_latency.py does: the floor app reads no link
    settle(page, timeout_ms)
    slider = slider_locator(page)
    slider.focus()

    values = [slider.input_value()]

    def move() -> None:
        for step in range(changes):
            page.keyboard.press("ArrowUp" if step % 2 == 0 else "ArrowDown")
            settle(page, timeout_ms)
            values.append(slider.input_value())

    profile = record(page, move)
    page.close()
    if any(before == after for before, after in itertools.pairwise(values)):
        raise SystemExit(f"the dk slider did not move with every key press: {' → '.join(map(str, values))}")
    return profile


def profile_first_paint(context, url: str, timeout_ms: float) -> dict:
    for _ in range(2):  # the browser caches the page's scripts, as for a returning student
        page = context.new_page()
        page.goto(url, timeout=timeout_ms)
        page.wait_for_function(DRAWN_JS, timeout=timeout_ms)
        page.close()
    page = context.new_page()

    def open_page() -> None:
        page.goto(url, timeout=timeout_ms)
        page.wait_for_function(DRAWN_JS, timeout=timeout_ms, polling=10)

    profile = profiled(page, open_page)
    page.close()
    return profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="/", help="the app's page (its address, e.g. / or /cell)")
    parser.add_argument("--n", type=int, default=16, help="tokens in the sentence")
    parser.add_argument("--changes", type=int, default=6, help="dk moves profiled")
    parser.add_argument("--apps", nargs="+", choices=list(APPS), default=list(APPS))
    parser.add_argument("--scenarios", nargs="+", choices=["dk", "first-paint"], default=["dk", "first-paint"])
    parser.add_argument("--top", type=int, default=6, help="longest calls listed per row")
    parser.add_argument("--timeout", type=float, default=LOAD_TIMEOUT_S, help="seconds a page may take")
    parser.add_argument("--trace", action="store_true",
                        help="also record the dk moves again in Chrome's trace: the main thread's tasks by kind")
    parser.add_argument("--threads", action="store_true",
                        help="also record the dk moves again with every thread's tasks: busy ms per thread")
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import sync_playwright

    print(machine_line())
    print(f"dk: {args.n} tokens; CPU profile sampled every {SAMPLING_MICROSECONDS} µs; ms of the main thread, idle left"
          f" out; dk: per change ({args.changes} profiled), first-paint: the one opening (scripts cached)\n")
    timeout_ms = args.timeout * 1000
    rows, calls, traced_rows, thread_rows = [], [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        for name in args.apps:
            app_file, extra = APPS[name]
            server = StreamlitServer(**({"app": app_file} if app_file else {}))
            with server:
                path = args.page if app_file is None else "/"
                url = f"{server.url}{path}" + (f"?{extra}" if extra else "")
                for scenario in args.scenarios:
                    context = browser.new_context(viewport=VIEWPORT)
                    if scenario == "dk":
                        profile = profile_dk(context, url, sentence(args.n), args.changes, timeout_ms)
                        per = args.changes
                    else:
                        profile, per = profile_first_paint(context, url, timeout_ms), 1
                    context.close()
                    by_category, by_call = summarise(profile)
                    busy = sum(ms for kind, ms in by_category.items() if kind != "idle")
                    rows.append((name, scenario, busy / per, [by_category[kind] / per for kind in CATEGORIES]))
                    calls.append((name, scenario, [(call, ms / per) for call, ms in by_call.most_common(args.top)]))
                    if scenario == "dk" and args.trace:
                        context = browser.new_context(viewport=VIEWPORT)
                        events = profile_dk(context, url, sentence(args.n), args.changes, timeout_ms, record=traced)
                        context.close()
                        by_kind = summarise_trace(events)
                        traced_rows.append((name, [by_kind[kind] / args.changes for kind in TRACE_COLUMNS]))
                    if scenario == "dk" and args.threads:
                        context = browser.new_context(viewport=VIEWPORT)
                        events = profile_dk(context, url, sentence(args.n), args.changes, timeout_ms,
                                            record=traced_threads)
                        context.close()
                        thread_rows.append((name, busy_by_thread(events)))

    header = f"{'app':14} {'scenario':12} {'busy ms':>8} " + " ".join(f"{kind:>9}" for kind in CATEGORIES)
    print(header)
    for name, scenario, busy, shares in rows:
        print(f"{name:14} {scenario:12} {busy:8.0f} " + " ".join(f"{share:9.0f}" for share in shares))
    print("\nlongest calls (ms, per change for dk), with the chunk that made them")
    for name, scenario, longest in calls:
        listed = "; ".join(f"{function} ({maker or 'browser'}) {ms:.0f}" for (function, maker), ms in longest)
        print(f"{name:14} {scenario:12} {listed}")
    if traced_rows:
        print("\ndk moves again in Chrome's trace, no profiler running: ms per change of the main thread's tasks,"
              " and each kind's own time in them (script: the rest)")
        print(f"{'app':14} " + " ".join(f"{kind:>9}" for kind in TRACE_COLUMNS))
        for name, shares in traced_rows:
            print(f"{name:14} " + " ".join(f"{share:9.0f}" for share in shares))
    if thread_rows:
        print("\ndk moves again with every thread's tasks: busy ms per change, all threads of every Chromium"
              " process (tracing's own threads included), then the busiest")
        for name, busy in thread_rows:
            busiest = "; ".join(f"{thread} {ms / args.changes:.0f}" for thread, ms in busy.most_common(6))
            print(f"{name:14} {sum(busy.values()) / args.changes:6.0f}   {busiest}")


if __name__ == "__main__":
    main()
