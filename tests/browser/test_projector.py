"""Projector mode measured in Chromium at a projector's 1280 × 720, in English and Chinese.

What a class at the back of the room needs: on the step-through's first screen the stage's
title, Previous / Next and the whole heatmap; every label and number at 18 px or more; no two
texts drawn over each other; on the mask lab square-ish cells. And at 1440 × 900 (a laptop
on the projector, normal display) side-by-side stages keep every token label and their numbers.
"""

from __future__ import annotations

import ast
import re

import pytest
from conftest import ROOT
from plotly_page import ARTIFACTS, margin_redraws, wait_for_app

from attention_core import STAGES
from attention_core.figures.matrices import DENSE_SIDE, LABEL_EVERY_SIDE
from ui.i18n import translate
from ui.url import PAGE_PARTS

MIN_FONT_PX = 18

FIGURES_JS = """
() => {
    // a text's ink as four corners on the screen: its own box (minus the line's empty ascent
    // and descent), turned with the text (tick labels are often rotated)
    const corners = (text) => {
        const b = text.getBBox(), m = text.getScreenCTM(), dy = b.height * 0.2, dx = b.width * 0.03;
        return [[b.x + dx, b.y + dy], [b.x + b.width - dx, b.y + dy], [b.x + b.width - dx, b.y + b.height - dy],
                [b.x + dx, b.y + b.height - dy]].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    };
    const box = (element) => { const r = element.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height}; };
    return Array.from(document.querySelectorAll('.js-plotly-plot')).map(graph => {
        const texts = Array.from(graph.querySelectorAll('svg text'))
            .filter(text => text.textContent.trim() && text.getBoundingClientRect().width > 0);
        const cells = graph.querySelector('.heatmaplayer image, .hm image');
        const z = (graph._fullData || []).filter(trace => trace.type === 'heatmap').map(trace => trace.z)[0] || [];
        return {
            title: (graph.layout && graph.layout.title && graph.layout.title.text) || '',
            box: box(graph),
            cells: cells ? box(cells) : null,
            rows: z.length,
            columns: z.length ? z[0].length : 0,
            // every heatmap of the figure (a figure of subplots has several) with its own axes' labels
            panels: (graph._fullData || []).filter(trace => trace.type === 'heatmap').map(trace => ({
                rows: trace.z.length,
                columns: trace.z.length ? trace.z[0].length : 0,
                x_labels: graph.querySelectorAll(`.${trace.xaxis}tick text`).length,
                y_labels: graph.querySelectorAll(`.${trace.yaxis}tick text`).length,
            })),
            x_labels: Array.from(graph.querySelectorAll('.xtick text')).map(text => text.textContent),
            y_labels: Array.from(graph.querySelectorAll('.ytick text')).map(text => text.textContent),
            cell_numbers: Array.from(graph.querySelectorAll('.textpoint text, text.textpoint')).length
                || texts.filter(text => /^-?\\d+\\.\\d+$/.test(text.textContent.trim())
                    && !text.closest('.xtick, .ytick, .colorbar, .cbaxis')).length,
            texts: texts.map(text => ({text: text.textContent.trim(), size: parseFloat(getComputedStyle(text).fontSize),
                                       box: box(text), corners: corners(text),
                                       colorbar: !!text.closest('.colorbar, .cbaxis, .cbtitle')})),
        };
    });
}
"""


def _figures(page) -> list[dict]:
    return page.evaluate(FIGURES_JS)


def _inside_viewport(box: dict, page) -> bool:
    viewport = page.viewport_size
    inside_height = box["top"] >= 0 and box["bottom"] <= viewport["height"]
    return inside_height and box["left"] >= 0 and box["right"] <= viewport["width"]


def _quads_overlap(first: list, second: list) -> bool:
    """Whether two convex quadrilaterals (corner lists) overlap: no edge direction separates them."""
    for quad in (first, second):
        for index in range(4):
            (x1, y1), (x2, y2) = quad[index], quad[(index + 1) % 4]
            axis = (y1 - y2, x2 - x1)
            a = [axis[0] * x + axis[1] * y for x, y in first]
            b = [axis[0] * x + axis[1] * y for x, y in second]
            if max(a) <= min(b) + 0.5 or max(b) <= min(a) + 0.5:
                return False
    return True


def overlapping_texts(figure: dict) -> list[tuple[str, str]]:
    """Pairs of texts in a figure drawn over each other (their ink, rotation included)."""
    texts = figure["texts"]
    return [
        (first["text"], second["text"])
        for index, first in enumerate(texts)
        for second in texts[index + 1:]
        if _quads_overlap(first["corners"], second["corners"])
    ]


def _small_texts(figure: dict) -> list[tuple[str, float]]:
    return [(text["text"], text["size"]) for text in figure["texts"] if text["size"] < MIN_FONT_PX]


def _open(page, path: str, width: int = 1280, height: int = 720) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.goto(page.app_url + path)
    wait_for_app(page)
    page.wait_for_timeout(800)


STAGE_NAMES = [stage.name for stage in STAGES]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_step_through_first_screen_holds_title_buttons_and_the_whole_heatmap(page, stage, lang):
    _open(page, f"/?display=projector&stage={stage}&lang={lang}")
    title = translate(f"stage.{stage}.title", lang)
    heading = page.locator('[data-testid="stMain"] h3').filter(has_text=title).first
    title_box = heading.bounding_box()
    assert title_box and title_box["y"] >= 0 and title_box["y"] + title_box["height"] <= 720, "the stage title"
    for key in ("previous", "next"):
        button = page.locator(f".st-key-{key} button").bounding_box()
        assert button and button["y"] >= 0 and button["y"] + button["height"] <= 720, f"the {key} button"
    figures = _figures(page)
    first = figures[0]
    assert _inside_viewport(first["box"], page), f"the heatmap {first['title']!r} is cut: {first['box']}"
    assert len(first["y_labels"]) == first["rows"] and len(first["x_labels"]) == first["columns"], (
        "every row and column labelled"
    )
    assert not _small_texts(first), f"text below {MIN_FONT_PX} px: {_small_texts(first)[:5]}"
    assert not overlapping_texts(first), f"texts drawn over each other: {overlapping_texts(first)[:5]}"
    if stage in ("embeddings", "weights"):
        page.screenshot(path=str(ARTIFACTS / f"projector-{stage}-{lang}.png"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mask_lab_in_projector_mode_has_square_cells_and_no_overlapping_text(page, lang):
    _open(page, f"/masks?display=projector&lang={lang}&mask_lab_presets=causal,window")
    _check_mask_lab_figures(page)
    page.locator(".st-key-mask_lab_fully_example button").click(timeout=60_000)  # "Show an example: …"
    page.wait_for_timeout(500)
    wait_for_app(page)
    page.wait_for_timeout(800)
    figures = _check_mask_lab_figures(page)
    comparison = next(figure for figure in figures if translate("mask_lab.fully.rows.title", lang) in figure["title"])
    assert comparison["cell_numbers"] >= comparison["columns"], "the fully masked comparison shows its numbers"
    page.screenshot(path=str(ARTIFACTS / f"projector-mask-lab-{lang}.png"))


def _check_mask_lab_figures(page) -> list[dict]:
    figures = _figures(page)
    assert figures
    for figure in figures:
        label = re.sub(r"<[^>]+>", "", figure["title"])
        assert not overlapping_texts(figure), f"{label}: texts drawn over each other: {overlapping_texts(figure)[:5]}"
        if not figure["cells"] or not figure["rows"]:
            continue
        cell_width = figure["cells"]["width"] / figure["columns"]
        cell_height = figure["cells"]["height"] / figure["rows"]
        assert 0.6 <= cell_width / cell_height <= 1.7, f"{label}: cells {cell_width:.0f} × {cell_height:.0f} px"
        if figure["y_labels"]:
            assert not _small_texts(figure), f"{label}: text below {MIN_FONT_PX} px: {_small_texts(figure)[:5]}"
    return figures


PROJECTION_TABS = ("K = X · W^K", "V = X · W^V")
"""The Q, K, V stage's X · W figures behind the first tab (Q = X · W^Q, open at first)."""


def _shown_matrix_figures(page) -> list[dict]:
    """The figures on screen (not behind a closed tab) that draw at least one matrix."""
    return [figure for figure in _figures(page) if figure["rows"] and figure["box"]["width"] > 0]


def _check_every_label_and_number(figure: dict) -> None:
    label = re.sub(r"<[^>]+>", "", figure["title"]) or "X · W"
    for panel in figure["panels"]:  # one heatmap, or the three panels of X · W = Q
        assert panel["y_labels"] == panel["rows"], f"{label}: a row label is missing ({panel})"
        assert panel["x_labels"] == panel["columns"], f"{label}: a column label is missing ({panel})"
    cells = sum(panel["rows"] * panel["columns"] for panel in figure["panels"])
    assert figure["cell_numbers"] >= cells, f"{label}: cell numbers missing ({figure['cell_numbers']} of {cells})"
    assert not overlapping_texts(figure), f"{label}: {overlapping_texts(figure)[:5]}"


@pytest.mark.parametrize("stage", ["qkv", "output"])
def test_side_by_side_stages_keep_every_label_and_number_at_1440_by_900(page, stage):
    _open(page, f"/?stage={stage}", width=1440, height=900)
    figures = _shown_matrix_figures(page)
    assert len(figures) >= 3
    for figure in figures:
        _check_every_label_and_number(figure)
    if stage == "qkv":  # the X · W panels of K and of V, each chosen above the figure
        for tab, name in zip(PROJECTION_TABS, ("K", "V"), strict=True):
            page.locator(".st-key-projection-tab button").filter(has_text=tab).click()  # built on the click (a rerun)
            shown = []
            for _ in range(60):
                page.wait_for_timeout(500)
                shown = [figure for figure in _shown_matrix_figures(page) if len(figure["panels"]) == 3]
                if len(shown) == 1 and any(text["text"] == name for text in shown[0]["texts"]):  # its panel title
                    break
            assert len(shown) == 1, f"{tab}: one X · W figure on screen"
            page.wait_for_timeout(800)
            shown = [figure for figure in _shown_matrix_figures(page) if len(figure["panels"]) == 3]
            _check_every_label_and_number(shown[0])
        page.screenshot(path=str(ARTIFACTS / "side-by-side-qkv-1440.png"))


def _page_paths() -> list[str]:
    """Every page's address, from app.py's PAGES table (the first page is the root)."""
    tree = ast.parse((ROOT / "app.py").read_text())
    table = next(node.value for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id == "PAGES")
    return ["" if index == 0 else entry[3] for index, entry in enumerate(ast.literal_eval(table))]


def _page_views() -> list[tuple[str, str]]:
    """(path, query) of every page's first view and of each of its other parts."""
    return [(path, part) for path in _page_paths() for part in ["", *PAGE_PARTS.get(path, ())]]


def _view_id(path: str, part: str) -> str:
    return (path or "step") + (f"-{part.split('=')[-1]}" if part else "")


def _page_cases() -> list:
    return [
        pytest.param(path, part, lang, id=f"{_view_id(path, part)}-{lang}")
        for path, part in _page_views()
        for lang in ("en", "zh")
    ]


@pytest.mark.parametrize(("path", "part", "lang"), _page_cases())
def test_every_page_in_projector_mode_has_large_labels_and_no_overlapping_text(page, path, part, lang):
    _open_in_projector_mode(page, path, "&".join(filter(None, [f"lang={lang}", part])))
    _check_projector_figures(page, path)
    assert not margin_redraws(page), f"/{path}: a figure's labels did not fit its margins: Plotly drew it twice"


LONG_WORDS = ("汽车", "自行车")
"""Every third word of the long sentences: Chinese labels are wider than Latin ones."""


@pytest.mark.parametrize(("tokens", "lang"), [(LABEL_EVERY_SIDE, "en"), (DENSE_SIDE, "zh")])
@pytest.mark.parametrize(("path", "part"), _page_views(), ids=[_view_id(*view) for view in _page_views()])
def test_every_figure_fits_the_projector_screen_with_a_long_sentence(page, path, part, tokens, lang):
    """A class types a longer sentence: up to LABEL_EVERY_SIDE tokens every row is labelled, up
    to DENSE_SIDE the cells keep their gaps. Every figure still fits the screen, labels apart."""
    words = [LONG_WORDS[index // 3 % 2] if index % 3 == 2 else f"w{index}" for index in range(tokens)]
    _open_in_projector_mode(page, path, "&".join(filter(None, [f"lang={lang}", part, "text=" + "+".join(words)])))
    _check_projector_figures(page, path)


def _open_in_projector_mode(page, path: str, query: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{page.app_url}/{path}?display=projector&{query}")
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')"
        ".getAttribute('data-test-script-state') === 'notRunning'",
        timeout=120_000,
    )
    page.wait_for_timeout(1500)
    if path != "quiz":  # every other page draws figures at once: wait until Plotly has drawn them
        drawn = "() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0"
        page.wait_for_function(drawn, timeout=60_000)
        page.wait_for_timeout(1000)


def _check_projector_figures(page, path: str) -> None:
    """Every figure: labels at MIN_FONT_PX or more, none drawn over another, and no taller than
    the screen below Streamlit's header (scrolled to, the whole figure is on the projector)."""
    header = page.locator('[data-testid="stHeader"]').bounding_box()
    screen = page.viewport_size["height"] - (header["height"] if header else 0)
    for figure in _figures(page):
        label = re.sub(r"<[^>]+>", "", figure["title"]) or "a figure"
        ticks = [text for text in figure["texts"] if not text["colorbar"]]
        small = [(text["text"], text["size"]) for text in ticks if text["size"] < MIN_FONT_PX]
        assert not small, f"/{path}: {label}: text below {MIN_FONT_PX} px: {small[:5]}"
        assert not overlapping_texts(figure), f"/{path}: {label}: {overlapping_texts(figure)[:5]}"
        assert figure["box"]["height"] <= screen, (
            f"/{path}: {label}: {figure['box']['height']:.0f} px tall, the screen shows {screen:.0f}"
        )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_display_section_stays_open_when_projector_mode_is_switched_off_again(page, lang):
    """A teacher opens the sidebar's Display section, picks Projector, then Screen: the section
    (and its radio, under the pointer) stays open for the next choice."""
    _open(page, f"/?lang={lang}")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text(translate("control.display_section", lang), exact=True).click()
    for mode in ("projector", "screen"):
        sidebar.get_by_text(translate(f"display.{mode}", lang), exact=True).click()
        page.wait_for_timeout(300)
        wait_for_app(page)
        radio = sidebar.get_by_role("radio", name=translate("display.screen", lang))
        assert radio.is_visible(), f"the Display section closed after choosing {mode}"
    assert radio.is_checked()
