"""The memory of dropped records is kept for the next call, within a bound, and never shared.

`attention_core.record_memory` keeps the mappings of large records (2 MiB or more) after
their arrays are gone, so that the next call of the same size writes into pages already in
place. These tests check what that must never change: a record that is still viewed keeps its
values, a reused buffer shows nothing of the call before, calls in parallel threads get their
own memory, and what is kept stays within `KEPT_BYTES` and can be given back.
"""

from __future__ import annotations

import gc
import resource
import threading

import numpy as np
import pytest
from test_engine_blocks import formula

from attention_core import record_memory
from attention_core.attention import scaled_dot_product_attention

N = 1024  # a float32 (N, N) record is 4 MiB: large enough to live in a mapping of its own
SPAN = N * N * 4


@pytest.fixture(autouse=True)
def nothing_kept():
    """Each test starts and ends with no kept mapping (others may have been left by earlier tests)."""
    gc.collect()
    record_memory.release_kept_memory()
    yield
    gc.collect()
    record_memory.release_kept_memory()


def inputs(seed: int, n: int = N, dk: int = 4):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, dk)).astype(np.float32) for _ in range(3))


def test_a_dropped_call_s_records_are_kept_and_taken_by_the_next_call():
    trace = scaled_dot_product_attention(*inputs(0))  # raw, scaled (= masked) and weights: 3 records
    assert record_memory.kept_bytes() == 0
    del trace
    assert record_memory.kept_bytes() == 3 * SPAN
    trace = scaled_dot_product_attention(*inputs(1))
    assert record_memory.kept_bytes() == 0  # all three taken again
    del trace


def test_reused_records_need_no_new_pages():
    """The point of keeping them: a call into kept memory touches no fresh page, where a call
    into new mappings faults on each (2 MiB pages where the kernel has them, else 4 KiB).
    Counted as the process's minor page faults; dk = dv = 4 keeps the other arrays small."""
    q, k, v = inputs(2, n=2048)

    def faults_of_one_call() -> int:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        scaled_dot_product_attention(q, k, v)  # dropped at once
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    scaled_dot_product_attention(q, k, v)  # the code's own first-use costs, outside the counts
    record_memory.release_kept_memory()
    fresh = faults_of_one_call()
    reused = faults_of_one_call()
    assert fresh >= 3 * 8, "three 16 MiB records in new mappings: at least eight faults each"
    assert reused < fresh / 4


def test_a_record_still_viewed_is_never_reused():
    trace = scaled_dot_product_attention(*inputs(3))
    rows = trace.weights[5:7]  # a view: the trace itself is dropped below
    expected = rows.copy()
    del trace
    assert record_memory.kept_bytes() == 2 * SPAN  # raw and scaled scores; not the weights
    for seed in range(4, 8):  # calls that would take the weights' memory if it were kept
        scaled_dot_product_attention(*inputs(seed))
    np.testing.assert_array_equal(rows, expected)


def test_reused_memory_shows_nothing_of_the_call_before():
    """Kept memory full of NaN: every record of a masked call still equals the formula, so each
    of its cells was written (none was left to an earlier value or to a new mapping's zeros)."""
    buffers = [record_memory.record_buffer((N, N), np.dtype(np.float32)) for _ in range(4)]
    for buffer in buffers:
        buffer.fill(np.nan)
    del buffer, buffers  # dropped: kept
    assert record_memory.kept_bytes() == 4 * SPAN
    q, k, v = inputs(9, dk=8)
    mask = np.tril(np.ones((N, N), dtype=bool), k=-1)  # row 0 fully masked
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert record_memory.kept_bytes() == 0
    for name, value in formula(q, k, v, mask).items():
        got = getattr(trace, name)
        finite = np.isfinite(value)
        np.testing.assert_array_equal(np.isneginf(got), np.isneginf(value), err_msg=name)
        np.testing.assert_allclose(got[finite], value[finite], rtol=2e-4, atol=2e-4, err_msg=name)


def test_what_is_kept_stays_within_its_bound_and_can_be_given_back():
    spans = [(side * side * 4 + record_memory.HUGE_PAGE - 1) // record_memory.HUGE_PAGE * record_memory.HUGE_PAGE
             for side in (800, 1024, 1500, 2048, 3000)]
    for side in (800, 1024, 1500, 2048, 3000) * 3:
        record_memory.record_buffer((side, side), np.dtype(np.float32))  # dropped at once
        assert record_memory.kept_bytes() <= record_memory.KEPT_BYTES
    assert record_memory.kept_bytes() >= max(spans)  # the newest are kept
    released = record_memory.release_kept_memory()
    assert released > 0 and record_memory.kept_bytes() == 0


def test_a_record_larger_than_the_bound_is_not_kept():
    side = int((record_memory.KEPT_BYTES // 4) ** 0.5) + 64
    record_memory.record_buffer((side, side), np.dtype(np.float32))
    assert record_memory.kept_bytes() == 0


def test_calls_in_parallel_threads_get_their_own_records():
    """Sessions of the app call the engine from threads of their own, into the same kept memory."""
    failures = []

    def calls(first_seed: int) -> None:
        for seed in range(first_seed, first_seed + 6):
            q, k, v = inputs(seed, n=768, dk=8)  # 2.25 MiB records: kept, and taken back
            trace = scaled_dot_product_attention(q, k, v)
            expected = formula(q, k, v, np.ones((768, 768), dtype=bool))
            for name in ("raw_scores", "weights", "output"):
                if not np.allclose(getattr(trace, name), expected[name], rtol=2e-4, atol=2e-4):
                    failures.append((seed, name))

    threads = [threading.Thread(target=calls, args=(100 * index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_the_readme_states_the_bound():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"{record_memory.KEPT_BYTES >> 20} MiB of dropped" in readme
