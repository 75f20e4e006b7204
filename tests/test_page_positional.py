"""The positional encoding page as a user meets it (AppTest): what it draws and the numbers it states."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from apptest_helpers import chart_ids, decode_array, plotly_specs, run_app

from attention_core import ToySettings, build_toy_trace


def _z(at, suffix: str) -> np.ndarray:
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith(suffix):
            return decode_array(spec["data"][0]["z"]).astype(float)
    raise AssertionError(f"no chart ending in {suffix}: {chart_ids(at)}")


def _shapes(at, suffix: str) -> list[tuple[float, float]]:
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith(suffix):
            return [(shape["y0"], shape["y1"]) for shape in spec["layout"].get("shapes", [])]
    raise AssertionError(suffix)


def _pe(pos: int, dim: int, d_model: int) -> float:
    angle = pos / 10000 ** (2 * (dim // 2) / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_renders_in_both_languages(lang):
    at = run_app(page="positional", lang=lang)
    assert at.title[0].value == ("Positional encoding" if lang == "en" else "位置编码")
    assert any("10000" in latex.value for latex in at.latex), "the §3.5 formula"
    assert len(at.get("plotly_chart")) == 4


def test_the_sinusoid_heatmap_is_the_formula():
    at = run_app(page="positional", d_model=16)
    drawn = _z(at, "positional-sinusoids")
    assert drawn.shape == (64, 16)
    by_hand = np.array([[_pe(pos, dim, 16) for dim in range(16)] for pos in range(64)])
    np.testing.assert_allclose(drawn, by_hand, atol=1e-12)
    sentence = next(c.value for c in at.caption if "wavelength" in c.value)
    shortest, longest = re.findall(r"from ([\d.]+) to ([\d,]+) positions", sentence)[0]
    assert float(shortest) == round(2 * math.pi, 1)
    assert int(longest.replace(",", "")) == round(2 * math.pi * 10000 ** (14 / 16))


def test_x_is_drawn_as_e_plus_pe_with_the_repeated_rows_outlined():
    at = run_app(page="positional")
    e, pe, x = _z(at, "positional-e"), _z(at, "positional-pe"), _z(at, "positional-x")
    n, width = e.shape
    np.testing.assert_allclose(pe, [[_pe(pos, dim, width) for dim in range(width)] for pos in range(n)], atol=1e-12)
    np.testing.assert_allclose(x, e + pe, atol=1e-12)
    np.testing.assert_allclose(x, build_toy_trace(ToySettings(positional=True)).x_query)
    np.testing.assert_array_equal(e[0], e[4])  # "The" and "the"
    assert _shapes(at, "positional-e") == [(-0.5, 0.5), (3.5, 4.5)]
    assert _shapes(at, "positional-x") == [(-0.5, 0.5), (3.5, 4.5)]


def test_the_stated_distances_are_measured():
    at = run_app(page="positional")
    without = build_toy_trace(ToySettings())
    with_pe = build_toy_trace(ToySettings(positional=True))
    sentence = next(m.value for m in at.markdown if "0:The" in m.value)
    numbers = [float(x) for x in re.findall(r"distance (\d+\.\d+)|apart", sentence) if x]
    assert numbers == [0.0, 0.0]  # equal rows of X, equal outputs
    x_with, output_with = (float(x) for x in re.findall(r"(\d+\.\d\d) apart", sentence))
    assert x_with == round(float(np.linalg.norm(with_pe.x_query[0] - with_pe.x_query[4])), 2)
    assert output_with == round(float(np.linalg.norm(with_pe.attention.output[0] - with_pe.attention.output[4])), 2)
    np.testing.assert_array_equal(without.attention.output[0], without.attention.output[4])
    table = at.dataframe[0].value
    assert len(table) == 1 and table.iloc[0, 1] == 0 and table.iloc[0, 2] > 0


def test_a_sentence_without_repeats_offers_one_that_has_them():
    at = run_app(page="positional", text="a b c")
    assert at.info and not at.dataframe
    at.button(key="positional_example").click().run()
    assert not at.exception
    assert at.dataframe, "the loaded sentence repeats “the”"


def test_without_projections_pe_has_dk_columns():
    at = run_app(page="positional", projection="identity", dk=6)
    assert _z(at, "positional-pe").shape[1] == 6
    assert _z(at, "positional-sinusoids").shape == (64, 6)


def test_an_empty_sentence_is_explained_not_raised():
    at = run_app(page="positional", text="")
    assert at.info and not at.get("plotly_chart")
