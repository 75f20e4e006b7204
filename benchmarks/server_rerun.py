"""How long one rerun of the step-through page takes after the dk slider moves (AppTest, no browser).

    python benchmarks/server_rerun.py [--sizes 16 128 512 2048] [--repeats 7] [--view steps|overview]
    python benchmarks/server_rerun.py --every-page --sizes 16 [--repeats 7]

For each sentence length n (distinct words, one token each) the app runs in AppTest with
the sentence and the step-through page's "weights" stage preset in session state, once to
warm up. Then dk moves back and forth between 8 and 9 and each `at.run()` is timed: this
is the whole script run (sidebar, figures, tables, protobuf), with the engine's trace
served from the app's cache after the first two moves (and the scripts compiled once, as on
the server: `share_script_cache`). A second column moves dk to a new
value every time (10, 11, …), so the engine recomputes the trace too. Medians of
`repeats` runs, all in this one process. "cpu" is the process's CPU time over the same
run (`time.process_time`): on a shared machine the wall-clock time also counts waiting for
a core, the CPU time does not. Compare rows with each other, not with another day's table.

A heatmap's spec is kept with the trace it was drawn from (`ui.cache.memo_on`): in the
8 ↔ 9 column neither the trace nor its figures are built again, in the new-dk column both
are. `--view overview` times the overview of all seven stages (twelve figures) instead of
the weights stage.

The app keeps at most its token cap (longer text is cut with a notice) and draws long
matrices in blocks, so the table prints the requested n, the tokens kept and the rows of
the drawn heatmap. Target: at most 150 ms at n = 16.

`--every-page --sizes 16` prints instead every page's rerun with nothing changed (the
engine's results cached), on screen and in projector mode: the least a control change on
that page costs the server.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import APP, ROOT, app_token_cap, machine_line, page_files, sentence

sys.path.insert(0, str(ROOT))


def quiet_bare_mode_warnings() -> None:
    """AppTest drives widgets from outside a script run, and Streamlit warns each time that
    there is no ScriptRunContext ("can be ignored when running in bare mode"): drop those."""
    logger = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    logger.addFilter(lambda record: "missing ScriptRunContext" not in record.getMessage())

@functools.cache  # once per process: a second call would find the names already replaced
def share_script_cache() -> None:
    """Compile app.py and each page once per process, as the server does (one script cache per
    runtime). AppTest makes a new cache for every run, so that each `at.run()` would compile
    the scripts again, with Streamlit's "magic" rewrite of their syntax trees: about 14 ms of
    every timed rerun that no user of a server waits for."""
    import streamlit.testing.v1.app_test as app_test
    import streamlit.testing.v1.local_script_runner as local_script_runner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    for module in (app_test, local_script_runner):  # private names: fail loudly, not silently, if they change
        if getattr(module, "ScriptCache", None) is not ScriptCache:
            raise RuntimeError(f"{module.__name__} no longer makes a ScriptCache of its own: "
                               "share_script_cache() needs to follow Streamlit's change")
    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared


TARGET_MS = 150
TARGET_N = 16


def drawn_rows(spec: dict) -> tuple[int, int]:
    """(tokens kept, rows drawn) of the first heatmap of a figure spec.

    Row labels are "position:token", or "first–last" positions when drawn in blocks.
    """
    trace = next(trace for trace in spec["data"] if trace.get("type") == "heatmap")
    labels = [str(label) for label in trace["y"]]
    last_position = int(re.match(r"\d+", labels[-1].split("–")[-1]).group())
    return last_position + 1, len(labels)


def weights_spec(at) -> dict:
    for chart in at.get("plotly_chart"):
        if chart.proto.id.endswith("-weights"):
            return json.loads(chart.proto.spec)
    raise RuntimeError("the weights stage drew no weights heatmap")


def measure(n: int, repeats: int, timeout: float, view: str = "steps") -> dict:
    from streamlit.testing.v1 import AppTest

    quiet_bare_mode_warnings()
    share_script_cache()

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.session_state["text"] = sentence(n)
    at.session_state["stage"] = "weights"
    at.session_state["view"] = view
    started = time.perf_counter()
    at.run()
    first = time.perf_counter() - started
    if at.exception:
        raise RuntimeError(f"n={n}: the app raised {[e.value for e in at.exception]}")
    kept, rows = drawn_rows(weights_spec(at))

    def rerun_with(dk: int) -> tuple[float, float]:
        at.slider(key="dk").set_value(dk)
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if at.exception:
            raise RuntimeError(f"n={n}, dk={dk}: the app raised {[e.value for e in at.exception]}")
        return elapsed, cpu

    rerun_with(9), rerun_with(8)  # both traces are now cached
    cached = [rerun_with(9 if index % 2 == 0 else 8) for index in range(repeats)]
    fresh = [rerun_with(10 + index) for index in range(repeats)]
    return {
        "kept": kept,
        "rows": rows,
        "first": first,
        "cached": statistics.median(wall for wall, _ in cached),
        "cached_min": min(wall for wall, _ in cached),
        "cached_cpu": statistics.median(cpu for _, cpu in cached),
        "fresh": statistics.median(wall for wall, _ in fresh),
        "fresh_cpu": statistics.median(cpu for _, cpu in fresh),
    }


def page_reruns(page: str, display: str, n: int, repeats: int, timeout: float) -> tuple[float, float]:
    """Median (wall, CPU) seconds of a rerun of `page` with nothing changed: the whole script,
    every figure built and sent again, the engine's results from the cache. What every
    control change on the page costs the server at least."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.session_state["text"] = sentence(n)
    at.session_state["display"] = display
    at.run()
    if page != page_files()[0]:
        at.switch_page(page)
    at.run(), at.run()  # the page's first run fills the caches
    samples = []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        samples.append((time.perf_counter() - start, time.process_time() - start_cpu))
    if at.exception:
        raise RuntimeError(f"{page} ({display}): the app raised {[e.value for e in at.exception]}")
    return statistics.median(wall for wall, _ in samples), statistics.median(cpu for _, cpu in samples)


def every_page(n: int, repeats: int, timeout: float) -> None:
    """The table of `page_reruns` for every page, on screen and in projector mode."""
    quiet_bare_mode_warnings()
    share_script_cache()
    print(f"every page's rerun with nothing changed, n = {n}, median of {repeats} (wall ms / CPU ms)\n")
    print(f"{'page':<16} {'screen':>13} {'projector':>13}")
    for page in page_files():
        cells = []
        for display in ("screen", "projector"):
            wall, cpu = page_reruns(page, display, n, repeats, timeout)
            cells.append(f"{wall * 1e3:>6.0f} / {cpu * 1e3:>4.0f}")
        print(f"{page.removeprefix('pages/').removesuffix('.py'):<16} {cells[0]:>13} {cells[1]:>13}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 128, 512, 2048])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=600, help="seconds one AppTest run may take")
    parser.add_argument("--every-page", action="store_true", help="instead: every page's rerun with nothing "
                        "changed, at the first of --sizes, on screen and in projector mode")
    parser.add_argument("--view", choices=["steps", "overview"], default="steps",
                        help="the step-through's view: the weights stage, or all seven stages at once")
    args = parser.parse_args()
    print(machine_line())
    if args.every_page:
        every_page(args.sizes[0], args.repeats, args.timeout)
        return
    print(f"the app's token cap: {app_token_cap()}; view: {args.view}; {args.repeats} timed reruns per column\n")
    print(
        f"{'n asked':>7} {'kept':>5} {'rows':>5} {'1st run ms':>10} {'8↔9 ms':>7} {'min':>5} {'cpu':>5} "
        f"{'new dk ms':>9} {'cpu':>5} {'× n=16':>6}  target (8↔9 median ≤ {TARGET_MS} ms at n = {TARGET_N})"
    )
    baseline = None
    for n in args.sizes:
        result = measure(n, args.repeats, args.timeout, args.view)
        baseline = baseline or (result["cached"] if n == TARGET_N else None)
        ratio = f"{result['cached'] / baseline:>6.1f}" if baseline else f"{'—':>6}"
        verdict = ("met" if result["cached"] * 1e3 <= TARGET_MS else "not met") if n == TARGET_N else "—"
        print(
            f"{n:>7} {result['kept']:>5} {result['rows']:>5} {result['first'] * 1e3:>10.0f} "
            f"{result['cached'] * 1e3:>7.0f} {result['cached_min'] * 1e3:>5.0f} {result['cached_cpu'] * 1e3:>5.0f} "
            f"{result['fresh'] * 1e3:>9.0f} {result['fresh_cpu'] * 1e3:>5.0f} {ratio}  {verdict}",
            flush=True,
        )


if __name__ == "__main__":
    main()
