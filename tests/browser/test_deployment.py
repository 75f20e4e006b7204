"""Two replicas behind nginx (deploy/run_replicas.sh): sticky sessions that stay apart.

Starts the recipe of deploy/README.md on free loopback ports, opens four browsers (separate
cookie jars, as four students) through nginx, types a different sentence in each, and checks
that each sees its own tokens, that every request of a browser (page, assets, WebSocket)
reached one replica, and that both replicas served sessions. Which replica served what is
read from nginx's access log, whose format logs the affinity key and the upstream address.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import pytest
from plotly_page import ARTIFACTS, first_heatmap, wait_for_app

from attention_core import ToySettings, build_toy_trace

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "run_replicas.sh"
NGINX = os.environ.get("NGINX_BIN") or shutil.which("nginx") or "/usr/sbin/nginx"
if not Path(NGINX).exists():
    pytest.skip("nginx is not installed (Debian package `nginx`)", allow_module_level=True)

SENTENCES = (
    "Colourless green ideas sleep furiously.",
    "Attention is all you need.",
    "A quick brown fox jumps over lazy dogs.",
    "Time flies like an arrow.",
)
LOG_LINE = re.compile(  # deploy/nginx.conf.template's log_format
    r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d+) .* affinity=(?P<key>\S+) upstream=(?P<upstream>\S+)'
)
STREAM_PATH = "/_stcore/stream"  # Streamlit's WebSocket


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@contextmanager
def running_replicas(run_dir: Path, replicas: int = 2, timeout: float = 90, env: dict[str, str] | None = None):
    """Run deploy/run_replicas.sh (with `env` added to the environment); yield (nginx URL,
    replica URLs, pids it reported)."""
    port = _free_port()
    run_dir.mkdir(parents=True, exist_ok=True)
    output = run_dir / "run_replicas.out"
    env = {
        **os.environ, **(env or {}),
        "PORT": str(port), "PYTHON": sys.executable, "NGINX_BIN": NGINX, "RUN_DIR": str(run_dir),
    }
    with output.open("w") as sink:
        process = subprocess.Popen(
            ["bash", str(SCRIPT), str(replicas)],
            cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while "Attention Explorer: http" not in output.read_text():
            if process.poll() is not None:
                raise RuntimeError(f"run_replicas.sh exited with {process.returncode}:\n{output.read_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"run_replicas.sh was not ready within {timeout} s:\n{output.read_text()}")
            time.sleep(0.3)
        text = output.read_text()
        url = re.search(r"^Attention Explorer: (\S+?)/?$", text, re.MULTILINE).group(1)
        replica_urls = re.findall(r"^replica \d+: (\S+?)/? ", text, re.MULTILINE)
        pids = [int(pid) for pid in re.findall(r"\bpid (\d+)", text)]
        yield url, replica_urls, pids
    finally:
        process.send_signal(signal.SIGTERM)  # the script's trap stops nginx and the replicas
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own process group, started above
            process.wait()


def _log_entries(access_log: Path) -> list[dict]:
    return [match.groupdict() for match in LOG_LINE.finditer(access_log.read_text())]


def _upstream_of(access_log: Path, key: str, timeout: float = 5) -> str:
    """The replica that served the request with this affinity key (nginx logs it just after replying)."""
    deadline = time.monotonic() + timeout
    while True:
        entry = next((e for e in reversed(_log_entries(access_log)) if e["key"] == key), None)
        if entry is not None:
            return entry["upstream"]
        if time.monotonic() > deadline:
            raise AssertionError(f"no access log line for affinity={key}")
        time.sleep(0.05)


def _keys_reaching_each_replica(url: str, access_log: Path, upstreams: set[str]) -> dict[str, str]:
    """An affinity cookie value for each replica, found by asking nginx over plain HTTP."""
    found: dict[str, str] = {}
    for index in range(64):
        key = f"probe-{index}"
        request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"ae_affinity={key}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
        found.setdefault(_upstream_of(access_log, key), key)
        if set(found) == upstreams:
            return found
    raise AssertionError(f"64 cookie values all reached {set(found)}, not {upstreams}")


def _type_sentence(page, sentence: str) -> None:
    box = page.get_by_role("textbox", name="Sentence", exact=True)
    box.fill(sentence)
    box.press("Control+Enter")  # a text area commits on Ctrl+Enter (or on blur)


def _wait_for_labels(page, expected: list[str], timeout: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout
    labels: list[str] = []
    while time.monotonic() < deadline:
        try:
            labels = first_heatmap(page)["y"]
        except StopIteration:
            labels = []
        if labels == expected:
            return labels
        page.wait_for_timeout(250)
    return labels


def test_replicas_behind_nginx_keep_each_browser_on_one_replica_and_sessions_apart(browser, tmp_path):
    started = time.monotonic()
    run_dir = tmp_path / "run"
    access_log = run_dir / "access.log"
    phases: dict[str, float] = {}  # seconds each phase took, printed at the end (`pytest -s`)

    def lap(name: str) -> None:
        phases[name] = time.monotonic() - started - sum(phases.values())

    with running_replicas(run_dir) as (url, replica_urls, pids):
        lap("start")
        upstreams = {replica_url.removeprefix("http://") for replica_url in replica_urls}
        assert url.startswith("http://127.0.0.1:") and len(upstreams) == 2
        assert all(upstream.startswith("127.0.0.1:") for upstream in upstreams), "loopback only"

        # Browsers 0 and 1 arrive without a cookie and get one from nginx; browsers 2 and 3
        # bring a cookie known to reach replica A and B, so that both replicas surely serve.
        preset = sorted(_keys_reaching_each_replica(url, access_log, upstreams).values())
        cookies = [None, None, *preset]
        contexts, pages = [], []
        for cookie in cookies:
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            if cookie is not None:
                context.add_cookies([{"name": "ae_affinity", "value": cookie, "url": url}])
            page = context.new_page()
            page.console_errors = []
            page.on(
                "console",
                lambda message, page=page: message.type == "error" and page.console_errors.append(message.text),
            )
            contexts.append(context)
            pages.append(page)

        try:
            # The four sessions run side by side: all load, then all type, then all are read.
            for page in pages:
                page.goto(url + "/")
            for page in pages:
                wait_for_app(page, timeout=90_000)  # the first run of each replica imports the engine
            lap("load")
            expected = [list(build_toy_trace(ToySettings(text=sentence)).query_labels) for sentence in SENTENCES]
            for page, sentence in zip(pages, SENTENCES, strict=True):
                _type_sentence(page, sentence)
            for page, sentence, labels in zip(pages, SENTENCES, expected, strict=True):
                assert _wait_for_labels(page, labels) == labels, f"{sentence!r} was not drawn"
            lap("type")
            for index, (page, labels) in enumerate(zip(pages, expected, strict=True)):
                assert first_heatmap(page)["y"] == labels, f"browser {index} sees another session's tokens"
                assert not page.console_errors, (index, page.console_errors)
            ARTIFACTS.mkdir(exist_ok=True)
            pages[0].screenshot(path=str(ARTIFACTS / "deployment_replica.png"))

            keys = []
            for context in contexts:
                jar = {cookie["name"]: cookie["value"] for cookie in context.cookies(url)}
                assert "ae_affinity" in jar, "nginx sets the affinity cookie"
                keys.append(jar["ae_affinity"])
            assert keys[2:] == preset, "nginx keeps a cookie the browser already has"
            assert len(set(keys)) == len(keys), "every browser has its own affinity key"
        finally:
            for context in contexts:
                context.close()  # closes the WebSockets: nginx logs each one as it ends

        lap("close")
        # Each browser's requests, the WebSocket included, all reached one replica.
        deadline = time.monotonic() + 15
        while True:
            served: dict[str, set[str]] = defaultdict(set)
            streams: dict[str, set[str]] = defaultdict(set)
            for entry in _log_entries(access_log):
                served[entry["key"]].add(entry["upstream"])
                if entry["path"].startswith(STREAM_PATH) and entry["status"] == "101":
                    streams[entry["key"]].add(entry["upstream"])
            if all(streams[key] for key in keys) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        for index, key in enumerate(keys):
            assert len(served[key]) == 1, f"browser {index} was spread over {served[key]}"
            assert streams[key] == served[key], f"browser {index}'s WebSocket: {streams[key]} vs {served[key]}"
        assert set().union(*(streams[key] for key in keys)) == upstreams, "both replicas served sessions"

    assert pids and not any(_alive(pid) for pid in pids), "the script stopped nginx and the replicas"
    lap("stop")
    print("two replicas behind nginx, four browsers:", ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
