"""Nothing a student does breaks a page: every control of every page, found in the running
app, at its extremes, alone and with every option of the page's pickers, and every URL
setting at its extremes in a link (see `every_control.py` for how scenarios are made).

CI runs every single move and every link, and a fixed, seeded sample of the pairs and of
the moves on widgets that appear later; `benchmarks/every_control.py` runs them all.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from apptest_helpers import APP
from control_walk import (
    PICKER_TYPES,
    Move,
    Scenario,
    apply,
    explore,
    moves_of,
    page_files,
    run_scenario,
    url_scenarios,
    widgets,
)
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Widget

from attention_core import MAX_DIM, tokenize
from attention_core.figures import MAX_DRAWN_SIDE
from attention_core.figures.matrices import matrix_heatmap
from attention_core.lessons.quiz import MAX_ASKED_ROWS
from ui.i18n import translate
from ui.settings import DEFAULTS
from ui.views import ZOOM_SIDE

PAIRS_PER_PAGE = 15
"""Extreme × picker pairs (and moves on revealed widgets) run per page in CI, chosen with SEED."""
SEED = 9

PAGES = page_files()


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


# The crash that started issue 9: dk = 512 on a stage drawing Q or K (2 × 512 wide, ≤ 24 rows),
# whose zoom window then slides across only.
ZOOM_TAB = translate("tab.zoom", "en", side=ZOOM_SIDE)
ZOOM_CRASH = Scenario(
    "pages/step.py",
    (Move("dk", "number", MAX_DIM), Move("stage", "labels", ("2 · Q, K, V",)),
     Move("step-qkv-q-tab", "labels", (ZOOM_TAB,))),
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
    outcome = run_scenario(Scenario("pages/step.py"))
    found = {widget.key: widget for widget in widgets(outcome.at)}
    assert [move.value for move in moves_of(found["dk"])] == [1, MAX_DIM]
    assert len(moves_of(found["stage"])) == len(found["stage"].options) >= 7
    assert ZOOM_CRASH.moves[1].value[0] in found["stage"].options, "the stage label the crash test sends is shown"


def test_the_walk_opens_views_and_reaches_the_controls_inside_them():
    """A large matrix's zoom sliders are drawn only while its Zoom view is chosen: the walk chooses it."""
    outcome = run_scenario(ZOOM_CRASH)
    assert not outcome.problems and not outcome.skipped, (outcome.problems, outcome.skipped)
    found = {widget.key: widget for widget in widgets(outcome.at)}
    assert ZOOM_TAB in found["step-qkv-q-tab"].options
    assert "step-qkv-q-zoom-column" in found, "the zoom window's slider, in the chosen view"
    assert "step-qkv-q-zoom-row" not in found, "Q has 11 rows: its window does not slide down"
    start = run_scenario(Scenario("pages/step.py")).at
    pickers = [widget for widget in widgets(start) if (widget.key or "").endswith("-tab")]
    assert pickers and all(moves_of(picker) for picker in pickers), "every matrix's view picker is walked"


def test_each_walk_opens_the_page_it_names():
    """A walk of one page must not draw another: each page has its own first heading (the
    walk once drew the step-through for every page whose file name was not its address)."""
    headings = {}
    for page in PAGES:
        at = run_scenario(Scenario(page)).at
        headings[page] = at.main.title[0].value if at.main.title else None
    assert None not in headings.values(), headings
    assert len(set(headings.values())) == len(PAGES), headings


# --- §5: the sidebar shows only what a page uses -----------------------------------------------


def _main_fingerprint(at) -> str:
    """Everything the page's main area shows: figures, tables, text (not the sidebar itself)."""
    main = at.main
    parts = [chart.proto.spec for chart in main.get("plotly_chart")]
    parts += [frame.value.to_json() for frame in main.dataframe]
    for kind in ("markdown", "caption", "latex", "info", "warning", "subheader", "metric"):
        parts += [str(element.value) for element in main.get(kind)]
    return "\n".join(parts)


def _changing_moves(widget) -> list[Move]:
    """Moves that change `widget`'s value (its extremes or options other than the current one)."""
    current = widget.value
    values = current if isinstance(current, list) else [] if current is None else [current]
    try:
        shown = [widget.format_func(value) for value in values]
    except AttributeError:  # not a widget with options
        shown = None
    moves = []
    for move in moves_of(widget):
        if move.kind == "label":
            changes = [move.value] != shown
        elif move.kind == "labels":
            changes = bool(move.value) and list(move.value) != shown
        else:
            changes = move.value != current
        if changes:
            moves.append(move)
    return moves


def _view(scenario: Scenario) -> tuple[str, tuple]:
    outcome = run_scenario(scenario)
    assert not outcome.problems, (scenario, outcome.problems)
    sidebar_keys = tuple(widget.key for widget in outcome.at.sidebar if isinstance(widget, Widget))
    return _main_fingerprint(outcome.at), sidebar_keys


@pytest.mark.parametrize("page", PAGES)
def test_every_enabled_sidebar_control_changes_the_page(page):
    """No control silently does nothing: each sidebar widget a page leaves enabled, moved,
    changes what the page shows (in its first view, or in one its own buttons or pickers lead to) or
    reveals another control; the greyed-out ones come with a caption saying so."""
    start = run_scenario(Scenario(page))
    assert not start.problems
    main_widgets = [widget for widget in start.at.main if isinstance(widget, Widget) and not widget.disabled]
    main_pickers = [  # buttons first (the quiz shows its weights once Reveal is pressed), then pickers
        *[move for widget in main_widgets if widget.type == "button" for move in moves_of(widget)],
        *[move for widget in main_widgets if widget.type in PICKER_TYPES for move in _changing_moves(widget)],
    ]
    sidebar = [widget for widget in start.at.sidebar if isinstance(widget, Widget) and widget.key]
    silent = []
    for widget in sidebar:
        if widget.disabled:
            continue
        if not any(
            _view(Scenario(page, (*first, move))) != _view(Scenario(page, first))
            for move in _changing_moves(widget)[:3]
            for first in [(), *[(pick,) for pick in main_pickers]]
        ):
            silent.append(widget.key)
    assert not silent, f"sidebar controls that change nothing on {page}: {silent}"
    greyed = [widget.key for widget in sidebar if widget.disabled and widget.key != "d_model"]
    captions = [caption.value for caption in start.at.sidebar.caption]
    assert bool(greyed) == (t_en("sidebar.unused") in captions), (greyed, captions)


def t_en(key: str, **values) -> str:
    return translate(key, "en", **values)


def test_a_setting_greyed_out_on_one_page_keeps_its_value_for_the_others():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.switch_page("pages/step.py").run()
    at.slider(key="dk").set_value(5).run()
    at.switch_page("pages/multi-head.py").run()
    assert at.slider(key="dk").disabled and at.slider(key="dk").value == 5
    at.switch_page("pages/your-numbers.py").run()
    assert at.slider(key="dk").disabled and at.slider(key="dk").value == 5
    at.switch_page("pages/step.py").run()
    assert not at.exception
    assert not at.slider(key="dk").disabled and at.slider(key="dk").value == 5


def test_why_sqrt_dk_says_which_dk_drives_which_section():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["dk"] = 7
    at.switch_page("pages/why-sqrt-dk.py").run()
    experiment_dk = at.select_slider(key="why_dk").value
    assert experiment_dk != 7
    notes = [caption.value for caption in at.main.caption if "sidebar" in caption.value]
    assert any(f"dk = {experiment_dk}" in note and "dk = 7" in note for note in notes), notes


# --- §5: the quiz under a causal mask -------------------------------------------------------------


def _quiz(mask_kind: str = "causal") -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state["mask_kind"] = mask_kind
    at.switch_page("pages/quiz.py").run()
    assert not at.exception
    return at


def _choose(at: AppTest, key: str, label: str) -> None:
    assert apply(at, Move(key, "labels", (label,))), key
    at.run()
    assert not at.exception


def test_quiz_does_not_ask_a_query_with_one_possible_key():
    at = _quiz()
    n = min(len(tokenize(DEFAULTS.text)), MAX_ASKED_ROWS)
    asked = [widget.key for widget in widgets(at) if (widget.key or "").startswith("quiz_guess_")]
    assert asked == [f"quiz_guess_{row}" for row in range(1, n)], "row 0 may only look at itself"
    assert any(t_en("quiz.single_key", rows="0:The").split(".")[0] in caption.value for caption in at.caption)
    at.button(key="quiz_reveal").click().run()
    assert at.metric[0].value == f"0 / {n - 1}", "blank answers to the real questions only"


def test_quiz_sketch_opens_on_a_query_with_keys_to_share():
    at = _quiz()
    _choose(at, "quiz_mode", t_en("quiz.mode.sketch"))
    row = at.selectbox(key="quiz_row")
    assert row.value == 1 and not any(option.startswith("0:") for option in row.options)
    sliders = [widget for widget in widgets(at) if (widget.key or "").startswith("quiz_sketch_")]
    assert len(sliders) == 2, "query 1 under a causal mask shares its attention between keys 0 and 1"


def test_switching_the_kind_of_quiz_is_not_a_changed_question():
    at = _quiz("none")
    at.button(key="quiz_reveal").click().run()
    changed = t_en("quiz.changed")
    _choose(at, "quiz_mode", t_en("quiz.mode.sketch"))
    _choose(at, "quiz_mode", t_en("quiz.mode.argmax"))
    assert changed not in [info.value for info in at.info]
    at.button(key="quiz_reveal").click().run()
    at.slider(key="dk").set_value(3).run()  # a changed setting still says so
    assert changed in [info.value for info in at.info]


# --- §5: the compare page names the active quick comparison ----------------------------------------


def test_compare_box_names_the_comparison_on_show_until_a_side_is_changed_by_hand():
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.switch_page("pages/compare.py").run()
    box = at.selectbox(key="compare.preset")
    assert box.options[box.index] == t_en("compare.preset.scaled_vs_unscaled"), "the first visit's comparison"
    assert apply(at, Move("compare.preset", "label", t_en("compare.preset.dk_4_vs_64")))
    at.run()
    assert (at.number_input(key="compare.a.dk").value, at.number_input(key="compare.b.dk").value) == (4, 64)
    box = at.selectbox(key="compare.preset")
    assert box.index is not None and box.options[box.index] == t_en("compare.preset.dk_4_vs_64")
    at.number_input(key="compare.b.dk").set_value(10).run()
    assert at.selectbox(key="compare.preset").index is None, "hand-made sides match no preset: the placeholder"


# --- §5: the real model's labels ------------------------------------------------------------------


def test_a_matrix_drawn_in_blocks_across_keeps_its_row_labels():
    """A wide matrix with few rows is drawn in column blocks only: its rows keep their tokens."""
    rows = ["0:the", "1:cat", "2:sat"]
    columns = [f"d{index}" for index in range(3 * MAX_DRAWN_SIDE)]
    figure = matrix_heatmap(np.zeros((3, len(columns))), rows, columns)
    trace = figure.data[0]
    assert list(trace.y) == rows
    assert len(trace.x) == MAX_DRAWN_SIDE and trace.x[0] == "d0–d2"


FONT_PIXELS_PER_CHARACTER = 7  # the table's 14 px font averages about 7 px per Latin character


def test_real_model_token_table_columns_fit_long_tokens():
    pytest.importorskip("tokenizers")
    at = AppTest.from_file(str(APP), default_timeout=240)
    at.session_state["rm_text"] = "The suitcase did not fit because it was too big"
    at.switch_page("pages/real-model.py").run()
    assert not at.exception
    if not at.dataframe:
        pytest.skip("no real-model checkpoint installed")
    table = next(frame for frame in at.dataframe if "suitcase" in frame.value.to_string())
    config = json.loads(table.proto.columns)
    for name, cells in table.value.items():
        longest = max(len(str(cell)) for cell in cells)
        assert config[name]["width"] >= FONT_PIXELS_PER_CHARACTER * longest + 16, (name, list(cells), config[name])
