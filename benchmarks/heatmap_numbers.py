"""What a 16-token heatmap's printed numbers cost plotly.js, and whether another spec for them costs less.

    python benchmarks/heatmap_numbers.py [--rounds 15] [--runs 2]

The step-through's weights heatmap at 16 tokens (as the page sends it, AppTest, screen
display) is drawn in headless Chromium with the plotly.js of the `plotly` package, from a
cleared element to the second animation frame after `Plotly.newPlot` (so that the browser's
style, layout and paint of the new SVG count too). Each variant is drawn once per round,
in turn, and the table gives the median of `--rounds` per run:

- "as sent": the numbers as the app prints them (`texttemplate` "%{z:.2f}", colour chosen
  by plotly.js for contrast with each cell);
- "no numbers": the same heatmap without them (what they cost is the difference);
- "numbers as text": the same strings formatted beforehand and sent as `text`, with
  `texttemplate` "%{text}" (no formatting in the browser);
- "one text colour": one fixed colour instead of a contrast colour worked out per cell;
- "no hover" and "no colour bar": the rest of the figure made lighter, for scale;
- "no cell gaps": without the gaps between cells, plotly.js draws the heatmap as one pixel
  per cell, scaled up, instead of a rectangle per cell on a canvas of the plot's size.

The script stops if a variant does not draw one number per cell (none for "no numbers").

`--profile N` then draws "as sent" N times under Chromium's CPU profiler (sampled every
100 µs) and prints, per drawing, the time inside the plotly.js functions that keep their
names in its minified build: the data drawn (`drawData`), within it each label's font
(`font`), place (`positionText`) and text (`convertToTspans`), the colour bar
(`drawMarginPushers`) and the axes' labels (`drawLabels`).

plotly.js draws each number as an SVG text element of its own, setting its font, position
and text one label at a time: that work is the same whatever the spec says, so only
"no numbers" should differ from "as sent". Compare columns of one run: the machine is shared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import CHROMIUM_LAUNCH, exit_without_chromium, machine_line
from plotly_margins import bare_plotly_tab, page_figures
from server_rerun import quiet_bare_mode_warnings

VARIANTS = {  # name: JavaScript that changes `figure` (its heatmap is `heat`) before it is drawn
    "as sent": "",
    "no numbers": "delete heat.texttemplate;",
    "numbers as text": (
        "heat.text = heat.z.map(row => row.map(v => v == null ? '' : v.toFixed(2)));"
        "heat.texttemplate = '%{text}';"
    ),
    "one text colour": "heat.textfont = Object.assign({}, heat.textfont, {color: '#222222'});",
    "no hover": "figure.layout.hovermode = false;",
    "no colour bar": "heat.showscale = false;",
    "no cell gaps": "heat.xgap = 0; heat.ygap = 0;",
}

DRAW_JS = """
async ([spec, variants, rounds]) => {
    const frame = document.getElementById('graph');
    const painted = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const changes = {CHANGES};
    const times = Object.fromEntries(variants.map(name => [name, []]));
    const heatmapCells = spec.data.find(trace => trace.type === 'heatmap').z.flat().length;
    for (let round = -1; round < rounds; round++) {  // round -1 warms up, uncounted
        for (const name of variants) {
            const figure = JSON.parse(JSON.stringify(spec));
            figure.layout.width = 900;
            changes[name](figure, figure.data.find(trace => trace.type === 'heatmap'));
            await Plotly.purge(frame);
            await painted();
            const started = performance.now();
            await Plotly.newPlot(frame, figure.data, figure.layout, {displaylogo: false});
            await painted();
            if (round >= 0) times[name].push(performance.now() - started);
            const labels = frame.querySelectorAll('g.heatmap-label text').length;
            if (labels !== (name === 'no numbers' ? 0 : heatmapCells)) {
                return {problem: `${name}: ${labels} numbers drawn`};
            }
        }
    }
    return {times};
}
""".replace(
    "{CHANGES}",
    "{" + ", ".join(f"{name!r}: (figure, heat) => {{ {code} }}" for name, code in VARIANTS.items()) + "}",
)


PROFILED = ("drawData", "font", "positionText", "convertToTspans", "drawMarginPushers", "drawLabels")
"""plotly.js functions reached as object properties, so named in the minified build too."""


def profile_ms(tab, spec: dict, drawings: int) -> dict[str, float]:
    """Milliseconds per drawing of "as sent" spent inside each of PROFILED (callees included;
    a function counted once per sample however deep it recurses)."""
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 100})
    cdp.send("Profiler.start")
    tab.evaluate(DRAW_JS, [spec, ["as sent"], drawings])
    profile = cdp.send("Profiler.stop")["profile"]
    nodes = {node["id"]: node for node in profile["nodes"]}
    parents = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    inside = dict.fromkeys(PROFILED, 0.0)
    for sample, micros in zip(profile["samples"], profile["timeDeltas"], strict=True):
        names, node = set(), sample
        while node is not None:
            names.add(nodes[node]["callFrame"]["functionName"].rsplit(".", 1)[-1])
            node = parents.get(node)
        for name in names & set(PROFILED):
            inside[name] += micros / 1000
    return {name: total / (drawings + 1) for name, total in inside.items()}  # + the warm-up round


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="drawings of each variant per run (after one warm-up)")
    parser.add_argument("--runs", type=int, default=2, help="runs, each printed as a row")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="then profile N drawings of the heatmap as sent (0: none)")
    args = parser.parse_args()
    exit_without_chromium()
    quiet_bare_mode_warnings()
    from playwright.sync_api import sync_playwright

    spec = next(figure for figure in page_figures("pages/step.py", {"stage": "weights"}, 8, False)
                if any(trace.get("type") == "heatmap" and trace.get("texttemplate") for trace in figure["data"]))
    print(machine_line())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        tab = bare_plotly_tab(browser)
        print(f"plotly.js {tab.evaluate('Plotly.version')}; the step-through's 16 × 16 weights heatmap, 900 px wide; "
              f"ms from newPlot to the second frame after it, median of {args.rounds}; (÷ as sent)\n")
        print(f"{'run':>3}  " + "  ".join(f"{name:>18}" for name in VARIANTS))
        for run in range(1, args.runs + 1):
            measured = tab.evaluate(DRAW_JS, [spec, list(VARIANTS), args.rounds])
            if "problem" in measured:  # a variant that does not draw what it says measures nothing
                sys.exit(f"{measured['problem']}, against the heatmap's cells for each variant but 'no numbers'")
            times = measured["times"]
            medians = {name: statistics.median(values) for name, values in times.items()}
            cells = [f"{medians[name]:>9.1f} ({medians[name] / medians['as sent']:>4.2f}×)" for name in VARIANTS]
            print(f"{run:>3}  " + "  ".join(f"{cell:>18}" for cell in cells), flush=True)
        if args.profile:
            inside = profile_ms(tab, spec, args.profile)
            print(f"\nas sent, profiled: ms per drawing inside each function (callees included), "
                  f"{args.profile} drawings\n" + "  ".join(f"{name} {ms:.1f}" for name, ms in inside.items()))
        browser.close()


if __name__ == "__main__":
    main()
