"""benchmarks/memory.py runs in a tiny configuration and prints its table (no times or
memory figures are asserted: the machine is shared). Skipped without Chromium."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _server import chromium_problem  # noqa: E402


@pytest.mark.skipif(chromium_problem() is not None, reason=str(chromium_problem()))
def test_memory_benchmark_prints_its_table():
    result = subprocess.run(
        [sys.executable, "benchmarks/memory.py", "--links", "2", "--tokens", "40", "--concurrency", "1",
         "--settle", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "warm MiB" in line)
    for word in ("peak MiB", "settled MiB", "settled/warm", "after a visit", "exceptions", "failed"):
        assert word in header
    row = lines[lines.index(header) + 1].split()
    assert float(row[0]) > 0 and float(row[1]) >= float(row[0]) * 0.5
    assert row[-2:] == ["0", "0"], "no exception shown, no link failed"
