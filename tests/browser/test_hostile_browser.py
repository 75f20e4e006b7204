"""Hostile sentences and links in a real browser: nothing typed or linked ever runs, renders
as markup or leaves the machine; the page draws the tokens or says clearly why it cannot.

Every payload would set ``window.__pwned`` (or open a dialog) if it ran. After each one the
tests check: no dialog, ``window.__pwned`` undefined, no element of the payload in the DOM,
the heatmap drawn (or a clear message), no console error, no external request.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path
from urllib.parse import quote, urlencode

import plotly.io as pio
import pytest
from plotly.offline import get_plotlyjs
from plotly_page import graphs

from attention_core import ToySettings, token_labels, tokenize
from attention_core.figures import MAX_DRAWN_SIDE
from ui.url import CELL_PARTS, MAX_URL_TEXT, MULTI_HEAD_PARTS

TEXT_AREA = "Sentence"
PWNED = "window.__pwned=1"

TYPED = {
    "img_onerror": f'<img src=x onerror="{PWNED}">',
    "script": f"<script>{PWNED}</script>",
    "svg_onload": f"<svg onload={PWNED}><iframe src=javascript:{PWNED}>",
    "markdown": f"[x](javascript:{PWNED}) **bold** _it_ # heading",
    "latex": rf"$\href{{javascript:{PWNED}}}{{x}}$ \def\x{{y}} $$",
    "plotly_markup": f"<a href='javascript:{PWNED}'>x</a> <br> <b>b</b> <a href='https://example.com/'>y</a>",
    "emoji_bidi_zalgo": "👩\u200d👩\u200d👧\u200d👦 🇨🇳 مرحبا \u202eabc Z̷̢͎̈́a̸l̵g̶o̴",
}

APP_STATE_JS = """
() => ({
    pwned: typeof window.__pwned !== 'undefined',
    injected: document.querySelectorAll(
        "img[src='x'], iframe[src^='javascript'], a[href^='javascript'], [onerror], [onload]"
    ).length,
    scripts: Array.from(document.scripts).filter(script => script.textContent.includes('__pwned')).length,
    alerts: Array.from(document.querySelectorAll('[data-testid="stAlert"]')).map(alert => alert.innerText),
    plotLinks: document.querySelectorAll('.js-plotly-plot a').length,
    plotBold: Array.from(document.querySelectorAll('.js-plotly-plot :is(.xtick, .ytick) tspan'))
        .filter(span => /font-weight:\\s*bold/.test(span.getAttribute('style') || '')).length,
})
"""

CHARTS_DRAWN_JS = """
() => !document.querySelector('[data-testid="stStatusWidget"]')
    && document.querySelectorAll('.js-plotly-plot .main-svg').length > 0
"""
MESSAGE_SHOWN_JS = """
() => !document.querySelector('[data-testid="stStatusWidget"]')
    && document.querySelectorAll('[data-testid="stAlert"]').length > 0
"""


def _settle(page, charts: bool = True, timeout: float = 60_000) -> None:
    """Wait until the run has finished and drawn its charts (or, with charts=False, a message)."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_timeout(300)  # let a rerun start
    page.wait_for_function(CHARTS_DRAWN_JS if charts else MESSAGE_SHOWN_JS, timeout=timeout)
    page.wait_for_timeout(500)  # let Plotly finish painting


def _open(page, path: str, charts: bool = True) -> None:
    page.goto(page.app_url + path)
    _settle(page, charts)


def _row_labels(page) -> list[str]:
    """Row labels of the first heatmap as the user reads them."""
    for graph in graphs(page):
        for trace in graph["traces"]:
            return [html.unescape(label) for label in trace["y"]]
    return []


def _wait_for_rows(page, expected: list[str], timeout_ms: int = 30_000) -> list[str]:
    rows = []
    for _ in range(timeout_ms // 250):
        rows = _row_labels(page)
        if rows == expected:
            return rows
        page.wait_for_timeout(250)
    return rows


def _assert_inert(page, what: str) -> dict:
    """Nothing of the payload ran, opened, rendered or phoned home."""
    state = page.evaluate(APP_STATE_JS)
    assert not page.dialogs, f"{what}: a dialog opened: {page.dialogs}"
    assert not state["pwned"], f"{what}: the payload ran (window.__pwned is set)"
    assert state["injected"] == 0, f"{what}: {state['injected']} element(s) from the payload in the DOM"
    assert state["scripts"] == 0, f"{what}: a <script> from the payload is in the DOM"
    assert state["plotLinks"] == 0, f"{what}: a chart label became a link"
    assert state["plotBold"] == 0, f"{what}: a tick label became bold markup"
    assert not page.console_errors, f"{what}: console errors {page.console_errors}"
    assert not page.external_requests, f"{what}: external requests {page.external_requests}"
    return state


# ----- typed into the sidebar --------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TYPED))
def test_typing_a_hostile_sentence(page, name):
    text = TYPED[name]
    _open(page, "/")
    box = page.get_by_role("textbox", name=TEXT_AREA, exact=True)
    box.fill(text)
    box.press("Control+Enter")
    expected = token_labels(tokenize(text))
    rows = _wait_for_rows(page, expected)
    _settle(page)
    assert rows == expected, "the heatmap's rows are the typed tokens, as text"
    _assert_inert(page, name)
    tick_texts = page.evaluate(
        "() => Array.from(document.querySelector('.js-plotly-plot').querySelectorAll('.ytick text'))"
        ".map(node => node.textContent)"
    )
    # Plotly may skip ticks when rows are many; each tick shown must read exactly as a label
    assert tick_texts and set(tick_texts) <= set(expected), "Plotly shows each label as typed (no markup)"


def test_typing_zero_width_characters_alone(page):
    """Zero-width characters alone are an empty sentence, not rows labelled "0:", "1:", "2:"."""
    text = "\u200b\u200c\ufeff"
    _open(page, "/")
    box = page.get_by_role("textbox", name=TEXT_AREA, exact=True)
    box.fill(text)
    box.press("Control+Enter")
    empty = page.get_by_text("The sentence is empty")
    for _ in range(80):  # either the message, or the rows of the typed (invisible) tokens
        if empty.count() or _row_labels(page) == token_labels(tokenize(text)):
            break
        page.wait_for_timeout(250)
    _assert_inert(page, "zero width")
    rows = [ascii(label) for label in _row_labels(page)]
    assert empty.count(), f"invisible characters alone should read as an empty sentence; drawn rows: {rows}"


def test_typing_an_empty_sentence_explains_itself(page):
    _open(page, "/")
    box = page.get_by_role("textbox", name=TEXT_AREA, exact=True)
    box.fill("   ")
    box.press("Control+Enter")
    page.get_by_text("The sentence is empty").wait_for(timeout=20_000)
    _settle(page, charts=False)
    _assert_inert(page, "empty")
    assert not graphs(page), "nothing is drawn for an empty sentence"


# ----- opened from a link ------------------------------------------------------------------------

LINKS = {
    "text_script": {"text": f"<script>{PWNED}</script> hi"},
    "text_latex": {"text": rf"$\href{{javascript:{PWNED}}}{{x}}$ ok"},
    "text_img": {"text": f"<img src=x onerror={PWNED}> ok"},
    "dk_not_a_number": {"dk": "abc"},
    "dk_repeated": [("dk", "5"), ("dk", "600")],
    "mask_kind_img": {"mask_kind": f"<img src=x onerror={PWNED}>"},
    "stage_script": {"stage": f"<script>{PWNED}</script>"},
    "lang_svg": {"lang": f"<svg onload={PWNED}>"},
    "unknown_params": {"utm_source": "<b>x</b>", "__proto__": "polluted"},
    "text_50kb": {"text": "a " * 25_000},
}


def _link(query) -> str:
    return "/?" + urlencode(query, quote_via=quote)


@pytest.mark.parametrize("name", list(LINKS))
def test_opening_a_hostile_link(page, name):
    _open(page, _link(LINKS[name]))
    state = _assert_inert(page, name)
    assert graphs(page), f"{name}: no heatmap drawn; alerts {state['alerts']}"
    query = dict(LINKS[name]) if isinstance(LINKS[name], list) else LINKS[name]
    if "text" in query:
        shown = token_labels(tokenize(query["text"][:MAX_URL_TEXT]))
        rows = _row_labels(page)
        if len(shown) <= MAX_DRAWN_SIDE:
            assert rows == shown, "the linked sentence is drawn as text"
        else:  # drawn in blocks of positions "0–9", "10–19", …
            assert rows and rows[0].startswith("0–"), rows[:3]
    else:
        assert _row_labels(page) == token_labels(tokenize(ToySettings().text))
    bad = {key for key in query if key in ("dk", "mask_kind", "stage", "lang") and key != "text"}
    for key in bad:
        assert any(f"“{key}”" in alert for alert in state["alerts"]), f"{name}: no notice for {key}: {state['alerts']}"
    if "mask_kind" in query or "stage" in query:
        raw = query.get("mask_kind") or query.get("stage")
        assert any(raw in alert for alert in state["alerts"]), "the bad value is quoted as text"
    if name == "text_50kb":
        assert any("out of range" in alert for alert in state["alerts"]), "the cut link text is explained"


@pytest.mark.parametrize("path", ["/why-sqrt-dk", "/cell", "/masks", "/multi-head", "/your-numbers", "/compare"])
def test_a_hostile_sentence_link_on_every_page(page, path):
    # a fresh server answers the first deep link with a "page not found" notice: open / first
    _open(page, "/")
    query = {"text": f"<img src=x onerror={PWNED}> $\\href{{javascript:{PWNED}}}{{x}}$ **b** [l](javascript:{PWNED})"}
    query |= {"/why-sqrt-dk": {"why_part": "sentence"}}.get(path, {})  # the section that draws the sentence
    _open(page, path + _link(query)[1:])
    _assert_inert(page, path)


# ----- token text inside Streamlit's Markdown ------------------------------------------------------


def test_fully_masked_notice_shows_tokens_as_text(page):
    """Every key padded: the warning names the rows by their labels; "$" tokens must not turn the
    sentence into a formula, "*" tokens must not make it bold."""
    text = "$ x $ *a* _b_"
    tokens = tokenize(text)
    query = {
        "text": text,
        "mask_kind": "padding",
        "pad_positions": ",".join(map(str, range(len(tokens)))),
        "stage": "weights",
    }
    _open(page, _link(query))
    _assert_inert(page, "fully masked")
    warning = page.locator('[data-testid="stAlert"]').filter(has_text="Every key is masked")
    warning.first.wait_for(timeout=20_000)
    assert warning.first.locator(".katex").count() == 0, "token labels were typeset as LaTeX"
    assert warning.first.locator("strong, em").count() == 0, "token labels were rendered as Markdown emphasis"
    shown = warning.first.inner_text()
    missing = [label for label in token_labels(tokens) if label not in shown]
    assert not missing, f"labels not shown as typed: {missing} in {shown!r}"


def test_a_link_value_cannot_break_out_of_its_quote(page):
    """A dropped URL value is quoted as code in the notice; blank lines in it must not end the
    code span and let the rest render as Markdown / LaTeX."""
    _open(page, _link({"dk": "\n\n**bold** $x^2$ [l](https://example.com/)"}))
    _assert_inert(page, "breakout")
    notice = page.locator('[data-testid="stAlert"]').filter(has_text="dk")
    notice.first.wait_for(timeout=20_000)
    assert notice.first.locator("strong, .katex, a").count() == 0, notice.first.inner_html()[:500]


# ----- Plotly's HTML subset in labels: every figure builder ------------------------------------------

HOSTILE_LABELS = (
    "<br>",
    "<b>bold</b>",
    f"<a href='javascript:{PWNED}'>js</a>",
    "<a href='https://example.com/'>ext</a>",
    "<sup>2</sup>",
)


def test_figure_labels_render_as_text_in_plotly(page):
    """Plotly interprets <br>, <b>, <sup> and <a href> (http/https only) in category labels.
    Every figure builder the pages use must escape labels so that they show as typed.

    Rendered offline (plotly.js inlined), one figure per builder, with a trace whose tokens
    are markup."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the AppTest module's builders
    import test_hostile_input as hostile  # the same figures it checks as JSON

    figures = hostile._figures_with_labels(HOSTILE_LABELS)
    body = "".join(
        f"<section data-builder='{name}'>"
        + pio.to_html(figure, include_plotlyjs=False, full_html=False, div_id=f"fig-{name}")
        + "</section>"
        for name, figure in figures.items()
    )
    page.set_content(f"<html><head><script>{get_plotlyjs()}</script></head><body>{body}</body></html>")
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(figures)}", timeout=30_000
    )
    report = page.evaluate(
        """() => Array.from(document.querySelectorAll('section')).map(section => ({
            builder: section.dataset.builder,
            links: Array.from(section.querySelectorAll('svg a')).map(
                a => a.getAttribute('href') || a.getAttribute('xlink:href') || '(no href)'),
            bold: Array.from(section.querySelectorAll('svg :is(.xtick, .ytick) tspan'))
                .filter(span => /font-weight:\\s*bold/.test(span.getAttribute('style') || '')).length,
            lineBreaks: section.querySelectorAll('svg :is(.xtick, .ytick) tspan.line').length,
            raised: Array.from(section.querySelectorAll('svg :is(.xtick, .ytick) tspan'))
                .filter(span => span.getAttribute('dy') && /font-size:\\s*70%/.test(span.getAttribute('style') || ''))
                .length,
            literal: section.textContent.includes('<b>bold</b>'),
        }))"""
    )
    marked_up = [row for row in report if row["links"] or row["bold"] or row["lineBreaks"] or row["raised"]]
    # the svg <a> of a label is a real link: https targets are clickable, javascript: ones get no href
    assert not page.evaluate("() => typeof window.__pwned !== 'undefined'")
    assert not page.dialogs
    assert not marked_up, f"labels rendered as markup by Plotly: {marked_up}"
    assert not page.external_requests


def test_a_plotly_label_link_is_never_clickable_in_the_app(page):
    """In the app a typed '<a href=…>' is split into tokens, so no label can hold a tag: checked on
    the pages whose figures do not all escape labels (follow cell, multi-head) and two others."""
    text = "<a href='https://example.com/'>x</a> <b>y</b>"
    _open(page, "/")
    visits = [(path, {}) for path in ("/masks", "/compare")]
    visits += [("/cell", {"cell_part": part}) for part in CELL_PARTS]
    visits += [("/multi-head", {"mh_part": part}) for part in MULTI_HEAD_PARTS]
    for path, part in visits:
        _open(page, path + _link({"text": text, **part})[1:])
        state = _assert_inert(page, f"{path} {part}")
        assert state["plotLinks"] == 0 and state["plotBold"] == 0
