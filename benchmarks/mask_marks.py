"""What the × on masked cells costs plotly.js: a causal weights heatmap with and without them.

    python benchmarks/mask_marks.py [--sizes 16 32 64 100 200] [--rounds 7]

A masked cell is a grey gap in the heatmap, and up to `MAX_MARKED_SIDE` tokens also carries a
×: one scatter marker per masked cell, which plotly.js draws as an SVG element of its own (a
causal mask of n tokens has n(n − 1)/2). For each n, the weights heatmap of an n-token sentence
under a causal mask, as the app sends it (`ui.views.ready_spec`), is drawn by plotly.js in
Chromium with a × on every masked cell and without any, in turn: `Plotly.newPlot` to the second
animation frame after it, medians of `--rounds` drawings. The last column is the difference
per ×.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import CHROMIUM_LAUNCH, exit_without_chromium, machine_line
from server_rerun import quiet_bare_mode_warnings

from attention_core import MaskSpec, ToySettings, build_toy_trace
from attention_core.figures import matrices

DRAW_JS = """async (spec) => {
    const chart = document.getElementById('chart');
    Plotly.purge(chart);
    const started = performance.now();
    await Plotly.newPlot(chart, spec.data, spec.layout, {displaylogo: false});
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    return performance.now() - started;
}"""


def weights_spec(n: int, marked: bool) -> dict:
    """The causal weights heatmap of n tokens as the app sends it, with a × on every masked cell or none."""
    import plotly.io.json as plotly_json

    from ui.views import ready_spec

    trace = build_toy_trace(ToySettings(text=" ".join(f"w{i}" for i in range(n)), mask=MaskSpec(causal=True),
                                        max_tokens=max(n, 16)))
    figure = matrices.heatmap(trace, "weights", marked_side=n if marked else 0)
    return json.loads(plotly_json.to_json_plotly(ready_spec(figure)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64, 100, 200])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    exit_without_chromium()
    quiet_bare_mode_warnings()
    import plotly
    from playwright.sync_api import sync_playwright

    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    print(machine_line())
    print(f"a causal weights heatmap, medians of {args.rounds} drawings each, with and without its × marks in turn; "
          f"the app draws them up to {matrices.MAX_MARKED_SIDE} tokens\n")
    print(f"{'n':>5} {'marks':>7} {'with × ms':>10} {'without ms':>11} {'ratio':>6} {'ms per ×':>9}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_content("<div id='chart' style='width: 800px'></div>")
            page.add_script_tag(path=str(plotly_js))
            for n in args.sizes:
                specs = {"with": weights_spec(n, marked=True), "without": weights_spec(n, marked=False)}
                marks = sum(len(trace["x"]) for trace in specs["with"]["data"] if trace.get("type") == "scatter")
                times: dict[str, list[float]] = {name: [] for name in specs}
                for _ in range(args.rounds):
                    for name, spec in specs.items():
                        times[name].append(page.evaluate(DRAW_JS, spec))
                with_marks, without = statistics.median(times["with"]), statistics.median(times["without"])
                print(f"{n:>5} {marks:>7} {with_marks:>10.0f} {without:>11.0f} {with_marks / without:>6.2f} "
                      f"{(with_marks - without) / max(marks, 1):>9.3f}", flush=True)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
