"""How many bytes of Plotly figures one page view sends, for every page and sentence length.

    python benchmarks/payload.py [--sizes 16 128 512 2048]

Every page registered in app.py's PAGES tuple is opened in AppTest with a sentence of n
distinct words preset in session state (a fresh session per page and n: the app's
default page runs first, then the page is switched to, as `tests/apptest_helpers.run_app`
does). The Plotly bytes are the sum of `len(chart.proto.spec)` over every
`st.plotly_chart` of the page, which is the JSON the browser receives. The tables'
bytes (`st.dataframe`, Arrow) go over the same WebSocket and are printed beside them;
"largest" is the biggest single element (each element is one WebSocket message, capped by
`server.maxMessageSize`). The step-through page is measured at its first stage and in its
overview of all stages. Sizes do not depend on the machine's load.

Target: at most 2 MB (2 × 1024 × 1024 bytes) of Plotly JSON per page view at any n.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import APP, ROOT, app_token_cap, machine_line, page_files, sentence
from server_rerun import quiet_bare_mode_warnings, share_script_cache

sys.path.insert(0, str(ROOT))

TARGET_BYTES = 2 * 1024 * 1024
MIB = 1024 * 1024


def heatmap_rows(spec: dict) -> int:
    """The most rows of any heatmap in a figure spec (0 if it has none)."""
    return max((len(trace.get("y") or []) for trace in spec["data"] if trace.get("type") == "heatmap"), default=0)


def page_view(page: str, n: int, timeout: float, **state) -> dict:
    """Open `page` in a fresh AppTest session with a sentence of n words; measure what it sends."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.session_state["text"] = sentence(n)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page != page_files()[0]:
        at.switch_page(page)
        started = time.perf_counter()
        at.run()
    else:
        started = time.perf_counter()
        at.run()  # the same view again, so that the time column means the same for every page
    seconds = time.perf_counter() - started
    charts = at.get("plotly_chart")
    tables = at.get("dataframe")
    chart_sizes = [len(chart.proto.spec) for chart in charts]
    table_sizes = [table.proto.ByteSize() for table in tables]  # the serialized element, Arrow data included
    return {
        "errors": len(at.exception),
        "charts": len(charts),
        "plotly": sum(chart_sizes),
        "tables": sum(table_sizes),
        "largest": max(chart_sizes + table_sizes, default=0),
        "rows": max((heatmap_rows(json.loads(chart.proto.spec)) for chart in charts), default=0),
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 128, 512, 2048])
    parser.add_argument("--pages", nargs="+", help="page files to measure (default: every page in app.py)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one AppTest run may take")
    args = parser.parse_args()
    quiet_bare_mode_warnings()
    share_script_cache()  # time each rerun as the server runs it: the scripts compiled once
    pages = args.pages or page_files()
    views = [(page, page.removeprefix("pages/").removesuffix(".py"), {}) for page in pages]
    if page_files()[0] in pages:
        views.insert(1, (page_files()[0], "step (overview)", {"view": "overview"}))
    print(machine_line())
    print(f"the app's token cap: {app_token_cap()}; MB = 2^20 bytes; rows = most rows of any heatmap drawn\n")
    print(
        f"{'page':<24} {'n':>5} {'charts':>6} {'rows':>5} {'Plotly MB':>9} {'tables MB':>9} {'largest MB':>10} "
        f"{'rerun s':>7}  target (Plotly ≤ 2 MB)"
    )
    missed = 0
    for page, name, state in views:
        for n in args.sizes:
            sizes = page_view(page, n, args.timeout, **state)
            if sizes["errors"]:
                verdict = "error: the page raised an exception (its traceback is on stderr)"
            else:
                verdict = "met" if sizes["plotly"] <= TARGET_BYTES else "not met"
            missed += verdict != "met"
            print(
                f"{name:<24} {n:>5} {sizes['charts']:>6} {sizes['rows']:>5} {sizes['plotly'] / MIB:>9.3f} "
                f"{sizes['tables'] / MIB:>9.3f} {sizes['largest'] / MIB:>10.3f} {sizes['seconds']:>7.2f}  {verdict}",
                flush=True,
            )
    print(f"\n{missed} page view(s) over the target or failing")


if __name__ == "__main__":
    main()
