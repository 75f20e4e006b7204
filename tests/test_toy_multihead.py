"""The toy multi-head pipeline against references written out by hand.

Heads are checked against `scaled_dot_product_attention` run on the column blocks of the
projections, and against the loop-by-loop `tests/reference.py`; the concatenation and
the output against `multi_head_reference`; the embeddings against the paper's formulas.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import attention_reference, multi_head_reference

from attention_core import (
    MAX_DIM,
    InputError,
    MaskSpec,
    ToySettings,
    build_toy_trace,
    scaled_dot_product_attention,
    token_embedding,
    tokenize,
)
from attention_core.toy_multihead import (
    D_MODEL_CHOICES,
    HEADS_ERROR,
    MAX_HEADS,
    build_toy_multihead,
    clamp_heads,
    head_choices,
    head_size,
    head_trace,
)

STAGE_FIELDS = ("q", "k", "v", "raw_scores", "scaled_scores", "mask", "masked_scores", "weights", "output")
CROSS = ToySettings(query_text="猫坐在垫子上。")  # n = 7 queries, m = 11 keys
CAUSAL = ToySettings(mask=MaskSpec(causal=True))
PADDED = ToySettings(text="I saw a cat . <pad> <pad>", mask=MaskSpec(padding=(5, 6, 7, 8)))


def _sinusoid_by_hand(n: int, d_model: int) -> np.ndarray:
    """Paper §3.5, one entry at a time."""
    pe = np.zeros((n, d_model))
    for pos in range(n):
        for column in range(d_model):
            angle = pos / 10000 ** (2 * (column // 2) / d_model)
            pe[pos, column] = math.sin(angle) if column % 2 == 0 else math.cos(angle)
    return pe


def _mask_of(settings: ToySettings, trace) -> np.ndarray | None:
    return settings.mask.build(list(trace.query_tokens), list(trace.key_tokens))


# ---------------------------------------------------------------- each head is one attention


@pytest.mark.parametrize("settings", [ToySettings(), CROSS, CAUSAL, PADDED], ids=["self", "cross", "causal", "padded"])
@pytest.mark.parametrize(("d_model", "num_heads"), [(16, 4), (8, 8), (32, 1), (64, 8)])
def test_each_head_is_attention_on_its_column_block(settings, d_model, num_heads):
    trace = build_toy_multihead(settings, d_model, num_heads)
    size = d_model // num_heads
    mask = _mask_of(settings, trace)
    for head in range(num_heads):
        block = slice(head * size, (head + 1) * size)
        q = trace.x_query @ trace.w_q[:, block]
        k = trace.x_key @ trace.w_k[:, block]
        v = trace.x_key @ trace.w_v[:, block]
        by_hand = scaled_dot_product_attention(q, k, v, mask=mask)
        recorded = head_trace(trace, head).attention
        for name in STAGE_FIELDS:
            np.testing.assert_allclose(recorded.stage(name), by_hand.stage(name), err_msg=f"head {head}: {name}")
        np.testing.assert_array_equal(recorded.fully_masked_rows, by_hand.fully_masked_rows)
        assert recorded.scale == pytest.approx(1 / math.sqrt(size))


@pytest.mark.parametrize("settings", [ToySettings(), CROSS, CAUSAL], ids=["self", "cross", "causal"])
def test_heads_concat_and_output_match_the_loop_reference(settings):
    trace = build_toy_multihead(settings, 16, 4)
    inputs = (trace.x_query, trace.x_key, trace.x_key)
    projections = (trace.w_q, trace.w_k, trace.w_v, trace.w_o)
    expected = multi_head_reference(*inputs, *projections, 4, mask=_mask_of(settings, trace))
    for head, reference in enumerate(expected["heads"]):
        recorded = head_trace(trace, head).attention
        for name in ("q", "k", "v", "raw_scores", "scaled_scores", "weights", "output"):
            np.testing.assert_allclose(recorded.stage(name), reference[name], atol=1e-12, err_msg=f"{head}: {name}")
    np.testing.assert_allclose(trace.attention.concat, expected["concat"], atol=1e-12)
    np.testing.assert_allclose(trace.attention.output, expected["output"], atol=1e-12)


def test_one_head_matches_the_single_attention_reference_with_loops():
    trace = build_toy_multihead(CAUSAL, 8, 2)
    head = head_trace(trace, 1)
    expected = attention_reference(head.attention.q, head.attention.k, head.attention.v, mask=head.attention.mask)
    np.testing.assert_allclose(head.attention.weights, expected["weights"], atol=1e-12)
    np.testing.assert_allclose(head.attention.output, expected["output"], atol=1e-12)


def test_head_one_is_the_single_head_trace_of_the_step_through_page():
    settings = ToySettings(positional=True, seed=3)
    trace = build_toy_multihead(settings, 32, 4)
    single = build_toy_trace(ToySettings(positional=True, seed=3, d_model=32, dk=8))
    first = head_trace(trace, 0)
    np.testing.assert_allclose(first.w_q, single.w_q)
    np.testing.assert_allclose(first.attention.weights, single.attention.weights)
    np.testing.assert_allclose(first.attention.output, single.attention.output)


# ---------------------------------------------------------------- inputs and records


def test_embeddings_are_the_token_embeddings_plus_the_sinusoids():
    settings = ToySettings(text="the cat the mat", positional=True, seed=7)
    trace = build_toy_multihead(settings, 16, 2)
    expected = np.stack([token_embedding(token, 16, 7) for token in tokenize(settings.text)])
    np.testing.assert_allclose(trace.x_key, expected + _sinusoid_by_hand(4, 16), atol=1e-12)
    assert trace.x_query is trace.x_key  # self-attention: one matrix


def test_projections_have_the_documented_shapes_and_fan_in_variance():
    trace = build_toy_multihead(ToySettings(), 512, 8)
    for matrix in (trace.w_q, trace.w_k, trace.w_v, trace.w_o):
        assert matrix.shape == (512, 512)
        sample_variance = float(np.mean(matrix**2))
        assert sample_variance == pytest.approx(1 / 512, rel=0.02)  # 262 144 draws: ≈0.3 % noise
    assert trace.attention.concat.shape == (trace.x_query.shape[0], 512)
    assert trace.attention.output.shape == (trace.x_query.shape[0], 512)


def test_the_number_of_heads_only_regroups_the_same_projection_columns():
    two, eight = build_toy_multihead(ToySettings(), 64, 2), build_toy_multihead(ToySettings(), 64, 8)
    for name in ("w_q", "w_k", "w_v", "w_o", "x_query"):
        np.testing.assert_array_equal(getattr(two, name), getattr(eight, name))
    assert not np.allclose(two.attention.output, eight.attention.output)


def test_same_seed_same_trace_other_seed_other_matrices():
    first, again = build_toy_multihead(ToySettings(seed=5), 32, 4), build_toy_multihead(ToySettings(seed=5), 32, 4)
    other = build_toy_multihead(ToySettings(seed=6), 32, 4)
    for name in ("x_query", "w_q", "w_k", "w_v", "w_o"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
        assert not np.allclose(getattr(first, name), getattr(other, name)), name
    np.testing.assert_array_equal(first.attention.output, again.attention.output)
    np.testing.assert_array_equal(first.attention.heads.weights, again.attention.heads.weights)


def test_cross_attention_has_n_queries_and_m_keys():
    trace = build_toy_multihead(CROSS, 16, 4)
    n, m = len(tokenize(CROSS.query_text)), len(tokenize(CROSS.text))
    assert n != m
    assert trace.is_cross_attention
    assert trace.attention.heads.weights.shape == (4, n, m)
    assert head_trace(trace, 3).matrix("weights").shape == (n, m)
    assert head_trace(trace, 3).axis_labels("weights") == (trace.query_labels, trace.key_labels)
    assert trace.attention.output.shape == (n, 16)


def test_masks_reach_every_head():
    trace = build_toy_multihead(CAUSAL, 16, 4)
    upper = np.triu(np.ones(trace.attention.heads.weights.shape[1:], dtype=bool), k=1)
    for head in range(4):
        assert np.all(trace.attention.heads.weights[head][upper] == 0)
        np.testing.assert_allclose(trace.attention.heads.weights[head].sum(axis=-1), 1.0)


def test_head_trace_is_a_read_only_view_with_the_heads_projections():
    trace = build_toy_multihead(ToySettings(), 16, 4)
    head = head_trace(trace, 2)
    assert head.settings.dk == 4 and head.settings.d_model == 16
    np.testing.assert_array_equal(head.w_q, trace.w_q[:, 8:12])
    np.testing.assert_array_equal(head.w_v, trace.w_v[:, 8:12])
    for name in (*STAGE_FIELDS, "fully_masked_rows"):
        array = getattr(head.attention, name)
        with pytest.raises(ValueError, match="read-only"):
            array[(0,) * array.ndim] = 1
    for bad in (-1, 4):
        with pytest.raises(IndexError):
            head_trace(trace, bad)


# ---------------------------------------------------------------- sizes and input errors


@pytest.mark.parametrize(("d_model", "num_heads"), [(64, 3), (16, 0), (8, 16), (512, 7)])
def test_a_number_of_heads_that_does_not_divide_d_model_is_refused(d_model, num_heads):
    with pytest.raises(InputError) as problem:
        build_toy_multihead(ToySettings(), d_model, num_heads)
    assert problem.value.code == HEADS_ERROR
    assert problem.value.details == {"d_model": d_model, "num_heads": num_heads}
    with pytest.raises(InputError):
        head_size(d_model, num_heads)


@pytest.mark.parametrize("d_model", [0, MAX_DIM + 1])
def test_d_model_out_of_range_is_a_dimension_error(d_model):
    with pytest.raises(InputError) as problem:
        build_toy_multihead(ToySettings(), d_model, 1)
    assert problem.value.code == "dimension"


@pytest.mark.parametrize("settings", [ToySettings(text=""), ToySettings(text="   "), ToySettings(text="cat")])
def test_text_errors_use_the_single_head_codes(settings):
    with pytest.raises(InputError) as single:
        build_toy_trace(settings)
    with pytest.raises(InputError) as multi:
        build_toy_multihead(settings, 16, 2)
    assert multi.value.code == single.value.code
    assert multi.value.details == single.value.details


def test_head_choices_are_exactly_the_small_divisors():
    for d_model in (*D_MODEL_CHOICES, 12, 30, 1):
        expected = [h for h in range(1, MAX_HEADS + 1) if h <= d_model and (d_model // h) * h == d_model]
        assert list(head_choices(d_model)) == expected
        for h in head_choices(d_model):
            assert head_size(d_model, h) * h == d_model


def test_a_stale_number_of_heads_is_clamped_to_an_allowed_one():
    assert clamp_heads(8, 64) == 8
    assert clamp_heads(16, 8) == 8  # 16 heads do not fit d_model = 8
    assert clamp_heads(5, 64) == 4  # the largest divisor below
    assert clamp_heads(None, 64) == 1
    for d_model in D_MODEL_CHOICES:
        for stale in range(0, 40):
            assert clamp_heads(stale, d_model) in head_choices(d_model)
