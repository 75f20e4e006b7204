"""Every benchmark script runs in a tiny configuration and prints its table.

The scripts run in their own subprocesses, a few at a time (`AT_ONCE`): all seventeen at once
put a load of 43 on two cores, and a browser's renderer then went unanswered for more than the
15 s a script gives a click. Nothing here checks a time: the machine is shared. The browser
benchmarks are skipped without Chromium.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
from _server import FIRST_VISIT_PREFIX, chromium_problem  # noqa: E402
from control_latency import NAME_WIDTH, Change, Page  # noqa: E402

BROWSER_PROBLEM = chromium_problem()

RUNS = {
    # script (and a name for a second run of it): (arguments of a tiny run, words of the table
    # header, start of the one expected row)
    "server_rerun.py": (["--sizes", "16", "--repeats", "1"], ("n asked", "kept", "8↔9 ms"), "     16"),
    "server_rerun.py --every-page": (
        ["--every-page", "--sizes", "16", "--repeats", "1"], ("page", "screen", "projector"), "step "
    ),
    "every_control.py": (["--pages", "cell", "--limit", "3"], ("page", "controls", "failed"), "cell "),
    "payload.py": (["--sizes", "16", "--pages", "pages/step.py"], ("page", "Plotly MB"), "step  "),
    "browser_latency.py": (["--sizes", "16", "--repeats", "1"], ("n asked", "median ms"), "     16"),
    "many_users.py": (
        ["--users", "2", "--duration", "3", "--settle", "0", "--tokens", "4", "--floor"],
        ("users", "errors", "p50", "p95", "MB/session", "p95 ÷ floor"),
        "        floor     2",
    ),
    "engine_overhead.py": (
        ["--sizes", "128", "--repeats", "1"],
        ("n", "dtype", "floor ms", "engine ms", "ratio"),
        "   128  float32    none  tight",
    ),
    "control_latency.py": (
        ["--sizes", "16", "--pages", "cell", "--repeats", "1", "--budget", "60", "--floor"],
        ("page", "control", "median ms", "verdict"),
        f"{'cell':<{NAME_WIDTH}} {16:>5} Slider",
    ),
    "browser_profile.py": (
        ["--apps", "app", "floor", "--scenarios", "dk", "--changes", "1", "--top", "2", "--trace", "--threads"],
        ("app", "scenario", "busy ms", "plotly", "browser"),
        "app            dk",
    ),
    "figure_cost.py": (
        ["--sizes", "16", "--counts", "1", "2", "--mounts", "1"],
        ("n", "figures", "median ms", "per figure"),
        "   16 per extra figure (1 → 2)",
    ),
    "plotly_margins.py": (
        ["--pages", "masks", "--repeats", "1"],
        ("page", "figures", "redraws", "ratio"),
        "masks (screen)",
    ),
    "kept_charts.py": (
        ["--counts", "1", "2", "--changes", "1", "--rounds", "1"],
        ("figures", "app ms", "kept ms", "kept ÷ app"),
        "      1 ",
    ),
    "heatmap_numbers.py": (
        ["--rounds", "1", "--runs", "1", "--profile", "1"],
        ("run", "as sent", "no numbers", "numbers as text"),
        "  1 ",
    ),
    "widget_cost.py": (
        ["--kinds", "tabs_lazy", "segmented_control", "--count", "2", "--rounds", "1", "--changes", "1"],
        ("kind", "tasks", "script", "each"),
        "tabs_lazy ",
    ),
    "first_chart.py": (["--rounds", "1"], ("Reveal", "median ms", "÷ again"), "first reveal "),
    "mask_marks.py": (["--sizes", "16", "--rounds", "1"], ("marks", "with × ms", "ms per ×"), "   16 "),
    "speed_report.py": (
        ["--parts", "rerun", "decoder", "--quick", "--settle", "0"],
        ("target", "verdict", "measured"),
        "step-through rerun after dk moves",
    ),
}
NEEDS_BROWSER = {
    "browser_latency.py", "many_users.py", "control_latency.py", "plotly_margins.py", "browser_profile.py",
    "figure_cost.py", "kept_charts.py", "heatmap_numbers.py", "widget_cost.py", "first_chart.py",
    "mask_marks.py",
}
TIMEOUT = 600
"""Seconds a tiny run may take on a busy shared machine before it counts as hung."""
AT_ONCE = 4
"""Scripts running at the same time: the machine's two cores stay busy, and no renderer starves."""


def run_tiny(script: str, arguments: list[str]) -> tuple[int, str, str]:
    """Run one script's tiny configuration; its return code, stdout and stderr. A run over
    `TIMEOUT` is stopped with everything it started (its servers, its browser) and fails."""
    process = subprocess.Popen(
        [sys.executable, str(BENCHMARKS / script.split()[0]), *arguments],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so that a hung run's children go too
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        stderr += f"\n(stopped: still running after {TIMEOUT} s)"
    return process.returncode, stdout, stderr


@pytest.fixture(scope="module")
def runs():
    """Every runnable script's tiny run, `AT_ONCE` at a time; their results by script name."""
    runnable = [
        (script, arguments)
        for script, (arguments, _, _) in RUNS.items()
        if not (script in NEEDS_BROWSER and BROWSER_PROBLEM)
    ]
    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        results = pool.map(lambda job: run_tiny(*job), runnable)
        return {script: result for (script, _), result in zip(runnable, results, strict=True)}


@pytest.mark.parametrize(
    "script", [pytest.param(name, marks=pytest.mark.browser) if name in NEEDS_BROWSER else name for name in RUNS]
)
def test_benchmark_prints_its_table(script, runs):
    if script in NEEDS_BROWSER and BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    returncode, stdout, stderr = runs[script]
    assert returncode == 0, stderr[-3000:]
    lines = stdout.splitlines()
    _, header_words, row_start = RUNS[script]
    header = next((line for line in lines if all(word in line for word in header_words)), None)
    assert header is not None, stdout
    rows = lines[lines.index(header) + 1 :]
    assert any(line.startswith(row_start) for line in rows), stdout
    assert "Traceback" not in stderr, stderr[-3000:]


@pytest.mark.browser
def test_browser_profile_traces_the_main_thread(runs):
    """`--trace`: each app's dk moves in Chrome's trace, the main thread's tasks split by kind."""
    if BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    lines = runs["browser_profile.py"][1].splitlines()
    header = next(line for line in lines if line.split()[1:] == ["tasks", "script", "style", "layout", "paint", "gc"])
    table = itertools.takewhile(str.strip, lines[lines.index(header) + 1 :])  # up to the next blank line
    rows = {line.split()[0]: [float(value) for value in line.split()[1:]] for line in table}
    assert set(rows) == {"app", "floor"}, lines
    for name, (tasks, *kinds) in rows.items():
        assert tasks > 0, name  # a dk move runs scripts and paints on the main thread
        assert sum(kinds) <= tasks + len(kinds), name  # the kinds split the tasks (each printed rounded)


def test_a_trace_gives_each_event_its_own_time_on_the_main_thread_only():
    """A task of 10 ms holding a script call of 6 ms (itself holding a 2 ms layout) and a 1 ms
    paint: 3 + 4 ms of script, 2 of layout, 1 of paint. Another thread's task is left out."""
    from browser_profile import summarise_trace  # benchmarks/ is on sys.path (above)

    def complete(name, thread, start_ms, duration_ms):
        return {"name": name, "ph": "X", "pid": 1, "tid": thread, "ts": start_ms * 1000, "dur": duration_ms * 1000}

    events = [
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "CrRendererMain"}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 3, "args": {"name": "Compositor"}},
        complete("RunTask", 2, 0, 10),
        complete("FunctionCall", 2, 1, 6),
        complete("Layout", 2, 2, 2),
        complete("Paint", 2, 8, 1),
        complete("RunTask", 3, 0, 99),
        complete("RunTask", 2, 20, 5),
    ]
    by_kind = summarise_trace(events)
    assert dict(by_kind) == {"tasks": 15, "script": 12, "layout": 2, "paint": 1}


@pytest.mark.browser
def test_browser_profile_counts_every_threads_work(runs):
    """`--threads`: each app's busy ms per change over every Chromium thread, more than the main thread's."""
    if BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    lines = runs["browser_profile.py"][1].splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("dk moves again with every thread"))
    rows = {line.split()[0]: line for line in lines[start + 1 :] if line.strip()}
    assert set(rows) == {"app", "floor"}, lines
    for line in rows.values():
        total = float(line.split()[1])
        main_thread = float(line.split("CrRendererMain ")[1].split(";")[0])
        assert 0 < main_thread < total, line


def test_every_thread_counts_its_outermost_events_once():
    """Two threads: the renderer's 10 ms task holding a 6 ms call counts 10 ms, a raster worker's
    two tasks 4 + 3 ms; events of a thread with no name are counted under "?"."""
    from browser_profile import busy_by_thread  # benchmarks/ is on sys.path (above)

    def complete(thread, start_ms, duration_ms):
        return {"name": "Task", "ph": "X", "pid": 1, "tid": thread, "ts": start_ms * 1000, "dur": duration_ms * 1000}

    events = [
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "CrRendererMain"}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 3, "args": {"name": "ThreadPoolForegroundWorker"}},
        complete(2, 0, 10),
        complete(2, 1, 6),
        complete(3, 0, 4),
        complete(3, 5, 3),
        complete(9, 0, 1),
    ]
    assert dict(busy_by_thread(events)) == {"CrRendererMain": 10, "ThreadPoolForegroundWorker": 7, "?": 1}


def test_speed_report_reads_the_decoder_page_when_the_checkpoint_is_installed(runs):
    """The decoder row is measured (a verdict, not "not measured") when the model is installed."""
    _, stdout, _ = runs["speed_report.py"]
    row = next(line for line in stdout.splitlines() if line.startswith("decoder page:"))
    try:
        import gguf  # noqa: F401

        from attention_core.decoder import locate_gguf
    except ImportError:
        installed = False
    else:
        installed = locate_gguf() is not None
    if installed:
        assert " met " in row or "NOT MET" in row, row
    else:
        assert "not installed" in row, row


class _ScriptedTab:
    """A stand-in for a browser tab whose clock (performance.now(), ms) moves only when told."""

    def __init__(self):
        self.now = self.last_mutation = 0.0

    def evaluate(self, script: str, *args):
        if "__lastMutation" in script:
            return self.last_mutation
        if "performance.now" in script:
            return self.now
        return 0  # window.__finished

    def wait_for_function(self, *args, **kwargs) -> None:
        """The rerun has settled already."""


def test_control_latency_times_a_change_from_its_commit_not_its_preparation():
    """Opening a list or typing a sentence comes before the change; only the commit starts the clock."""
    tab = _ScriptedTab()
    page = object.__new__(Page)
    page.page, page.timeout_ms = tab, 1000

    def open_the_list():
        tab.now += 500

    def pick_an_option():
        tab.now += 20
        tab.last_mutation = tab.now + 100  # the rerun's last repaint

    assert page.change(Change(prepare=open_the_list, commit=pick_an_option)) == pytest.approx(0.120)
    assert page.change(Change(pick_an_option)) == pytest.approx(0.120)


class _BusyRendererTab(_ScriptedTab):
    """A tab whose renderer answers an action only after `busy_ms` (a first paint under load):
    an action given less time than that times out, as Playwright's does."""

    def __init__(self, busy_ms: float, default_timeout_ms: float):
        super().__init__()
        self.busy_ms, self.default_timeout_ms = busy_ms, default_timeout_ms
        self.opened_expanders = 0

    def act(self, timeout: float | None) -> None:
        if (self.default_timeout_ms if timeout is None else timeout) < self.busy_ms:
            raise TimeoutError("the renderer did not answer in time")

    def locator(self, selector: str) -> _BusyLocator:
        return _BusyLocator(self, "textarea" if "stTextArea" in selector else selector)

    def set_default_timeout(self, timeout: float) -> None:
        self.default_timeout_ms = timeout

    def wait_for_timeout(self, timeout: float) -> None:
        """Time passes."""


class _BusyLocator:
    """Locators of a `_BusyRendererTab`: one sentence box, two closed sidebar expanders."""

    def __init__(self, tab: _BusyRendererTab, what: str):
        self.tab, self.what = tab, what

    def filter(self, **kwargs) -> _BusyLocator:
        return self

    first = property(lambda self: self)

    def locator(self, selector: str) -> _BusyLocator:
        return _BusyLocator(self.tab, selector if selector in ("summary", "textarea") else self.what)

    def nth(self, index: int) -> _BusyLocator:
        return self

    def count(self) -> int:
        return {"textarea": 1, "summary": 1}.get(self.what, 0 if "dialog" in self.what else 2)

    def is_enabled(self, timeout: float | None = None) -> bool:
        return True

    def get_attribute(self, name: str, timeout: float | None = None) -> None:
        self.tab.act(timeout)

    def fill(self, text: str, timeout: float | None = None) -> None:
        self.tab.act(timeout)

    def press(self, key: str, timeout: float | None = None) -> None:
        self.tab.act(timeout)

    def click(self, timeout: float | None = None) -> None:
        self.tab.act(timeout)
        self.tab.opened_expanders += 1


def test_control_latency_waits_for_a_busy_renderer_while_it_opens_a_page(monkeypatch):
    """Opening a page is untimed: its sentence and expander steps wait as long as a load may, not
    the 15 s after which a missing control fails (CI's smoke run, load 3.6: the first expander's
    click timed out at 15 s and the run printed no rows; here, at load 3.4, the sentence box's
    is_enabled did)."""
    import control_latency

    monkeypatch.setattr(control_latency, "opened", lambda page, url, timeout_ms: 1.0)
    tab = _BusyRendererTab(busy_ms=20_000, default_timeout_ms=15_000)  # a new page: controls fail fast
    page = object.__new__(Page)
    page.page, page.url, page.n = tab, "http://localhost/cell", 16
    page.timeout_ms, page.load_timeout_ms = 60_000, 180_000
    page.sentences, page.first_paint = ["a b c", "z a b"], None
    page.open()
    assert tab.opened_expanders == 2
    assert tab.default_timeout_ms == control_latency.CONTROL_TIMEOUT_MS  # an opened page's controls fail fast


@pytest.mark.browser
def test_control_latency_times_the_floor_apps_two_controls_with_and_without_numbers(runs):
    if BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    _, stdout, _ = runs["control_latency.py"]
    for name in ("floor ", "floor+numbers "):
        lines = stdout.splitlines()
        timed = [line for line in lines if line.startswith(name) and ("Slider" in line or "TextArea" in line)]
        assert len(timed) == 2 and all(line.split()[-1] in ("met", "OVER") for line in timed), stdout


@pytest.mark.browser
@pytest.mark.parametrize("script, servers", [
    ("control_latency.py", ("the app", "the floor app")),
    ("browser_latency.py", ()),
])
def test_each_servers_first_visit_is_reported_after_the_table_not_inside_it(script, servers, runs):
    """The first visit (the server imports the app) is waited for apart from the timed changes;
    its time is printed once the table is over, where it cannot be read as a row."""
    if BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    lines = runs[script][1].splitlines()
    _, header_words, _ = RUNS[script]
    header = next(index for index, line in enumerate(lines) if all(word in line for word in header_words))
    visits = [index for index, line in enumerate(lines) if line.startswith("first visit")]
    assert len(visits) == 1 and visits[0] > header, lines
    table = lines[header + 1 : visits[0]]
    assert table and not any("first visit" in line for line in table), lines
    reported = lines[visits[0]].removeprefix(FIRST_VISIT_PREFIX)
    for name in servers:
        assert re.search(rf"\b{name} \d+\.\d s\b", reported), reported
    seconds = [float(value) for value in re.findall(r"(\d+\.\d) s\b", reported)]
    assert len(seconds) == max(len(servers), 1) and all(value > 0 for value in seconds), reported


FIRST_VISIT_WITH_NO_TIME = """
import asyncio
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright
from _server import CHROMIUM_LAUNCH, FLOOR_APP, StreamlitServer, first_visit, first_visit_async

async def visit_async(server):
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**CHROMIUM_LAUNCH)
        try:
            await first_visit_async(browser, server, "/?numbers=1", timeout=0.01)
        except RuntimeError as error:
            print(error)
        finally:
            await browser.close()

with StreamlitServer(app=FLOOR_APP) as server:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        try:
            first_visit(browser, server, timeout=0.01)
        except RuntimeError as error:
            print(error)
        finally:
            browser.close()
    print("-----")
    asyncio.run(visit_async(server))
"""


@pytest.mark.browser
def test_a_first_visit_that_draws_nothing_says_what_the_page_and_server_showed():
    """Both helpers (Playwright's sync and async API), given no time. In its own process:
    Playwright's sync API refuses to start where another test's event loop runs."""
    if BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    done = subprocess.run([sys.executable, "-c", FIRST_VISIT_WITH_NO_TIME], cwd=BENCHMARKS, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    sync_error, async_error = done.stdout.split("-----\n")
    for error, path in ((sync_error, ""), (async_error, r"/\?numbers=1")):
        assert re.match(rf"no heatmap on http://127\.0\.0\.1:\d+{path} within 0\.01 s of a first visit", error), error
        assert "The page showed: " in error and "You can now view your Streamlit app" in error, error


@pytest.mark.browser
def test_control_latency_times_each_pages_first_paint_uncached_and_cached(runs):
    if BROWSER_PROBLEM:
        pytest.skip(BROWSER_PROBLEM)
    _, stdout, _ = runs["control_latency.py"]
    for name in ("cell ", "floor ", "floor+numbers "):
        for kind in ("first paint", "revisit paint"):
            (row,) = [line for line in stdout.splitlines() if line.startswith(name) and f" {kind} " in line]
            assert row.split()[-1] in ("met", "OVER"), row


def test_speed_report_gives_both_first_paints_a_verdict():
    """The report's first-paint rows read control_latency.py's table (a line of it, as printed)."""
    import speed_report  # benchmarks/ is on sys.path (above)

    table = "\n".join(
        f"{page:<{NAME_WIDTH}} {16:>5} {kind:<14} {'opening':<40} {'page':<7} {1:>7} {ms:>9} {ms:>7} {0:>8} {0:>6}"
        "  verdict"
        for page, kind, ms in (("cell", "first paint", 2400), ("cell", "revisit paint", 1200)))
    lines = {label: (measured, verdict) for label, measured, verdict in speed_report.control_lines(
        {"control_latency": table})}
    first = lines["first paint, every page ≤ 1500 ms"]
    again = lines["first paint again, scripts cached, every page ≤ 1500 ms"]
    assert "1 over" in first[0] and "NOT MET" in first[1]
    assert "0 over" in again[0] and "NOT MET" not in again[1]


def test_control_latency_visits_each_part_of_a_page_shown_one_at_a_time():
    """The multi-head page shows one part at a time: the controls of the other parts (the head
    and stage pickers, W_O's figures) are only on the page when their part is open."""
    import control_latency  # benchmarks/ is on sys.path (above)

    from ui.url import MULTI_HEAD_PARTS, PAGE_PARTS

    views = control_latency.page_views([("positional", "pages/positional.py"), ("multi-head", "pages/multi-head.py")])
    assert views[0] == ("positional", "positional", "pages/positional.py")  # a page of one part
    assert [view for _, view, _ in views[1:]] == ["multi-head"] + [
        f"multi-head?mh_part={part}" for part in MULTI_HEAD_PARTS[1:]
    ]
    assert [name for name, _, _ in views][-1] == "multi-head:combine"
    every_view = control_latency.page_views([(path, f"pages/{path}.py") for path in PAGE_PARTS])
    assert max(len(name) for name, _, _ in every_view) <= control_latency.NAME_WIDTH, "the table's columns stay aligned"


def test_speed_report_reads_where_the_engines_time_goes():
    """The report's engine profile line reads engine_overhead.py's step table, as printed."""
    import engine_overhead
    import speed_report

    step_ms = {engine_overhead.RECORD_MEMORY: 1.82, engine_overhead.SCORE_STEPS: 11.48,
               engine_overhead.WHOLE_CALL: 24.67, engine_overhead.COMPARISONS[0]: 11.61,
               engine_overhead.COMPARISONS[1]: 7.04, engine_overhead.COMPARISONS[2]: 28.3}
    table = "the engine's steps, n = m = 2048, float32, no mask (CPU ms; share of the whole call)\n" + "\n".join(
        f"  {name:<36} {ms:>7.2f} {ms / 24.67:>6.0%}" for name, ms in step_ms.items())
    profile = next(line for line in speed_report.engine_lines({"engine_1thread": table}) if "time goes" in line[0])
    assert "n = 2048" in profile[0]
    assert profile[1] == ("records written 1.8 (in new mappings: 7.0); softmax 11.5 (the floor's in place: 11.6); "
                          "whole call 24.7 (in new mappings: 28.3)")
