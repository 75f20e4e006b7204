"""URL state: untrusted link values are clamped or dropped with a notice; good ones seed the view."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import APP, heatmap_z, plotly_specs
from streamlit.testing.v1 import AppTest

from attention_core import MAX_DIM, MaskSpec, ToySettings, build_toy_trace
from ui.url import MAX_URL_TEXT, URL_PARAMS, read_url


@pytest.mark.parametrize(
    ("query", "values", "problems"),
    [
        ({"dk": "20"}, {"dk": 20}, []),
        ({"dk": "0"}, {"dk": 1}, [("dk", "clamped", "0")]),
        ({"dk": "99999"}, {"dk": MAX_DIM}, [("dk", "clamped", "99999")]),
        ({"dk": "-3"}, {"dk": 1}, [("dk", "clamped", "-3")]),
        ({"dk": "8.5"}, {}, [("dk", "dropped", "8.5")]),
        ({"dk": "abc"}, {}, [("dk", "dropped", "abc")]),
        ({"dk": ""}, {}, [("dk", "dropped", "")]),
        ({"seed": "1e9"}, {}, [("seed", "dropped", "1e9")]),
        ({"seed": str(2**40)}, {"seed": 2**31 - 1}, [("seed", "clamped", str(2**40))]),
        ({"lang": "zh"}, {"lang": "zh"}, []),
        ({"lang": "fr"}, {}, [("lang", "dropped", "fr")]),
        ({"mask_kind": "causal"}, {"mask_kind": "causal"}, []),
        ({"mask_kind": "<script>"}, {}, [("mask_kind", "dropped", "<script>")]),
        ({"positional": "true"}, {"positional": True}, []),
        ({"positional": "maybe"}, {}, [("positional", "dropped", "maybe")]),
        ({"pad_positions": "3,1,1"}, {"pad_positions": [1, 3]}, []),
        ({"pad_positions": "1,x"}, {}, [("pad_positions", "dropped", "1,x")]),
        ({"pad_positions": "1,-2"}, {"pad_positions": [1]}, [("pad_positions", "clamped", "1,-2")]),
        ({"stage": "weights"}, {"stage": "weights"}, []),
        ({"stage": "nope"}, {}, [("stage", "dropped", "nope")]),
        ({"utm_source": "mail"}, {}, []),  # not ours: ignored quietly
    ],
)
def test_read_url_clamps_or_drops_untrusted_values(query, values, problems):
    assert read_url(query) == (values, problems)


def test_overlong_text_is_cut_with_a_notice():
    values, problems = read_url({"text": "a " * MAX_URL_TEXT})
    assert len(values["text"]) == MAX_URL_TEXT
    assert problems == [("text", "clamped", "a " * MAX_URL_TEXT)]


def test_every_url_value_written_reads_back_the_same():
    samples = {"dk": 37, "lang": "zh", "pad_positions": [0, 4], "positional": True, "text": "猫 & dog?=#"}
    for key, value in samples.items():
        param = URL_PARAMS[key]
        assert param.read(param.write(value)) == (value, False)


def _run_with_url(**query) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(query)
    return at.run()


def test_a_link_seeds_the_settings_and_the_drawn_matrices():
    at = _run_with_url(text="the cat saw the dog", dk="5", mask_kind="causal", stage="weights", lang="zh")
    assert not at.exception
    assert at.slider(key="dk").value == 5
    assert at.segmented_control(key="stage").value == "weights"
    expected = build_toy_trace(ToySettings(text="the cat saw the dog", dk=5, mask=MaskSpec(causal=True))).attention
    drawn = heatmap_z(plotly_specs(at)[0])
    np.testing.assert_allclose(drawn[expected.mask], expected.weights[expected.mask])
    assert "注意力权重 A" in at.subheader[0].value


def test_bad_link_values_show_a_notice_and_never_a_traceback():
    at = _run_with_url(dk="99999", seed="abc", lang="xx", stage="<b>x</b>", text="a b c")
    assert not at.exception
    notices = [warning.value for warning in at.warning]
    assert any("dk" in notice and "out of range" in notice for notice in notices)
    assert any("seed" in notice and "not understood" in notice for notice in notices)
    assert any("`<b>x</b>`" in notice for notice in notices), "the raw value is shown as code, not rendered"
    assert at.slider(key="dk").value == MAX_DIM
    assert at.number_input(key="seed").value == 0


@pytest.mark.parametrize(
    ("query", "values", "problems"),
    [
        ({"why_dk": "256"}, {"why_dk": 256}, []),
        ({"why_dk": "100"}, {}, [("why_dk", "dropped", "100")]),  # not a power of two on the slider
        ({"why_temperature": "0.5"}, {"why_temperature": 0.5}, []),
        ({"why_temperature": "nan"}, {}, [("why_temperature", "dropped", "nan")]),
        ({"why_part": "sentence"}, {"why_part": "sentence"}, []),
        ({"why_part": "all"}, {}, [("why_part", "dropped", "all")]),
        ({"cell_i": "3", "cell_j": "5000"}, {"cell_i": 3, "cell_j": 2047}, [("cell_j", "clamped", "5000")]),
        ({"mask_lab_presets": "window,causal"}, {"mask_lab_presets": ["causal", "window"]}, []),
        ({"mask_lab_presets": "causal,rm -rf"}, {"mask_lab_presets": ["causal"]},
         [("mask_lab_presets", "clamped", "causal,rm -rf")]),
        ({"mask_lab_presets": "nothing"}, {}, [("mask_lab_presets", "dropped", "nothing")]),
        ({"mh_d_model": "512", "mh_heads": "8"}, {"mh_d_model": 512, "mh_heads": 8}, []),
        ({"mh_d_model": "500"}, {}, [("mh_d_model", "dropped", "500")]),
        ({"mh_stage": "embeddings"}, {}, [("mh_stage", "dropped", "embeddings")]),
        ({"cell_part": "softmax"}, {"cell_part": "softmax"}, []),
        ({"cell_part": "weights"}, {}, [("cell_part", "dropped", "weights")]),
        ({"rm_part": "embedding"}, {"rm_part": "embedding"}, []),
        ({"rm_part": "overview"}, {}, [("rm_part", "dropped", "overview")]),
        ({"mh_part": "combine"}, {"mh_part": "combine"}, []),
        ({"mh_part": "everything"}, {}, [("mh_part", "dropped", "everything")]),
        ({"dec_part": "finder"}, {"dec_part": "finder"}, []),
        ({"dec_part": "heads,cell"}, {}, [("dec_part", "dropped", "heads,cell")]),
        ({"compare.b.scaled": "false", "compare.a.dk": "64"}, {"compare.b.scaled": False, "compare.a.dk": 64}, []),
    ],
)
def test_page_settings_in_the_url_are_checked_too(query, values, problems):
    assert read_url(query) == (values, problems)


@pytest.mark.parametrize(
    ("page", "query", "key", "expected"),
    [
        ("cell", {"cell_i": "3", "cell_j": "5"}, "cell_j", 5),
        ("cell", {"cell_part": "output"}, "cell_part", "output"),
        ("why-sqrt-dk", {"why_dk": "256"}, "why_dk", 256),
        ("why-sqrt-dk", {"why_part": "gradient"}, "why_part", "gradient"),
        ("masks", {"mask_lab_presets": "causal,window", "mask_lab_window": "3"}, "mask_lab_window", 3),
        ("multi-head", {"mh_d_model": "32", "mh_heads": "4", "mh_head": "2"}, "mh_head", 2),
        ("multi-head", {"mh_part": "combine"}, "mh_part", "combine"),
        ("multi-head", {"mh_stage": "weights"}, "mh_part", "one_head"),  # a link from before the parts
        ("compare", {"compare.b.dk": "4", "compare.b.scaled": "true"}, "compare.b.dk", 4),
    ],
)
def test_a_link_restores_each_pages_own_settings(page, query, key, expected):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(query)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    assert at.session_state[key] == expected
