"""benchmarks/decoder_forward.py runs in a tiny configuration and prints its tables (no time is checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from attention_core.decoder.checkpoint import locate_gguf

ROOT = Path(__file__).resolve().parents[1]


def test_decoder_benchmark_prints_memory_and_both_lengths():
    pytest.importorskip("gguf", reason="the decoder checkpoint is not installed (requirements-model.txt)")
    if locate_gguf() is None:
        pytest.skip("the decoder checkpoint is not installed (requirements-model.txt)")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "decoder_forward.py"), "--repeats", "1", "--no-page"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr
    assert "resident model" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.strip().split(" ")[0] in ("64", "256")]
    assert [row[0] for row in rows] == ["64", "256"], result.stdout
