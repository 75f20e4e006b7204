"""The "Compare two settings" page, run by AppTest.

What is drawn (A's weights, B's weights, B − A) is compared with `build_toy_trace` run
here on the settings each side's controls describe, and the difference with a
subtraction done here cell by cell.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from apptest_helpers import chart_ids, heatmap_traces, heatmap_z, plotly_specs, run_app

from attention_core import MaskSpec, ToySettings, build_toy_trace

PAGE = "compare"
TEXT = "The cat sat on the mat because it was tired."
SIDEBAR = ToySettings(text=TEXT)


def drawn(at) -> dict[str, dict]:
    """Chart specs keyed by the end of their key: "a", "b" (weights) and "difference"."""
    return {chart_id.rsplit("-", 1)[-1]: spec for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True)}


def shown_weights(settings: ToySettings) -> np.ndarray:
    """The weights of `settings` as a heatmap shows them: masked cells are gaps (NaN)."""
    attention = build_toy_trace(settings).attention
    return np.where(attention.mask, attention.weights, np.nan)


def difference_by_hand(settings_a: ToySettings, settings_b: ToySettings) -> np.ndarray:
    a, b = build_toy_trace(settings_a).attention, build_toy_trace(settings_b).attention
    n, m = a.weights.shape
    diff = np.array([[float(b.weights[i, j]) - float(a.weights[i, j]) for j in range(m)] for i in range(n)])
    both_masked = np.array([[not a.mask[i, j] and not b.mask[i, j] for j in range(m)] for i in range(n)])
    return np.where(both_masked, np.nan, diff)


def assert_page_shows(at, settings_a: ToySettings, settings_b: ToySettings) -> None:
    charts = drawn(at)
    assert set(charts) == {"a", "b", "difference"}
    np.testing.assert_allclose(heatmap_z(charts["a"]), shown_weights(settings_a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(charts["b"]), shown_weights(settings_b), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        heatmap_z(charts["difference"]), difference_by_hand(settings_a, settings_b), rtol=0, atol=1e-12
    )
    for side in ("a", "b"):  # weights on the fixed 0–1 scale
        heat = heatmap_traces(charts[side])[0]
        assert (heat["zmin"], heat["zmax"]) == (0.0, 1.0)
    heat = heatmap_traces(charts["difference"])[0]  # diverging, centred at 0, symmetric
    assert heat["zmin"] == -heat["zmax"] > -1.0 - 1e-12
    assert heat["zmax"] == pytest.approx(np.nanmax(np.abs(difference_by_hand(settings_a, settings_b))))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_defaults_compare_the_sidebar_with_its_unscaled_twin(lang):
    at = run_app(page=PAGE, lang=lang, text=TEXT)
    assert_page_shows(at, SIDEBAR, dataclasses.replace(SIDEBAR, scale=1.0))
    words = "Largest change" if lang == "en" else "变化最大的是"
    assert any(words in m.value for m in at.markdown)


def test_changing_b_dk_redraws_b_and_the_difference():
    at = run_app(page=PAGE, text=TEXT)
    before = drawn(at)
    at.number_input(key="compare.b.dk").set_value(64).run()
    assert not at.exception
    after = drawn(at)
    assert not np.allclose(heatmap_z(before["b"]), heatmap_z(after["b"]))
    assert not np.allclose(heatmap_z(before["difference"]), heatmap_z(after["difference"]))
    np.testing.assert_array_equal(heatmap_z(before["a"]), heatmap_z(after["a"]))
    assert_page_shows(at, SIDEBAR, dataclasses.replace(SIDEBAR, dk=64, scale=1.0))
    assert any("dk" in m.value and "1/√dk" in m.value for m in at.markdown)  # "B differs from A in: dk, scaling"


@pytest.mark.parametrize(
    ("preset", "a_changes", "b_changes"),
    [
        ("dk_4_vs_64", {"dk": 4}, {"dk": 64}),
        ("dk_64_unscaled", {"dk": 64}, {"dk": 64, "scale": 1.0}),
        ("mask_off_vs_causal", {}, {"mask": MaskSpec(causal=True)}),
        ("projection", {}, {"projection": "identity"}),
    ],
)
def test_presets_set_both_sides(preset, a_changes, b_changes):
    at = run_app(page=PAGE, text=TEXT)
    at.selectbox(key="compare.preset").set_value(preset).run()
    assert not at.exception
    assert_page_shows(at, dataclasses.replace(SIDEBAR, **a_changes), dataclasses.replace(SIDEBAR, **b_changes))


def test_side_controls_override_the_sidebar_seed_and_mask():
    at = run_app(page=PAGE, text=TEXT, seed=7)
    at.number_input(key="compare.b.seed").set_value(3)
    at.button_group(key="compare.a.mask").set_value("causal")
    at.toggle(key="compare.b.scaled").set_value(True).run()
    assert not at.exception
    sidebar = dataclasses.replace(SIDEBAR, seed=7)
    assert_page_shows(
        at, dataclasses.replace(sidebar, mask=MaskSpec(causal=True)), dataclasses.replace(sidebar, seed=3)
    )


def test_identical_sides_say_so():
    at = run_app(page=PAGE, text=TEXT)
    at.toggle(key="compare.b.scaled").set_value(True).run()
    assert not at.exception
    assert any("same settings" in info.value for info in at.info)
    assert np.all(heatmap_z(drawn(at)["difference"]) == 0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cross_attention_compares_n_by_m_weights(lang):
    query_text = "猫坐在垫子上。"
    at = run_app(page=PAGE, lang=lang, text=TEXT, cross=True, query_text=query_text)
    sidebar = ToySettings(text=TEXT, query_text=query_text)
    at.number_input(key="compare.b.dk").set_value(32).run()
    assert not at.exception
    settings_b = dataclasses.replace(sidebar, dk=32, scale=1.0)
    assert_page_shows(at, sidebar, settings_b)
    n, m = heatmap_z(drawn(at)["difference"]).shape
    trace = build_toy_trace(sidebar)
    assert (n, m) == (len(trace.query_tokens), len(trace.key_tokens))
    assert n != m
    assert drawn(at)["difference"]["data"][0]["y"] == trace.query_labels
