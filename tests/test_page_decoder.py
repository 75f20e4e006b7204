"""The page "Inside a decoder" as a user drives it (AppTest), in English and Chinese.

Expected numbers come from the engine (attention_core.decoder), called here independently
of the page; the engine itself is checked against transformers in test_decoder_reference.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import ROOT, chart_ids, heatmap_z, page_text, run_page_alone, spec_ending
from installed_models import DECODER_MISSING, installed_decoder
from streamlit.testing.v1 import AppTest

from attention_core.decoder import checkpoint as checkpoint_module
from ui.i18n import translate

PAGE = ROOT / "pages" / "decoder.py"
DEFAULT_PROMPT = "The cat sat on the mat. The cat sat on the"


@pytest.fixture(scope="module")
def model():
    return installed_decoder()


def run_page(**session_state) -> AppTest:
    return run_page_alone(PAGE, timeout=180, **session_state)


def engine_run(model, text: str):
    from attention_core.decoder.forward import encode_prompt, run_decoder

    return run_decoder(model, encode_prompt(model, text))


CHARTS_OF_PART = {
    "heads": ("dec-overview", "dec-gqa-0", "dec-gqa-2"),
    "one_head": ("dec-step-weights",),
    "cell": ("dec-cell-locator", "dec-cell-softmax"),
    "finder": ("dec-finder-grid", "dec-finder-pattern"),
}
"""The charts of each part of the page below the layer and head pickers, shown one at a time."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_in_both_languages_and_each_part_draws_its_own_charts_only(model, lang):
    at = run_page(lang=lang)
    assert at.segmented_control(key="dec_part").value == "one_head"
    for shown in ("heads", "one_head", "cell", "finder"):
        at.segmented_control(key="dec_part").set_value(shown).run()
        assert not at.exception
        ids = chart_ids(at)
        assert any(chart_id.endswith("dec-predictions") for chart_id in ids), "the prediction stays above the parts"
        for part, keys in CHARTS_OF_PART.items():
            for key in keys:
                assert any(chart_id.endswith(key) for chart_id in ids) == (part == shown), (shown, key)
        text = page_text(at)
        assert ("走进解码器" in text and "因果掩码" in text) if lang == "zh" else "Inside a decoder" in text


def test_a_link_that_names_a_setting_of_one_part_opens_that_part(model):
    """Links made when every part was on the page at once still show what they pointed at."""
    for session, part in (
        ({"dec_stage": "rotary"}, "one_head"),
        ({"dec_summary": "first_token"}, "heads"),
        ({"dec_cell_j": 3}, "cell"),
        ({"dec_score": "previous_token"}, "finder"),
        ({"dec_score": "previous_token", "dec_part": "cell"}, "cell"),
    ):
        assert run_page(**session).segmented_control(key="dec_part").value == part, session


def test_top_prediction_sentence_states_the_softmax_of_the_logits(model):
    at = run_page()
    run = engine_run(model, DEFAULT_PROMPT)
    logits = run.next_logits.astype(np.float64)
    probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    best = int(np.argmax(logits))
    assert model.tokenizer.id_to_token(best) == "Ġmat"
    assert f"**␣mat** ({probabilities[best]:.1%})" in page_text(at)
    bars = spec_ending(at, "dec-predictions")["data"][0]
    np.testing.assert_allclose(np.array(bars["x"], dtype=float), np.sort(probabilities)[::-1][:10], rtol=1e-5)


def test_picking_layer_2_head_5_shows_that_heads_weights(model):
    at = run_page()
    before = heatmap_z(spec_ending(at, "dec-step-weights"))
    at.slider(key="dec_layer").set_value(2).run()
    at.segmented_control(key="dec_head").set_value(5).run()
    assert not at.exception
    expected = engine_run(model, DEFAULT_PROMPT).layers[1].attention_weights[4]  # 0-based
    drawn = heatmap_z(spec_ending(at, "dec-step-weights"))
    causal = np.tril(np.ones_like(expected, dtype=bool))
    np.testing.assert_allclose(drawn[causal], expected[causal], rtol=1e-6)
    assert np.isnan(drawn[~causal]).all()  # the masked future: gaps
    assert not np.allclose(np.nan_to_num(before), np.nan_to_num(drawn))
    assert spec_ending(at, "dec-step-weights")["data"][0]["y"][:2] == ["0:The", "1:␣cat"]


def test_rotary_and_norm_steps_show_before_and_after(model):
    at = run_page(dec_stage="rotary")
    ids = chart_ids(at)
    assert any(i.endswith("dec-step-rotary-q") for i in ids) and any(i.endswith("dec-step-rotary-k") for i in ids)
    from attention_core.decoder.forward import layer_detail

    detail = layer_detail(engine_run(model, DEFAULT_PROMPT), 18)
    np.testing.assert_allclose(heatmap_z(spec_ending(at, "dec-step-rotary-q")), detail.q[6], rtol=1e-5, atol=1e-6)
    at = run_page(dec_stage="qkv")
    np.testing.assert_allclose(heatmap_z(spec_ending(at, "dec-step-qkv-q")), detail.q_before_rotary[6], rtol=1e-5,
                               atol=1e-6)
    at = run_page(dec_stage="embeddings")
    ids = chart_ids(at)
    assert any(i.endswith("dec-step-residual-x_query") for i in ids) and any(i.endswith("dec-step-x_query")
                                                                             for i in ids)


def test_chinese_prompt_tokens_are_readable_parts(model):
    at = run_page(lang="zh", dec_prompt="我爱自然语言处理。")
    table = at.dataframe[0].value  # the first table on the page: the tokens
    shown = list(table.iloc[:, 1])
    assert list(table.iloc[:, 0])[:3] == [0, 1, 2]
    assert shown[:5] == ["我(1/2)", "我(2/2)", "爱(1/3)", "爱(2/3)", "爱(3/3)"]
    assert not any("\ufffd" in token for token in shown)


def test_greedy_steps_append_the_most_likely_tokens(model):
    from attention_core.decoder.forward import encode_ids, run_decoder

    at = run_page(dec_steps=2)
    ids = model.tokenizer.encode(DEFAULT_PROMPT).ids
    for _ in range(2):  # independent greedy loop: argmax of the logits, rerun
        ids.append(int(np.argmax(run_decoder(model, encode_ids(model, ids)).next_logits)))
    expected = model.tokenizer.decode(ids[-2:])
    assert expected == " mat."
    assert "the **mat\\.**" in page_text(at)  # the prompt, a space, then the two new tokens in bold


def test_finder_button_opens_the_strongest_previous_token_head(model):
    from attention_core.decoder.finder import head_scores, repeated_random_ids
    from attention_core.decoder.forward import encode_ids, run_decoder

    run = run_decoder(model, encode_ids(model, repeated_random_ids(model.config.vocab_size)))
    layer, head, _ = head_scores(run.weights, len(run.encoding.ids) // 2).strongest("previous_token")
    at = run_page(dec_score="previous_token")
    at.button(key="dec-open-strongest").click().run()
    assert not at.exception
    assert (at.session_state["dec_layer"], at.session_state["dec_head"]) == (layer + 1, head + 1)
    assert at.segmented_control(key="dec_part").value == "one_head"
    drawn = heatmap_z(spec_ending(at, "dec-step-weights"))
    expected = engine_run(model, DEFAULT_PROMPT).layers[layer].attention_weights[head]
    causal = np.tril(np.ones_like(expected, dtype=bool))
    np.testing.assert_allclose(drawn[causal], expected[causal], rtol=1e-6)


def test_without_the_checkpoint_the_page_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(checkpoint_module, "locate_gguf", lambda: None)
    at = run_page()
    assert any("not installed" in info.value for info in at.info)
    assert any(checkpoint_module.INSTALL_COMMAND in code.value for code in at.code)
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_different_gguf_file_is_refused_by_name_and_hash_without_the_servers_folders(tmp_path, monkeypatch, lang):
    pytest.importorskip("gguf", reason=DECODER_MISSING)
    impostor = tmp_path / "srv-models" / checkpoint_module.GGUF_NAME
    impostor.parent.mkdir()
    impostor.write_bytes(b"GGUF" + bytes(1000))
    monkeypatch.setattr(checkpoint_module, "locate_gguf", lambda: impostor)
    at = run_page(lang=lang)
    [error] = [element.value for element in at.error]
    assert checkpoint_module.GGUF_SHA256 in error, "the expected hash is named"
    assert "srv-models" not in error and str(tmp_path) not in error
    assert any(checkpoint_module.INSTALL_COMMAND in code.value for code in at.code)
    assert not at.get("plotly_chart")


def test_an_unreadable_decoder_is_explained_and_its_message_kept_for_the_log(monkeypatch, caplog):
    import ui.cache

    def unreadable(path):
        raise ValueError("tensor data out of bounds in /srv/models/model.gguf")

    monkeypatch.setattr(checkpoint_module, "locate_gguf", lambda: "/srv/models/model.gguf")
    monkeypatch.setattr(ui.cache, "decoder_checkpoint", unreadable)
    at = run_page(lang="zh")
    assert [element.value for element in at.error] == [translate("decoder.error.other", "zh")]
    assert "/srv/models" not in page_text(at)
    assert "tensor data out of bounds" in caplog.text, "the server's log keeps the library's message"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_missing_reader_library_is_named_with_the_install_command(monkeypatch, lang):
    import ui.cache

    def without_gguf(path):
        raise ImportError("No module named 'gguf'", name="gguf")

    monkeypatch.setattr(checkpoint_module, "locate_gguf", lambda: "/srv/models/model.gguf")
    monkeypatch.setattr(ui.cache, "decoder_checkpoint", without_gguf)
    at = run_page(lang=lang)
    assert [element.value for element in at.error] == [translate("decoder.error.library", lang, library="gguf")]
    assert any(checkpoint_module.INSTALL_COMMAND in code.value for code in at.code)
