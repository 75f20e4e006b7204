"""The speed targets of issue 13 in one table: each target, what was measured, met or not.

    python benchmarks/speed_report.py [--out DIR] [--reuse] [--parts engine rerun decoder control users]
                                      [--engine-python PATH] [--duration 30] [--settle 300]

Runs the other benchmarks one after another (never two at once: they would share the two
cores), keeps each one's full output in `--out` (default: a new folder under /tmp), and
prints the target table from them. `--reuse` reads the outputs already in `--out` instead
of running a part again (a part whose file is missing is run). Parts:

- engine: `engine_overhead.py` at n = 1024 and 2048 with the native BLAS kernel
  (`--native-blas`) with 1 and then 2 threads; a profile line reads its step table (where the
  engine's time goes, beside the floor's softmax and plain writes of touched buffers). Run with
  `--engine-python` (default: the Python of /work/bench-venv if it exists, which has
  PyTorch; else this one: PyTorch "not installed").
- rerun: `server_rerun.py --sizes 16` and `payload.py` for the step-through page at 16
  tokens (its overview rerun).
- decoder: `decoder_forward.py`: the decoder page's rerun after a new prompt of 64 tokens
  (AppTest, the server's share of the first paint), when the checkpoint is installed.
- users: `many_users.py --users 10 30 --floor --floor-numbers`: the app and the one-heatmap
  floor app, as it is and with the weights printed in its cells.
- control: `control_latency.py`: every control on every page at 16 and 2048 tokens, and
  each page's first paint, with nothing cached and again with the scripts cached.

Before each part the report waits (`--settle` seconds at most) until the one-minute load
average is under `--quiet-load`. Each part prints its own load average; a shared machine makes
every wall time longer, so read the ratios (engine ÷ floor, app ÷ floor app) before the absolute times.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCH_VENV_PYTHON = Path("/work/bench-venv/bin/python")
PARTS = ("engine", "rerun", "decoder", "control", "users")


def commands(args) -> dict[str, list[str]]:
    """The file name of each output and the command that makes it."""
    engine_python = args.engine_python or (str(BENCH_VENV_PYTHON) if BENCH_VENV_PYTHON.exists() else sys.executable)
    engine_sizes = ["128"] if args.quick else ["1024", "2048"]
    engine = [engine_python, str(HERE / "engine_overhead.py"), "--sizes", *engine_sizes, "--native-blas"]
    if args.quick:
        engine += ["--repeats", "1"]
    return {  # in this order: the ratios that need the most time last, so a time-out loses least
        "engine_1thread": [*engine, "--threads", "1"],
        "engine_2threads": [*engine, "--threads", "2", "--no-steps"],
        "server_rerun": [sys.executable, str(HERE / "server_rerun.py"), "--sizes", "16",
                         *(["--repeats", "1"] if args.quick else [])],
        "payload_step_through": [sys.executable, str(HERE / "payload.py"), "--sizes", "16", "--pages",
                                 "pages/step.py"],
        "decoder_forward": [sys.executable, str(HERE / "decoder_forward.py"), "--repeats",
                            "1" if args.quick else "3"],
        "many_users": [sys.executable, str(HERE / "many_users.py"), "--users", *(["2"] if args.quick else ["10", "30"]),
                       "--floor", "--floor-numbers", "--duration", str(args.duration), "--settle", "3",
                       *(["--tokens", "4"] if args.quick else [])],
        "control_latency": [sys.executable, str(HERE / "control_latency.py"), "--repeats", str(args.repeats),
                            "--budget", str(args.budget), "--floor",
                            *(["--sizes", "16", "--pages", "cell"] if args.quick else [])],
    }


PART_OF = {
    "engine_1thread": "engine", "engine_2threads": "engine",
    "server_rerun": "rerun", "payload_step_through": "rerun", "control_latency": "control", "many_users": "users",
    "decoder_forward": "decoder",
}


def settle(most_seconds: float, quiet_load: float) -> None:
    """Wait (at most `most_seconds`) until the one-minute load average is under `quiet_load`.

    A part that starts right after the thirty browsers of `many_users.py` would otherwise print
    a load of 20 or more (the average of the last minute) and share the cores with whatever of
    them is still closing."""
    started = time.monotonic()
    load = os.getloadavg()[0]
    while load >= quiet_load and time.monotonic() - started < most_seconds:
        time.sleep(5)
        load = os.getloadavg()[0]
    waited = time.monotonic() - started
    if waited >= 1:
        print(f"  waited {waited:.0f} s for a quiet machine: load {load:.1f}", file=sys.stderr, flush=True)


def run_parts(args, out: Path) -> dict[str, str]:
    texts = {}
    for name, command in commands(args).items():
        if PART_OF[name] not in args.parts:
            continue
        path = out / f"{name}.txt"
        if not (args.reuse and path.exists()):
            settle(args.settle, args.quiet_load)
            print(f"running {name} …", file=sys.stderr, flush=True)
            started = time.monotonic()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=args.part_timeout)
            path.write_text(done.stdout + (f"\n[exit {done.returncode}]\n{done.stderr[-2000:]}" if done.returncode
                                           else ""), encoding="utf-8")
            print(f"  {time.monotonic() - started:.0f} s, exit {done.returncode}", file=sys.stderr, flush=True)
        texts[name] = path.read_text(encoding="utf-8")
    return texts


# --- reading the outputs -------------------------------------------------------------------


def load_of(text: str) -> str:
    match = re.search(r"load average ([\d.]+)", text)
    return f"load {match.group(1)}" if match else "load ?"


def engine_rows(text: str) -> dict[tuple[int, str, str, str], tuple[float, float]]:
    """(n, dtype, mask, floor) → (wall ratio, CPU ratio) from engine_overhead.py's table."""
    rows = {}
    for match in re.finditer(
        r"^\s*(\d+)\s+(float\d+)\s+(none|causal)\s+(tight|torch)\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+"
        r"([\d.]+)", text, re.MULTILINE
    ):
        rows[(int(match.group(1)), match.group(2), match.group(3), match.group(4))] = (
            float(match.group(5)), float(match.group(6)))
    return rows


def engine_lines(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    lines = []
    for threads, name in ((1, "engine_1thread"), (2, "engine_2threads")):
        text = texts.get(name)
        rows = engine_rows(text) if text else {}
        tight = rows.get((2048, "float32", "none", "tight"))
        lines.append((
            f"engine ÷ tight NumPy, float32, n = m = 2048, {threads} thread(s) ≤ 1.3",
            f"wall {tight[0]:.2f}, cpu {tight[1]:.2f} ({load_of(text)})" if tight else "not measured",
            verdict(tight and max(tight) <= 1.3, tight),
        ))
        if text and "PyTorch not installed" in text:
            lines.append((f"engine ÷ PyTorch, float64, n = 1024, {threads} thread(s) ≤ 1.0",
                          "PyTorch not installed in the engine's environment", "not measured"))
        else:
            torch = rows.get((1024, "float64", "none", "torch"))
            lines.append((
                f"engine ÷ PyTorch, float64, n = 1024, {threads} thread(s) ≤ 1.0",
                f"wall {torch[0]:.2f}, cpu {torch[1]:.2f}" if torch else "not measured",
                verdict(torch and max(torch) <= 1.0, torch),
            ))
    from engine_overhead import COMPARISONS, RECORD_MEMORY, SCORE_STEPS, WHOLE_CALL  # the step table's row names

    text = texts.get("engine_1thread", "")
    step, size = step_times(text), re.search(r"the engine's steps, n = m = (\d+)", text)
    floor_softmax, new_mappings, whole_call_new_mappings = COMPARISONS
    if size and {RECORD_MEMORY, SCORE_STEPS, WHOLE_CALL, *COMPARISONS} <= step.keys():
        lines.append((
            f"  where the engine's time goes, 1 thread, n = {size.group(1)} (its step table, CPU ms)",
            f"records written {step[RECORD_MEMORY]:.1f} (in new mappings: {step[new_mappings]:.1f}); "
            f"softmax {step[SCORE_STEPS]:.1f} (the floor's in place: {step[floor_softmax]:.1f}); "
            f"whole call {step[WHOLE_CALL]:.1f} (in new mappings: {step[whole_call_new_mappings]:.1f})",
            "(profile)",
        ))
    return lines


def step_times(text: str) -> dict[str, float]:
    """Step name → CPU ms from engine_overhead.py's step table."""
    return {match.group(1): float(match.group(2))
            for match in re.finditer(r"^  (\S.*?)\s{2,}([\d.]+)\s+\d+%$", text, re.MULTILINE)}


def rerun_lines(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    lines = []
    text = texts.get("server_rerun", "")
    match = re.search(r"^\s+16\s+\d+\s+\d+\s+\d+\s+(\d+)", text, re.MULTILINE)
    lines.append(("step-through rerun after dk moves (AppTest), 16 tokens ≤ 150 ms",
                  f"{match.group(1)} ms median ({load_of(text)})" if match else "not measured",
                  verdict(match and int(match.group(1)) <= 150, match)))
    text = texts.get("payload_step_through", "")
    match = re.search(r"^step \(overview\)\s+16\s+.*?([\d.]+)\s+met|^step \(overview\)\s+16\s+.*?"
                      r"([\d.]+)\s+\S+$", text, re.MULTILINE)
    seconds = float(match.group(1) or match.group(2)) if match else None
    lines.append(("step-through overview (all stages) rerun, 16 tokens ≤ 150 ms",
                  f"{seconds * 1e3:.0f} ms, one run ({load_of(text)})" if match else "not measured",
                  verdict(seconds is not None and seconds <= 0.150, match)))
    return lines


PAINT_KINDS = ("first paint", "revisit paint")
"""control_latency.py's rows of a page's openings (nothing cached, scripts cached), not controls."""


def control_lines(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    text = texts.get("control_latency", "")
    rows = re.findall(r"^(\S+)\s+(\d+) (.{14}) (.{40}) (sidebar|page)\s+(\d+)\s+(\d+|—)\s+(\d+|—)\s+(\d+)\s+"
                      r"(\d+)\s+(.+)$", text, re.MULTILINE)
    floor_rows = [row for row in rows if row[0].startswith("floor")]
    rows = [row for row in rows if not row[0].startswith("floor")]
    lines = []
    for label, n, target, kinds in (("first paint, every page", "16", 1500, {"first paint"}),
                                    ("first paint again, scripts cached, every page", "16", 1500,
                                     {"revisit paint"}),
                                    ("control → repaint median, every control, 16 tokens", "16", 250, None),
                                    ("control → repaint median, every control, 2048 tokens", "2048", 1000, None)):
        chosen = [row for row in rows if row[1] == n and ((row[2].strip() in kinds) if kinds else
                                                          row[2].strip() not in PAINT_KINDS)]
        timed = [row for row in chosen if row[6] != "—"]
        missing = [row for row in chosen if row[6] == "—"]
        if not timed:
            lines.append((f"{label} ≤ {target} ms", "not measured", "not measured"))
            continue
        worst = max(timed, key=lambda row: int(row[6]))
        over = [row for row in timed if int(row[6]) > target]
        ordered = sorted(int(row[6]) for row in timed)
        measured = (f"{len(timed)} measured, {len(over)} over; median of medians {ordered[len(ordered) // 2]} ms, "
                    f"worst {worst[6]} ms ({worst[0]}: {worst[3].strip()[:24]}); {load_of(text)}")
        if missing:
            measured += f"; {len(missing)} not measured or no rerun"
        errors = sum(int(row[9]) for row in chosen)
        if errors:
            measured += f"; {errors} error(s)"
        lines.append((f"{label} ≤ {target} ms", measured, verdict(not over and not errors, True)))
    for n in ("16", "2048"):
        timed = [row for row in floor_rows if row[1] == n and row[6] != "—"]
        if timed:
            lines.append((f"  floor app (one heatmap, nothing else), {n} tokens, same run", "; ".join(
                f"{row[0]} {row[2].strip().lower()} {row[6]} ms" for row in timed), "(profile)"))
    return lines


def users_lines(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    text = texts.get("many_users", "")
    rows = {}
    for match in re.finditer(r"^\s*(app|floor|floor\+numbers)\s+(\d+)\s+\d+\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s+\d+"
                             r"\s+(\d+)\s+(\d+).*?([\d.]+)?$", text, re.MULTILINE):
        rows[(match.group(1), int(match.group(2)))] = match
    lines = []
    for users in (10, 30):
        app, floor = rows.get(("app", users)), rows.get(("floor", users))
        if not (app and floor):
            lines.append((f"{users} sessions: 0 errors, no leak, p95 ≤ 2 × floor app", "not measured",
                          "not measured"))
            continue
        errors, isolation, p95 = int(app.group(4)), int(app.group(5)), int(app.group(7))
        floor_p95 = int(floor.group(7))
        ratio = p95 / floor_p95 if floor_p95 else float("inf")
        lines.append((
            f"{users} sessions: 0 errors, no leak, p95 ≤ 2 × floor app",
            f"{app.group(3)} changes, {errors} errors, {isolation} leaks; p95 {p95} ms vs floor {floor_p95} ms = "
            f"{ratio:.2f}× ({load_of(text)})",
            verdict(errors == 0 and isolation == 0 and int(floor.group(4)) == 0 and ratio <= 2, True),
        ))
        numbers = rows.get(("floor+numbers", users))
        if numbers and int(numbers.group(7)):
            lines.append(("  the same, against the floor app with its weights printed in the cells as the app does",
                          f"p95 floor {int(numbers.group(7))} ms: app ÷ floor = {p95 / int(numbers.group(7)):.2f}×",
                          "(profile)"))
    return lines


def decoder_lines(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    text = texts.get("decoder_forward", "")
    label = "decoder page: rerun after a new prompt (server's share of the first paint), 64 tokens ≤ 3 s"
    if "not installed" in text:
        return [(label, "the decoder checkpoint is not installed", "not measured")]
    match = re.search(r"^\s+64\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+$", text, re.MULTILINE)
    seconds = float(match.group(1)) if match else None
    return [(label, f"{seconds:.2f} s, Plotly {match.group(2)} MB ({load_of(text)})" if match else "not measured",
             verdict(seconds is not None and seconds <= 3, match))]


def verdict(met, measured) -> str:
    if not measured:
        return "not measured"
    return "met" if met else "NOT MET"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for the parts' outputs (default: a new one in /tmp)")
    parser.add_argument("--reuse", action="store_true", help="read outputs already in --out instead of running again")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--engine-python", help="Python for engine_overhead.py (one with torch for the PyTorch row)")
    parser.add_argument("--duration", type=float, default=30, help="seconds of changes per session in many_users.py")
    parser.add_argument("--repeats", type=int, default=3, help="changes per control in control_latency.py")
    parser.add_argument("--budget", type=float, default=150, help="seconds of changes per page in control_latency.py")
    parser.add_argument("--quick", action="store_true", help="a tiny run of every part (checks that the report "
                        "works; its numbers are not the targets' sizes)")
    parser.add_argument("--part-timeout", type=float, default=3600, help="seconds one part may take")
    parser.add_argument("--settle", type=float, default=300, help="seconds to wait at most, before each part, "
                        "for the one-minute load average to fall under --quiet-load (0: do not wait)")
    parser.add_argument("--quiet-load", type=float, default=1.5, help="load average counted as a quiet machine")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="speed-report-"))
    out.mkdir(parents=True, exist_ok=True)
    texts = run_parts(args, out)
    lines = engine_lines(texts) + rerun_lines(texts) + control_lines(texts) + users_lines(texts)
    lines += decoder_lines(texts)
    width = max(len(target) for target, _, _ in lines)
    print(f"speed report, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores; "
          f"outputs in {out}\n")
    print(f"{'target':<{width}}  {'verdict':<12}  measured")
    for target, measured, result in lines:
        print(f"{target:<{width}}  {result:<12}  {measured}")


if __name__ == "__main__":
    main()
