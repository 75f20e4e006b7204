"""Why divide by √dk? Measured numbers for the page of that name (paper §3.2.1, footnote 4).

    q · k = Σᵢ qᵢ kᵢ,  with qᵢ, kᵢ independent, mean 0, variance 1  ⇒  Var(q · k) = dk

The paper's argument: dot products of random vectors grow like √dk, so for large dk the
softmax sees scores tens of units apart, puts nearly all weight on one key, and its
derivative (the Jacobian diag(p) − p pᵀ) almost vanishes, so little gradient flows back.
Dividing by √dk brings the scores' standard deviation back to 1 whatever dk is (they stay
centred on 0).

Every number here is *measured*: queries and keys are drawn with a given seed and the
weights come from `scaled_dot_product_attention` (``scale=1.0`` for "unscaled",
``scale=None``, i.e. 1/√dk, for "scaled"). The one exception is
`ScalingSweep.theory_raw_std` (= √dk), which is the theory line drawn beside the
measurements and is labelled as such.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..attention import AttentionTrace, scaled_dot_product_attention

__all__ = [
    "KEY_COUNTS",
    "PAPER_DK",
    "PAPER_D_MODEL",
    "PAPER_HEADS",
    "TEMPERATURES",
    "AttentionPair",
    "DotProductSample",
    "DotProductSpread",
    "ScalingSweep",
    "SelfDiagonal",
    "attention_entropy",
    "dot_product_spread",
    "log_dk_steps",
    "sample_attention_pair",
    "sample_dot_products",
    "scaling_sweep",
    "self_diagonal",
    "softmax_jacobian",
    "softmax_scale",
    "sweep_index",
]

PAPER_D_MODEL = 512
"""The base model's width d_model (paper §3.1, Table 3)."""
PAPER_HEADS = 8
"""The base model's number of attention heads h (paper §3.2.2)."""
PAPER_DK = PAPER_D_MODEL // PAPER_HEADS
"""dk = d_model / h = 512 / 8 = 64: each head's query/key size (paper §3.2.2), not 512."""
TEMPERATURES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
"""Softmax temperatures the √dk lab offers (1 = the paper's scaling)."""
KEY_COUNTS = (4, 8, 16, 32)
"""Keys per row the √dk lab's experiments can use."""


# ---------------------------------------------------------------- validation helpers


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}; got {value}")
    return int(value)


def _check_temperature(temperature) -> float:
    temperature = float(temperature)
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a positive finite number; got {temperature}")
    return temperature


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


# ---------------------------------------------------------------- one dot product at a time


@dataclass(frozen=True, eq=False)
class DotProductSample:
    """S dot products of random query and key vectors with unit-variance components."""

    dk: int
    """Size of the query and key vectors."""
    raw: np.ndarray
    """(S,): q · k for S independent pairs; its spread grows like √dk."""
    scaled: np.ndarray
    """(S,): q · k / √dk, the same pairs after the paper's scaling; spread ≈ 1 for any dk."""
    seed: int
    """Seed given to np.random.default_rng; the same seed gives the same numbers."""


def sample_dot_products(dk: int, num_samples: int = 4000, seed: int = 0) -> DotProductSample:
    """Draw S query/key pairs with standard-normal components and record q · k and q · k / √dk.

    The dot products are the engine's raw and scaled scores (one query against one key,
    with a leading sample axis), so the page shows exactly what attention computes.
    """
    dk = _check_int("dk", dk, 1)
    num_samples = _check_int("num_samples", num_samples, 2)
    seed = _check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((num_samples, 1, dk))  # (S, 1, dk)
    k = rng.standard_normal((num_samples, 1, dk))  # (S, 1, dk)
    no_values = np.zeros((1, 1, 1))  # (1, 1, 1): values do not affect the scores
    trace = scaled_dot_product_attention(q, k, no_values)  # scale=None: 1/√dk
    return DotProductSample(
        dk=dk,
        raw=trace.raw_scores[:, 0, 0],  # (S,)
        scaled=trace.scaled_scores[:, 0, 0],  # (S,)
        seed=seed,
    )


# ---------------------------------------------------------------- what softmax does with the scores


def softmax_jacobian(weights) -> np.ndarray:
    """Derivative of softmax with respect to its input scores, J = diag(p) − p pᵀ.

    weights: softmax output p, (..., m). Returns J, (..., m, m), with
    J[..., i, j] = ∂pᵢ/∂sⱼ. J is symmetric and each row sums to 0 (adding a constant to
    every score changes nothing). When p is nearly one-hot, every entry of J is nearly 0:
    that is the "extremely small gradients" of the paper's footnote 4.
    """
    p = np.asarray(weights, dtype=np.float64)
    if p.ndim < 1 or p.shape[-1] == 0:
        raise ValueError(f"weights must have shape (..., m) with m ≥ 1; got {p.shape}")
    jacobian = -p[..., :, None] * p[..., None, :]  # (..., m, m): −p pᵀ
    diagonal = np.arange(p.shape[-1])
    jacobian[..., diagonal, diagonal] += p  # (..., m): + diag(p)
    return jacobian


def attention_entropy(weights) -> np.ndarray:
    """Entropy of each row of weights in nats, (..., m) → (...), with 0 · log 0 = 0.

    log m for uniform weights (attend to everything), 0 for one-hot (attend to one key).
    """
    p = np.asarray(weights, dtype=np.float64)
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)  # (..., m), 0 where p = 0
    return -np.sum(p * log_p, axis=-1)  # (...)


@dataclass(frozen=True, eq=False)
class AttentionPair:
    """The same queries and keys through attention twice: without and with the 1/√dk scale."""

    unscaled: AttentionTrace
    """Engine trace with scale=1.0: q (S, 1, dk), k (S, m, dk), weights (S, 1, m)."""
    scaled: AttentionTrace
    """Engine trace with scale 1/(T·√dk), on the very same q and k; weights (S, 1, m)."""
    temperature: float
    """T: the scaled branch's scores are further divided by T (T = 1 is the paper)."""


def sample_attention_pair(
    dk: int, num_keys: int = 16, num_samples: int = 500, seed: int = 0, temperature: float = 1.0
) -> AttentionPair:
    """One query against num_keys keys, S times, attended without and with scaling.

    Components are standard normal. The generator is np.random.default_rng((seed, dk)),
    so the samples for a given dk do not depend on which other dks a sweep contains.
    Samples are float32 (the engine then stays in float32): at dk = 1024 the keys are
    S·m·dk ≈ 8 million numbers, and float32 halves the time and memory of a sweep while
    changing the measured statistics by far less than their sampling error.
    """
    dk = _check_int("dk", dk, 1)
    num_keys = _check_int("num_keys", num_keys, 2)
    num_samples = _check_int("num_samples", num_samples, 2)
    seed = _check_int("seed", seed, 0)
    temperature = _check_temperature(temperature)
    rng = np.random.default_rng((seed, dk))
    q = rng.standard_normal((num_samples, 1, dk), dtype=np.float32)  # (S, 1, dk)
    k = rng.standard_normal((num_samples, num_keys, dk), dtype=np.float32)  # (S, m, dk)
    no_values = np.zeros((1, num_keys, 1), dtype=np.float32)  # (1, m, 1): values do not affect the weights
    unscaled = scaled_dot_product_attention(q, k, no_values, scale=1.0)
    scale = None if temperature == 1.0 else 1.0 / (temperature * np.sqrt(dk))
    scaled = scaled_dot_product_attention(q, k, no_values, scale=scale)
    return AttentionPair(unscaled=unscaled, scaled=scaled, temperature=temperature)


# ---------------------------------------------------------------- the sweep over dk


@dataclass(frozen=True, eq=False)
class ScalingSweep:
    """Measured effect of dk on the scores, the weights and softmax's gradient, per dk.

    D = number of dks. "unscaled" uses scale 1, "scaled" uses 1/(T·√dk), on the same
    samples at each dk.
    """

    dks: np.ndarray
    """(D,): the query/key sizes measured, in the order given."""
    num_keys: int
    """m: keys per query (the length of each weight row)."""
    num_samples: int
    """S: independent queries (each with its own m keys) per dk."""
    seed: int
    """Seed of the sampling; dk's samples come from np.random.default_rng((seed, dk))."""
    temperature: float
    """T: a rescaling of the scores; the scaled branch divides them by T·√dk."""
    raw_std: np.ndarray
    """(D,): measured standard deviation of the raw dot products q · k (all S·m of them)."""
    scaled_std: np.ndarray
    """(D,): measured standard deviation of the scaled scores q · k / (T·√dk); ≈ 1/T."""
    theory_raw_std: np.ndarray
    """(D,): THEORY line, √dk, the standard deviation of q · k for unit-variance components."""
    max_weight_unscaled: np.ndarray
    """(D,): mean over samples of the largest weight in the row, scale 1 (1 = one-hot)."""
    max_weight_scaled: np.ndarray
    """(D,): mean over samples of the largest weight in the row, scale 1/(T·√dk)."""
    entropy_unscaled: np.ndarray
    """(D,): mean entropy of the weight row in nats, scale 1 (0 = all weight on one key)."""
    entropy_scaled: np.ndarray
    """(D,): mean entropy of the weight row in nats, scale 1/(T·√dk)."""
    uniform_entropy: float
    """log(m): the entropy of uniform weights, the largest possible."""
    jacobian_norm_unscaled: np.ndarray
    """(D,): mean Frobenius norm of softmax's Jacobian, scale 1 (near 0 = vanishing gradients)."""
    jacobian_norm_scaled: np.ndarray
    """(D,): mean Frobenius norm of softmax's Jacobian, scale 1/(T·√dk)."""


def _check_dks(dks) -> np.ndarray:
    array = np.asarray(dks)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"dks must be a non-empty sequence of sizes; got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"dks must be integers; got {dks!r}")
    if np.any(array < 1):
        raise ValueError(f"every dk must be at least 1; got {dks!r}")
    return array.astype(np.int64)


def scaling_sweep(
    dks, num_keys: int = 16, num_samples: int = 500, seed: int = 0, temperature: float = 1.0
) -> ScalingSweep:
    """For each dk, attend S random queries to m random keys without and with 1/√dk scaling.

    Measures how the scores spread, how peaked the weights get and how large softmax's
    derivative stays. temperature T is a rescaling of the scores: the scaled branch uses
    scale 1/(T·√dk), so T > 1 flattens the weights towards uniform and T < 1 sharpens
    them; the unscaled branch (scale 1) is unaffected by T.
    """
    dks = _check_dks(dks)
    num_keys = _check_int("num_keys", num_keys, 2)
    num_samples = _check_int("num_samples", num_samples, 2)
    seed = _check_int("seed", seed, 0)
    temperature = _check_temperature(temperature)

    # One dk per task, the largest first, on as many threads as there are cores: drawing the
    # samples is most of the time, and NumPy draws and multiplies without holding the GIL.
    # Each dk has its own generator, so the numbers do not depend on the order.
    import concurrent.futures  # here: importing the lessons loads nothing beyond the engine

    with concurrent.futures.ThreadPoolExecutor(min(len(dks), _cores())) as pool:
        points = {
            dk: pool.submit(_sweep_point, dk, num_keys, num_samples, seed, temperature)
            for dk in sorted({int(dk) for dk in dks}, reverse=True)
        }
    columns = {name: [points[int(dk)].result()[name] for dk in dks] for name in _SWEEP_COLUMNS}

    return ScalingSweep(
        dks=_read_only(dks),
        num_keys=num_keys,
        num_samples=num_samples,
        seed=seed,
        temperature=temperature,
        theory_raw_std=_read_only(np.sqrt(dks)),
        uniform_entropy=float(np.log(num_keys)),
        **{name: _read_only(np.array(values, dtype=np.float64)) for name, values in columns.items()},
    )


_SWEEP_COLUMNS = (
    "raw_std",
    "scaled_std",
    "max_weight_unscaled",
    "max_weight_scaled",
    "entropy_unscaled",
    "entropy_scaled",
    "jacobian_norm_unscaled",
    "jacobian_norm_scaled",
)


def _sweep_point(dk: int, num_keys: int, num_samples: int, seed: int, temperature: float) -> dict[str, float]:
    """The sweep's measurements at one dk (see `scaling_sweep`)."""
    pair = sample_attention_pair(dk, num_keys, num_samples, seed, temperature)
    point = {
        "raw_std": np.std(pair.unscaled.raw_scores, ddof=1, dtype=np.float64),
        "scaled_std": np.std(pair.scaled.scaled_scores, ddof=1, dtype=np.float64),
    }
    for branch, trace in (("unscaled", pair.unscaled), ("scaled", pair.scaled)):
        weights = trace.weights[:, 0, :].astype(np.float64)  # (S, m), statistics in float64
        jacobian = softmax_jacobian(weights)  # (S, m, m)
        point[f"max_weight_{branch}"] = np.mean(np.max(weights, axis=-1))
        point[f"entropy_{branch}"] = np.mean(attention_entropy(weights))
        point[f"jacobian_norm_{branch}"] = np.mean(np.linalg.norm(jacobian, axis=(-2, -1)))
    return point


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def log_dk_steps(max_dk: int = 1024) -> tuple[int, ...]:
    """Powers of two 1, 2, 4, … up to max_dk (inclusive if max_dk is one): stops for a log slider."""
    max_dk = _check_int("max_dk", max_dk, 1)
    return tuple(2**power for power in range(max_dk.bit_length()))


# ---------------------------------------------------------------- helpers for the page


@dataclass(frozen=True)
class DotProductSpread:
    """How widely a `DotProductSample` spreads, measured, with the theory beside it."""

    dk: int
    """Size of the query and key vectors."""
    raw_std: float
    """Measured standard deviation of q · k (sample std, ddof = 1)."""
    scaled_std: float
    """Measured standard deviation of q · k / √dk; ≈ 1 for any dk."""
    theory_raw_std: float
    """THEORY: √dk, the standard deviation of q · k for unit-variance components."""


def dot_product_spread(sample: DotProductSample) -> DotProductSpread:
    """The measured spread of a sample's raw and scaled dot products, and the theory √dk."""
    return DotProductSpread(
        dk=sample.dk,
        raw_std=float(np.std(sample.raw, ddof=1)),
        scaled_std=float(np.std(sample.scaled, ddof=1)),
        theory_raw_std=float(np.sqrt(sample.dk)),
    )


def softmax_scale(dk: int, temperature: float = 1.0, scaled: bool = True) -> float:
    """The factor on the raw scores before softmax: 1/(T·√dk), or 1/T without the paper's √dk.

        softmax(Q Kᵀ · 1/(T·√dk)) = softmax((Q Kᵀ / √dk) / T)

    A temperature T on the attention softmax is one more rescaling of the scores, and the
    paper's 1/√dk is itself a temperature of √dk. T > 1 flattens the weights, T < 1
    sharpens them. With T = 1 and scaled=True this is the engine's default 1/√dk, bit for bit.
    """
    dk = _check_int("dk", dk, 1)
    temperature = _check_temperature(temperature)
    divisor = temperature * np.sqrt(dk) if scaled else temperature
    return float(1.0 / divisor)


def sweep_index(sweep: ScalingSweep, dk: int) -> int:
    """Position of `dk` in `sweep.dks` (the first, if repeated); ValueError if it was not measured."""
    positions = np.flatnonzero(sweep.dks == dk)
    if positions.size == 0:
        raise ValueError(f"dk = {dk} is not in the sweep; measured: {sweep.dks.tolist()}")
    return int(positions[0])


# ---------------------------------------------------------------- Q = K = V = X: the diagonal


@dataclass(frozen=True)
class SelfDiagonal:
    """What self-attention does to each token's score with itself (the diagonal of an n × n trace).

    With Q = K = V = X, q_i · q_i = ‖x_i‖² ≈ dk for unit-variance components, so the scaled
    diagonal is ≈ √dk while the other scores keep a standard deviation near 1: the division by
    √dk does not stop the softmax from piling the weight on the diagonal.
    """

    scaled_mean: float
    """Mean of the scaled scores' diagonal, q_i · k_i / √dk."""
    off_diagonal_std: float
    """Standard deviation of the other scaled scores (nan below two tokens)."""
    self_weight_mean: float
    """Mean of the weights' diagonal A_ii: on average, how much of its attention a token keeps."""


def self_diagonal(attention: AttentionTrace) -> SelfDiagonal:
    """The diagonal summary of a self-attention trace (square: the queries are the keys)."""
    scaled, weights = np.asarray(attention.scaled_scores), np.asarray(attention.weights)  # (n, n), (n, n)
    if scaled.shape[0] != scaled.shape[1]:
        raise ValueError(f"self-attention has as many queries as keys; got scores of shape {scaled.shape}")
    off_diagonal = scaled[~np.eye(scaled.shape[0], dtype=bool)]  # (n·(n−1),)
    return SelfDiagonal(
        scaled_mean=float(np.diag(scaled).mean()),
        off_diagonal_std=float(off_diagonal.std()) if off_diagonal.size > 1 else float("nan"),
        self_weight_mean=float(np.diag(weights).mean()),
    )
