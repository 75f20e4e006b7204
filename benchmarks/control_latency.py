"""Every control on every page: how long from the change until the page is repainted, in Chromium.

    python benchmarks/control_latency.py [--sizes 16 2048] [--repeats 3] [--pages step cell ...]

A real server (`streamlit run app.py` on a free local port) and Debian's Chromium driven by
Playwright. For each page of app.py's PAGES (and each part of a page shown one at a time,
`ui.url.PAGE_PARTS`, opened by its link: rows "multi-head:combine") and each sentence length
n, the page is opened,
a sentence of n distinct words is typed into the sidebar and drawn, and the list of
controls is read from the page itself: every visible slider, select box, radio group,
checkbox or toggle, number input, segmented control or pills, text area, text input and
button (sidebar expanders are opened first, so that their controls count too). Each
control is then changed `repeats` times, forwards and back (the next option, the other
state, one step of a slider, a different sentence of the same length), and each change is
timed from the moment before the action that commits it (the click on an option or a switch,
the key that moves a slider, Enter in a list or a number box, Ctrl+Enter in a text area; not
opening the list or typing the text before it) until the last change to the page's DOM
after Streamlit's "script finished" message (read from the WebSocket), once nothing has
changed for a quiet interval (changes inside a canvas's fallback content, which is never
painted, do not count). That covers the round trip, the rerun, the figures' JSON,
React and Plotly's repaint. A change that is not followed by a rerun within `--timeout`
is reported as "no rerun". When a change alters the page's set of controls (a new page
section, another language) the page is opened afresh before the next control.

The n = 2048 rows are measured on the pages whose token cap reaches 2048 (the others cut
the sentence to their cap; pass --all-pages-large to measure them anyway). Targets: median
≤ 250 ms per control at 16 tokens, ≤ 1 s at 2048. The machine is shared: the load average
at the start is printed, and a busy machine shows in every row alike. Each page's first row
is its first paint: from the start of the navigation to the last DOM change of its first
run, with the default sentence, in a new session on a warm server (target ≤ 1.5 s), in a new
browser context: nothing cached, as on a student's first visit. The second row ("revisit
paint") opens the page once more in a second tab of the same browser: a new session again,
with the scripts the browser cached on the first visit, as when a student comes back or reloads.

With `--floor`, `benchmarks/floor_app.py` (one heatmap under the same dk slider and sentence
box) is then served and timed the same way, as it is and with the weights printed in its
cells: rows "floor" and "floor+numbers", not counted in the summary. They show what
Streamlit, Plotly and Chromium take on this machine for one heatmap, whatever the app does.

Before any row, each server gets one untimed first visit (it imports the app); how long that
took is printed after the table. Opening a page may take `--load-timeout`, a change `--timeout`.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run from anywhere without installing
from _server import (
    APP,
    CHROMIUM_LAUNCH,
    EXCEPTION_TEXTS_JS,
    FIRST_VISIT_PREFIX,
    FLOOR_APP,
    LOAD_TIMEOUT_S,
    UNPAINTED_CHANGE_JS,
    VIEWPORT,
    StreamlitServer,
    exit_without_chromium,
    first_visit,
    machine_line,
    sentence,
    text_area_locator,
)

TARGET_MS = {16: 250, 2048: 1000}
SMALL_INPUT_ONLY = {
    "pages/your-numbers.py": "draws the user's own matrices, not the sidebar sentence",
    "pages/real-model.py": "the model reads its own sentence, at most 256 tokens",
    "pages/decoder.py": "the model reads its own prompt, not the sidebar sentence",
}
"""Pages whose token cap says 2048 but which do not draw a sentence that long."""
FIRST_PAINT_MS = 1500
"""Target for a page's first paint: navigation start → last DOM change of its first run."""
PAINT_KINDS = ("first paint", "revisit paint")
"""The rows of a page's openings: nothing cached, and again with the browser's cache."""
QUIET_MS = 300
"""A repaint is over once neither the DOM nor the WebSocket has changed for this long."""
CONTROL_TIMEOUT_MS = 15_000
"""How long an action on an opened page waits for its control: one that cannot be found fails fast."""
NAME_WIDTH = 22
"""Width of the table's page column: the longest view's name, "why-sqrt-dk:saturation"."""

WATCH_JS = r"""
(() => {
    window.__finished = 0; window.__lastMutation = 0; window.__lastMessage = 0;
    // Streamlit's ForwardMsg: a top-level field 6 is `script_finished`.
    const scriptFinished = buffer => {
        const bytes = new Uint8Array(buffer);
        let i = 0;
        const varint = () => {
            let value = 0, shift = 0, byte;
            do {
                byte = bytes[i++];
                value += (byte & 0x7f) * 2 ** shift;
                shift += 7;
            } while (byte & 0x80 && i < bytes.length);
            return value;
        };
        while (i < bytes.length) {
            const tag = varint(), number = Math.floor(tag / 8), wire = tag & 7;
            if (number === 6) return true;
            if (wire === 0) varint();
            else if (wire === 2) { const length = varint(); i += length; }  // not `i += varint()`: i is read first
            else if (wire === 1) i += 8;
            else if (wire === 5) i += 4;
            else return false;
        }
        return false;
    };
    const Native = window.WebSocket;
    const Watched = function (...args) {
        const socket = new Native(...args);
        socket.addEventListener('message', event => {
            window.__lastMessage = performance.now();
            if (event.data instanceof ArrayBuffer && scriptFinished(event.data)) window.__finished++;
        });
        return socket;
    };
    Watched.prototype = Native.prototype;
    for (const name of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Watched[name] = Native[name];
    window.WebSocket = Watched;
    const ignored = '[data-testid="stStatusWidget"], [data-testid="stToolbar"], [data-testid="stHeader"]';
    const unpainted = UNPAINTED_CHANGE;
    const observe = () => new MutationObserver(records => {
        for (const record of records) {
            const element = record.target.nodeType === 1 ? record.target : record.target.parentElement;
            if (element && element.closest && element.closest(ignored) || unpainted(record)) continue;
            window.__lastMutation = performance.now();
            return;
        }
    }).observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
    if (document.documentElement) observe(); else document.addEventListener('DOMContentLoaded', observe);
})();
""".replace("UNPAINTED_CHANGE", UNPAINTED_CHANGE_JS)
"""Installed before the page's own scripts: counts Streamlit's "script finished" messages and
keeps the time of the last WebSocket message and of the last DOM change outside the header that
can show (`_server.UNPAINTED_CHANGE_JS`: not inside a canvas's fallback content)."""

SETTLED_JS = """
([finishedBefore, quiet]) => window.__finished > finishedBefore
    && performance.now() - Math.max(window.__lastMutation, window.__lastMessage) > quiet
"""

SELECTED_OPTION_JS = """
() => {
    const options = Array.from(document.querySelectorAll('[role="listbox"] [role="option"]'));
    const index = options.findIndex(option => option.getAttribute('aria-selected') === 'true');
    return index < 0 ? null : [index, options.length];
}
"""
"""In an open select box: the chosen option's place among those drawn, and how many are drawn."""

CONTROL_TYPES = (
    "stSlider", "stSelectbox", "stRadio", "stCheckbox", "stNumberInput", "stButtonGroup", "stTextArea",
    "stTextInput", "stButton",
)

CONTROLS_JS = """
(types) => {
    const found = [];
    for (const type of types) {
        document.querySelectorAll(`[data-testid="${type}"]`).forEach((element, index) => {
            if (element.offsetParent === null) return;  // hidden (a closed tab or expander)
            // greyed out: a page that does not use this setting (the decoder's sidebar); a number
            // input at its minimum has a greyed-out − button, but is not greyed out itself
            const fields = element.querySelectorAll('input, textarea');
            const buttons = Array.from(element.querySelectorAll('button:not([aria-label^="Help"])'));
            if (fields.length ? Array.from(fields).every(field => field.disabled)
                : buttons.length && buttons.every(button => button.disabled)) return;
            if (element.querySelector('[aria-disabled="true"]')) return;
            const label = element.querySelector('[data-testid="stWidgetLabel"]');
            const text = (label ? label.innerText : element.innerText).replace(/\\s+/g, ' ').trim();
            const where = element.closest('[data-testid="stSidebar"]') ? 'sidebar' : 'page';
            found.push([type, index, text.slice(0, 40), where]);
        });
    }
    return found;
}
"""

HEATMAPS_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(graph =>
    (graph._fullData || []).filter(trace => trace.type === 'heatmap').map(trace => {
        const z = trace.z || [];
        const row = r => (r ? Array.from(r).slice(0, 16).join(',') : '');
        return [z.length, (trace.y || []).length, row(z[0]), row(z[z.length - 1])].join('|');
    }))
"""
"""A fingerprint of every heatmap on the page (to count the heatmaps a change repainted)."""


@dataclass
class ControlResult:
    page: str
    kind: str
    label: str
    where: str
    n: int
    times: list[float] = field(default_factory=list)
    heatmaps_changed: int = 0
    no_rerun: int = 0
    single_option: bool = False
    errors: int = 0
    error_texts: list[str] = field(default_factory=list)
    """What each error said (an error box's first line, a browser error, a failed action)."""


def pages_in_menu() -> list[tuple[str, str]]:
    """(URL path, file) of each page in app.py's PAGES, in menu order (read, not imported)."""
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "PAGES" for target in node.targets):
            return [(entry.elts[3].value, entry.elts[0].value) for entry in node.value.elts]
    raise RuntimeError("no PAGES tuple in app.py")


def page_views(menu: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(name, URL path with query, file) of each page's first view and of each of its parts
    shown one at a time (`ui.url.PAGE_PARTS`): a part's controls are only on the page there."""
    sys.path.insert(0, str(APP.parent))
    from ui.url import PAGE_PARTS

    views = []
    for url_path, path in menu:
        views.append((url_path, url_path, path))
        for query in PAGE_PARTS.get(url_path, ()):
            views.append((f"{url_path}:{query.split('=')[-1]}", f"{url_path}?{query}", path))
    return views


def page_token_caps() -> dict[str, int]:
    """The most tokens each page file draws: the `max_tokens` it passes to controls(), else the app's cap."""
    import re

    sys.path.insert(0, str(APP.parent))
    import attention_core
    from attention_core import MAX_TOKENS

    caps = {}
    for _, path in pages_in_menu():
        source = (APP.parent / path).read_text(encoding="utf-8")
        match = re.search(r"controls\((?:max_tokens=)?([A-Z_][A-Z_0-9.]*|\d+)", source)
        cap = MAX_TOKENS
        if match:
            name = match.group(1)
            cap = int(name) if name.isdigit() else _resolve(name, source, attention_core, MAX_TOKENS)
        caps[path] = cap
    return caps


def _resolve(name: str, source: str, package, default: int) -> int:
    """A page's token-cap constant, looked up in the package or in the page module itself."""
    import importlib
    import re

    leaf = name.split(".")[-1]
    for module_name in re.findall(r"from (attention_core[\w.]*) import", source):
        value = getattr(importlib.import_module(module_name), leaf, None)
        if isinstance(value, int):
            return value
    value = getattr(package, leaf, None)
    match = re.search(rf"^{leaf}\s*=\s*(\d+)", source, re.MULTILINE)
    if match:
        return int(match.group(1))
    return value if isinstance(value, int) else default


def opened(page, url: str, timeout_ms: float) -> float:
    """Open `url` in `page` and wait for its first run to settle; seconds from the start of the
    navigation (performance.now()'s zero) to the run's last DOM change: the first paint."""
    page.goto(url, timeout=timeout_ms)
    page.wait_for_function("() => window.__finished > 0", timeout=timeout_ms, polling=50)
    page.wait_for_function(SETTLED_JS, arg=[0, QUIET_MS], timeout=timeout_ms, polling=20)
    return page.evaluate("() => window.__lastMutation") / 1000


class Page:
    """One browser tab on one app page, with the sentence typed in."""

    def __init__(self, context, url: str, n: int, timeout_ms: float, load_timeout_ms: float):
        self.page = context.new_page()
        self.url, self.n, self.timeout_ms, self.load_timeout_ms = url, n, timeout_ms, load_timeout_ms
        self.sentences = [sentence(n), sentence(n, tag="z")]
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.first_paint: float | None = None
        self.chosen: dict[tuple[str, int], int | None] = {}  # a segmented control's first option, to go back to
        self.open()

    def open(self) -> None:
        """Load the page, type the sentence, open the sidebar's expanders. Every step here waits as
        long as a load may: in CI's smoke run (then every benchmark at once) the renderer did not
        answer a click on an expander, or a question about the sentence box, for 15 s after a
        first paint. Afterwards a control that cannot be found fails fast."""
        self.page.set_default_timeout(self.load_timeout_ms)
        try:
            self._open()
        finally:
            self.page.set_default_timeout(min(self.timeout_ms, CONTROL_TIMEOUT_MS))

    def _open(self) -> None:
        painted = opened(self.page, self.url, self.load_timeout_ms)
        if self.first_paint is None:
            self.first_paint = painted
        if self.page.locator('[role="dialog"]').count():  # e.g. a first visit's "Page not found" notice
            self.page.keyboard.press("Escape")
            self.page.wait_for_timeout(QUIET_MS)
        box = text_area_locator(self.page)
        if box.count() and box.is_enabled():
            self.change(Change(prepare=lambda: box.fill(self.sentences[0]), commit=lambda: box.press("Control+Enter")))
        # by position among all of them: a list of the closed ones shrinks as each opens, so its
        # second entry could be gone by the time the first has been clicked
        expanders = self.page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] details')
        for index in range(expanders.count()):
            if expanders.nth(index).get_attribute("open") is None:
                expanders.nth(index).locator("summary").click()  # client side only: no rerun
        self.page.wait_for_timeout(QUIET_MS)

    def settle(self, finished_before: int) -> None:
        self.page.wait_for_function(SETTLED_JS, arg=[finished_before, QUIET_MS], timeout=self.timeout_ms,
                                    polling=20)

    def change(self, change: Change) -> float | None:
        """Seconds from just before the change's commit until the last DOM change of the rerun it
        caused (its preparation untimed); None: no rerun."""
        finished_before = self.page.evaluate("() => window.__finished")
        if change.prepare is not None:
            change.prepare()
        started = self.page.evaluate("() => performance.now()")
        change.commit()
        try:
            self.settle(finished_before)
        except Exception:
            return None
        return (self.page.evaluate("() => window.__lastMutation") - started) / 1000

    def controls(self) -> list[list]:
        return self.page.evaluate(CONTROLS_JS, list(CONTROL_TYPES))

    def still_there(self, kind: str, index: int, label: str) -> bool:
        """Whether control `index` of type `kind` is still the visible, enabled one labelled `label`."""
        return any(found[:3] == [kind, index, label] for found in self.controls())

    def heatmaps(self) -> list[str]:
        return self.page.evaluate(HEATMAPS_JS)


@dataclass(frozen=True)
class Change:
    """One change of a control, as a person makes it: `prepare` (untimed: opening a list, typing
    into a box, focusing a slider) and then `commit`, the one action that makes Streamlit rerun
    (the option picked, Enter, the key that moves the slider), from which the change is timed."""

    commit: Callable[[], object]
    prepare: Callable[[], object] | None = None


def action_for(page: Page, kind: str, index: int, label: str, step: int) -> Change | None:
    """How to change control `index` of type `kind` once (forwards on even steps, back on odd)."""
    element = page.page.locator(f'[data-testid="{kind}"]').nth(index)
    forward = step % 2 == 0
    if kind == "stSlider":
        # The thumb is a hidden <input type="range">. Up and Down move it as Right and Left do,
        # and the step-through page keeps ← and → for its stages (ui/keys.py).
        thumb = element.locator('input[type="range"]').first
        at_max = thumb.input_value() == thumb.get_attribute("max")
        key = "ArrowDown" if forward == at_max else "ArrowUp"
        return Change(prepare=thumb.focus, commit=lambda: thumb.press(key))
    if kind == "stSelectbox":
        box = element.locator("input").first

        def open_and_move() -> None:  # to the next option (the previous one back), turning at either end
            box.click()
            chosen = page.page.evaluate(SELECTED_OPTION_JS)
            at_end = chosen is not None and chosen[0] == chosen[1] - 1
            at_start = chosen is not None and chosen[0] == 0
            down = (forward and not at_end) or (not forward and at_start)
            box.press("ArrowDown" if down else "ArrowUp")

        return Change(prepare=open_and_move, commit=lambda: box.press("Enter"))
    if kind == "stRadio":
        options = element.get_by_role("radio")
        checked = element.evaluate("el => Array.from(el.querySelectorAll('input[type=radio]')).map(i => i.checked)")
        unchecked = [i for i, on in enumerate(checked) if not on]
        target = options.nth(unchecked[0] if forward or len(unchecked) < 2 else unchecked[-1])
        return Change(lambda: target.click(force=True))  # the input itself is hidden behind its styled label
    if kind == "stCheckbox":
        return Change(element.locator("label").first.click)
    if kind == "stNumberInput":  # typed: a narrow number input has no + and − buttons
        box = element.locator("input")
        value, top = float(box.input_value() or 0), box.get_attribute("max")
        up = forward != (top is not None and value >= float(top))
        text = f"{value + 1 if up else value - 1:g}"
        return Change(prepare=lambda: box.fill(text), commit=lambda: box.press("Enter"))
    if kind == "stButtonGroup":
        buttons = element.locator("button")
        states = element.evaluate(  # a segmented control marks its choice with aria-checked, pills with aria-pressed
            "el => Array.from(el.querySelectorAll('button')).map(b => [b.innerText.trim() !== '', "
            "b.hasAttribute('aria-pressed'), "
            "b.getAttribute('aria-checked') === 'true' || b.getAttribute('aria-pressed') === 'true'])"
        )
        pills = any(toggles for _, toggles, _ in states)
        pressed = [i for i, (text, _, on) in enumerate(states) if text and on]
        idle = [i for i, (text, _, on) in enumerate(states) if text and not on]
        if not forward and pills and pressed:
            return Change(buttons.nth(pressed[-1]).click)  # switch off again what the forward step switched on
        if not idle:
            return None  # one option only (the Head picker of a single head): nothing to change
        chosen = page.chosen.setdefault((kind, index), pressed[0] if pressed and not pills else None)
        back = chosen if not forward and chosen is not None and chosen in idle else None
        return Change(buttons.nth(back if back is not None else idle[0]).click)  # back: the option chosen at first
    if kind == "stTextArea":
        box = element.locator("textarea")
        if label.startswith("Sentence"):
            text = page.sentences[(step + 1) % 2]
        else:
            current = box.input_value()
            text = current + " zz" if forward else current.removesuffix(" zz")
        return Change(prepare=lambda: box.fill(text), commit=lambda: box.press("Control+Enter"))
    if kind == "stTextInput":
        box = element.locator("input")
        current = box.input_value()
        text = current + " zz" if forward else current.removesuffix(" zz")
        return Change(prepare=lambda: box.fill(text), commit=lambda: box.press("Enter"))
    if kind == "stButton":
        return Change(element.locator("button").first.click)
    raise ValueError(kind)


def revisit_paint(context, url: str, timeout_ms: float) -> float:
    """`opened` in a new tab of `context`: a new session, with whatever the browser cached when
    the page was first opened."""
    page = context.new_page()
    try:
        return opened(page, url, timeout_ms)
    finally:
        page.close()


def measure_page(browser, url: str, path: str, n: int, repeats: int, timeout_ms: float, budget_s: float,
                 first_paint: bool = True, load_timeout_ms: float = LOAD_TIMEOUT_S * 1000):
    """ControlResult for every control of one page at sentence length n; a change may take
    `timeout_ms`, opening the page `load_timeout_ms`."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(max(timeout_ms, 15_000))  # a busy machine: a click may wait for a rerun
    context.add_init_script(WATCH_JS)
    results: list[ControlResult] = []
    try:
        page = Page(context, f"{url}/{path}", n, timeout_ms, load_timeout_ms)
        if first_paint:
            results.append(ControlResult(path, "first paint", "opening the page (default sentence)", "page", n,
                                         times=[page.first_paint]))
            results.append(ControlResult(path, "revisit paint", "opening it again, scripts cached", "page", n,
                                         times=[revisit_paint(context, f"{url}/{path}", load_timeout_ms)]))
        layout = page.controls()
        deadline = time.monotonic() + budget_s
        for kind, index, label, where in layout:
            result = ControlResult(path, kind, label, where, n)
            results.append(result)
            if time.monotonic() > deadline:
                result.errors = -1  # not measured: the page's time budget ran out
                continue
            try:
                before = page.heatmaps()
                for step in range(repeats):
                    if step and kind == "stButton" and not page.still_there(kind, index, label):
                        break  # a one-off button ("Load a sentence with …", "Reveal") is gone once used
                    action = action_for(page, kind, index, label, step)
                    if action is None:
                        result.single_option = True
                        break
                    seconds = page.change(action)
                    if seconds is None:
                        result.no_rerun += 1
                        continue
                    result.times.append(seconds)
                    if step == 0:
                        after = page.heatmaps()
                        result.heatmaps_changed = sum(1 for a, b in zip(before, after, strict=False) if a != b) + \
                            abs(len(after) - len(before))
                if kind in ("stButtonGroup", "stCheckbox") and not result.single_option and repeats % 2:
                    # back to the first choice, untimed: a picker left on one option can leave the
                    # next control with nothing to pick (h = 1 head leaves the Head picker one head),
                    # and a switch left on (Autoplay) would go on changing the page under the next ones
                    page.change(action_for(page, kind, index, label, 1))
                boxes = page.page.evaluate(EXCEPTION_TEXTS_JS)
                result.errors += len(boxes)
                result.error_texts += [f"error box: {text}" for text in boxes]
            except Exception as error:
                result.errors += 1
                result.error_texts.append(f"{type(error).__name__}: {str(error).splitlines()[0][:100]}")
            if page.controls() != layout or result.errors:
                page.open()  # the change altered the page: start the next control from the same page as before
        if page.errors and results:
            results[0].errors += len(page.errors)
            results[0].error_texts += [f"browser: {error}" for error in page.errors]
    finally:
        context.close()
    return results


FLOOR_VARIANTS = (("floor", ""), ("floor+numbers", "?numbers=1"))
"""benchmarks/floor_app.py as it is, and with the weights printed in its cells (as the app does
up to 400 cells): one heatmap under a dk slider and a sentence box, nothing else."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 2048])
    parser.add_argument("--repeats", type=int, default=3, help="changes per control (forwards, back, …)")
    parser.add_argument("--pages", nargs="+", help="URL paths of the pages to measure (default: every page)")
    parser.add_argument("--all-pages-large", action="store_true",
                        help="measure sizes above 16 on every page, not only those that draw that many tokens")
    parser.add_argument("--timeout", type=float, default=60, help="seconds one change may take")
    parser.add_argument("--load-timeout", type=float, default=LOAD_TIMEOUT_S,
                        help="seconds opening a page may take (the first visit imports the app)")
    parser.add_argument("--budget", type=float, default=240, help="seconds of changes per page and size")
    parser.add_argument("--floor", action="store_true",
                        help="then time benchmarks/floor_app.py's controls the same way (rows 'floor', not counted)")
    args = parser.parse_args()
    exit_without_chromium()
    from playwright.sync_api import sync_playwright

    caps = page_token_caps()
    menu = [(url_path, path) for url_path, path in pages_in_menu() if not args.pages or url_path in args.pages]
    views = page_views(menu)  # imported now, not while a page is being measured
    print(machine_line())
    print(f"{args.repeats} changes per control; time = action → last DOM change after the rerun "
          f"(quiet {QUIET_MS} ms); target: median ≤ {TARGET_MS[16]} ms at 16 tokens, ≤ {TARGET_MS[2048]} ms at "
          "2048\n")
    print(f"{'page':<{NAME_WIDTH}} {'n':>5} {'control':<14} {'label':<40} {'where':<7} {'changes':>7} {'median ms':>9} "
          f"{'max ms':>7} {'heatmaps':>8} {'errors':>6}  verdict")
    summary = {"measured": 0, "over": 0, "errors": 0, "skipped": 0}
    first_visits: dict[str, float] = {}  # printed after the table, untimed: the server imports the app
    started = time.monotonic()

    def report(results: list[ControlResult], name: str, n: int, count: bool = True) -> None:
        for result in results:
            target = FIRST_PAINT_MS if result.kind in PAINT_KINDS else TARGET_MS.get(n, TARGET_MS[2048])
            if result.errors < 0:
                verdict, median, longest = "not measured (page's time budget)", "—", "—"
            elif result.single_option and not result.times:
                verdict, median, longest = "one option only", "—", "—"
            elif not result.times:
                verdict, median, longest = "no rerun", "—", "—"
            else:
                value = statistics.median(result.times) * 1e3
                verdict = "OVER" if value > target else "met"
                median, longest = f"{value:.0f}", f"{max(result.times) * 1e3:.0f}"
            if count:
                summary["errors"] += max(result.errors, 0)
                summary["skipped"] += result.errors < 0
                summary["measured"] += bool(result.times) and result.errors >= 0
                summary["over"] += verdict == "OVER"
            print(f"{name:<{NAME_WIDTH}} {n:>5} {result.kind.removeprefix('st'):<14} {result.label[:40]:<40} "
                  f"{result.where:<7} {len(result.times):>7} {median:>9} {longest:>7} "
                  f"{result.heatmaps_changed:>8} {max(result.errors, 0):>6}  {verdict}", flush=True)
            for text in dict.fromkeys(result.error_texts):  # each distinct one once, under its row
                print(f"    ! {text.splitlines()[0][:160]}", flush=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**CHROMIUM_LAUNCH)
        try:
            with StreamlitServer() as server:
                first_visits["the app"] = first_visit(browser, server, timeout=args.load_timeout)
                for n in args.sizes:
                    for name, view, path in views:
                        if n > 16 and (caps[path] < n or path in SMALL_INPUT_ONLY) and not args.all_pages_large:
                            continue
                        report(measure_page(browser, server.url, view, n, args.repeats, args.timeout * 1000,
                                            args.budget, first_paint=n == args.sizes[0],
                                            load_timeout_ms=args.load_timeout * 1000), name, n)
            if args.floor:
                with StreamlitServer(app=FLOOR_APP) as server:
                    first_visits["the floor app"] = first_visit(browser, server, timeout=args.load_timeout)
                    for n in args.sizes:
                        for name, query in FLOOR_VARIANTS:
                            report(measure_page(browser, server.url, query, n, args.repeats, args.timeout * 1000,
                                                args.budget, first_paint=n == args.sizes[0],
                                                load_timeout_ms=args.load_timeout * 1000), name, n, count=False)
        finally:
            browser.close()
    print(f"\n{summary['measured']} control(s) measured, {summary['over']} over the target, "
          f"{summary['errors']} error(s), {summary['skipped']} not measured; {time.monotonic() - started:.0f} s"
          + ("; the floor rows are not counted" if args.floor else ""))
    print(FIRST_VISIT_PREFIX + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in first_visits.items()))


if __name__ == "__main__":
    main()
