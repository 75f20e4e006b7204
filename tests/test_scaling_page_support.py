"""Tests of the helpers that attention_core.lessons.scaling offers the "Why √dk" page.

softmax_scale (the temperature as a rescaling), dot_product_spread (measured spread and
the theory beside it), sweep_index and the paper's sizes; each against arithmetic done
here by hand.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pytest

from attention_core import scaled_dot_product_attention
from attention_core.lessons.scaling import (
    PAPER_D_MODEL,
    PAPER_DK,
    PAPER_HEADS,
    dot_product_spread,
    log_dk_steps,
    sample_dot_products,
    scaling_sweep,
    softmax_scale,
    sweep_index,
)


def reference_softmax(scores: np.ndarray) -> np.ndarray:
    """Textbook softmax of one row, with explicit loops."""
    largest = max(scores)
    exps = [math.exp(score - largest) for score in scores]
    total = sum(exps)
    return np.array([value / total for value in exps])


def test_paper_sizes():
    # §3.2.2: "h = 8 parallel attention layers … dk = dv = dmodel/h = 64"
    assert (PAPER_D_MODEL, PAPER_HEADS) == (512, 8)
    assert PAPER_DK == 64


@pytest.mark.parametrize("dk", [1, 2, 3, 8, 63, 64, 100, 512, 1024])
@pytest.mark.parametrize("temperature", [0.25, 0.5, 1.0, 1.5, 2.0, 4.0])
def test_softmax_scale_is_one_over_temperature_times_root_dk(dk, temperature):
    assert softmax_scale(dk, temperature) == pytest.approx(1 / (temperature * math.sqrt(dk)), rel=1e-15)
    assert softmax_scale(dk, temperature, scaled=False) == pytest.approx(1 / temperature, rel=1e-15)


@pytest.mark.parametrize("dk", range(1, 1025))
def test_softmax_scale_at_temperature_one_is_the_engine_default_bit_for_bit(dk):
    # the page's "with scaling" heatmap must be the very same numbers as every other page's
    q = np.zeros((1, dk))
    default = scaled_dot_product_attention(q, q, np.zeros((1, 1))).scale
    assert softmax_scale(dk) == default
    assert softmax_scale(dk, scaled=False) == 1.0


@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_temperature_scale_gives_softmax_of_scores_over_root_dk_over_t(temperature):
    dk = 16
    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((3, dk)), rng.standard_normal((5, dk))
    weights = scaled_dot_product_attention(q, k, np.zeros((5, 1)), scale=softmax_scale(dk, temperature)).weights
    for i in range(3):
        scores = [sum(q[i, d] * k[j, d] for d in range(dk)) / math.sqrt(dk) / temperature for j in range(5)]
        np.testing.assert_allclose(weights[i], reference_softmax(scores), rtol=1e-12)


def test_higher_temperature_flattens_the_weights():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((4, 32)), rng.standard_normal((9, 32))
    largest = [
        scaled_dot_product_attention(q, k, np.zeros((9, 1)), scale=softmax_scale(32, temperature)).weights.max(axis=-1)
        for temperature in (0.25, 1.0, 4.0)
    ]
    assert np.all(largest[0] > largest[1]) and np.all(largest[1] > largest[2])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: softmax_scale(0), "dk"),
        (lambda: softmax_scale(2.5), "dk"),
        (lambda: softmax_scale(8, 0.0), "temperature"),
        (lambda: softmax_scale(8, -1.0), "temperature"),
        (lambda: softmax_scale(8, float("inf")), "temperature"),
    ],
)
def test_softmax_scale_rejects_invalid_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("dk, seed", [(1, 0), (7, 3), (64, 5), (1024, 9)])
def test_dot_product_spread_matches_the_sample_std_by_hand(dk, seed):
    sample = sample_dot_products(dk, num_samples=300, seed=seed)
    spread = dot_product_spread(sample)
    assert spread.dk == dk
    assert spread.raw_std == pytest.approx(statistics.stdev(sample.raw.tolist()), rel=1e-10)
    assert spread.scaled_std == pytest.approx(statistics.stdev(sample.scaled.tolist()), rel=1e-10)
    assert spread.theory_raw_std == math.sqrt(dk)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spread.raw_std = 0.0


def test_dot_product_spread_uses_the_samples_not_the_formula():
    # two seeds give two different measured spreads around the same theory
    first, second = (dot_product_spread(sample_dot_products(256, num_samples=200, seed=s)) for s in (1, 2))
    assert first.theory_raw_std == second.theory_raw_std == 16.0
    assert first.raw_std != second.raw_std


def test_sweep_index_finds_each_measured_dk():
    dks = log_dk_steps(1024)
    sweep = scaling_sweep(dks, num_keys=4, num_samples=3)
    for position, dk in enumerate(dks):
        assert sweep_index(sweep, dk) == position
    unordered = scaling_sweep([64, 4, 64], num_keys=4, num_samples=3)
    assert sweep_index(unordered, 4) == 1
    assert sweep_index(unordered, 64) == 0
    with pytest.raises(ValueError, match="dk = 3"):
        sweep_index(sweep, 3)
