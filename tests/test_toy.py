"""The toy pipeline: tokens, embeddings, projections and what each control may change."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from attention_core import (
    MAX_TOKENS,
    InputError,
    MaskSpec,
    ToySettings,
    build_toy_trace,
    positional_encoding,
    token_embedding,
    token_labels,
    tokenize,
)
from attention_core.frames import matrix_frame
from attention_core.stages import MATRICES, STAGES
from attention_core.toy import sentence_segments


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The cat sat on the mat.", ["The", "cat", "sat", "on", "the", "mat", "."]),
        ("I don't know—really?!", ["I", "don't", "know", "—", "really", "?", "!"]),
        ("猫坐在垫子上。", ["猫", "坐", "在", "垫", "子", "上", "。"]),
        ("Hello 世界!", ["Hello", "世", "界", "!"]),
        ("ひらがな", ["ひ", "ら", "が", "な"]),
        ("  spaced\tout \n words ", ["spaced", "out", "words"]),
        ("café naïve", ["café", "naïve"]),
        ("e\u0301t\u0301e", ["e\u0301t\u0301e"]),  # combining accents stay on their letter
        ("👩\u200d💻 codes 👍🏽", ["👩\u200d💻", "codes", "👍🏽"]),  # joiner and skin tone stay together
        ("'quoted'", ["'", "quoted", "'"]),  # apostrophes only join letters to letters
        ("\u200b", []),  # a zero-width space alone is no token
        ("a\u200bb\x00c", ["a", "b", "c"]),  # invisible characters separate, and are dropped
        ("\u202eevil", ["evil"]),  # a direction override is not a token
        ("", []),
        ("   ", []),
    ],
)
def test_tokenize_follows_the_documented_rules(text, tokens):
    assert tokenize(text) == tokens


def test_tokenize_never_returns_empty_tokens():
    text = "a  b\u200d\u200d , ,\u0301 。 x\ufe0f"
    assert all(token and not token.isspace() for token in tokenize(text))


def test_token_labels_keep_repeated_tokens_apart():
    labels = token_labels(["the", "cat", "the"])
    assert labels == ["0:the", "1:cat", "2:the"]
    assert len(set(labels)) == 3


def test_embedding_is_fixed_per_token_and_seed():
    assert np.array_equal(token_embedding("cat", 8, seed=3), token_embedding("cat", 8, seed=3))
    assert not np.allclose(token_embedding("cat", 8, seed=3), token_embedding("cat", 8, seed=4))
    assert not np.allclose(token_embedding("cat", 8, seed=3), token_embedding("dog", 8, seed=3))
    # a wider embedding extends a narrower one
    assert np.array_equal(token_embedding("cat", 9)[:8], token_embedding("cat", 8))


def test_same_word_has_the_same_embedding_in_every_sentence():
    first = build_toy_trace(ToySettings(text="the cat sat"))
    second = build_toy_trace(ToySettings(text="a big cat ran"))
    assert np.array_equal(first.x_query[1], second.x_query[2])


def test_positional_encoding_matches_the_paper_formula():
    n, d_model = 5, 6
    encoding = positional_encoding(n, d_model)
    for pos in range(n):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert math.isclose(encoding[pos, 2 * i], math.sin(angle), abs_tol=1e-12)
            assert math.isclose(encoding[pos, 2 * i + 1], math.cos(angle), abs_tol=1e-12)


def test_positional_encoding_is_added_only_when_asked():
    plain = build_toy_trace(ToySettings(text="a b c"))
    positioned = build_toy_trace(ToySettings(text="a b c", positional=True))
    np.testing.assert_allclose(positioned.x_query - plain.x_query, positional_encoding(3, plain.settings.d_model))


def test_raising_dk_adds_a_column_and_keeps_the_others():
    small = build_toy_trace(ToySettings(dk=8))
    large = build_toy_trace(ToySettings(dk=9))
    for name in ("q", "k", "v"):
        before, after = small.matrix(name), large.matrix(name)
        assert after.shape[1] == before.shape[1] + 1
        np.testing.assert_allclose(after[:, :8], before, rtol=1e-12)
    np.testing.assert_array_equal(large.x_query, small.x_query)


def test_changing_the_mask_leaves_q_k_v_unchanged():
    unmasked = build_toy_trace(ToySettings())
    masked = build_toy_trace(ToySettings(mask=MaskSpec(causal=True, padding=(2,))))
    for name in ("x_query", "q", "k", "v", "raw_scores", "scaled_scores"):
        np.testing.assert_array_equal(masked.matrix(name), unmasked.matrix(name))
    assert not np.allclose(masked.attention.weights, unmasked.attention.weights)


def test_random_projection_is_x_times_w():
    trace = build_toy_trace(ToySettings(text="one two three four", dk=5, d_model=7, seed=11))
    np.testing.assert_allclose(trace.attention.q, trace.x_query @ trace.w_q)
    np.testing.assert_allclose(trace.attention.k, trace.x_key @ trace.w_k)
    np.testing.assert_allclose(trace.attention.v, trace.x_key @ trace.w_v)
    assert trace.w_q.shape == (7, 5)


def test_projection_columns_have_variance_one_over_d_model():
    """Entries N(0, 1/d_model) keep Q's components at unit variance (what √dk corrects)."""
    trace = build_toy_trace(ToySettings(text="a b", dk=512, d_model=512))
    assert abs(trace.w_q.var() * 512 - 1) < 0.02


def test_identity_mode_makes_repeated_tokens_attend_to_each_other():
    trace = build_toy_trace(ToySettings(text="The cat saw the dog", projection="identity", dk=32))
    assert trace.w_q is None
    np.testing.assert_array_equal(trace.attention.q, trace.x_query)
    np.testing.assert_array_equal(trace.attention.k, trace.attention.v)
    weights = trace.attention.weights
    # "The" (0) and "the" (3) share an embedding, so each gives the other as much weight as itself
    assert math.isclose(weights[0, 3], weights[0, 0], rel_tol=1e-9)
    assert weights[0, 3] > weights[0, 1] and weights[0, 3] > weights[0, 4]


def test_cross_attention_takes_queries_from_the_second_sentence():
    trace = build_toy_trace(ToySettings(text="The cat sat on the mat.", query_text="猫坐在垫子上。"))
    assert trace.is_cross_attention
    assert trace.attention.weights.shape == (7, 7)
    assert trace.query_tokens[0] == "猫" and trace.key_tokens[1] == "cat"
    trace = build_toy_trace(ToySettings(text="a b c d e", query_text="x y"))
    assert trace.attention.weights.shape == (2, 5)
    assert trace.axis_labels("weights") == (["0:x", "1:y"], ["0:a", "1:b", "2:c", "3:d", "4:e"])


@pytest.mark.parametrize(
    ("settings", "code"),
    [
        (ToySettings(text=""), "empty_keys"),
        (ToySettings(text=" \n\t "), "empty_keys"),
        (ToySettings(text="alone"), "single_token"),
        (ToySettings(text="a b", query_text="   "), None),  # blank query text means self-attention
        (ToySettings(text="", query_text="x y"), "empty_keys"),
        (ToySettings(dk=0), "dimension"),
        (ToySettings(d_model=513), "dimension"),
    ],
)
def test_input_the_user_must_fix_raises_input_error_with_a_code(settings, code):
    if code is None:
        assert build_toy_trace(settings).attention.weights.shape == (2, 2)
        return
    with pytest.raises(InputError) as problem:
        build_toy_trace(settings)
    assert problem.value.code == code


def test_a_single_query_token_is_fine_in_cross_attention():
    trace = build_toy_trace(ToySettings(text="a b c", query_text="x"))
    assert trace.attention.weights.shape == (1, 3)


def test_long_input_is_cut_to_the_limit_and_says_how_much_was_dropped():
    text = " ".join(f"w{i}" for i in range(MAX_TOKENS + 10))
    trace = build_toy_trace(ToySettings(text=text))
    assert len(trace.key_tokens) == MAX_TOKENS
    assert trace.dropped_tokens == 10
    assert trace.key_tokens[-1] == f"w{MAX_TOKENS - 1}"


def test_mask_spec_combines_its_parts_with_and():
    tokens = ["a", "b", ".", "c", "d"]
    mask = MaskSpec(causal=True, same_sentence=True, padding=(0,)).build(tokens, tokens)
    for i in range(5):
        for j in range(5):
            same_sentence = (i < 3) == (j < 3)
            assert mask[i, j] == (j <= i and same_sentence and j != 0)
    assert MaskSpec().build(tokens, tokens) is None
    assert MaskSpec().is_empty and not MaskSpec(window=2).is_empty


def test_custom_mask_of_the_wrong_shape_is_an_input_error():
    with pytest.raises(InputError) as problem:
        MaskSpec(custom=((True, False),)).build(["a", "b", "c"], ["a", "b", "c"])
    assert problem.value.code == "custom_mask_shape"


def test_sentence_segments_split_after_sentence_ends():
    assert sentence_segments(["I", "ran", ".", "You", "too", "!", "ok"]) == [0, 0, 0, 1, 1, 1, 2]
    assert sentence_segments(["猫", "。", "狗", "！"]) == [0, 0, 1, 1]


def test_every_stage_names_recorded_matrices():
    trace = build_toy_trace(ToySettings())
    for stage in STAGES:
        for name in stage.matrices:
            assert name in MATRICES
            rows, columns = trace.axis_labels(name)
            assert trace.matrix(name).shape == (len(rows), len(columns))


def test_matrix_frame_is_labelled_by_tokens_and_holds_the_record():
    trace = build_toy_trace(ToySettings(text="the cat the", mask=MaskSpec(causal=True)))
    frame = matrix_frame(trace, "masked_scores")
    assert list(frame.index) == ["0:the", "1:cat", "2:the"]
    assert list(frame.columns) == ["0:the", "1:cat", "2:the"]
    np.testing.assert_array_equal(frame.to_numpy(), trace.attention.masked_scores)
    assert frame.iloc[0, 1] == -np.inf
    assert list(matrix_frame(trace, "q").columns) == [f"d{t}" for t in range(trace.settings.dk)]


def test_settings_are_hashable_cache_keys():
    first, second = ToySettings(mask=MaskSpec(padding=(1,))), ToySettings(mask=MaskSpec(padding=(1,)))
    assert hash(first) == hash(second) and first == second
    assert replace(first, dk=9) != first
