"""Nothing a student does breaks a page: every control of every page, found in the running
app, at its extremes, alone and with every option of the page's pickers, and every URL
setting at its extremes in a link (see `every_control.py` for how scenarios are made).

CI runs every single move and every link, and a fixed, seeded sample of the pairs and of
the moves on widgets that appear later; `benchmarks/every_control.py` runs them all.
"""

from __future__ import annotations

import logging

import pytest
from every_control import Move, Scenario, app_pages, explore, moves_of, run_scenario, url_scenarios, widgets

from attention_core import MAX_DIM

PAIRS_PER_PAGE = 15
"""Extreme × picker pairs (and moves on revealed widgets) run per page in CI, chosen with SEED."""
SEED = 9

PAGES = app_pages()


@pytest.fixture(autouse=True)
def _quiet_streamlit_logs():
    """A crash is reported by the test itself; Streamlit's own log of each traceback is noise."""
    logger = logging.getLogger("streamlit")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


def _report(failures) -> str:
    lines = [f"{len(failures)} scenario(s) fail:"]
    for outcome in failures[:25]:
        lines.append(f"  {outcome.scenario}\n      {outcome.problems[0][:400]}")
    return "\n".join(lines)


# The crash that started issue 9: dk = 512 on a stage drawing Q or K (2 × 512 wide, ≤ 24 rows).
ZOOM_CRASH = Scenario(
    "pages/step_through.py",
    (Move("dk", "number", MAX_DIM), Move("stage", "labels", ("2 · Q, K, V",))),
)


@pytest.mark.parametrize("page", PAGES)
def test_every_control_of_the_page_at_its_extremes(page):
    keep = [ZOOM_CRASH] if ZOOM_CRASH.page == page else []
    outcomes = list(explore(page, sample=PAIRS_PER_PAGE, seed=SEED, keep=keep))
    run = [outcome for outcome in outcomes if not outcome.skipped]
    assert len(run) >= 20, f"only {len(run)} scenarios ran on {page}: the widgets were not found"
    failures = [outcome for outcome in outcomes if outcome.problems]
    assert not failures, _report(failures)


@pytest.mark.parametrize("page", PAGES)
def test_every_url_setting_at_its_extremes_in_a_link(page):
    failures = [outcome for outcome in map(run_scenario, url_scenarios(page, each_alone=False)) if outcome.problems]
    assert not failures, _report(failures)


def test_the_walk_finds_widgets_from_the_running_app():
    """The enumeration reads the page: the sidebar's dk slider at both ends, every stage."""
    outcome = run_scenario(Scenario("pages/step_through.py"))
    found = {widget.key: widget for widget in widgets(outcome.at)}
    assert [move.value for move in moves_of(found["dk"])] == [1, MAX_DIM]
    assert len(moves_of(found["stage"])) == len(found["stage"].options) >= 7
    assert ZOOM_CRASH.moves[1].value[0] in found["stage"].options, "the stage label the crash test sends is shown"
