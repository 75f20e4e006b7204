"""Server memory under long links: does it come back once the class has gone?

    python benchmarks/memory.py [--links 20] [--tokens 2048] [--concurrency 2] [--settle 180]

One fresh `streamlit run app.py` (free local port, the project's config) and one headless
Chromium. After a warm-up visit with the default sentence (then 10 s of rest) the server's
resident memory is "warm". Then `--links` different long links are opened, `--concurrency`
at a time, each in its own browser context (its own Streamlit session): the first page with
`?text=` a sentence of `--tokens` distinct Chinese characters (one token each; the link
stays under the app's link cap) and a causal mask, the largest trace the app records
(about 72 MB at 2,048 tokens). Each session waits until the page has drawn a heatmap and
stopped running, then closes. Memory (VmRSS of the server, `/proc/<pid>/status`) is sampled
every 0.25 s throughout: "peak" is the highest sample while links were open; then for
`--settle` seconds after the last session closed (Streamlit keeps a closed session for
`server.disconnectedSessionTTL` = 120 s, in case the browser reconnects), and "settled" is
the last sample. The target: settled within 20 % of warm. Streamlit drops expired sessions
only when it next handles a connection, so one more short visit follows, and "after a
visit" is the memory 20 s after it.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    CHROMIUM_LAUNCH,
    EXCEPTIONS_JS,
    IDLE_JS,
    LOAD_TIMEOUT_S,
    VIEWPORT,
    StreamlitServer,
    exit_without_chromium,
    first_visit,
    machine_line,
)

FIRST_CJK = 0x4E00
CJK_COUNT = 0x9FFF - 0x4E00 + 1


def long_sentence(link: int, tokens: int) -> str:
    """`tokens` distinct Chinese characters (each one token), different for every link."""
    start = link * 997
    return "".join(chr(FIRST_CJK + (start + i) % CJK_COUNT) for i in range(tokens))


class Sampler:
    """Samples the server's VmRSS every `interval` seconds in a background thread."""

    def __init__(self, server: StreamlitServer, interval: float = 0.25):
        self.server, self.interval = server, interval
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MiB)
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic() - self._started, self.server.rss_mib()))
            self._stop.wait(self.interval)

    def now(self) -> float:
        return time.monotonic() - self._started

    def peak(self, since: float = 0.0, until: float = float("inf")) -> float:
        return max((mib for at, mib in self.samples if since <= at <= until), default=float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--settle", type=float, default=180.0, help="seconds to watch after the last session closed")
    parser.add_argument("--timeout", type=float, default=LOAD_TIMEOUT_S, help="seconds a link may take to draw")
    args = parser.parse_args()
    exit_without_chromium()

    from playwright.sync_api import sync_playwright

    print(machine_line())
    print(f"{args.links} links of {args.tokens} tokens (causal mask), {args.concurrency} at a time; "
          f"settle {args.settle:.0f} s")
    with StreamlitServer() as server, Sampler(server) as sampler, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)

        def new_context():
            return browser.new_context(viewport=VIEWPORT)

        first_visit(browser, server, "/", args.timeout)
        time.sleep(10)
        warm = server.rss_mib()
        opened = sampler.now()
        loads, exceptions, failures = [], 0, 0
        # `concurrency` pages load at once, each in its own context (its own session).
        pending = [
            server.url + "/?" + urllib.parse.urlencode(
                {"text": long_sentence(link, args.tokens), "mask_kind": "causal"}
            )
            for link in range(args.links)
        ]
        while pending:
            batch, pending = pending[: args.concurrency], pending[args.concurrency :]
            contexts = [new_context() for _ in batch]
            pages = [context.new_page() for context in contexts]
            started = time.monotonic()
            for page, link in zip(pages, batch, strict=True):
                page.goto(link, wait_until="commit")
            for page in pages:
                try:
                    page.wait_for_selector(".js-plotly-plot", timeout=args.timeout * 1000)
                    page.wait_for_function(IDLE_JS, timeout=args.timeout * 1000, polling=200)
                    loads.append(time.monotonic() - started)
                    exceptions += page.evaluate(EXCEPTIONS_JS)
                except Exception as error:  # counted and reported; the run goes on
                    failures += 1
                    print(f"  a link failed: {type(error).__name__}: {str(error).splitlines()[0]}")
            for context in contexts:
                context.close()
            print(f"  {args.links - len(pending)} links done, server {server.rss_mib():.0f} MiB")
        closed = sampler.now()
        peak = sampler.peak(opened, closed)
        deadline = time.monotonic() + args.settle
        back_at = None
        while time.monotonic() < deadline:
            time.sleep(1)
            if back_at is None and server.rss_mib() <= 1.2 * warm:
                back_at = sampler.now() - closed
        settled = server.rss_mib()
        first_visit(browser, server, "/", args.timeout)  # one more new session, waited for as the first
        time.sleep(20)
        visited = server.rss_mib()
        browser.close()
    print()
    print(f"{'warm MiB':>9} {'peak MiB':>9} {'settled MiB':>12} {'settled/warm':>13} {'back ≤ 1.2×warm after':>22}"
          f" {'after a visit':>14} {'load s (median)':>16} {'exceptions':>11} {'failed':>7}")
    median = sorted(loads)[len(loads) // 2] if loads else float("nan")
    back = f"{back_at:.0f} s" if back_at is not None else f"not in {args.settle:.0f} s"
    print(f"{warm:9.0f} {peak:9.0f} {settled:12.0f} {settled / warm:13.2f} {back:>22} {visited:14.0f}"
          f" {median:16.1f} {exceptions:11d} {failures:7d}")


if __name__ == "__main__":
    main()
