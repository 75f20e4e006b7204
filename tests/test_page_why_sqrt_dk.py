"""AppTest of the "Why √dk" page: what it draws is what the engine measures.

Each test drives a control (the page's "Show" picker, its dk, temperature and keys-per-row sliders, the
sidebar's dk, seed and cross-attention) and compares the Plotly data on the page with
attention_core called here, and with a reference written out by hand where one is short.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import ROOT, chart_ids, decode_array, heatmap_z, plotly_specs, run_app
from streamlit.testing.v1 import AppTest

from attention_core import MaskSpec, ToySettings, build_toy_trace
from attention_core.lessons.scaling import log_dk_steps, sample_dot_products, scaling_sweep

PAGE = "why-sqrt-dk"
SENTENCE = ToySettings().text
# In AppTest the sidebar's sentence is empty after switch_page (not in a browser), so the
# tests give it explicitly, as a user who typed it would.
BASE = {"text": SENTENCE}
DKS = log_dk_steps(1024)
PAGE_DEFAULTS = {"dk": 64, "num_keys": 16, "rows": 500, "pairs": 4000}
CHARTS_OF_PART = {  # the page shows one section at a time
    "spread": ["histograms", "std"],
    "saturation": ["row", "max-weight", "entropy"],
    "gradient": ["jacobian"],
    "sentence": ["weights-off", "weights-on"],
}
SENTENCE_PART = {"why_part": "sentence"}


def chart(at, key: str) -> dict:
    """The spec of the Plotly chart drawn with `key=key`."""
    names = [chart_id.rsplit("-why-dk-", 1)[-1] for chart_id in chart_ids(at)]  # ids end with the key
    return dict(zip(names, plotly_specs(at), strict=True))[key]


def trace_named(spec: dict, meta: str) -> dict:
    return next(trace for trace in spec["data"] if trace.get("meta") == meta)


def ys(spec: dict, meta: str) -> np.ndarray:
    return decode_array(trace_named(spec, meta)["y"]).astype(float)


def settings_like_sidebar(**changes) -> ToySettings:
    return replace(ToySettings(text=SENTENCE), **changes)


def reference_softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax, written out here."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=-1, keepdims=True)


def show(at: AppTest, part: str) -> AppTest:
    """Pick a section with the page's "Show" control, as a user would."""
    at.segmented_control(key="why_part").set_value(part).run()
    assert not at.exception
    return at


def drawn_keys(at) -> list[str]:
    return [chart_id.rsplit("-why-dk-", 1)[-1] for chart_id in chart_ids(at)]


@pytest.fixture(scope="module")
def default_page():
    return run_app(page=PAGE, **BASE)


@pytest.fixture(scope="module")
def sentence_page():
    return run_app(page=PAGE, **SENTENCE_PART, **BASE)


# ---------------------------------------------------------------- it runs, in both languages, with n ≠ m


def test_runs_in_english_and_opens_on_the_first_section(default_page):
    at = default_page
    assert not at.exception
    assert at.title[0].value == "Why divide by √dk?"
    assert at.segmented_control(key="why_part").value == "spread"
    assert drawn_keys(at) == CHARTS_OF_PART["spread"]
    assert [header.value for header in at.main.header] == ["1 · Dot products grow like √dk"]
    assert any("512 / 8 = **64**" in info.value for info in at.info)  # the paper's dk, corrected gently


def test_the_show_control_draws_each_section_and_only_it():
    at = run_app(page=PAGE, **BASE)
    for number, (part, keys) in enumerate(CHARTS_OF_PART.items(), start=1):
        show(at, part)
        assert drawn_keys(at) == keys, part
        headers = [header.value for header in at.main.header]
        assert len(headers) == 1 and headers[0].startswith(f"{number} · "), (part, headers)
        assert any("In one sentence" in block.value for block in at.success)  # the takeaway stays


def run_in_chinese(**session_state) -> AppTest:
    """The page in Chinese, in a single run.

    A second AppTest run would read the sidebar's radios back through their translating
    format_func outside the script, where the language is unknown, and fail to match the
    Chinese options; a browser has no such step.
    """
    at = AppTest.from_file(str(ROOT / "pages" / f"{PAGE}.py"), default_timeout=60)  # the page alone
    for key, value in {"lang": "zh", **BASE, **session_state}.items():
        at.session_state[key] = value
    at.run()
    return at


def test_runs_in_chinese_without_english_prose():
    at = run_in_chinese()
    assert not at.exception
    assert at.title[0].value == "为什么要除以 √dk？"
    headers = [header.value for header in at.main.header]
    assert len(headers) == 1 and re.search(r"[\u4e00-\u9fff]", headers[0])
    options = at.segmented_control(key="why_part").options
    assert len(options) == len(CHARTS_OF_PART) and all(re.search(r"[\u4e00-\u9fff]", option) for option in options)
    assert trace_named(chart(at, "std"), "theory_raw_std")["name"] == "理论值：√dk"
    prose = " ".join(block.value for block in at.markdown)
    assert "Take a query" not in prose and "设查询 q 和键 k" in prose


def test_runs_in_chinese_with_cross_attention():
    at = run_in_chinese(cross=True, query_text="猫坐在垫子上。", **SENTENCE_PART)
    assert not at.exception
    assert heatmap_z(chart(at, "weights-off")).shape == (7, len(build_toy_trace(settings_like_sidebar()).key_tokens))


def test_runs_with_cross_attention_and_draws_n_by_m_weights():
    at = run_app(page=PAGE, cross=True, query_text="猫坐在垫子上。", **SENTENCE_PART, **BASE)
    assert not at.exception
    settings = settings_like_sidebar(query_text="猫坐在垫子上。")
    expected = build_toy_trace(settings).attention.weights
    drawn = heatmap_z(chart(at, "weights-on"))
    n, m = drawn.shape
    assert (n, m) == expected.shape and n != m
    np.testing.assert_array_equal(drawn, expected)


def test_empty_sentence_explains_and_keeps_the_experiment():
    at = run_app(page=PAGE, text="", **SENTENCE_PART)
    assert not at.exception
    assert any("The sentence is empty" in info.value for info in at.info)
    assert not at.get("plotly_chart")
    for part in ("spread", "saturation", "gradient"):  # the random-vector experiment does not need the sentence
        assert drawn_keys(show(at, part)) == CHARTS_OF_PART[part]
        assert not any("The sentence is empty" in info.value for info in at.info)


def test_causal_mask_shows_gaps_in_both_heatmaps():
    at = run_app(page=PAGE, mask_kind="causal", **SENTENCE_PART, **BASE)
    expected = build_toy_trace(settings_like_sidebar(mask=MaskSpec(causal=True)))
    for key in ("weights-off", "weights-on"):
        drawn = heatmap_z(chart(at, key))
        np.testing.assert_array_equal(np.isnan(drawn), ~expected.attention.mask)
    np.testing.assert_array_equal(heatmap_z(chart(at, "weights-on")), np.where(expected.attention.mask,
                                                                               expected.attention.weights, np.nan))


# ---------------------------------------------------------------- 1 · histograms and the spread plot


def histogram_x(at, meta: str) -> np.ndarray:
    return decode_array(trace_named(chart(at, "histograms"), meta)["x"]).astype(float)


def test_histograms_are_the_sampled_dot_products_and_follow_the_dk_slider():
    at = run_app(page=PAGE, seed=3, **BASE)
    before = histogram_x(at, "raw")
    at.select_slider(key="why_dk").set_value(256).run()
    assert not at.exception
    raw, scaled = histogram_x(at, "raw"), histogram_x(at, "scaled")
    assert raw.shape == (PAGE_DEFAULTS["pairs"],) and not np.array_equal(raw, before)

    sample = sample_dot_products(256, PAGE_DEFAULTS["pairs"], seed=3)
    np.testing.assert_array_equal(raw, sample.raw)
    np.testing.assert_array_equal(scaled, sample.scaled)
    # and independently: the same generator, the dot products summed here
    rng = np.random.default_rng(3)
    q = rng.standard_normal((PAGE_DEFAULTS["pairs"], 256))
    k = rng.standard_normal((PAGE_DEFAULTS["pairs"], 256))
    by_hand = np.einsum("sd,sd->s", q, k)
    np.testing.assert_allclose(raw, by_hand, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(scaled, by_hand / 16.0, rtol=1e-10, atol=1e-10)
    assert "√256" in chart(at, "histograms")["layout"]["annotations"][1]["text"]


def test_std_plot_shows_the_sweep_and_marks_the_chosen_and_the_paper_dk():
    at = run_app(page=PAGE, seed=5, **BASE)
    at.select_slider(key="why_dk").set_value(8).run()
    spec = chart(at, "std")
    sweep = scaling_sweep(DKS, PAGE_DEFAULTS["num_keys"], PAGE_DEFAULTS["rows"], 5, 1.0)
    np.testing.assert_array_equal(decode_array(trace_named(spec, "raw_std")["x"]), DKS)
    np.testing.assert_array_equal(ys(spec, "raw_std"), sweep.raw_std)
    np.testing.assert_array_equal(ys(spec, "scaled_std"), sweep.scaled_std)
    np.testing.assert_allclose(ys(spec, "theory_raw_std"), [math.sqrt(dk) for dk in DKS])
    assert list(decode_array(trace_named(spec, "chosen_dk")["x"])) == [8, 8]
    assert list(decode_array(trace_named(spec, "paper_dk")["x"])) == [64, 64]
    # the measurement, not the formula: the raw spread is near √dk but not equal to it
    assert not np.array_equal(ys(spec, "raw_std"), ys(spec, "theory_raw_std"))
    np.testing.assert_allclose(ys(spec, "raw_std")[2:], ys(spec, "theory_raw_std")[2:], rtol=0.08)


def test_saturation_and_gradient_plots_are_the_sweep():
    at = run_app(page=PAGE, why_part="saturation", **BASE)
    at.select_slider(key="why_keys").set_value(8).run()
    sweep = scaling_sweep(DKS, 8, PAGE_DEFAULTS["rows"], 0, 1.0)
    for key, metas in (
        ("max-weight", ("max_weight_unscaled", "max_weight_scaled")),
        ("entropy", ("entropy_unscaled", "entropy_scaled")),
    ):
        for meta in metas:
            np.testing.assert_array_equal(ys(chart(at, key), meta), getattr(sweep, meta))
    assert ys(chart(at, "max-weight"), "uniform_weight")[0] == pytest.approx(1 / 8)
    assert ys(chart(at, "entropy"), "uniform_entropy")[0] == pytest.approx(math.log(8))
    row = chart(at, "row")
    assert len(decode_array(trace_named(row, "row_unscaled")["y"])) == 8
    show(at, "gradient")  # the keys per row carry over to the next section
    for meta in ("jacobian_norm_unscaled", "jacobian_norm_scaled"):
        np.testing.assert_array_equal(ys(chart(at, "jacobian"), meta), getattr(sweep, meta))


def test_row_bars_are_one_sampled_query_through_softmax():
    at = run_app(page=PAGE, why_part="saturation", **BASE)
    row = chart(at, "row")
    dk, m, rows = PAGE_DEFAULTS["dk"], PAGE_DEFAULTS["num_keys"], PAGE_DEFAULTS["rows"]
    rng = np.random.default_rng((0, dk))  # the sampling of sample_attention_pair, redone here
    q = rng.standard_normal((rows, 1, dk), dtype=np.float32)
    k = rng.standard_normal((rows, m, dk), dtype=np.float32)
    scores = (k[0].astype(np.float64) @ q[0, 0].astype(np.float64))  # (m,)
    np.testing.assert_allclose(ys(row, "row_unscaled"), reference_softmax_rows(scores), atol=2e-4)
    np.testing.assert_allclose(ys(row, "row_scaled"), reference_softmax_rows(scores / math.sqrt(dk)), atol=2e-5)


# ---------------------------------------------------------------- 4 · the user's sentence, scaling off and on


def test_weights_off_and_on_are_the_engine_with_scale_one_and_default(sentence_page):
    at = sentence_page
    settings = settings_like_sidebar()
    off, on = heatmap_z(chart(at, "weights-off")), heatmap_z(chart(at, "weights-on"))
    unscaled = build_toy_trace(replace(settings, scale=1.0)).attention
    scaled = build_toy_trace(settings).attention
    np.testing.assert_array_equal(off, unscaled.weights)
    np.testing.assert_array_equal(on, scaled.weights)
    assert not np.allclose(off, on)  # turning the scaling off changes the weights
    # and by hand, from the recorded Q and K
    np.testing.assert_allclose(off, reference_softmax_rows(scaled.q @ scaled.k.T), rtol=1e-10)
    np.testing.assert_allclose(on, reference_softmax_rows(scaled.q @ scaled.k.T / math.sqrt(8)), rtol=1e-10)
    for spec in (chart(at, "weights-off"), chart(at, "weights-on")):  # the same 0–1 colour scale
        heat = spec["data"][0]
        assert (heat["zmin"], heat["zmax"]) == (0.0, 1.0)


def test_sidebar_dk_changes_both_heatmaps_as_the_engine_says():
    at = run_app(page=PAGE, **SENTENCE_PART, **BASE)
    before_off, before_on = heatmap_z(chart(at, "weights-off")), heatmap_z(chart(at, "weights-on"))
    at.slider(key="dk").set_value(256).run()
    assert not at.exception
    off, on = heatmap_z(chart(at, "weights-off")), heatmap_z(chart(at, "weights-on"))
    assert not np.allclose(off, before_off) and not np.allclose(on, before_on)
    settings = settings_like_sidebar(dk=256)
    np.testing.assert_array_equal(off, build_toy_trace(replace(settings, scale=1.0)).attention.weights)
    np.testing.assert_array_equal(on, build_toy_trace(settings).attention.weights)
    # at dk = 256 the unscaled rows are nearly one-hot, the scaled ones are not
    assert np.median(off.max(axis=-1)) > 0.9 > np.median(on.max(axis=-1))


def test_temperature_rescales_the_scaled_weights_and_the_sweep():
    at = run_app(page=PAGE, **SENTENCE_PART, **BASE)
    off_before = heatmap_z(chart(at, "weights-off"))
    on_before = heatmap_z(chart(at, "weights-on"))
    at.select_slider(key="why_temperature").set_value(2.0).run()
    assert not at.exception
    settings = settings_like_sidebar()
    on = heatmap_z(chart(at, "weights-on"))
    np.testing.assert_array_equal(heatmap_z(chart(at, "weights-off")), off_before)  # T leaves scale 1 alone
    assert not np.allclose(on, on_before)
    expected = build_toy_trace(replace(settings, scale=1 / (2.0 * math.sqrt(8)))).attention
    np.testing.assert_allclose(on, expected.weights, rtol=1e-14)
    np.testing.assert_allclose(on, reference_softmax_rows(expected.q @ expected.k.T / math.sqrt(8) / 2.0), rtol=1e-10)
    assert np.all(on.max(axis=-1) <= on_before.max(axis=-1) + 1e-12)  # T > 1 flattens every row
    assert any("0.1768" in block.value for block in at.get("latex"))  # s = 1/(2·√8), printed
    sweep = scaling_sweep(DKS, PAGE_DEFAULTS["num_keys"], PAGE_DEFAULTS["rows"], 0, 2.0)
    np.testing.assert_array_equal(ys(chart(show(at, "spread"), "std"), "scaled_std"), sweep.scaled_std)
    np.testing.assert_array_equal(
        ys(chart(show(at, "saturation"), "max-weight"), "max_weight_scaled"), sweep.max_weight_scaled
    )


# ---------------------------------------------------------------- the strings and the page's source


def test_strings_have_both_languages_with_the_same_placeholders():
    strings = tomllib.loads((ROOT / "ui" / "strings" / "why_sqrt_dk.toml").read_text(encoding="utf-8"))
    assert strings and all(key.startswith("why_sqrt_dk.") for key in strings)
    for key, entry in strings.items():
        en, zh = entry["en"], entry["zh"]
        assert set(re.findall(r"\{(\w+)", en)) == set(re.findall(r"\{(\w+)", zh)), key
        if re.search(r"[A-Za-z]{4,}", en.replace("softmax", "").replace("Frobenius", "")):
            assert re.search(r"[\u4e00-\u9fff]", zh), f"{key}: the Chinese text looks untranslated"


def test_page_does_no_numpy_arithmetic():
    source = (ROOT / "pages" / "why-sqrt-dk.py").read_text(encoding="utf-8")
    assert "numpy" not in source and "np." not in source
    assert not re.search(r"\w\s*@\s*\w", source)
