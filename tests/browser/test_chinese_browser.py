"""The Chinese interface in a real browser: no English left where a word can be translated."""

from __future__ import annotations

import re

from plotly_page import graphs, wait_for_app


def test_a_chinese_link_gives_a_chinese_tab_title_and_figure_titles(page):
    page.goto(page.app_url + "/?lang=zh&stage=masked_scores&mask_kind=causal")
    wait_for_app(page)
    page.get_by_text("加掩码后的分数").first.wait_for(timeout=20_000)
    page.wait_for_function("() => document.title.includes('注意力机制探索器')", timeout=20_000)
    titles = [re.sub(r"<[^>]+>", "", graph["title"]) for graph in graphs(page)]  # titles arrive bold
    assert any(title.startswith("掩码(QKᵀ/√dₖ)") for title in titles), titles
    assert not any("mask(" in title for title in titles), titles


def test_formula_words_render_in_chinese_without_errors(page):
    """Words inside formulas follow the language: the mask lab's M_{因果} ∧ M_{填充}, typeset by KaTeX."""
    page.goto(page.app_url + "/masks?lang=zh&mask_lab_presets=causal,window")
    wait_for_app(page)
    page.locator(".katex", has_text="因果").first.wait_for(timeout=20_000)
    formula = page.locator(".katex", has_text="因果").first.inner_text()
    assert "窗口" in formula and "causal" not in formula
    assert not page.locator(".katex-error").count()
    assert not page.console_errors, page.console_errors
