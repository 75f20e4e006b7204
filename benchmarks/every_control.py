"""Every control of every page, the whole product: what `tests/test_every_control.py` samples.

For each page of `app.py`: every widget found in the running app (AppTest) at its extremes
alone, every numeric extreme paired with every option of every picker, the widgets those
moves reveal walked in turn (up to three moves), and links carrying every URL setting at
its extremes (combined, and each setting alone). Prints per page the number of scenarios,
how many failed (an exception, an st.error, or nothing drawn without a notice), and the
wall time; then the failures. Exits with 1 if any scenario failed.

    python benchmarks/every_control.py [--pages step quiz] [--sample N] [--no-links] [--limit N]
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from control_walk import explore, page_files, run_scenario, url_scenarios  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="*", help="page names (step, masks, …); default: every page of app.py")
    parser.add_argument("--sample", type=int, default=None, help="pairs per page (seeded), as CI runs; default: all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-links", action="store_true", help="skip the URL links")
    parser.add_argument("--limit", type=int, default=None, help="stop each page after this many scenarios")
    options = parser.parse_args()
    logging.getLogger("streamlit").setLevel(logging.CRITICAL)
    os.chdir(ROOT)
    pages = [f"pages/{name}.py" for name in options.pages] if options.pages else page_files()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'page':<24} {'controls':>9} {'links':>6} {'failed':>7} {'skipped':>8} {'seconds':>8}")
    failures, totals = [], [0, 0, 0, 0, 0.0]
    for page in pages:
        start = time.perf_counter()
        outcomes = list(itertools.islice(explore(page, sample=options.sample, seed=options.seed), options.limit))
        links = [] if options.no_links else [run_scenario(scenario) for scenario in url_scenarios(page, True)]
        links = links[: options.limit]
        seconds = time.perf_counter() - start
        failed = [outcome for outcome in outcomes + links if outcome.problems]
        skipped = sum(1 for outcome in outcomes if outcome.skipped)
        failures += failed
        row = [len(outcomes), len(links), len(failed), skipped, seconds]
        totals = [total + value for total, value in zip(totals, row, strict=True)]
        name = page.removeprefix("pages/").removesuffix(".py")
        print(f"{name:<24} {row[0]:>9} {row[1]:>6} {row[2]:>7} {row[3]:>8} {row[4]:>8.0f}", flush=True)
    print(f"{'total':<24} {totals[0]:>9} {totals[1]:>6} {totals[2]:>7} {totals[3]:>8} {totals[4]:>8.0f}")
    for outcome in failures:
        print(f"\nFAILED {outcome.scenario}\n  {outcome.problems[0][:600]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
