"""Translations: every key in both languages, with the same placeholders, and used keys exist."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from ui.i18n import LANGUAGES, load_strings, translate

ROOT = Path(__file__).resolve().parents[1]


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_string_has_every_language_and_no_key_is_defined_twice():
    strings = load_strings.__wrapped__()  # fresh read, not the cached one
    assert strings
    for key, entry in strings.items():
        for lang in LANGUAGES:
            assert entry.get(lang), f"{key} lacks {lang}"


@pytest.mark.parametrize("key", sorted(load_strings()))
def test_both_languages_use_the_same_placeholders(key):
    entry = load_strings()[key]
    assert _placeholders(entry["en"]) == _placeholders(entry["zh"]), key


def test_chinese_strings_are_translated_not_copied():
    """Most Chinese strings contain CJK characters (short symbolic ones like "1 · X" may not)."""
    strings = load_strings()
    cjk = [key for key, entry in strings.items() if re.search(r"[\u4e00-\u9fff]", entry["zh"])]
    assert len(cjk) / len(strings) > 0.8


def test_duplicate_or_incomplete_strings_are_reported(tmp_path):
    (tmp_path / "a.toml").write_text('["x"]\nen = "a"\nzh = "甲"\n', encoding="utf-8")
    (tmp_path / "b.toml").write_text('["x"]\nen = "b"\nzh = "乙"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="twice"):
        load_strings.__wrapped__(tmp_path)
    (tmp_path / "b.toml").write_text('["y"]\nen = "b"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="lacks zh"):
        load_strings.__wrapped__(tmp_path)


def test_translate_fills_placeholders_and_falls_back():
    assert translate("step.progress", "zh", number=2, total=7) == "第 2 步，共 7 步"
    assert translate("step.progress", "xx", number=2, total=7) == "Step 2 of 7"
    assert translate("no.such.key", "en") == "no.such.key"


def test_every_literal_key_used_in_the_code_exists():
    """Keys written literally as t("...") in pages and ui must be defined."""
    strings = load_strings()
    used = set()
    for path in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"]:
        used |= set(re.findall(r'\bt\(\s*"([a-z_][\w.]*)"', path.read_text(encoding="utf-8")))
    missing = sorted(key for key in used if key not in strings)
    assert not missing, missing


def test_chinese_uses_one_standard_term_for_each_thing():
    """Issue 10 §2: 投影仪 for the projector (投影 alone names the W projections), 侧边栏 for the
    sidebar, 标准差 for the standard deviation, 格子 for a matrix cell, 导出数据 for exports."""
    strings = load_strings()
    chinese = {key: entry["zh"] for key, entry in strings.items()}
    assert "投影仪" in chinese["display.projector"]
    assert chinese["export.title"] == "导出数据"
    assert chinese["compare.reset"] == "恢复为侧边栏设置"
    for key, text in chinese.items():
        assert not re.search(r"侧栏", text), f"{key}: 侧栏 (use 侧边栏)"
        assert "分布宽度" not in text, f"{key}: 分布宽度 (use 标准差)"
        assert "单元格" not in text, f"{key}: 单元格 (a matrix cell is 格子)"
        assert "保持在 1 左右" not in text, f"{key}: the scores are not kept around 1, their standard deviation is"
        assert "第 {query_token} 行" not in text, f"{key}: write {{query_token}} 所在行"
        assert "采样的查询" not in text, f"{key}: 随机抽取的一个查询"


def test_chinese_formula_words_are_translated():
    """Words inside formulas (\\text{…}) come from the strings, so they follow the language."""
    for key in ("real_model.formula.word", "real_model.formula.position", "real_model.formula.segment"):
        assert re.search(r"[\u4e00-\u9fff]", translate(key, "zh")), key


@pytest.mark.parametrize("script", ["app.py", *sorted(path.name for path in (ROOT / "pages").glob("*.py"))])
def test_no_page_shows_a_bare_expression_as_text(script):
    """Streamlit's "magic" writes any bare expression of a page script to the page: a string
    under a constant, meant as its documentation, would be shown in English whatever the
    language. Every text of a page comes from a call; only the module's docstring may stand alone."""
    path = ROOT / script if script == "app.py" else ROOT / "pages" / script
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    shown = [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call | ast.Await)
        and not _is_function_docstring(node, statement)
    ]
    assert not shown, f"{script} would show these as page text: {shown}"


def _is_function_docstring(node: ast.Expr, statement: ast.stmt) -> bool:
    """A function's or class's docstring (Streamlit's magic leaves those alone)."""
    return any(
        isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and owner.body[0] is node
        for owner in ast.walk(statement)
    )
