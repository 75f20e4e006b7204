"""Take the README's screenshots from a running app, in Debian's Chromium.

    python scripts/screenshots.py                       # starts `streamlit run app.py` itself
    python scripts/screenshots.py --url http://127.0.0.1:8501 --only projector step_through

Each shot is a link (page address and settings) opened in a fresh tab at a set window size,
optionally scrolled to one element; it waits until the app has finished running and Plotly
has drawn, then writes assets/screenshot-<name>.png.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import NamedTuple

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SCREEN = (1280, 900)
PROJECTOR = (1280, 720)


class Shot(NamedTuple):
    name: str
    path: str
    query: dict[str, str]
    size: tuple[int, int] = SCREEN
    scroll_to: str | None = None  # a CSS selector brought to the top of the window


CAUSAL_SOFTMAX = {"stage": "weights", "mask_kind": "causal"}
SHOTS = (
    Shot("step_through", "", CAUSAL_SOFTMAX),
    Shot("first_example", "", {}, scroll_to='[data-testid="stExpander"]'),
    Shot("projection", "", {"stage": "qkv"}, scroll_to=".st-key-projection-tab"),
    Shot("highlight", "", {**CAUSAL_SOFTMAX, "mask_kind": "none", "highlight": "true", "highlight_i": "7",
                           "highlight_j": "1"}, scroll_to=".st-key-highlight"),
    Shot("mask_uses", "masks", {"mask_lab_presets": "causal,padding", "mask_lab_pad": "10"}),
    Shot("projector", "", {**CAUSAL_SOFTMAX, "display": "projector"}, PROJECTOR),
    Shot("why_sqrt_dk", "why-sqrt-dk", {}),
    Shot("positional", "positional", {}),
    Shot("follow_cell", "cell", {"cell_i": "7", "cell_j": "3"}),
    Shot("mask_lab", "masks", {"mask_lab_presets": "causal,window", "mask_lab_window": "3"}),
    Shot("multi_head", "multi-head", {}),
    Shot("your_numbers", "your-numbers", {}),
    Shot("compare", "compare", {"compare.b.scaled": "false"}),
    Shot("quiz", "quiz", {}),
    Shot("real_model", "real-model", {}),
    Shot("decoder", "decoder", {"dec_stage": "weights"}, PROJECTOR, scroll_to=".st-key-dec-step-weights"),
)


def start_server(port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("streamlit did not start")


def take(browser, base_url: str, shot: Shot) -> Path:
    context = browser.new_context(viewport={"width": shot.size[0], "height": shot.size[1]})
    tab = context.new_page()
    try:
        tab.goto(f"{base_url}/{shot.path}?{urllib.parse.urlencode(shot.query)}")
        tab.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=180_000)
        tab.wait_for_timeout(1500)
        if tab.locator(".js-plotly-plot").count():
            tab.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        if shot.scroll_to:
            tab.locator(shot.scroll_to).first.evaluate(
                "element => { element.scrollIntoView({block: 'start'}); document.querySelector("
                "'[data-testid=\"stMain\"]').scrollBy(0, -70); }"  # clear of the app's header
            )
        tab.wait_for_timeout(1000)
        target = ROOT / "assets" / f"screenshot-{shot.name}.png"
        tab.screenshot(path=str(target))
        return target
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an app already running (default: start one)")
    parser.add_argument("--port", type=int, default=8599)
    parser.add_argument("--only", nargs="*", help="shot names (default: all)")
    options = parser.parse_args()
    shots = [shot for shot in SHOTS if not options.only or shot.name in options.only]
    server = None if options.url else start_server(options.port)
    base_url = options.url or f"http://127.0.0.1:{options.port}"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            for shot in shots:
                print(take(browser, base_url, shot).relative_to(ROOT), flush=True)
            browser.close()
    finally:
        if server is not None:
            server.terminate()


if __name__ == "__main__":
    main()
