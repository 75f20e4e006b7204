"""Tests of attention_core.lessons.scaling: the measured numbers behind the "Why divide by √dk?" page.

Statistical tests use fixed seeds, so they are deterministic; their tolerances are still
chosen from the sampling error (explained beside each one) so that they would also pass
for other seeds, and fail if the sampling or the scaling were wrong.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attention_core.lessons.scaling
from attention_core.lessons.scaling import (
    attention_entropy,
    log_dk_steps,
    sample_attention_pair,
    sample_dot_products,
    scaling_sweep,
    softmax_jacobian,
)

SCALING_SOURCE = Path(attention_core.lessons.scaling.__file__)  # the module these tests imported
PACKAGE_PARENT = SCALING_SOURCE.parents[2]  # the directory that holds attention_core/


@pytest.fixture(scope="module")
def sweep_4_1024():
    """The defaults (m = 16 keys, S = 500 samples, seed 0) at a small and a large dk."""
    return scaling_sweep([4, 1024])


def reference_softmax(scores: np.ndarray) -> np.ndarray:
    """Textbook softmax of one score vector, written here independently of the engine."""
    exp_scores = np.exp(scores - scores.max())
    return exp_scores / exp_scores.sum()


# ---------------------------------------------------------------- dot products


# 4000 independent dot products per dk. For q · k = Σ qᵢkᵢ with standard-normal components
# the kurtosis is 3 + 6/dk, so the relative standard error of the sample std is
# ½·√((kurtosis − 1)/S): 2.2% at dk = 1, 1.5% at dk = 4, → 1.1% for large dk.
# Allowing 8% is at least 3.6 standard errors, yet catches a wrong variance (uniform
# components on [−1, 1] would give 0.58·√dk) or a missing/extra √dk.
STD_TOLERANCE = 0.08


@pytest.mark.parametrize("dk", [1, 4, 16, 64, 256, 1024])
def test_raw_dot_products_spread_like_sqrt_dk(dk):
    sample = sample_dot_products(dk, num_samples=4000, seed=1)
    assert sample.raw.shape == (4000,)
    assert np.std(sample.raw, ddof=1) == pytest.approx(np.sqrt(dk), rel=STD_TOLERANCE)


@pytest.mark.parametrize("dk", log_dk_steps(1024))
def test_scaled_dot_products_have_unit_spread_for_every_dk(dk):
    sample = sample_dot_products(dk, num_samples=4000, seed=2)
    assert np.std(sample.scaled, ddof=1) == pytest.approx(1.0, rel=STD_TOLERANCE)
    np.testing.assert_allclose(sample.scaled, sample.raw / np.sqrt(dk), rtol=1e-12)


def test_dot_products_reproducible_with_seed_and_differ_across_seeds():
    first, again, other = (sample_dot_products(64, seed=s) for s in (5, 5, 6))
    assert first.seed == 5 and first.dk == 64
    np.testing.assert_array_equal(first.raw, again.raw)
    np.testing.assert_array_equal(first.scaled, again.scaled)
    assert not np.allclose(first.raw, other.raw)


# ---------------------------------------------------------------- softmax Jacobian and entropy


@pytest.mark.parametrize("seed, spread", [(0, 1.0), (1, 3.0), (2, 10.0)])
def test_softmax_jacobian_matches_finite_differences(seed, spread):
    scores = spread * np.random.default_rng(seed).standard_normal(7)
    step = 1e-6
    finite_difference = np.empty((7, 7))
    for j in range(7):
        bump = np.zeros(7)
        bump[j] = step
        # column j: ∂p/∂sⱼ by central differences (error O(step²) ≈ 1e-12, rounding ≈ 1e-10)
        finite_difference[:, j] = (reference_softmax(scores + bump) - reference_softmax(scores - bump)) / (2 * step)
    jacobian = softmax_jacobian(reference_softmax(scores))
    assert jacobian.shape == (7, 7)
    np.testing.assert_allclose(jacobian, finite_difference, atol=1e-8)


def test_softmax_jacobian_rows_sum_to_zero_and_batches():
    rng = np.random.default_rng(3)
    weights = np.apply_along_axis(reference_softmax, -1, 4 * rng.standard_normal((2, 3, 5)))  # (2, 3, 5)
    jacobian = softmax_jacobian(weights)
    assert jacobian.shape == (2, 3, 5, 5)
    np.testing.assert_allclose(jacobian.sum(axis=-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(jacobian, np.swapaxes(jacobian, -1, -2))  # symmetric
    np.testing.assert_allclose(jacobian[1, 2], softmax_jacobian(weights[1, 2]))


def test_softmax_jacobian_vanishes_for_one_hot_weights():
    np.testing.assert_array_equal(softmax_jacobian(np.array([0.0, 1.0, 0.0])), np.zeros((3, 3)))


def test_attention_entropy_uniform_one_hot_and_batches():
    assert attention_entropy(np.full(8, 1 / 8)) == pytest.approx(np.log(8))
    with np.errstate(all="raise"):  # 0 · log 0 must be handled, not produce warnings or NaN
        assert attention_entropy(np.array([0.0, 1.0, 0.0])) == 0.0
    weights = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    np.testing.assert_allclose(attention_entropy(weights), [np.log(2), 1.5 * np.log(2)])


# ---------------------------------------------------------------- the sweep


def test_log_dk_steps():
    assert log_dk_steps() == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    assert log_dk_steps(1) == (1,)
    assert log_dk_steps(100) == (1, 2, 4, 8, 16, 32, 64)


def test_sweep_shapes_theory_line_and_read_only():
    dks = log_dk_steps(1024)
    sweep = scaling_sweep(dks, num_keys=8, num_samples=50, seed=3)
    assert (sweep.num_keys, sweep.num_samples, sweep.seed, sweep.temperature) == (8, 50, 3, 1.0)
    np.testing.assert_array_equal(sweep.dks, dks)
    np.testing.assert_allclose(sweep.theory_raw_std, np.sqrt(dks))
    assert sweep.uniform_entropy == pytest.approx(np.log(8))
    for field in dataclasses.fields(sweep):
        value = getattr(sweep, field.name)
        if isinstance(value, np.ndarray):
            assert value.shape == (len(dks),), field.name
            assert not value.flags.writeable, field.name
    assert np.all((sweep.max_weight_scaled >= 1 / 8) & (sweep.max_weight_scaled <= 1))
    assert np.all(sweep.entropy_unscaled <= sweep.uniform_entropy + 1e-9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sweep.seed = 4


def test_sweep_measured_std_follows_theory():
    # Each of the S = 500 queries meets m = 16 keys, so the 8000 dot products of one dk
    # share queries; the query's length |q|²/dk varies by √(2/dk) and dominates the error:
    # relative standard error of the std ≈ ½·√(2/dk)/√500 + 1% ≈ 2% at dk = 4 (smaller
    # above). 8% is 4 standard errors. (At dk = 1, 2 the error is 3-5%, hence not tested.)
    sweep = scaling_sweep([4, 16, 64, 256, 1024])
    np.testing.assert_allclose(sweep.raw_std, sweep.theory_raw_std, rtol=STD_TOLERANCE)
    np.testing.assert_allclose(sweep.scaled_std, 1.0, rtol=STD_TOLERANCE)


def test_unscaled_weights_become_one_hot_as_dk_grows(sweep_4_1024):
    small, large = 0, 1  # dk = 4, dk = 1024
    sweep = sweep_4_1024
    # Scores of std 32 among 16 keys: the top key usually wins by many units.
    assert sweep.max_weight_unscaled[large] > 0.9
    assert sweep.max_weight_unscaled[large] > sweep.max_weight_unscaled[small] + 0.3
    assert sweep.entropy_unscaled[large] < 0.25  # nats, against log 16 ≈ 2.77 for uniform
    assert sweep.entropy_unscaled[large] < sweep.entropy_unscaled[small] / 4


def test_scaled_weights_stay_put_as_dk_grows(sweep_4_1024):
    # The scaled scores have unit spread for every dk, so the weights' statistics agree up
    # to sampling error (standard error of each mean over 500 samples ≈ 0.005 for the max
    # weight and ≈ 0.01 nats for the entropy) and the slightly heavier tails at dk = 4.
    sweep = sweep_4_1024
    assert abs(sweep.max_weight_scaled[1] - sweep.max_weight_scaled[0]) < 0.04
    assert abs(sweep.entropy_scaled[1] - sweep.entropy_scaled[0]) < 0.1
    assert sweep.entropy_scaled[1] > 0.75 * sweep.uniform_entropy


def test_unscaled_softmax_gradient_vanishes_at_large_dk(sweep_4_1024):
    sweep = sweep_4_1024
    assert sweep.jacobian_norm_unscaled[1] < 0.3 * sweep.jacobian_norm_scaled[1]
    assert sweep.jacobian_norm_unscaled[1] < 0.5 * sweep.jacobian_norm_unscaled[0]
    assert sweep.jacobian_norm_scaled[1] == pytest.approx(sweep.jacobian_norm_scaled[0], rel=0.15)


def test_sweep_uses_the_same_samples_for_scaled_and_unscaled():
    # At dk = 1 and T = 1 both branches multiply by 1, so with shared samples they agree exactly.
    sweep = scaling_sweep([1, 64])
    assert sweep.max_weight_unscaled[0] == sweep.max_weight_scaled[0]
    assert sweep.entropy_unscaled[0] == sweep.entropy_scaled[0]
    assert sweep.raw_std[0] == sweep.scaled_std[0]
    pair = sample_attention_pair(64, num_keys=5, num_samples=20, seed=4, temperature=2.0)
    np.testing.assert_array_equal(pair.unscaled.q, pair.scaled.q)
    np.testing.assert_array_equal(pair.unscaled.k, pair.scaled.k)
    assert pair.unscaled.scale == 1.0
    assert pair.scaled.scale == pytest.approx(1 / (2.0 * 8.0))
    assert pair.scaled.weights.shape == (20, 1, 5)


def test_sweep_numbers_are_computed_from_the_engine_weights():
    sweep = scaling_sweep([16], num_keys=6, num_samples=40, seed=7)
    pair = sample_attention_pair(16, num_keys=6, num_samples=40, seed=7)
    for branch, trace in (("unscaled", pair.unscaled), ("scaled", pair.scaled)):
        p = trace.weights[:, 0, :].astype(np.float64)  # (S, m)
        entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
        # ‖diag(p) − p pᵀ‖²_F = Σ pᵢ² − 2 Σ pᵢ³ + (Σ pᵢ²)², expanded by hand
        squares = np.sum(p**2, axis=-1)
        jacobian_norm = np.sqrt(squares - 2 * np.sum(p**3, axis=-1) + squares**2)
        assert getattr(sweep, f"max_weight_{branch}")[0] == pytest.approx(p.max(axis=-1).mean(), rel=1e-12)
        assert getattr(sweep, f"entropy_{branch}")[0] == pytest.approx(entropy.mean(), rel=1e-9)
        assert getattr(sweep, f"jacobian_norm_{branch}")[0] == pytest.approx(jacobian_norm.mean(), rel=1e-9)
    assert sweep.raw_std[0] == pytest.approx(np.std(pair.unscaled.raw_scores, ddof=1, dtype=np.float64))


def test_sweep_reproducible_with_seed_and_differs_across_seeds():
    dks = [2, 32, 512]
    first, again, other = (scaling_sweep(dks, num_samples=100, seed=s) for s in (11, 11, 12))
    for field in dataclasses.fields(first):
        np.testing.assert_array_equal(getattr(first, field.name), getattr(again, field.name))
    assert not np.allclose(first.raw_std, other.raw_std)
    assert not np.allclose(first.entropy_unscaled, other.entropy_unscaled)


def test_samples_of_a_dk_do_not_depend_on_the_other_dks():
    full = scaling_sweep(log_dk_steps(64), num_samples=100)
    part = scaling_sweep([64, 4], num_samples=100)
    assert part.entropy_unscaled[0] == full.entropy_unscaled[-1]
    assert part.entropy_unscaled[1] == full.entropy_unscaled[2]


def test_a_sweep_measures_each_dk_as_a_sweep_of_that_dk_alone():
    """The sweep measures its dks on several threads: each dk's numbers must be its own."""
    dks = log_dk_steps(256)
    sweep = scaling_sweep(dks, num_keys=8, num_samples=60, seed=5, temperature=2.0)
    for index, dk in enumerate(dks):
        alone = scaling_sweep([dk], num_keys=8, num_samples=60, seed=5, temperature=2.0)
        for field in dataclasses.fields(sweep):
            value = getattr(sweep, field.name)
            if isinstance(value, np.ndarray) and field.name not in ("dks", "theory_raw_std"):
                assert value[index] == getattr(alone, field.name)[0], (dk, field.name)


def test_large_temperature_flattens_weights_to_uniform():
    dks = [4, 1024]
    plain = scaling_sweep(dks, num_samples=200)
    hot = scaling_sweep(dks, num_samples=200, temperature=1000.0)
    np.testing.assert_allclose(hot.entropy_scaled, hot.uniform_entropy, atol=1e-3)
    np.testing.assert_allclose(hot.max_weight_scaled, 1 / 16, atol=1e-3)
    # temperature only rescales the scaled branch's scores: std divides by T exactly,
    # and the unscaled branch is untouched
    np.testing.assert_allclose(hot.scaled_std, plain.scaled_std / 1000.0, rtol=1e-5)
    np.testing.assert_array_equal(hot.entropy_unscaled, plain.entropy_unscaled)
    cold = scaling_sweep(dks, num_samples=200, temperature=0.25)
    assert np.all(cold.max_weight_scaled > plain.max_weight_scaled + 0.2)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: sample_dot_products(0), "dk"),
        (lambda: sample_dot_products(-3), "dk"),
        (lambda: sample_dot_products(4, num_samples=1), "num_samples"),
        (lambda: sample_dot_products(2.5), "dk"),
        (lambda: scaling_sweep([4, 0]), "dk"),
        (lambda: scaling_sweep([]), "dks"),
        (lambda: scaling_sweep([4.5]), "dks"),
        (lambda: scaling_sweep([4], num_samples=1), "num_samples"),
        (lambda: scaling_sweep([4], num_keys=1), "num_keys"),
        (lambda: scaling_sweep([4], temperature=0.0), "temperature"),
        (lambda: scaling_sweep([4], temperature=-1.0), "temperature"),
        (lambda: scaling_sweep([4], temperature=float("nan")), "temperature"),
        (lambda: sample_attention_pair(0), "dk"),
        (lambda: log_dk_steps(0), "max_dk"),
        (lambda: softmax_jacobian(np.float64(1.0)), "weights"),
    ],
)
def test_invalid_arguments_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- dependencies


def test_source_imports_only_numpy_and_the_engine():
    tree = ast.parse(SCALING_SOURCE.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: must be the engine, attention_core.attention (..attention)
                assert node.module == "attention" and node.level == 2, ast.unparse(node)
                imported.add("attention_core")
            else:
                imported.add(node.module.split(".")[0])
    # __future__, dataclasses, os and concurrent (threads for the sweep) are the language's own;
    # everything else is numpy or the engine
    assert imported <= {"__future__", "concurrent", "dataclasses", "os", "numpy", "attention_core"}, imported


def test_importing_the_module_loads_nothing_beyond_the_engine():
    script = (
        "import sys, attention_core.attention\n"
        "before = set(sys.modules)\n"
        "import attention_core.lessons.scaling\n"
        "print(sorted({name.split('.')[0] for name in set(sys.modules) - before}))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_PARENT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=PACKAGE_PARENT, env=env, check=True
    )
    assert result.stdout.strip() == "['attention_core']"
