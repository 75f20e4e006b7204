"""A real browser against a real server: `streamlit run app.py` driven by headless Chromium.

Needs Debian's chromium at /usr/bin/chromium and the Python `playwright` package; without
them every browser test is skipped with the reason. Playwright never downloads a browser
here: it launches the system's.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

import pytest
from plotly_page import ARTIFACTS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root in CI
    "--disable-gpu",
    "--disable-background-networking",  # the machine has no internet: no stray requests
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (Debian package `chromium`)", allow_module_level=True)


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_health(url: str, process: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy within {timeout} s")


def start_streamlit(log_name: str) -> tuple[str, subprocess.Popen, IO[str]]:
    """Start `streamlit run app.py` on a free local port, logging to ARTIFACTS/`log_name`; returns
    (base URL, process, log) at once, before the server is healthy (see `_wait_for_health`)."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / log_name).open("w")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
            "--server.headless", "true",
            "--server.port", str(port),
            "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return f"http://127.0.0.1:{port}", process, log


def stop_streamlit(process: subprocess.Popen, log: IO[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.fixture(scope="session")
def app_url():
    """Base URL of a fresh `streamlit run app.py` on a free local port."""
    url, process, log = start_streamlit("streamlit.log")
    try:
        _wait_for_health(url, process)
        yield url
    finally:
        stop_streamlit(process, log)


@pytest.fixture(scope="session")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


STREAMLIT_PROBES = ("/_stcore/health", "/_stcore/host-config")
"""On a page URL such as /masks, Streamlit's client first probes /masks/_stcore/… (in case the
app is served under that path), gets 404 and falls back to /_stcore/…: not an error of ours."""


def _is_real_error(message) -> bool:
    if message.type != "error":
        return False
    return not (message.text.startswith("Failed to load resource") and message.location.get("url", "").endswith(
        STREAMLIT_PROBES
    ))


@pytest.fixture
def page(browser, app_url):
    """A fresh browser tab (1280×720, a projector's size) that records console errors,
    dialogs and every request leaving the machine."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    tab = context.new_page()
    tab.console_errors = []
    tab.external_requests = []
    tab.dialogs = []  # alert/confirm/prompt: a script the user typed must never open one
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    tab.on("console", lambda message: _is_real_error(message) and tab.console_errors.append(message.text))
    tab.on(
        "request",
        lambda request: request.url.startswith(("http://", "https://"))
        and not request.url.startswith(app_url)
        and tab.external_requests.append(request.url),
    )
    tab.app_url = app_url
    yield tab
    context.close()
