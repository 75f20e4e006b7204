"""Exports round-trip: what is written can be read back and equals the trace's records."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tracemalloc
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from attention_core import MaskSpec, ToySettings, build_toy_trace
from attention_core.export import (
    EXPORTED,
    MAX_TEXT_EXPORT_CELLS,
    csv_zip_bytes,
    json_text,
    latex_matrix,
    load_csv_zip,
    load_npz,
    markdown_table,
    npz_bytes,
    text_export_fits,
)
from attention_core.figures import heatmap, standalone_html


@pytest.fixture(scope="module")
def trace():
    """Repeated tokens, Chinese, cross-attention n ≠ m and a mask with −∞ in the scores."""
    settings = ToySettings(text="the cat saw the dog.", query_text="猫 看见 狗", dk=5, mask=MaskSpec(causal=True))
    return build_toy_trace(settings)


def test_npz_round_trip_is_exact(trace):
    matrices, query_tokens, key_tokens, settings = load_npz(npz_bytes(trace))
    for name in EXPORTED:
        np.testing.assert_array_equal(matrices[name], trace.matrix(name))
    np.testing.assert_array_equal(matrices["w_q"], trace.w_q)
    np.testing.assert_array_equal(matrices["fully_masked_rows"], trace.attention.fully_masked_rows)
    assert query_tokens == ["猫", "看", "见", "狗"]
    assert key_tokens == list(trace.key_tokens)
    assert settings["dk"] == 5 and settings["mask"]["causal"] is True
    assert settings["scale_used"] == trace.attention.scale


def _spreadsheet_label(label: str) -> str:
    """The CSV label written independently: "[position] token" for "position:token"."""
    position, _, token = label.partition(":")
    return f"[{position}] {token}" if position.isdigit() else label


def test_csv_zip_round_trip_keeps_labels_and_exact_values(trace):
    matrices = load_csv_zip(csv_zip_bytes(trace))
    assert set(matrices) == set(EXPORTED)
    for name in EXPORTED:
        rows, columns, values = matrices[name]
        screen_rows, screen_columns = trace.axis_labels(name)
        assert rows == [_spreadsheet_label(label) for label in screen_rows]
        assert columns == [_spreadsheet_label(label) for label in screen_columns]
        np.testing.assert_array_equal(values, np.asarray(trace.matrix(name), dtype=float))
    assert np.isneginf(matrices["masked_scores"][2]).any()


def test_json_holds_every_stage_with_labels(trace):
    document = json.loads(json_text(trace))
    assert document["query_tokens"] == list(trace.query_tokens)
    weights = document["matrices"]["weights"]
    assert weights["rows"] == trace.query_labels and weights["shape"] == [4, 6]
    np.testing.assert_array_equal(np.array(weights["values"]), trace.attention.weights)
    masked = document["matrices"]["masked_scores"]["values"]
    assert masked[0][1] == "-inf"


def test_latex_bmatrix_has_every_number_and_escapes_tokens():
    values = np.array([[0.5, -np.inf], [1.25, 2.0]])
    latex = latex_matrix(values, ["0:a&b", "1:50%"], ["0:x_1", "1:$y"])
    assert latex.startswith("% columns: 0:x\\_1, 1:\\$y\n\\begin{bmatrix}")
    assert "0.50 & -\\infty \\\\  % 0:a\\&b" in latex
    assert "1.25 & 2.00 \\\\  % 1:50\\%" in latex
    assert latex.endswith("\\end{bmatrix}")


def test_markdown_table_is_a_table_and_escapes_tokens():
    table = markdown_table(np.array([[0.123, 1.0]]), ["0:a|b"], ["0:*x*", "1:y"])
    lines = table.splitlines()
    assert lines[0] == "| | 0:\\*x\\* | 1:y |"
    assert lines[1] == "|---|---:|---:|"
    assert lines[2] == "| 0:a\\|b | 0.12 | 1.00 |"


def test_html_figure_works_offline_and_keeps_chinese_labels(trace):
    html = standalone_html(heatmap(trace, "weights"))
    assert "<script src=\"http" not in html and not re.search(r"src=\"https?://", html), "no CDN"
    assert "Plotly.newPlot" in html or "Plotly.react" in html
    assert "0:猫" in html or "0:\\u732b" in html
    assert "Noto Sans CJK SC" in html


# --- what a spreadsheet makes of the labels ---------------------------------------------

NUMBERS = build_toy_trace(ToySettings(text="1 2 3 12 26 3/4 1-2 2024-01-05 12:30 =1+1 -3 +4 @A Jan 1e5 .5", dk=3))
"""Tokens a spreadsheet would turn into times ("1:2"), dates ("3/4", "2024-01-05"),
numbers ("1e5") or formulas ("=1+1")."""

EXCEL_TIME = re.compile(r"^\s*\d+\s*:\s*\d+")  # Excel reads "26:12" as 26 h 12 min
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _reinterpreted(cell: str) -> str | None:
    """What a spreadsheet-like reader makes of a text cell other than text, or None."""
    from dateutil import parser as dateutil_parser

    if cell.startswith(FORMULA_START):
        return "formula"
    if EXCEL_TIME.match(cell):
        return "time"
    try:
        float(cell)
        return "number"
    except ValueError:
        pass
    try:
        dateutil_parser.parse(cell)
        return "date"
    except (ValueError, OverflowError):
        return None


def test_csv_labels_stay_text_in_a_spreadsheet():
    data = csv_zip_bytes(NUMBERS)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        text = archive.read("10_weights.csv").decode("utf-8-sig")
    header = next(csv.reader(io.StringIO(text)))
    labels = header[1:] + [row[0] for row in list(csv.reader(io.StringIO(text)))[1:]]
    assert len(labels) == 2 * len(NUMBERS.key_tokens)
    assert {label: _reinterpreted(label) for label in labels if _reinterpreted(label)} == {}
    # pandas, told to look for dates in the labels, keeps every one as the text written
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = pd.read_csv(io.StringIO(text), index_col=0, parse_dates=True, keep_default_na=False)
    assert list(frame.index) == [_spreadsheet_label(label) for label in NUMBERS.query_labels]
    assert list(frame.columns) == [_spreadsheet_label(label) for label in NUMBERS.key_labels]
    np.testing.assert_array_equal(frame.to_numpy(), NUMBERS.attention.weights)


def test_the_screen_labels_are_unchanged():
    assert NUMBERS.query_labels[:4] == ["0:1", "1:2", "2:3", "3:12"]


# --- text exports: bounded, and built without a Python object per number -----------------


def _trace_of(tokens: int):
    return build_toy_trace(ToySettings(text=" ".join(f"w{i}" for i in range(tokens)), mask=MaskSpec(causal=True)))


def test_text_exports_are_offered_up_to_the_cell_limit():
    side = math.isqrt(MAX_TEXT_EXPORT_CELLS)
    assert text_export_fits(_trace_of(side)) and not text_export_fits(_trace_of(side + 1))
    cross = build_toy_trace(ToySettings(text="a " * 300, query_text="b " * 200, dk=2))
    assert (MAX_TEXT_EXPORT_CELLS >= 300 * 200) == text_export_fits(cross)


def test_text_exports_at_the_limit_are_a_few_megabytes():
    """The caption says "a few MB of text": checked at the largest view offered."""
    trace = _trace_of(math.isqrt(MAX_TEXT_EXPORT_CELLS))
    assert len(json_text(trace).encode()) < 10_000_000
    with zipfile.ZipFile(io.BytesIO(csv_zip_bytes(trace))) as archive:
        assert sum(info.file_size for info in archive.infolist()) < 10_000_000


def test_json_is_built_without_a_python_list_per_matrix():
    """Peak memory while writing stays within a small multiple of the text written (nested
    lists of Python floats and the encoder's pieces took more than 6 times)."""
    trace = _trace_of(200)
    tracemalloc.start()
    try:
        text = json_text(trace)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text), (peak, len(text))
    document = json.loads(text)
    np.testing.assert_array_equal(np.array(document["matrices"]["weights"]["values"]), trace.attention.weights)
