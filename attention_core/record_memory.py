"""Memory for the engine's large records: huge pages, and the memory of dropped records kept
for the next call.

A record of 2 MiB or more (a 1,024-token score matrix in float32 is 4 MiB) lives in a private
mapping of its own, aligned and advised for 2 MiB pages. When every array that views it is
gone, the mapping is not unmapped at once: it is kept, up to `KEPT_BYTES` in all, and the next
record of the same size is written into it. Its pages are then already in place, where a fresh
mapping costs a page fault and the kernel's zeroing of every page on its first write: a quarter
of a 2,048-token call's time (`benchmarks/engine_overhead.py`). `release_kept_memory` gives the
kept mappings back to the system (the app's server does so once a minute).

A kept mapping is reused only when no array views any part of it, and a record is written in
full before anyone sees it, so no value of one call shows through in another.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import threading
import weakref

import numpy as np

__all__ = ["HUGE_PAGE", "KEPT_BYTES", "kept_bytes", "record_buffer", "release_kept_memory"]

HUGE_PAGE = 2 << 20
"""Bytes of a transparent huge page on x86-64 Linux (and most arm64 kernels)."""

KEPT_BYTES = 96 << 20
"""Most bytes of dropped records' mappings kept for reuse: the four (n, m) records of a masked
2,048-token float32 call (16 MiB each, the largest single-head call the app makes) and half as
much again. Beyond it the oldest kept mapping goes back to the system."""


def record_buffer(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised, writable, C-contiguous array for a record (like `np.empty`).

    One of 2 MiB or more starts on a huge-page boundary of a mapping of its own. NumPy asks
    Linux for huge pages for large arrays too, but only whole aligned 2 MiB stretches of an
    allocation can have them, and malloc's addresses rarely are aligned: a 16 MiB record had 7
    huge pages and 512 small ones; here it has 8. The slack before the aligned start is never
    written: it costs address space, not memory.
    """
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    if nbytes < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):  # small, or not Linux
        return np.empty(shape, dtype)
    span = -(-nbytes // HUGE_PAGE) * HUGE_PAGE  # whole huge pages: records of nearby sizes share
    region, start = _KEPT.take(span) or _new_region(span)
    flat = np.frombuffer(region, dtype, count=count, offset=start)
    if isinstance(flat.base, memoryview):  # NumPy's view of the mapping: alive while any array shares it
        weakref.finalize(flat.base, _KEPT.put, region, start, span).atexit = False
    return flat.reshape(shape)  # (otherwise not kept: the mapping is unmapped with its last array)


def kept_bytes() -> int:
    """Bytes of dropped records' mappings kept for reuse (each one's huge pages, not its slack)."""
    return _KEPT.bytes


def release_kept_memory() -> int:
    """Give every kept mapping back to the system; the bytes released."""
    return _KEPT.release(keep=0)


def _new_region(span: int) -> tuple[mmap.mmap, int]:
    region = mmap.mmap(-1, span + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    start = -np.frombuffer(region, np.uint8, count=1).ctypes.data % HUGE_PAGE
    _advise_huge_pages(region, start, span)
    return region, start


def _advise_huge_pages(region: mmap.mmap, start: int, length: int) -> None:
    """Ask Linux to back part of a mapping with huge pages. A kernel built without them
    refuses (EINVAL): the record then has small pages, as a malloc'd one would."""
    with contextlib.suppress(OSError):
        region.madvise(mmap.MADV_HUGEPAGE, start, length)


class _KeptMappings:
    """Mappings whose records were all dropped, oldest first, at most `KEPT_BYTES` in all.

    `put` runs when a record's last view is freed, in whichever thread frees it (perhaps
    inside `take` of the same thread): hence a re-entrant lock.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._regions: list[tuple[mmap.mmap, int, int]] = []  # (mapping, aligned start, span)
        self.bytes = 0

    def take(self, span: int) -> tuple[mmap.mmap, int] | None:
        """A kept mapping of `span` bytes, newest first (its pages are likeliest to be cached)."""
        with self._lock:
            for index in range(len(self._regions) - 1, -1, -1):
                region, start, kept_span = self._regions[index]
                if kept_span == span:
                    del self._regions[index]
                    self.bytes -= span
                    return region, start
        return None

    def put(self, region: mmap.mmap, start: int, span: int) -> None:
        if span > KEPT_BYTES:
            _close(region)
            return
        with self._lock:
            self._regions.append((region, start, span))
            self.bytes += span
        self.release(keep=KEPT_BYTES)

    def release(self, keep: int) -> int:
        """Close the oldest kept mappings until at most `keep` bytes are kept; the bytes closed."""
        closing = []
        with self._lock:
            while self._regions and self.bytes > keep:
                region, _, span = self._regions.pop(0)
                self.bytes -= span
                closing.append((region, span))
        for region, _ in closing:
            _close(region)
        return sum(span for _, span in closing)


def _close(region: mmap.mmap) -> None:
    """Unmap now. (A mapping some buffer still exports cannot be closed: it is then left for
    the garbage collector, which unmaps it once the export is gone.)"""
    with contextlib.suppress(BufferError):
        region.close()


_KEPT = _KeptMappings()
