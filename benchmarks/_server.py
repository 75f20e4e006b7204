"""Shared pieces of the benchmarks: a real `streamlit run app.py`, test sentences, Chromium.

`StreamlitServer` starts the app on a free local port (127.0.0.1 only), waits for
``/_stcore/health`` and stops it again; `rss_mib()` reads the server's resident memory
from ``/proc/<pid>/status``. The browser helpers read what Plotly drew in the page with
small in-page scripts that return a few values, not whole matrices: a 2048 × 2048 heatmap
copied out of the page would take longer than the change being timed.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
FLOOR_APP = ROOT / "benchmarks" / "floor_app.py"
"""One heatmap under the app's dk slider and sentence box: the floor the app is compared with."""
FIGURES_APP = ROOT / "benchmarks" / "figures_app.py"
"""Copies of the app's heatmap under one box, for `figure_cost.py`."""
DRAW_LABEL = "Draw"
"""The box of figures_app.py that mounts its figures."""

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # root in CI
    "--disable-gpu",
    "--disable-background-networking",  # nothing leaves the machine
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 720}

TEXT_LABEL = "Sentence"  # the first text area so labelled: the query sentence (cross-attention) comes after it
"""The sidebar text area's English label."""
DK_LABEL = "dk:"
"""The start of the dk slider's English label."""


# --- sentences --------------------------------------------------------------------------

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]  # 70


def words(count: int, tag: str = "") -> list[str]:
    """`count` distinct pronounceable words ("baba", "babe", …), each prefixed by `tag`.

    Every word is one token (a run of letters and digits), and no two are equal, so the
    heatmap gets exactly `count` rows with distinct labels.
    """
    result = []
    for index in range(count):
        word = ""
        value = index
        while True:  # base-70 digits, at least two syllables
            word = _SYLLABLES[value % len(_SYLLABLES)] + word
            value //= len(_SYLLABLES)
            if value == 0 and len(word) >= 4:
                break
        result.append(tag + word)
    return result


def sentence(count: int, tag: str = "") -> str:
    """A sentence of `count` distinct words (tokens)."""
    return " ".join(words(count, tag))


# --- statistics and the machine ---------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    """The `fraction` quantile of `values` (0.5 = median), interpolated; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def machine_line() -> str:
    """Python, cores and current load: the context every measured table needs."""
    import streamlit

    return (
        f"python {platform.python_version()}, streamlit {streamlit.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start"
    )


def app_token_cap() -> int:
    """The most tokens the app draws (longer input is cut with a notice)."""
    sys.path.insert(0, str(ROOT))
    from attention_core import ToySettings

    return ToySettings().max_tokens


def page_files() -> list[str]:
    """The page files registered in app.py's PAGES tuple, in menu order (read, not imported)."""
    import ast

    tree = ast.parse(APP.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "PAGES" for target in node.targets):
            return [entry.elts[0].value for entry in node.value.elts]
    raise RuntimeError("no PAGES tuple in app.py")


# --- the server -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class StreamlitServer:
    """`streamlit run app.py` (or another `app`) on a free port of 127.0.0.1, as a context manager.

    The project's `.streamlit/config.toml` applies (it is read from the working directory);
    the file watcher is off so that edits elsewhere in the tree do not disturb a run.
    """

    def __init__(self, timeout: float = 120, app: Path = APP):
        self.app = Path(app)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.timeout = timeout
        self.process: subprocess.Popen | None = None
        # the server's output, kept until stop() (and shown if it fails to start)
        self.log = tempfile.NamedTemporaryFile(prefix="streamlit-benchmark-", suffix=".log", delete=False)  # noqa: SIM115

    def __enter__(self) -> StreamlitServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", str(self.app),
                "--server.headless", "true",
                "--server.port", str(self.port),
                "--server.address", "127.0.0.1",
                "--server.fileWatcherType", "none",
                "--browser.gatherUsageStats", "false",
            ],
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise RuntimeError(f"streamlit exited with code {self.process.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"streamlit did not become healthy within {self.timeout} s:\n{tail}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def rss_mib(self) -> float:
        """The server process's resident memory (VmRSS), in MiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # the line is "VmRSS:  123456 kB"
        raise RuntimeError("no VmRSS line")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server process has used so far, in seconds."""
        return cpu_seconds(self.pid)

    def log_tail(self, lines: int = 30) -> str:
        self.log.flush()
        text = Path(self.log.name).read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name (field 3 onwards)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process `pid` has used so far, in seconds (0 if it is gone)."""
    try:
        fields = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15


def descendants(pid: int) -> list[int]:
    """Every living process started, directly or not, by process `pid`."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat_fields(int(entry.name))[1]), []).append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue  # ended meanwhile
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


# --- the browser ------------------------------------------------------------------------


def chromium_problem() -> str | None:
    """Why the browser benchmarks cannot run here, or None if they can."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    if not (shutil.which(CHROMIUM) or Path(CHROMIUM).exists()):
        return f"no Chromium at {CHROMIUM} (Debian package `chromium`)"
    return None


def exit_without_chromium() -> None:
    """Stop the script, saying why, when the browser benchmarks cannot run here."""
    problem = chromium_problem()
    if problem:
        sys.exit(f"cannot run: {problem}")


CHROMIUM_LAUNCH = {"executable_path": CHROMIUM, "headless": True, "args": CHROMIUM_ARGS}
"""Keyword arguments of Playwright's `chromium.launch()`: Debian's Chromium, never a downloaded one."""


FIRST_HEATMAP_JS = """
() => {
    const graph = document.querySelector('.js-plotly-plot');
    const trace = graph && (graph._fullData || []).find(t => t.type === 'heatmap');
    if (!trace) return null;
    const z = trace.z || [];
    const row = r => (r ? Array.from(r).slice(0, 64).join(',') : '');
    return {
        labels: Array.from(trace.y || []).map(String),
        fingerprint: [z.length, row(z[0]), row(z[Math.floor(z.length / 2)]), row(z[z.length - 1])].join('|'),
    };
}
"""
"""The first graph's first heatmap: its row labels and a fingerprint of its z values
(rows 0, n/2 and n−1, up to 64 columns each: every weight changes with dk)."""

CHANGED_JS = """
([before, expected]) => {
    const graph = document.querySelector('.js-plotly-plot');
    const trace = graph && (graph._fullData || []).find(t => t.type === 'heatmap');
    if (!trace) return false;
    const z = trace.z || [];
    const row = r => (r ? Array.from(r).slice(0, 64).join(',') : '');
    const fingerprint = [z.length, row(z[0]), row(z[Math.floor(z.length / 2)]), row(z[z.length - 1])].join('|');
    if (before !== null && fingerprint === before) return false;
    if (expected === null) return true;
    const labels = Array.from(trace.y || []).map(String);
    return labels.length === expected.length && labels.every((label, i) => label === expected[i]);
}
"""
"""True once the first heatmap differs from the fingerprint `before` (null: any) and its
row labels are `expected` (null: any)."""

IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
"""True when Streamlit shows no "Running…" status."""

QUIET_MS = 500
"""A change is over once the page's DOM has not changed for this long."""
UNPAINTED_CHANGE_JS = """record => {
    // A canvas's children are its fallback content, never painted: the table's grid rewrites them
    // about 300 ms after its pixels are final (measured on 2026-12-06, benchmarks/README.md).
    const element = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    const canvas = element && element.closest && element.closest('canvas');
    return Boolean(canvas) && (canvas !== element || record.type === 'childList');
}"""
"""A JavaScript function of one MutationObserver record: true when the change cannot show on the
screen (it is inside a canvas's fallback content; a change of the canvas element itself counts)."""

LAST_CHANGE_JS = f"""() => new Promise(done => {{
    let last = performance.now();
    const unpainted = {UNPAINTED_CHANGE_JS};
    const observer = new MutationObserver(records => {{
        if (records.some(record => !unpainted(record))) last = performance.now();
    }});
    observer.observe(document.body, {{subtree: true, childList: true, attributes: true, characterData: true}});
    const check = () => {{
        if (performance.now() - last > {QUIET_MS}) {{ observer.disconnect(); done(last); }} else setTimeout(check, 25);
    }};
    check();
}})"""
"""Resolves, once the page has been quiet for QUIET_MS, with the time of its last DOM change that
can show (`UNPAINTED_CHANGE_JS`)."""

EXCEPTION_TEXTS_JS = ("() => [...document.querySelectorAll('[data-testid=\"stException\"]')]"
                      ".map(box => box.innerText.trim().split('\\n')[0])")
"""The first line of every error box on the page (Streamlit's exception element)."""
EXCEPTIONS_JS = f"() => ({EXCEPTION_TEXTS_JS})().length"
"""How many error boxes the page shows."""


def slider_locator(page, label: str = DK_LABEL):
    """The dk slider's handle in the sidebar (focus it, then press arrow keys)."""
    return page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")


def text_area_locator(page, label: str = TEXT_LABEL):
    """The sidebar's sentence box (fill it, then press Control+Enter to apply)."""
    return page.locator('[data-testid="stTextArea"]').filter(has_text=label).first.locator("textarea")


# --- a server's first visit -------------------------------------------------------------

LOAD_TIMEOUT_S = 180.0
"""Seconds a page may take to open. A server's first visit imports the app, and on a busy
machine (the CI's smoke run when it started every benchmark at once, load 4 to 5) that alone took
over a minute; every script gives a page this long, and a change its own, shorter limit."""

FIRST_VISIT_PREFIX = "first visit (the server imports the app, before the timed rows): "
"""How a script's line of first-visit times begins, printed after its table."""

PAGE_TEXT_JS = "() => document.body ? document.body.innerText.split(/\\s+/).join(' ').trim().slice(0, 300) : ''"
"""The page's visible text, whitespace collapsed, cut at 300 characters: what a failed visit showed."""


def _first_visit_failed(server: StreamlitServer, url: str, timeout: float, error: Exception,
                        shown: str) -> RuntimeError:
    return RuntimeError(f"no heatmap on {url} within {timeout:g} s of a first visit ({type(error).__name__}).\n"
                        f"The page showed: {shown!r}\nThe server printed:\n{server.log_tail()}")


def first_visit(browser, server: StreamlitServer, path: str = "", timeout: float = LOAD_TIMEOUT_S) -> float:
    """Open `server.url + path` once in a new context and wait until a heatmap is drawn and the
    run is over: the server imports the app, and its first-run caches fill, before anything is timed.

    Seconds from the navigation to the idle page. If no heatmap comes within `timeout`, the
    error says what the page showed and what the server printed.
    """
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    url = server.url + path
    started = time.monotonic()
    try:
        page.goto(url, timeout=timeout * 1000)
        page.wait_for_selector(".js-plotly-plot", timeout=timeout * 1000)
        page.wait_for_function(IDLE_JS, timeout=timeout * 1000, polling=100)
    except Exception as error:
        try:
            shown = page.evaluate(PAGE_TEXT_JS)
        except Exception as reading:  # e.g. the page was still navigating
            shown = f"(not readable: {type(reading).__name__})"
        raise _first_visit_failed(server, url, timeout, error, shown) from error
    finally:
        context.close()
    return time.monotonic() - started


async def first_visit_async(browser, server: StreamlitServer, path: str = "",
                            timeout: float = LOAD_TIMEOUT_S) -> float:
    """`first_visit` for Playwright's async API (the concurrent-sessions benchmark)."""
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    url = server.url + path
    started = time.monotonic()
    try:
        await page.goto(url, timeout=timeout * 1000)
        await page.wait_for_selector(".js-plotly-plot", timeout=timeout * 1000)
        await page.wait_for_function(IDLE_JS, timeout=timeout * 1000, polling=100)
    except Exception as error:
        try:
            shown = await page.evaluate(PAGE_TEXT_JS)
        except Exception as reading:  # e.g. the page was still navigating
            shown = f"(not readable: {type(reading).__name__})"
        raise _first_visit_failed(server, url, timeout, error, shown) from error
    finally:
        await context.close()
    return time.monotonic() - started
