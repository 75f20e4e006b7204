"""A class at once: N browser sessions on one server, each changing its own settings.

    python benchmarks/many_users.py [--users 10 30] [--duration 60] [--tokens 12] [--floor]

For each N a fresh `streamlit run app.py` (free local port, the project's config) and one
headless Chromium with N separate contexts (each its own cookies and WebSocket, so its
own Streamlit session). The N sessions open the step-through page at its "weights" stage,
at most `--load-concurrency` at a time: a page load costs the browser seconds of CPU, and
here all N browsers share the server's 2 cores, unlike a class's N laptops. Once every
page has loaded, all N start together and for `duration` seconds each repeats: type its
own sentence into the sidebar's text area (words tagged with the session's number,
"u7x…", so any row label shows whose it is; Control+Enter applies it) and wait until the
first heatmap's row labels are exactly that sentence's tokens; then press an arrow key on
the dk slider (right, left, right, …) and wait until the heatmap's values change. Each
wait is one latency sample (key press to repaint, polled in the page every 50 ms).

Errors (target: 0): exceptions shown by the app, waits longer than `--timeout`, isolation
failures (a row label with another session's tag, seen at any poll), and anything else
that failed (a page that never loaded, a Playwright error). Memory: the server's VmRSS
(`/proc/<pid>/status`) after one warm-up visit, with all N sessions open at the end, and
10 s (`--settle`) after they closed; growth per session = (open − before) / N.
"cpu/change" is CPU time over the changing phase divided by the changes done: the
server's, and the client's (Chromium and Playwright, on the same cores here). All loops
are bounded by time and count. The machine is shared: latencies include waiting for a core.

With `--floor`, each N is run a second time right after the app, against
`benchmarks/floor_app.py` (one heatmap under the same two controls, nothing else) with the
same sessions and changes; its row ends with the app's p95 divided by the floor's. Both rows
of one N are measured minutes apart on the same machine, so the ratio is what to compare.
With `--floor-numbers` as well, a third row serves the floor app with the weights printed
in its cells ("floor+numbers", `?numbers=1`), as the app prints them in its 12 × 12 heatmap.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    APP,
    CHROMIUM_LAUNCH,
    EXCEPTIONS_JS,
    FIRST_HEATMAP_JS,
    FLOOR_APP,
    LOAD_TIMEOUT_S,
    VIEWPORT,
    StreamlitServer,
    cpu_seconds,
    descendants,
    exit_without_chromium,
    first_visit_async,
    machine_line,
    percentile,
    slider_locator,
    text_area_locator,
    words,
)

MAX_CHANGES_PER_SESSION = 10_000
"""A bound on each session's loop besides its duration."""

WATCH_JS = """
([before, expected, tag]) => {
    const graph = document.querySelector('.js-plotly-plot');
    const trace = graph && (graph._fullData || []).find(t => t.type === 'heatmap');
    if (!trace) return false;
    const labels = Array.from(trace.y || []).map(String);
    if (tag !== null) {
        const foreign = labels.filter(label => !label.slice(label.indexOf(':') + 1).startsWith(tag));
        if (foreign.length) (window.__foreignLabels = window.__foreignLabels || []).push(foreign.slice(0, 3).join(' '));
    }
    const z = trace.z || [];
    const row = r => (r ? Array.from(r).slice(0, 64).join(',') : '');
    const fingerprint = [z.length, row(z[0]), row(z[Math.floor(z.length / 2)]), row(z[z.length - 1])].join('|');
    if (before !== null && fingerprint === before) return false;
    return labels.length === expected.length && labels.every((label, i) => label === expected[i]);
}
"""
"""True once the first heatmap's values differ from `before` (null: any) and its row labels
are `expected`. On every poll, labels whose token lacks `tag` (null: no check) are noted
in window.__foreignLabels: another session's tokens on this session's page."""


@dataclass
class SessionResult:
    load_seconds: float | None = None
    text_latencies: list[float] = field(default_factory=list)
    dk_latencies: list[float] = field(default_factory=list)
    exceptions: int = 0
    timeouts: int = 0
    isolation: int = 0
    other: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return self.exceptions + self.timeouts + self.isolation + self.other


def session_sentence(user: int, iteration: int, tokens: int) -> list[str]:
    """The session's words for one iteration: its own tagged words, rotated so each differs."""
    pool = words(tokens + 7, tag=f"u{user}x")
    start = iteration % len(pool)
    return (pool[start:] + pool[:start])[:tokens]


async def _wait_change(page, before, expected, tag, timeout_ms, result: SessionResult) -> bool:
    """Wait until the heatmap shows `expected` labels (and new values); False on a timeout."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await page.wait_for_function(WATCH_JS, arg=[before, expected, tag], timeout=timeout_ms, polling=50)
    except PlaywrightTimeout:
        drawn = await page.evaluate(FIRST_HEATMAP_JS)
        labels = drawn["labels"] if drawn else []
        if tag is not None and any(not label.split(":", 1)[-1].startswith(tag) for label in labels):
            result.isolation += 1
            result.notes.append(f"isolation: expected {expected[:2]}…, drawn {labels[:2]}…")
        else:
            result.timeouts += 1
            result.notes.append(f"timeout after {timeout_ms / 1000:.0f} s")
        return False
    return True


class StartLine:
    """Where sessions wait until every page has loaded (or failed to), then start together."""

    def __init__(self, users: int):
        self.waiting = users
        self.event = asyncio.Event()

    def arrive(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.event.set()


async def run_session(browser, url: str, user: int, args, result: SessionResult, gate, start: StartLine,
                      query: str = ""):
    """One student: open the page, then change the sentence and dk until the time is up.

    Returns the browser context, still open (the caller measures memory, then closes it).
    """
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda error: page_errors.append(str(error)))
    tag = f"u{user}x"
    timeout_ms = args.timeout * 1000
    try:
        try:
            async with gate:
                started = time.perf_counter()
                await page.goto(f"{url}/?stage=weights{query}", timeout=args.load_timeout * 1000)
                await page.wait_for_selector(".js-plotly-plot", timeout=args.load_timeout * 1000)
                result.load_seconds = time.perf_counter() - started
        finally:
            start.arrive()
        await start.event.wait()
        box, slider = text_area_locator(page), slider_locator(page)
        deadline = time.monotonic() + args.duration
        checking = None  # no isolation check until the session's own sentence is drawn
        for iteration in range(MAX_CHANGES_PER_SESSION):
            if time.monotonic() >= deadline:
                break
            expected_words = session_sentence(user, iteration, args.tokens)
            expected = [f"{position}:{word}" for position, word in enumerate(expected_words)]
            await box.fill(" ".join(expected_words))
            started = time.perf_counter()
            await box.press("Control+Enter")
            if not await _wait_change(page, None, expected, checking, timeout_ms, result):
                continue
            result.text_latencies.append(time.perf_counter() - started)
            checking = tag
            drawn = await page.evaluate(FIRST_HEATMAP_JS)
            await slider.focus()
            started = time.perf_counter()
            await slider.press("ArrowUp" if iteration % 2 == 0 else "ArrowDown")  # ← / → step the stages
            if await _wait_change(page, drawn["fingerprint"], expected, tag, timeout_ms, result):
                result.dk_latencies.append(time.perf_counter() - started)
            if await page.evaluate(EXCEPTIONS_JS):
                result.exceptions += 1
                result.notes.append("the app showed an exception")
                break  # the page is broken; counting it again on every change would say nothing new
        foreign = await page.evaluate("() => window.__foreignLabels || []")
        if foreign:
            result.isolation += 1
            result.notes.append(f"isolation: saw another session's labels {foreign[0]!r}")
    except Exception as error:  # a page that never loaded, a crashed tab: counted, not fatal
        result.other += 1
        result.notes.append(f"{type(error).__name__}: {str(error).splitlines()[0][:120]}")
    result.other += len(page_errors)
    result.notes.extend(f"page error: {error[:120]}" for error in page_errors)
    return context


def client_cpu_seconds(server_pid: int) -> float:
    """CPU time of this script's other child processes: Playwright's driver and Chromium."""
    return sum(cpu_seconds(pid) for pid in descendants(os.getpid()) if pid != server_pid)


async def run_level(users: int, args, app: Path = APP, query: str = "") -> dict:
    from playwright.async_api import async_playwright

    with StreamlitServer(app=app) as server:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**CHROMIUM_LAUNCH)
            try:
                # one visit first, so that imports and first-run caches are not counted as per-session memory
                await first_visit_async(browser, server, f"/?stage=weights{query}", args.load_timeout)
                await asyncio.sleep(3)
                rss_before = server.rss_mib()
                results = [SessionResult() for _ in range(users)]
                gate, start = asyncio.Semaphore(args.load_concurrency), StartLine(users)
                sessions = asyncio.gather(
                    *(run_session(browser, server.url, user, args, results[user], gate, start, query)
                      for user in range(users))
                )
                loads = math.ceil(users / args.load_concurrency)
                hard_stop = loads * args.load_timeout + args.duration + args.timeout + 60  # every wait is bounded too
                await asyncio.wait_for(start.event.wait(), timeout=hard_stop)
                started = time.monotonic()
                cpu_before = server.cpu_seconds(), client_cpu_seconds(server.pid)
                contexts = await asyncio.wait_for(sessions, timeout=hard_stop)
                elapsed = time.monotonic() - started
                cpu_after = server.cpu_seconds(), client_cpu_seconds(server.pid)
                rss_open = server.rss_mib()
                for context in contexts:
                    await context.close()
                await asyncio.sleep(args.settle)
                rss_closed = server.rss_mib()
            finally:
                await browser.close()
    return {
        "results": results,
        "elapsed": elapsed,
        "rss": (rss_before, rss_open, rss_closed),
        "cpu": (cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[10, 30], help="concurrent sessions, one run each")
    parser.add_argument("--duration", type=float, default=60, help="seconds each session keeps changing settings")
    parser.add_argument("--tokens", type=int, default=12, help="words in each session's sentence")
    parser.add_argument("--timeout", type=float, default=30, help="seconds a change may take before it is an error")
    parser.add_argument("--load-timeout", type=float, default=LOAD_TIMEOUT_S, help="seconds a page may take to load")
    parser.add_argument("--load-concurrency", type=int, default=3, help="pages loading at the same time")
    parser.add_argument("--settle", type=float, default=10, help="seconds between closing the sessions and the "
                        "last memory reading")
    parser.add_argument("--floor", action="store_true", help="also serve benchmarks/floor_app.py (one heatmap, the "
                        "same two controls) to the same sessions, right after the app, and print the p95 ratio")
    parser.add_argument("--floor-numbers", action="store_true", help="with --floor: a third run, the floor app "
                        "with the weights printed in its cells (?numbers=1)")
    parser.add_argument("--notes", type=int, default=5, help="error notes printed per run")
    args = parser.parse_args()
    exit_without_chromium()
    print(machine_line())
    print(f"{args.duration:.0f} s of changes per session, {args.tokens} tokens per sentence, "
          f"a change slower than {args.timeout:.0f} s is a timeout, {args.load_concurrency} pages load at a time; "
          f"times in ms unless marked s; RSS in MB (2^20 bytes)\n")
    print(
        f"{'app':>13} {'users':>5} {'secs':>4} {'changes':>7} {'errors':>6} {'exc':>3} {'t/o':>3} {'isol':>4} "
        f"{'other':>5} {'p50':>5} {'p95':>6} {'text p50':>8} {'dk p50':>6} {'load p50 s':>10} "
        f"{'server cpu/change':>17} {'client cpu/change':>17} {'RSS before':>10} {'open':>5} {'closed':>6} "
        f"{'MB/session':>10} {'p95 ÷ floor':>11}"
    )
    notes = []
    apps = [("app", APP, "")] + ([("floor", FLOOR_APP, "")] if args.floor else []) + (
        [("floor+numbers", FLOOR_APP, "&numbers=1")] if args.floor and args.floor_numbers else [])
    for users in args.users:
        p95 = {}
        for name, path, query in apps:
            level = asyncio.run(run_level(users, args, path, query))
            results: list[SessionResult] = level["results"]
            text = [s for r in results for s in r.text_latencies]
            dk = [s for r in results for s in r.dk_latencies]
            both = text + dk
            p95[name] = percentile(both, 0.95)
            loads = [r.load_seconds for r in results if r.load_seconds is not None]
            before, opened, closed = level["rss"]
            server_cpu, client_cpu = (cpu / len(both) * 1e3 if both else float("nan") for cpu in level["cpu"])
            ratio = f"{p95['app'] / p95[name]:>11.2f}" if name != "app" else f"{'':>11}"
            print(
                f"{name:>13} {users:>5} {level['elapsed']:>4.0f} {len(both):>7} {sum(r.errors for r in results):>6} "
                f"{sum(r.exceptions for r in results):>3} {sum(r.timeouts for r in results):>3} "
                f"{sum(r.isolation for r in results):>4} {sum(r.other for r in results):>5} "
                f"{percentile(both, 0.5) * 1e3:>5.0f} {p95[name] * 1e3:>6.0f} "
                f"{percentile(text, 0.5) * 1e3:>8.0f} {percentile(dk, 0.5) * 1e3:>6.0f} "
                f"{percentile(loads, 0.5):>10.1f} {server_cpu:>17.0f} {client_cpu:>17.0f} "
                f"{before:>10.0f} {opened:>5.0f} {closed:>6.0f} {(opened - before) / users:>10.1f} {ratio}",
                flush=True,
            )
            notes += [f"{name}, {users} users, session {user}: {note}"
                      for user, r in enumerate(results) for note in r.notes]
    if notes:
        print(f"\nerrors ({len(notes)}; first {args.notes}):")
        for note in notes[: args.notes]:
            print(f"  {note}")


if __name__ == "__main__":
    main()
