"""What a tab's first chart costs: the quiz's Reveal, first in a new tab and then again.

    python benchmarks/first_chart.py [--rounds 5]

The quiz page draws no chart until the student presses Reveal, so in a tab that opened the
quiz's link the first Reveal is also the tab's first chart: the browser loads and runs
Streamlit's chart module (plotly.js inside it, 4.7 MB of JavaScript) and its table module
before it draws. Every other page pays that inside its first paint. Each round opens the quiz
in a new browser context (nothing cached, as a student following a shared link), and times,
as `control_latency.py` does (from the click until the rerun's last DOM change):

- `first reveal`: the first Reveal of the tab;
- `again`: "Hide and guess again", then Reveal once more: the same answer drawn with every
  module already running (the median of two);
- `chart module run first`: in another new tab, the chart module imported by hand before the
  first Reveal (not what the app does): how much of the first Reveal is that module.

Rounds take the three in turn; the ratios are of medians measured in this run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import CHROMIUM_LAUNCH, StreamlitServer, exit_without_chromium, first_visit, machine_line
from control_latency import VIEWPORT, WATCH_JS, Change, Page

QUIZ, TOKENS, TIMEOUT_MS = "quiz", 16, 60_000
REVEAL, AGAIN = "Reveal", "Hide and guess again"  # the English labels (ui/strings/quiz.toml)


def chart_module() -> str:
    """The address of Streamlit's chart module in the installed package (its name has a hash)."""
    import streamlit

    static = Path(streamlit.__file__).parent / "static" / "static" / "js"
    (module,) = static.glob("PlotlyChart.*.js")
    return f"/static/js/{module.name}"


def click(page: Page, name: str) -> float:
    seconds = page.change(Change(commit=lambda: page.page.get_by_role("button", name=name).click()))
    if seconds is None:
        raise RuntimeError(f"{name!r} caused no rerun")
    return seconds


def one_round(browser, url: str, module: str) -> dict[str, list[float]]:
    """The three timings of one round, each in a new browser context."""
    times: dict[str, list[float]] = {"first reveal": [], "again": [], "chart module run first": []}
    for imported in (False, True):
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(WATCH_JS)
        try:
            page = Page(context, f"{url}/{QUIZ}", TOKENS, TIMEOUT_MS, TIMEOUT_MS)
            if imported:
                page.page.evaluate(f"() => import('{module}')")
                page.page.wait_for_timeout(1000)
                times["chart module run first"].append(click(page, REVEAL))
                continue
            times["first reveal"].append(click(page, REVEAL))
            for _ in range(2):
                click(page, AGAIN)
                times["again"].append(click(page, REVEAL))
        finally:
            context.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import sync_playwright

    module = chart_module()
    print(machine_line())
    print(f"the quiz at {TOKENS} tokens, {args.rounds} rounds; time = click → last DOM change after the rerun\n")
    times: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        try:
            with StreamlitServer() as server:
                first_visit(browser, server)
                for _ in range(args.rounds):
                    for name, values in one_round(browser, server.url, module).items():
                        times.setdefault(name, []).extend(values)
        finally:
            browser.close()
    again = statistics.median(times["again"])
    print(f"{'Reveal':<24} {'times':>5} {'median ms':>9} {'min ms':>7} {'max ms':>7} {'÷ again':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<24} {len(values):>5} {median * 1e3:>9.0f} {min(values) * 1e3:>7.0f} "
              f"{max(values) * 1e3:>7.0f} {median / again:>8.2f}")


if __name__ == "__main__":
    main()
