"""Freed memory in a long-running process: reuse it while busy, give it back when idle.

Every engine call writes its records (raw scores, scaled scores, weights: three (n, m)
arrays) into fresh memory. With glibc's defaults a block that large is new pages from the
kernel, which the kernel zeroes on first touch: at n = m = 2048 in float32 that zeroing is
about a fifth of the call (`benchmarks/engine_overhead.py`). A process that computes trace
after trace (the app's server) can let glibc keep freed blocks for the next call instead,
and hand them back to the system when it is idle.

Process-wide and opt-in: importing this module changes nothing. Both functions do nothing
(and return False) where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import functools

MiB = 1024 * 1024

REUSED_BLOCK_BYTES = 32 * MiB
"""Freed blocks up to this size stay in the process for reuse (glibc's largest mmap threshold
on 64-bit systems): a 2,048 × 2,048 record is 16 MiB in float32, 32 MiB in float64."""

KEPT_FREE_BYTES = 256 * MiB
"""Free memory at the top of the heap kept before glibc returns it by itself (room for the
records of a few 2,048-token traces); `release_freed_memory` returns the rest when idle."""

_M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def reuse_freed_memory() -> bool:
    """Let freed blocks of up to `REUSED_BLOCK_BYTES` serve the next allocations, so that a
    new record lands on pages the process has already touched. Call once, in a process that
    also calls `release_freed_memory` when idle; True if glibc took both settings."""
    libc = _glibc()
    if libc is None:
        return False
    mmap_set = libc.mallopt(_M_MMAP_THRESHOLD, REUSED_BLOCK_BYTES)
    trim_set = libc.mallopt(_M_TRIM_THRESHOLD, KEPT_FREE_BYTES)
    return bool(mmap_set and trim_set)


def release_freed_memory() -> bool:
    """Return the free pages of every heap to the system (glibc's `malloc_trim(0)`); True if
    glibc returned any."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))
