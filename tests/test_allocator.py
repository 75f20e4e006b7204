"""attention_core.allocator: freed memory is reused while busy and given back on request.

Each check runs in a fresh Python process: the settings are process-wide, and the pytest
process has already been through many allocations. Page faults (`ru_minflt`) count the fresh
pages a process touches; resident memory (`VmRSS`) what it holds.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="the allocator settings are glibc's"
)

COMMON = """
import resource
import numpy as np
from attention_core import scaled_dot_product_attention
from attention_core.allocator import release_freed_memory, reuse_freed_memory

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def resident_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((1024, 64)).astype(np.float32) for _ in range(3))

def faults_of_one_call():
    scaled_dot_product_attention(q, k, v)  # the first call's records, freed at once
    before = faults()
    trace = scaled_dot_product_attention(q, k, v)  # (1024, 1024) records: 4 MiB each
    return faults() - before
"""


def run(body: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", COMMON + textwrap.dedent(body)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_records_of_a_second_call_land_on_touched_pages_once_reuse_is_on():
    default = int(run("print(faults_of_one_call())"))
    reused = int(run("assert reuse_freed_memory()\nprint(faults_of_one_call())"))
    # three 4 MiB records are at least 3 × 1024 fresh 4 KiB pages (or 6 huge pages) by default
    assert default >= 6, default
    assert reused * 4 <= default, (reused, default)


def test_freed_memory_is_kept_for_reuse_then_given_back_on_request():
    out = run(
        """
        assert reuse_freed_memory()
        start = resident_mib()
        blocks = [np.ones((2048, 2048), np.float32) for _ in range(6)]  # 6 × 16 MiB, touched
        del blocks
        kept = resident_mib()
        assert release_freed_memory()
        print(start, kept, resident_mib())
        """
    )
    start, kept, released = map(float, out.split())
    assert kept - start >= 64, (start, kept)  # freed, but kept by the process for the next traces
    assert released - start <= 16, (start, released)  # given back to the system


def test_importing_the_engine_changes_no_allocator_setting():
    """The settings are opt-in: a notebook that imports the engine keeps glibc's defaults."""
    out = run(
        """
        start = resident_mib()
        blocks = [np.ones((2048, 2048), np.float32) for _ in range(6)]
        del blocks
        print(start, resident_mib())
        """
    )
    start, after = map(float, out.split())
    assert after - start <= 16, (start, after)
