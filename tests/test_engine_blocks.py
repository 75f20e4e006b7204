"""Long inputs take the engine's block-by-block path: every record still equals the formula.

The other engine tests use small matrices, which fit in one block of rows; these use
inputs whose score matrices span several blocks (with heads broadcast, a mask with a fully
masked row, float32 and float64) and compare every record with a whole-matrix NumPy
evaluation of the paper's formula in float64, and with the engine run as one block.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import attention, record_memory
from attention_core.attention import scaled_dot_product_attention


def formula(q, k, v, mask):
    """Attention(Q, K, V) = softmax(mask(Q Kᵀ / √dk)) V, whole matrices at once, float64."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    raw = q @ np.swapaxes(k, -1, -2)  # (..., n, m)
    scaled = raw / np.sqrt(q.shape[-1])
    masked = np.where(mask, scaled, -np.inf)
    row_max = masked.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exponentials = np.exp(masked - row_max)
    sums = exponentials.sum(axis=-1, keepdims=True)
    weights = exponentials / np.where(sums == 0, 1.0, sums)
    return {"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked, "weights": weights,
            "output": weights @ v}


@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-10), (np.float32, 2e-4)])
@pytest.mark.parametrize("masked", [False, True])
def test_records_spanning_several_blocks_equal_the_formula(dtype, tolerance, masked):
    heads, n, m, dk, dv = 2, 700, 650, 16, 5
    rng = np.random.default_rng(7)
    q = rng.standard_normal((heads, n, dk)).astype(dtype)
    k = rng.standard_normal((m, dk)).astype(dtype)  # shared by both heads (broadcast)
    v = rng.standard_normal((m, dv)).astype(dtype)
    mask = np.tril(np.ones((n, m), dtype=bool), k=-1) if masked else np.ones((n, m), dtype=bool)
    rows_per_block = attention._BLOCK_BYTES // (m * np.dtype(dtype).itemsize)
    assert heads * n > 2 * rows_per_block, "the test must cover several blocks"

    trace = scaled_dot_product_attention(q, k, v, mask=mask if masked else None)
    expected = formula(q, k, v, mask)

    for name, value in expected.items():
        got = getattr(trace, name)
        assert got.dtype == dtype and got.shape == value.shape, name
        finite = np.isfinite(value)
        np.testing.assert_array_equal(np.isneginf(got), np.isneginf(value), err_msg=name)
        np.testing.assert_allclose(got[finite], value[finite], rtol=tolerance, atol=tolerance, err_msg=name)
        assert not got.flags.writeable, name
    if masked:
        assert trace.fully_masked_rows[:, 0].all() and not trace.fully_masked_rows[:, 1:].any()
        assert not trace.weights[:, 0].any() and not trace.output[:, 0].any()  # row 0: every key masked
    np.testing.assert_allclose(trace.weights.sum(axis=-1)[:, int(masked):], 1.0, rtol=tolerance)


def test_blocks_give_the_same_records_as_one_block(monkeypatch):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((900, 32)).astype(np.float32) for _ in range(3))
    mask = rng.random((900, 900)) < 0.7
    blocked = scaled_dot_product_attention(q, k, v, mask=mask)
    monkeypatch.setattr(attention, "_BLOCK_BYTES", 1 << 40)  # every row in one block
    whole = scaled_dot_product_attention(q, k, v, mask=mask)
    for name in ("raw_scores", "scaled_scores", "masked_scores", "weights", "output"):
        np.testing.assert_array_equal(getattr(blocked, name), getattr(whole, name), err_msg=name)


@pytest.mark.parametrize("shape", [(1024, 1024), (2, 512, 1024)])
def test_large_records_start_on_a_huge_page(shape):
    """Records of 2 MiB or more start on a 2 MiB boundary, so that Linux can back all of their
    fresh memory with huge pages (a page fault each 2 MiB, not each 4 KiB): about a tenth of a
    long call's time (benchmarks/engine_overhead.py). Their values are checked above."""
    rng = np.random.default_rng(1)
    n, m = shape[-2:]
    q = rng.standard_normal((*shape[:-2], n, 8)).astype(np.float32)
    k, v = (rng.standard_normal((m, 8)).astype(np.float32) for _ in range(2))
    trace = scaled_dot_product_attention(q, k, v, mask=np.tril(np.ones((n, m), dtype=bool)))
    for name in ("raw_scores", "scaled_scores", "masked_scores", "weights"):
        record = getattr(trace, name)
        assert record.shape == shape and record.flags.c_contiguous and not record.flags.writeable
        assert record.ctypes.data % record_memory.HUGE_PAGE == 0, name


def test_small_records_are_plain_arrays():
    """Below a huge page nothing is gained: a record is an array of its own, no slack around it."""
    q = np.ones((16, 4), dtype=np.float32)
    trace = scaled_dot_product_attention(q, q, q)
    assert trace.weights.base is None or trace.weights.base.nbytes == trace.weights.nbytes


def test_a_kernel_without_huge_pages_still_gets_its_records():
    """madvise(MADV_HUGEPAGE) fails with EINVAL where the kernel has no huge pages: not an error."""

    class Refusing:
        def madvise(self, *_):
            raise OSError(22, "Invalid argument")

    record_memory._advise_huge_pages(Refusing(), 0, record_memory.HUGE_PAGE)  # no exception
