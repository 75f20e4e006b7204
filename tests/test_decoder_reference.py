"""The NumPy decoder against Hugging Face transformers on PyTorch, reading the same GGUF file.

The reference numbers (tests/fixtures/decoder_reference.{json,npz}) were written once by
scripts/make_decoder_fixture.py in a separate environment; nothing here imports torch or
transformers. Tests that need the checkpoint skip, saying why, when it is not installed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from installed_models import DECODER_MISSING, installed_decoder

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "decoder_reference"
REFERENCE = json.loads(FIXTURE.with_suffix(".json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def arrays():
    with np.load(FIXTURE.with_suffix(".npz")) as data:
        return {name: data[name] for name in data.files}


@pytest.fixture(scope="module")
def model():
    return installed_decoder()


@pytest.fixture(scope="module")
def runs(model):
    from attention_core.decoder.forward import encode_ids, run_decoder

    return [run_decoder(model, encode_ids(model, prompt["ids"])) for prompt in REFERENCE["prompts"]]


def test_fixture_covers_the_prompts_the_issue_asks_for(arrays):
    texts = [prompt["text"] for prompt in REFERENCE["prompts"]]
    assert len(texts) >= 8
    assert any(re.search(r"[\u4e00-\u9fff]", text) for text in texts)  # Chinese
    assert any(ord(char) > 0xFFFF for text in texts for char in text)  # emoji
    assert any("def " in text for text in texts)  # code
    repeated = next(p["ids"] for p in REFERENCE["prompts"] if p["kind"] == "ids")
    assert repeated[: len(repeated) // 2] == repeated[len(repeated) // 2 :]
    with_attention = [i for i, p in enumerate(REFERENCE["prompts"]) if p["has_attention"]]
    assert len(with_attention) == 2
    for index in with_attention:
        length = len(REFERENCE["prompts"][index]["ids"])
        assert arrays[f"attention_{index}"].shape == (30, 9, length, length)


def test_checkpoint_is_the_file_the_reference_read(model):
    assert model.sha256 == REFERENCE["gguf_sha256"]
    config = model.config
    assert (config.num_layers, config.num_heads, config.num_kv_heads, config.d_model, config.dk) == (30, 9, 3, 576, 64)
    assert (config.d_ff, config.vocab_size, config.rope_base) == (1536, 49152, 100_000.0)


@pytest.mark.parametrize("index", [i for i, p in enumerate(REFERENCE["prompts"]) if p["kind"] == "text"])
def test_token_ids_equal_the_references(model, index):
    from attention_core.decoder.forward import encode_prompt

    prompt = REFERENCE["prompts"][index]
    encoding = encode_prompt(model, prompt["text"])
    assert encoding.ids.tolist() == prompt["ids"]
    assert list(encoding.tokens) == prompt["tokens"]


@pytest.mark.parametrize("index", range(len(REFERENCE["prompts"])))
def test_final_hidden_states_and_top5_equal_the_references(runs, arrays, index):
    run, prompt = runs[index], REFERENCE["prompts"][index]
    reference = arrays[f"hidden_{index}"]  # (L, 576)
    # 1e-4, relative to each value's size: the residual stream reaches about 50 here, where
    # float32 itself resolves only about 4e-6, and 30 layers add up such differences.
    np.testing.assert_allclose(run.final_hidden, reference, rtol=1e-5, atol=1e-4)
    top5 = np.argsort(-run.next_logits, kind="stable")[:5].tolist()
    assert top5 == prompt["top5_ids"]
    np.testing.assert_allclose(run.next_logits[top5], prompt["top5_logits"], atol=1e-3)


@pytest.mark.parametrize("index", [i for i, p in enumerate(REFERENCE["prompts"]) if p["has_attention"]])
def test_every_layer_and_head_attention_within_1e4_of_the_reference(runs, arrays, index):
    reference = arrays[f"attention_{index}"]  # (30, 9, L, L)
    np.testing.assert_allclose(runs[index].weights, reference, rtol=0, atol=1e-4)


def test_layer_detail_recomputes_exactly_what_the_forward_pass_recorded(runs):
    from attention_core.decoder.forward import layer_detail

    run = runs[0]
    for layer in (0, 18, 29):
        detail = layer_detail(run, layer)
        assert np.array_equal(detail.attention.weights, run.layers[layer].attention_weights)
        assert not detail.attention.mask[0][0, 1] and detail.attention.mask[0][1, 0]  # causal


def test_head_view_is_that_heads_slice_with_its_shared_key_value_head(runs, arrays):
    from attention_core.decoder.heads import head_views

    run = runs[0]
    views = head_views(run, 18, 7)
    np.testing.assert_allclose(views.main.attention.weights, arrays["attention_0"][18, 7], atol=1e-4)
    assert views.main.kv_head == 2
    detail_k = views.main.attention.k
    np.testing.assert_array_equal(detail_k, head_views(run, 18, 6).main.attention.k)  # heads 7–9 share K
    assert not np.array_equal(detail_k, head_views(run, 18, 5).main.attention.k)
    # rotary keeps each row's length: before and after differ, their norms do not
    before, after = views.before_rotary.attention.q, views.main.attention.q
    assert not np.allclose(before[3:], after[3:])
    np.testing.assert_allclose(np.linalg.norm(before, axis=1), np.linalg.norm(after, axis=1), rtol=1e-4)


def test_chinese_tokens_are_readable(runs):
    shown = runs[1].encoding.shown
    assert "\ufffd" not in "".join(shown)
    assert shown[:2] == ("我(1/2)", "我(2/2)")
    pieces = re.findall(r"(.)(?:\((\d+)/\d+\))?", "".join(shown))  # (character, part number or "")
    assert "".join(char for char, part in pieces if part in ("", "1")) == REFERENCE["prompts"][1]["text"]


def test_a_different_file_is_refused_by_its_sha256(tmp_path):
    pytest.importorskip("gguf", reason=DECODER_MISSING)
    from attention_core.decoder.checkpoint import CheckpointError, load_decoder

    fake = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    fake.write_bytes(b"GGUF not really")
    with pytest.raises(CheckpointError) as problem:
        load_decoder(fake)
    assert problem.value.code == "sha256_mismatch"
    with pytest.raises(CheckpointError) as problem:
        load_decoder(tmp_path / "absent.gguf")
    assert problem.value.code == "missing_file"


def test_the_decoder_never_imports_torch_or_transformers():
    check = (
        "import sys, attention_core.decoder as d\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers')]\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
