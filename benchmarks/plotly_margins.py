"""What reserving the labels' margins saves in the browser: the app's own figures drawn by Plotly.

    python benchmarks/plotly_margins.py [--pages step cell masks multi-head] [--repeats 9]

Plotly's "automargin" measures the tick labels and axis titles after drawing a figure; when
they do not fit the margins it widens them and draws the whole figure again. The app now
sends margins that already fit (`attention_core.figures.reserve_label_room`). This script
takes the figures each page sends (AppTest, 16 tokens, the step-through at its weights
stage, screen and projector display) at dk = 8 and at dk = 9, and draws them in headless
Chromium with the plotly.js that ships with the `plotly` package: first `Plotly.newPlot`
(a page's first paint), then `Plotly.react` from one dk to the other and back (a change to a
plot that is kept), with "automargin" on every axis as Streamlit's chart theme sets it. Each
spec gets its own `datarevision` for this: with the one the app sends, the same in both,
plotly.js would take the new numbers for the old ones and not draw them (the script stops if a
heatmap still shows its old numbers after a change). Each figure is drawn as sent
("reserved") and with the left, right and bottom margins at the 10 px the figure builders
set before ("narrow"), in turn, so both see the same load. It prints the median milliseconds per page and their
ratio; "redraws" counts the figures whose labels still needed a wider margin.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import APP, CHROMIUM_LAUNCH, ROOT, exit_without_chromium, machine_line, sentence
from server_rerun import quiet_bare_mode_warnings

NARROW = {"l": 10, "r": 10, "b": 10}
"""The margins the figure builders set before the labels' room was reserved."""

VIEWS = {  # name: (page file, session state)
    "step": ("pages/step.py", {"stage": "weights"}),
    "cell": ("pages/cell.py", {}),
    "masks": ("pages/masks.py", {}),
    "multi-head": ("pages/multi-head.py", {}),
}

DRAW_JS = r"""
async ([first, second, margins, repeats]) => {
    const frame = document.getElementById('graph');
    const prepared = (spec, narrow, revision) => {
        const copy = JSON.parse(JSON.stringify(spec));
        copy.layout.width = 900;
        // each spec its own revision: with the same one, Plotly.react takes the data as unchanged
        // and skips recomputing and redrawing it, and a change would cost next to nothing
        copy.layout.datarevision = revision;
        const axes = Object.keys(copy.layout).filter(key => /^[xy]axis\d*$/.test(key));
        for (const name of new Set(['xaxis', 'yaxis', ...axes])) {  // automargin on, as Streamlit's chart theme
            copy.layout[name] = Object.assign({automargin: true}, copy.layout[name]);
        }
        if (narrow) copy.layout.margin = Object.assign({}, copy.layout.margin, margins);
        return copy;
    };
    const redrew = () => (MARGIN_REDRAWS)(frame).length > 0;
    const times = {reserved: {paint: [], change: []}, narrow: {paint: [], change: []}};
    let redraws = 0, staleChanges = 0;
    const stale = (next) => next.data.some((trace, index) => {  // a heatmap still holding the numbers it had
        if (trace.type !== 'heatmap' || !Array.isArray(trace.z)) return false;
        const computed = frame.calcdata[index][0].z;
        return trace.z.some((row, i) => row.some((value, j) => typeof value === 'number' && computed[i][j] !== value));
    });
    for (let round = -1; round < repeats; round++) {  // round -1 warms up, uncounted
        for (const variant of round % 2 ? ['narrow', 'reserved'] : ['reserved', 'narrow']) {  // in turn
            const narrow = variant === 'narrow';
            const a = prepared(first, narrow, 'first'), b = prepared(second, narrow, 'second');
            await Plotly.purge(frame);
            let started = performance.now();
            await Plotly.newPlot(frame, a.data, a.layout, {displaylogo: false});
            if (round >= 0) times[variant].paint.push(performance.now() - started);
            if (round === 0 && !narrow && redrew()) redraws++;
            for (const next of [b, a]) {
                started = performance.now();
                await Plotly.react(frame, next.data, next.layout, {displaylogo: false});
                if (round >= 0) times[variant].change.push(performance.now() - started);
                if (stale(next)) staleChanges++;
            }
        }
    }
    return {times, redraws, staleChanges};
}
""".replace("MARGIN_REDRAWS", (ROOT / "tests" / "browser" / "margin_redraws.js").read_text(encoding="utf-8"))
"""Draws two specs in turn, timed; `MARGIN_REDRAWS` is the browser tests' check of one graph for
axes that needed a wider margin (`tests/browser/margin_redraws.js`)."""


def page_figures(page: str, state: dict, dk: int, projector: bool) -> list[dict]:
    """The Plotly specs a page sends, in order, at 16 tokens and the given dk."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["text"] = sentence(16)
    at.session_state["dk"] = dk
    if projector:
        at.session_state["display"] = "projector"
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page != "pages/step.py":
        at.switch_page(page)
        at.run()
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].value}")
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def bare_plotly_tab(browser):
    """A new tab holding the `plotly` package's plotly.js and an empty element "graph", 900 px wide."""
    import plotly

    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.set_content("<div id='graph' style='width: 900px'></div>")
    tab.add_script_tag(path=str(Path(plotly.__file__).parent / "package_data" / "plotly.min.js"))
    return tab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="+", choices=list(VIEWS), default=list(VIEWS))
    parser.add_argument("--repeats", type=int, default=9, help="rounds per figure (each: a paint and two changes)")
    args = parser.parse_args()
    exit_without_chromium()
    quiet_bare_mode_warnings()
    from playwright.sync_api import sync_playwright

    print(machine_line())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        tab = bare_plotly_tab(browser)
        print(f"plotly.js {tab.evaluate('Plotly.version')}, figure width 900 px; {args.repeats} rounds per figure; "
              "ms = sum over the page's figures of each figure's median\n")
        print(f"{'page':<22} {'figures':>7} {'redraws':>7}  {'paint: reserved':>15} {'narrow':>7} {'ratio':>6}  "
              f"{'change: reserved':>16} {'narrow':>7} {'ratio':>6}")
        for name in args.pages:
            page, state = VIEWS[name]
            for projector in (False, True):
                firsts, seconds = (page_figures(page, state, dk, projector) for dk in (8, 9))
                totals = {(variant, kind): 0.0 for variant in ("reserved", "narrow") for kind in ("paint", "change")}
                redraws = 0
                for first, second in zip(firsts, seconds, strict=True):
                    measured = tab.evaluate(DRAW_JS, [first, second, NARROW, args.repeats])
                    if measured["staleChanges"]:
                        sys.exit(f"{name}: after Plotly.react a heatmap still showed the numbers it had: "
                                 "the change was not drawn, and its time means nothing")
                    redraws += measured["redraws"]
                    for (variant, kind) in totals:
                        totals[variant, kind] += statistics.median(measured["times"][variant][kind])
                label = f"{name} ({'projector' if projector else 'screen'})"
                print(
                    f"{label:<22} {len(firsts):>7} {redraws:>7}  {totals['reserved', 'paint']:>15.0f} "
                    f"{totals['narrow', 'paint']:>7.0f} {totals['reserved', 'paint'] / totals['narrow', 'paint']:>6.2f}"
                    f"  {totals['reserved', 'change']:>16.0f} {totals['narrow', 'change']:>7.0f} "
                    f"{totals['reserved', 'change'] / totals['narrow', 'change']:>6.2f}",
                    flush=True,
                )
        browser.close()


if __name__ == "__main__":
    main()
