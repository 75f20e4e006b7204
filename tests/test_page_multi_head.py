"""The multi-head page as a user drives it (AppTest): what is drawn follows the controls.

Expected numbers come from `scaled_dot_product_attention` run in the test on the column
blocks of the recorded embeddings and projections, not from the page's own records.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import chart_ids, decode_array, heatmap_traces, heatmap_z, plotly_specs, run_app

from attention_core import STAGES, MaskSpec, ToySettings, scaled_dot_product_attention
from attention_core.figures.matrices import MAX_MARKED_SIDE
from attention_core.toy_multihead import build_toy_multihead
from ui.i18n import translate

DEFAULT = ToySettings()
QUERY_TEXT = "猫坐在垫子上。"


def _open(**session):
    return run_app(page="multi-head", **session)


def _spec(at, key: str) -> dict:
    """The drawn figure whose chart key ends with `key`."""
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith(f"-{key}"):
            return spec
    raise AssertionError(f"no chart {key!r}: {chart_ids(at)}")


def _expected_head(settings: ToySettings, d_model: int, num_heads: int, head: int):
    """Head `head` by hand: attention on column block `head` of the recorded projections."""
    trace = build_toy_multihead(settings, d_model, num_heads)
    size = d_model // num_heads
    block = slice(head * size, (head + 1) * size)
    mask = settings.mask.build(list(trace.query_tokens), list(trace.key_tokens))
    return scaled_dot_product_attention(
        trace.x_query @ trace.w_q[:, block], trace.x_key @ trace.w_k[:, block], trace.x_key @ trace.w_v[:, block], mask
    )


def _grid(at) -> list[dict]:
    return heatmap_traces(_spec(at, "mh-grid"))


def _show(at, part: str):
    """Open one part of the page ("heads", "one_head" or "combine"), as a click on its picker does."""
    at.segmented_control(key="mh_part").set_value(part).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


CHARTS_OF_PART = {
    "heads": ("mh-grid",),
    "one_head": ("mh-step-qkv-q", "mh-step-qkv-k", "mh-step-qkv-v"),
    "combine": ("mh-concat", "mh-w-o", "mh-output"),
}


def _page_text(at) -> str:
    parts = [element.value for kind in ("markdown", "caption", "subheader", "title") for element in at.get(kind)]
    return " ".join(parts)


def test_the_page_opens_on_every_heads_weights_and_each_part_draws_its_own_charts_only():
    at = _open()
    assert at.segmented_control(key="mh_part").value == "heads"
    for shown in ("heads", "one_head", "combine", "heads"):
        ids = chart_ids(_show(at, shown))
        for part, keys in CHARTS_OF_PART.items():
            for key in keys:
                assert any(chart_id.endswith(key) for chart_id in ids) == (part == shown), (shown, key)
    assert any(r"\mathrm{MultiHead}" in latex.body and "W^O" in latex.body for latex in at.latex)
    assert any(r"\frac{64}{8} = 8" in latex.body for latex in at.latex)
    assert "512 / 8 = 64" in _page_text(at)


def test_the_grid_draws_every_heads_weights_with_token_labels():
    at = _open()
    traces = _grid(at)
    assert [trace["name"] for trace in traces] == [f"head {i}" for i in range(1, 9)]
    for head, trace in enumerate(traces):
        np.testing.assert_allclose(decode_array(trace["z"]), _expected_head(DEFAULT, 64, 8, head).weights)
    assert traces[0]["y"][:2] == ["0:The", "1:cat"]


def test_changing_h_changes_the_number_of_small_multiples_and_the_picked_heads_weights():
    at = _open()
    assert len(_grid(at)) == 8
    at.segmented_control(key="mh_heads").set_value(4).run()
    assert not at.exception
    traces = _grid(at)
    assert len(traces) == 4
    titles = [annotation["text"] for annotation in _spec(at, "mh-grid")["layout"]["annotations"]]
    assert titles == [f"head {number}" for number in range(1, 5)]
    _show(at, "one_head").segmented_control(key="mh_stage").set_value("weights").run()
    at.segmented_control(key="mh_head").set_value(2).run()
    drawn = heatmap_z(_spec(at, "mh-step-weights-weights"))
    expected = _expected_head(DEFAULT, 64, 4, 2).weights
    np.testing.assert_allclose(drawn, expected)
    assert not np.allclose(drawn, _expected_head(DEFAULT, 64, 4, 1).weights)
    np.testing.assert_allclose(decode_array(traces[2]["z"]), expected)


def test_changing_d_model_changes_dk_and_the_drawn_widths():
    at = _show(_open(), "one_head")
    at.segmented_control(key="mh_d_model").set_value(128).run()
    assert not at.exception
    assert any(r"\frac{128}{8} = 16" in latex.body for latex in at.latex)
    assert heatmap_z(_spec(at, "mh-step-qkv-q")).shape == (11, 16)
    assert heatmap_z(_spec(_show(at, "combine"), "mh-concat")).shape == (11, 128)
    _show(at, "one_head").segmented_control(key="mh_d_model").set_value(16).run()
    assert any(r"\frac{16}{8} = 2" in latex.body for latex in at.latex)
    assert heatmap_z(_spec(at, "mh-step-qkv-q")).shape == (11, 2)


def test_a_stale_number_of_heads_is_clamped_when_d_model_shrinks():
    at = _open()
    at.segmented_control(key="mh_heads").set_value(16).run()
    assert len(_grid(at)) == 16
    at.segmented_control(key="mh_d_model").set_value(8).run()
    assert not at.exception
    assert at.segmented_control(key="mh_heads").value == 8
    assert at.segmented_control(key="mh_heads").options == ["1", "2", "4", "8"]
    assert len(_grid(at)) == 8
    assert any(r"\frac{8}{8} = 1" in latex.body for latex in at.latex)


def test_concat_and_output_are_drawn_as_the_engine_computes_them_by_hand():
    at = _open(mh_d_model=16, mh_heads=4, mh_part="combine")
    heads = [_expected_head(DEFAULT, 16, 4, head).output for head in range(4)]
    concat = np.concatenate(heads, axis=1)
    np.testing.assert_allclose(heatmap_z(_spec(at, "mh-concat")), concat)
    w_o = heatmap_z(_spec(at, "mh-w-o"))
    assert w_o.shape == (16, 16)
    assert len(_spec(at, "mh-concat")["layout"]["shapes"]) == 3, "a line between each two heads' columns"
    assert len(_spec(at, "mh-w-o")["layout"]["shapes"]) == 3, "a line between each two heads' rows of W_O"
    np.testing.assert_allclose(heatmap_z(_spec(at, "mh-output")), concat @ w_o)


def test_w_o_too_large_to_draw_is_explained_instead():
    at = _open(mh_d_model=512, mh_part="combine")
    assert not at.exception
    assert not any(chart_id.endswith("mh-w-o") for chart_id in chart_ids(at))
    assert any("512 × 512" in info.value for info in at.info)
    assert any(chart_id.endswith("mh-output") for chart_id in chart_ids(at))


def test_cross_attention_draws_n_by_m_weights_for_every_head():
    at = _open(cross=True, query_text=QUERY_TEXT)
    assert not at.exception
    settings = ToySettings(query_text=QUERY_TEXT)
    traces = _grid(at)
    assert len(traces) == 8
    for head, trace in enumerate(traces):
        z = decode_array(trace["z"])
        assert z.shape == (7, 11)
        np.testing.assert_allclose(z, _expected_head(settings, 64, 8, head).weights)
    _show(at, "one_head").segmented_control(key="mh_stage").set_value("weights").run()
    assert _spec(at, "mh-step-weights-weights")["data"][0]["y"][0] == "0:猫"
    assert heatmap_z(_spec(_show(at, "combine"), "mh-output")).shape == (7, 64)


def test_the_causal_mask_shows_as_gaps_in_every_head():
    at = _open(mask_kind="causal")
    upper = np.triu(np.ones((11, 11), dtype=bool), k=1)
    for trace in _grid(at):
        z = decode_array(trace["z"]).astype(float)
        assert np.isnan(z[upper]).all()
        assert not np.isnan(z[~upper]).any()
    settings = ToySettings(mask=MaskSpec(causal=True))
    drawn = np.nan_to_num(decode_array(_grid(at)[5]["z"]))  # gaps are weights 0
    np.testing.assert_allclose(drawn, _expected_head(settings, 64, 8, 5).weights)


def test_next_and_previous_walk_through_one_heads_stages():
    at = _show(_open(), "one_head")
    names = ["qkv", "raw_scores", "scaled_scores", "masked_scores", "weights", "output"]
    for expected in names[1:]:
        at.button(key="mh_next").click().run()
        assert at.segmented_control(key="mh_stage").value == expected
    assert any(chart_id.endswith("mh-step-output-output") for chart_id in chart_ids(at))
    at.button(key="mh_next").click().run()  # stays on the last stage
    assert at.segmented_control(key="mh_stage").value == "output"
    at.button(key="mh_previous").click().run()
    assert at.segmented_control(key="mh_stage").value == "weights"


def test_empty_sentence_gives_the_common_message_not_a_traceback():
    at = _open(text="")
    assert not at.exception
    assert any("empty" in info.value for info in at.info)
    assert not chart_ids(at)


@pytest.mark.parametrize("session", [{}, {"cross": True, "query_text": QUERY_TEXT}], ids=["self", "cross"])
def test_the_page_speaks_chinese(session):
    at = _open(lang="zh", **session)
    assert not at.exception
    text = _page_text(at)
    assert re.search(r"[\u4e00-\u9fff]", text)
    assert "multi_head." not in text, "an untranslated key is shown"
    assert "Why several heads" not in text
    assert at.segmented_control(key="mh_part").options == ["所有头", "逐步看一个头", "拼接与 W_O"]
    assert _show(at, "one_head").segmented_control(key="mh_head").options[:2] == ["头 1", "头 2"]
    _show(at, "heads").segmented_control(key="mh_heads").set_value(2).run()  # the controls still work in Chinese
    assert not at.exception
    titles = [annotation["text"] for annotation in _spec(at, "mh-grid")["layout"]["annotations"]]
    assert titles == ["头 1", "头 2"]


def test_switching_the_language_keeps_the_choices():
    at = _open(mh_d_model=32, mh_heads=4, mh_head=3, mh_stage="weights")
    at.segmented_control(key="lang").set_value("zh").run()
    assert not at.exception
    assert at.segmented_control(key="mh_part").value == "one_head"
    assert any(r"\frac{32}{4} = 8" in latex.body for latex in at.latex)
    np.testing.assert_allclose(
        heatmap_z(_spec(at, "mh-step-weights-weights")), _expected_head(DEFAULT, 32, 4, 3).weights
    )
    assert len(_grid(_show(at, "heads"))) == 4


def test_a_link_that_names_a_head_or_a_stage_opens_the_step_through_of_one_head():
    """Links made when every part was on the page at once still show what they pointed at."""
    for session, part in (
        ({}, "heads"),
        ({"mh_head": 2}, "one_head"),
        ({"mh_stage": "weights"}, "one_head"),
        ({"mh_head": 2, "mh_part": "combine"}, "combine"),
    ):
        at = _open(**session)
        assert at.segmented_control(key="mh_part").value == part, session


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_stage_of_one_head_is_explained(lang):
    """Each stage of one head reuses the step-through's sentence under its formula, with every
    number that sentence names (the mask stage's names up to how many tokens a × is drawn)."""
    at = _show(_open(lang=lang, mask_kind="causal"), "one_head")
    stages = [stage.name for stage in STAGES if stage.name != "embeddings"]  # X is shared by the heads
    assert len(at.segmented_control(key="mh_stage").options) == len(stages)
    for stage in stages:
        at.segmented_control(key="mh_stage").set_value(stage).run()
        assert not at.exception, (stage, [e.value for e in at.exception])
        assert chart_ids(at), stage
    expected = translate("stage.masked_scores.explain", lang, marked=MAX_MARKED_SIDE)
    at.segmented_control(key="mh_stage").set_value("masked_scores").run()
    assert expected in _page_text(at)
