"""How much recording every stage costs: the engine against the tightest plain NumPy attention and PyTorch.

    python benchmarks/engine_overhead.py [--sizes 128 512 2048] [--threads 1] [--native-blas]

The floor ("tight") is plain NumPy attention with one (n, m) buffer and every step in
place: matmul, scale, subtract the row maximum, exp, divide by the row sum, matmul. The
engine also keeps raw, scaled and masked scores, the mask and the weights as separate
read-only records, so it must write three fresh (n, m) arrays per call where the floor
writes one. Both run in this one process on the same inputs, alternating call by call,
and the table prints the ratio of their medians: in wall time, and in CPU time (user +
system: what the call costs the machine, without the waits for a core that a shared
machine adds; the first touch of fresh memory is system time).

The step table times each of the engine's own steps alone (its internal functions, on
buffers already touched), and "records' memory" as getting and writing the three records'
buffers, which a call in a row of calls takes from the memory its predecessor dropped
(`attention_core.record_memory`); "rest" is the engine's total minus those steps. Two rows
below them are not in the call: the floor's own scale and softmax (in place in its one
buffer), to set beside the engine's, and the same three records in new mappings, as a first
call gets them (every page faulted in and zeroed by the kernel), to set beside "records' memory".

PyTorch (`torch.nn.functional.scaled_dot_product_attention`, float64, CPU) is timed the
same way at n = 1024 when `torch` can be imported (it is not in the app's environment:
run this script with a separate environment's Python that has torch and numpy).
`--threads N` sets OpenBLAS's, OpenMP's and PyTorch's thread counts to N (by restarting the
script with those variables). `--native-blas` restarts it without OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE, which this machine sets for old OpenBLAS builds and which select a slower
kernel in a current one; the kernel in use is printed when threadpoolctl is installed.
(The records of 2 MiB or more are mappings of their own, not glibc's memory: glibc's settings
for keeping freed memory do not reach them; the engine keeps up to `record_memory.KEPT_BYTES`
of them after they are dropped. The floor's one buffer is glibc's, which keeps it too.)
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from attention_core import attention as engine
from attention_core import record_memory, scaled_dot_product_attention

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
CORETYPE_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
TORCH_N = 1024
DK = 64


def tight_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, hidden: np.ndarray | None = None) -> np.ndarray:
    """Attention with one (n, m) buffer and every step in place: the floor for NumPy.

    `hidden`: boolean (n, m), True where query i may NOT attend to key j (None: no mask).
    """
    scores = q @ k.T  # (n, m), the one buffer
    tight_softmax(scores, q.dtype.type(1 / math.sqrt(q.shape[-1])), hidden)
    return scores @ v  # (n, dv)


def tight_softmax(scores: np.ndarray, scale, hidden: np.ndarray | None = None) -> None:
    """The floor's middle steps, in place in its one buffer: scale, mask, softmax by rows."""
    scores *= scale
    if hidden is not None:
        np.copyto(scores, -np.inf, where=hidden)
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


def _timed(function) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    function()
    return time.perf_counter() - wall_start, time.process_time() - cpu_start


def compare(functions: dict, repeats: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each function, called in turn `repeats` times (after a warm-up)."""
    for function in functions.values():
        function()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in functions}
    order = list(functions.items())
    for _ in range(repeats):  # alternate, so that a burst of load hits every one, and reverse the order
        for name, function in order:  # each round: the state one call leaves the allocator in slows the next
            samples[name].append(_timed(function))
        order.reverse()
    return {
        name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
        for name, runs in samples.items()
    }


def inputs(n: int, dtype, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, DK)).astype(dtype) for _ in range(3))


RECORD_MEMORY = "records' memory (3, kept)"
SCORE_STEPS = "scaled, softmax (blocks)"
WHOLE_CALL = "engine, whole call"
"""Names of three of the engine's rows in the step table (speed_report.py reads them)."""

COMPARISONS = ("the floor: scale, softmax in place", "3 records in new mappings", "whole call, new mappings")
"""Rows of the step table timed beside the engine's steps, not part of its call: the floor's
softmax in its one buffer; three records in new mappings, as a first call (or one after
`release_kept_memory`) gets them, against "records' memory": what the first touch costs; and
the engine's whole call with its records in new mappings, against its whole call."""


def steps(n: int, dtype, repeats: int) -> dict[str, float]:
    """CPU seconds of each of the engine's steps at n = m (float `dtype`, no mask), and of COMPARISONS."""
    q, k, v = inputs(n, dtype)
    scale = np.dtype(dtype).type(1 / math.sqrt(DK))
    raw, scaled, weights, floor_scores = (np.empty((n, n), dtype) for _ in range(4))  # touched below, then reused
    for buffer in (raw, scaled, weights):
        buffer.fill(0)
    np.matmul(q, k.T, out=floor_scores)  # softmax in place again and again: the values stay finite

    def record_memory_of_a_call(fresh: bool):
        if fresh:
            record_memory.release_kept_memory()  # what a previous call dropped goes back to the system
        records = [record_memory.record_buffer((n, n), np.dtype(dtype)) for _ in range(3)]
        for record in records:
            record.fill(0)  # written in full, as the engine writes every record

    parts = {
        "inputs (copy, check)": lambda: [engine._as_matrix_stack(name, x, np.dtype(dtype))
                                         for name, x in (("q", q), ("k", k), ("v", v))],
        RECORD_MEMORY: lambda: record_memory_of_a_call(fresh=False),
        "raw = Q Kᵀ": lambda: np.matmul(q, k.T, out=raw),
        SCORE_STEPS: lambda: engine._score_steps(raw, scale, scaled, None, scaled, weights),
        "output = W V": lambda: weights @ v,
        WHOLE_CALL: lambda: scaled_dot_product_attention(q, k, v),
        COMPARISONS[0]: lambda: tight_softmax(floor_scores, scale),
        COMPARISONS[1]: lambda: record_memory_of_a_call(fresh=True),
        COMPARISONS[2]: lambda: (record_memory.release_kept_memory(), scaled_dot_product_attention(q, k, v)),
    }
    measured = compare(parts, repeats)
    cpu = {name: value[1] for name, value in measured.items()}
    compared = {name: cpu.pop(name) for name in COMPARISONS}
    total = cpu.pop(WHOLE_CALL)
    cpu["rest (checks, read-only flags)"] = max(0.0, total - sum(cpu.values()))
    cpu[WHOLE_CALL] = total
    return cpu | compared


def tight_row(n: int, dtype, causal: bool, repeats: int) -> str:
    """One row of the main table: the engine against the tight floor at n = m."""
    q, k, v = inputs(n, dtype)
    mask = np.tril(np.ones((n, n), dtype=bool)) if causal else None
    hidden = None if mask is None else ~mask
    measured = compare(
        {"tight": lambda: tight_attention(q, k, v, hidden),
         "engine": lambda: scaled_dot_product_attention(q, k, v, mask=mask)},
        repeats,
    )
    (tight_wall, tight_cpu), (engine_wall, engine_cpu) = measured["tight"], measured["engine"]
    return (
        f"{n:>6} {np.dtype(dtype).name:>8} {'causal' if causal else 'none':>7} {'tight':>6} "
        f"{tight_wall * 1e3:>9.2f} {engine_wall * 1e3:>10.2f} {engine_wall / tight_wall:>6.2f} "
        f"{tight_cpu * 1e3:>9.2f} {engine_cpu * 1e3:>10.2f} {engine_cpu / tight_cpu:>6.2f}"
    )


def torch_row(repeats: int) -> str:
    try:
        import torch
    except ImportError:
        return f"{TORCH_N:>6} {'float64':>8} {'none':>7}   PyTorch not installed in this environment"
    q, k, v = inputs(TORCH_N, np.float64)
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    attend = torch.nn.functional.scaled_dot_product_attention
    with torch.inference_mode():
        measured = compare(
            {"torch": lambda: attend(tq, tk, tv), "engine": lambda: scaled_dot_product_attention(q, k, v)}, repeats
        )
    (torch_wall, torch_cpu), (engine_wall, engine_cpu) = measured["torch"], measured["engine"]
    return (
        f"{TORCH_N:>6} {'float64':>8} {'none':>7} {'torch':>6} {torch_wall * 1e3:>9.2f} "
        f"{engine_wall * 1e3:>10.2f} {engine_wall / torch_wall:>6.2f} {torch_cpu * 1e3:>9.2f} "
        f"{engine_cpu * 1e3:>10.2f} {engine_cpu / torch_cpu:>6.2f}"
        f"   torch {torch.__version__}, {torch.get_num_threads()} thread(s)"
    )


def blas_line() -> str:
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    coretype = os.environ.get("OPENBLAS_CORETYPE", "unset")
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        kernel = "kernel unknown (threadpoolctl not installed)"
    else:
        blas = [info for info in threadpool_info() if info.get("user_api") == "blas"]
        kernel = ", ".join(f"{info.get('internal_api')} {info.get('version')} kernel {info.get('architecture')} "
                           f"{info.get('num_threads')} thread(s)" for info in blas) or "no BLAS found"
    return (f"numpy {np.__version__}; OPENBLAS_NUM_THREADS={threads}, OPENBLAS_CORETYPE={coretype}; {kernel}; "
            f"load average {os.getloadavg()[0]:.1f} at start")


def _restart_if_needed(args) -> None:
    """Re-run this script with the thread and kernel variables asked for (they act at import)."""
    environment = dict(os.environ)
    if args.threads is not None:
        for name in THREAD_VARIABLES:
            environment[name] = str(args.threads)
    if args.native_blas:
        for name in CORETYPE_VARIABLES:
            environment.pop(name, None)
    if environment != dict(os.environ):
        os.execve(sys.executable, [sys.executable, *sys.argv], environment)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 512, 2048])
    parser.add_argument("--repeats", type=int, default=15, help="calls of each function per row at n = 128 "
                        "(fewer for larger n, at least 7)")
    parser.add_argument("--threads", type=int, help="BLAS, OpenMP and PyTorch threads (default: as set)")
    parser.add_argument("--native-blas", action="store_true", help="run without OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch row")
    parser.add_argument("--no-steps", action="store_true", help="skip the table of the engine's steps")
    args = parser.parse_args()
    _restart_if_needed(args)
    if args.threads is not None:
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.set_num_threads(args.threads)
    print(blas_line())
    print(f"dk = {DK}; medians of calls taken in turn; ratio = engine / floor (tight NumPy, or torch)\n")
    print(f"{'n':>6} {'dtype':>8} {'mask':>7} {'floor':>6} {'floor ms':>9} {'engine ms':>10} {'ratio':>6} "
          f"{'floor cpu':>9} {'engine cpu':>10} {'ratio':>6}")
    for n in args.sizes:
        repeats = max(7, args.repeats * 128 // n)
        for dtype in (np.float32, np.float64):
            for causal in (False, True):
                print(tight_row(n, dtype, causal, repeats), flush=True)
    if not args.no_torch:
        print(torch_row(max(7, args.repeats * 128 // TORCH_N)), flush=True)
    if not args.no_steps:
        n = max(args.sizes)
        cpu = steps(n, np.float32, max(7, args.repeats * 128 // n))
        total = cpu[WHOLE_CALL]
        print(f"\nthe engine's steps, n = m = {n}, float32, no mask (CPU ms; share of the whole call)")
        for name, seconds in cpu.items():
            if name == COMPARISONS[0]:
                print("  for comparison, not in the call:")
            print(f"  {name:<36} {seconds * 1e3:>7.2f} {seconds / total:>6.0%}")


if __name__ == "__main__":
    main()
