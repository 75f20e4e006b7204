"""Exports round-trip: what is written can be read back and equals the trace's records."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_core import MaskSpec, ToySettings, build_toy_trace
from attention_core.export import (
    EXPORTED,
    csv_zip_bytes,
    json_text,
    latex_matrix,
    load_csv_zip,
    load_npz,
    markdown_table,
    npz_bytes,
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


def test_csv_zip_round_trip_keeps_labels_and_exact_values(trace):
    matrices = load_csv_zip(csv_zip_bytes(trace))
    assert set(matrices) == set(EXPORTED)
    for name in EXPORTED:
        rows, columns, values = matrices[name]
        assert (rows, columns) == trace.axis_labels(name)
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
