"""How much recording every stage costs: the engine's time over a bare NumPy attention.

    python benchmarks/engine_overhead.py

Bare attention is what a framework does without keeping anything: matmul, stable softmax,
matmul. The engine also keeps raw, scaled and masked scores, the mask and the weights as
separate read-only arrays. Both run in this one process on the same inputs, alternating,
and the table prints the ratio of their medians (the machine is shared, so absolute times
vary; the ratio is what to compare).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from attention_core import scaled_dot_product_attention


def bare_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # (n, m)
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores @ v  # (n, dv)


def _median_seconds(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(n: int, dk: int, dtype, causal: bool, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((n, dk)).astype(dtype) for _ in range(3))
    mask = np.tril(np.ones((n, n), dtype=bool)) if causal else None
    bare_attention(q, k, v), scaled_dot_product_attention(q, k, v, mask=mask)  # warm up
    bare, engine = [], []
    for _ in range(3):  # alternate, so that a burst of load hits both
        bare.append(_median_seconds(lambda: bare_attention(q, k, v), repeats))
        engine.append(_median_seconds(lambda: scaled_dot_product_attention(q, k, v, mask=mask), repeats))
    return min(bare), min(engine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 512, 2048])
    parser.add_argument("--dk", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"{'n':>6} {'dtype':>8} {'mask':>7} {'bare ms':>9} {'engine ms':>10} {'ratio':>6}")
    for n in args.sizes:
        for dtype in (np.float32, np.float64):
            for causal in (False, True):
                repeats = max(3, args.repeats * 128 // n)
                bare, engine = measure(n, args.dk, dtype, causal, repeats)
                print(
                    f"{n:>6} {np.dtype(dtype).name:>8} {'causal' if causal else 'none':>7} "
                    f"{bare * 1e3:>9.2f} {engine * 1e3:>10.2f} {engine / bare:>6.2f}"
                )


if __name__ == "__main__":
    main()
