"""Every control of every page, found in the running app and driven to its extremes.

Nothing here lists a widget by hand. A page is run in AppTest, its widgets are read from
the element tree, and each one yields *moves*: a slider or number input at its minimum and
maximum, every option of a select box, radio, segmented control, pills or select slider,
a few subsets of a multiselect, each toggle flipped, each button clicked, each text box
emptied or cut to one word, each tab of a tab group that reruns the page opened (the
zoom tab of a large matrix holds sliders of its own). A *scenario* is a fresh AppTest that opens the page (optionally
through a link carrying URL settings) and makes some moves, one rerun each.

`explore(page)` walks the states breadth first: every move alone; every numeric extreme
paired with every option of every picker; and whenever a scenario shows a widget not seen
before (a zoom tab that appears at dk = 512 and the sliders inside it, the padding picker
that appears with the padding mask, a cell picker whose options changed with the sentence), that widget's moves
are tried from that state, up to `MAX_DEPTH` moves.

Each scenario must end with no exception, no `st.error`, and, on a page that draws a chart
or a table by default, a chart or a table (or a notice saying why there is none).

Used by `tests/test_every_control.py` (a fixed, seeded sample, in CI) and by
`benchmarks/every_control.py` (the whole product).
"""

from __future__ import annotations

import ast
import inspect
import random
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from apptest_helpers import APP
from streamlit import config as streamlit_config
from streamlit.proto.ButtonGroup_pb2 import ButtonGroup as ButtonGroupProto
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.state.common import user_key_from_element_id
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Widget

MAX_DEPTH = 3
"""Longest chain of moves a walk makes (a move, a widget it revealed, one more it revealed)."""

MAX_OPTIONS_EACH = 12
"""A select slider, or in a sampled walk a picker that a move revealed, with more options than
this is tried at its ends and middle only."""

PICKER_TYPES = ("selectbox", "radio", "button_group")
"""Single-choice widgets whose every option is paired with every numeric extreme."""

ONE_WORD = "cat"


def page_files() -> list[str]:
    """The pages `app.py` hands to `st.navigation`, as `pages/<name>.py` paths, in menu order."""
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "PAGES" for target in node.targets):
            return [ast.literal_eval(entry.elts[0]) for entry in node.value.elts]
    raise AssertionError("app.py has no PAGES table")


@dataclass(frozen=True)
class Move:
    """One thing a user does to one widget (found by its key)."""

    key: str
    kind: str  # "number" | "labels" | "label" | "toggle" | "click" | "text" | "tab"
    value: Any

    def __str__(self) -> str:
        shown = self.value if not isinstance(self.value, str) or len(self.value) < 30 else self.value[:27] + "..."
        return f"{self.key}:{self.kind}={shown!r}"


@dataclass(frozen=True)
class Scenario:
    """A fresh session that opens `page` (through a link carrying `query`) and makes `moves`."""

    page: str
    moves: tuple[Move, ...] = ()
    query: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        parts = [self.page.removeprefix("pages/").removesuffix(".py")]
        if self.query:
            parts.append("?" + "&".join(f"{key}={value[:20]}" for key, value in self.query))
        parts += [str(move) for move in self.moves]
        return " | ".join(parts)


@dataclass
class Outcome:
    scenario: Scenario
    problems: list[str] = field(default_factory=list)
    skipped: str | None = None  # a move whose widget was not there (the state did not offer it)
    at: AppTest | None = None


@dataclass(frozen=True)
class TabGroup:
    """An `st.tabs` group with a key, which reruns the page when a tab is clicked: a control
    like a widget (only its open tab is drawn), though AppTest lists it as a block."""

    key: str
    options: tuple[str, ...]
    type: str = "tabs"
    disabled: bool = False


def widgets(at: AppTest) -> list[Widget | TabGroup]:
    """Every widget and tab group on the current page (sidebar and main), in page order."""
    found = []
    for node in at._tree:
        if isinstance(node, Widget):
            found.append(node)
        elif isinstance(node, Block) and node.type == "tab_container":
            key = user_key_from_element_id(node.proto.tab_container.id)
            if key:
                found.append(TabGroup(key, tuple(tab.label for tab in node.children.values())))
    return found


def find_widget(at: AppTest, key: str) -> Widget | TabGroup | None:
    for widget in widgets(at):
        if widget.key == key:
            return widget
    return None


def signature(widget: Widget | TabGroup) -> tuple:
    """What a widget offers: a widget whose signature changed offers new moves."""
    if widget.type in ("slider", "number_input"):
        return (widget.type, widget.proto.min, widget.proto.max)
    return (widget.type, tuple(getattr(widget, "options", ())))


def _spread(options: list[str]) -> list[str]:
    if len(options) <= MAX_OPTIONS_EACH:
        return options
    return [options[0], options[len(options) // 2], options[-1]]


def moves_of(widget: Widget | TabGroup) -> list[Move]:
    """What a user can do to `widget`, at its extremes."""
    if widget.key is None or widget.disabled:
        return []
    key, kind = widget.key, widget.type
    if kind == "tabs":
        return [Move(key, "tab", label) for label in widget.options[1:]]  # the first is open already
    if kind == "slider":
        cast = int if widget.proto.data_type == widget.proto.INT else float
        low, high = cast(widget.min), cast(widget.max)
        if isinstance(widget.value, (list, tuple)):
            return [Move(key, "number", (low, low)), Move(key, "number", (high, high))]
        return [Move(key, "number", low), Move(key, "number", high)]
    if kind == "number_input":
        proto = widget.proto
        ends = [proto.min if proto.has_min else -(10**9), proto.max if proto.has_max else 10**9]
        cast = int if proto.data_type == proto.INT else float
        return [Move(key, "number", cast(end)) for end in ends]
    if kind in ("selectbox", "radio"):
        return [Move(key, "label", label) for label in widget.options]
    if kind == "select_slider":
        return [Move(key, "labels", (label,)) for label in _spread(widget.options)]
    if kind == "button_group":
        options = widget.options
        if widget.proto.click_mode == ButtonGroupProto.ClickMode.SINGLE_SELECT:
            moves = [Move(key, "labels", (label,)) for label in options]
            if not widget.proto.required:
                moves.append(Move(key, "labels", ()))  # a second click on the chosen option clears it
            return moves
        return _subsets(key, options)
    if kind == "multiselect":
        return _subsets(key, widget.options)
    if kind in ("toggle", "checkbox"):
        return [Move(key, "toggle", not widget.value)]
    if kind == "button":
        return [Move(key, "click", True)]
    if kind in ("text_area", "text_input"):
        return [Move(key, "text", ""), Move(key, "text", ONE_WORD)]
    return []  # download buttons (they do not rerun the page) and anything new


def _subsets(key: str, options: list[str]) -> list[Move]:
    subsets = {(), tuple(options), tuple(options[:1]), tuple(options[-1:]), tuple(options[::2])}
    return [Move(key, "labels", subset) for subset in sorted(subsets, key=lambda s: (len(s), s))]


def _send_wire_state(widget: Widget, state: WidgetState) -> None:
    """Make `widget` report `state` on the next run, as the browser would.

    AppTest's own setters take option *values*, which a generated test does not know; the
    browser sends the option *labels* it shows, and so does this.
    """
    state.id = widget.id
    reporting = {"_widget_state": property(lambda _: state)}
    widget.__class__ = type(widget.__class__.__name__, (widget.__class__,), reporting)


def apply(at: AppTest, move: Move) -> bool:
    """Make `move` on the current page; False when its widget is not there."""
    widget = find_widget(at, move.key)
    if widget is None or widget.disabled:
        return False
    if move.kind == "tab":
        if move.value not in widget.options:
            return False
        at.session_state[move.key] = move.value  # what a click on the tab sets
    elif move.kind == "label":
        if move.value not in widget.options:
            return False
        state = WidgetState()
        state.string_value = move.value
        _send_wire_state(widget, state)
    elif move.kind == "labels":
        if any(label not in widget.options for label in move.value):
            return False
        state = WidgetState()
        state.string_array_value.data[:] = list(move.value)
        _send_wire_state(widget, state)
    elif move.kind == "click":
        widget.click()
    elif move.kind == "toggle":
        widget.set_value(move.value)
    else:  # number, text
        widget.set_value(move.value)
    return True


def page_draws(at: AppTest) -> bool:
    """Whether the page shows a chart or a table."""
    return bool(at.get("plotly_chart") or at.dataframe or at.table)


def _exception_text(exception) -> str:
    """The exception's own message and where it was raised (the page shows a redacted one)."""
    trace = [line.strip() for line in exception.stack_trace if line.strip().startswith("File ")]
    where = trace[-1] if trace else ""
    return f"{exception.proto.type}: {exception.proto.message} ({where})"


def check(at: AppTest, draws_by_default: bool) -> list[str]:
    """What is wrong with the page as it stands: the problems a student would see."""
    problems = [f"exception: {_exception_text(exception)}" for exception in at.exception]
    problems += [f"st.error: {error.value}" for error in at.error]
    if draws_by_default and not page_draws(at) and not (at.warning or at.info):
        problems.append("nothing drawn and no notice saying why")
    return problems


def run_scenario(scenario: Scenario, draws_by_default: bool = True, timeout: float = 120) -> Outcome:
    """Open the page in a fresh session, make each move (one rerun each), check after each run."""
    outcome = Outcome(scenario)
    details = streamlit_config.get_option("client.showErrorDetails")
    streamlit_config.set_option("client.showErrorDetails", "full")  # the served app hides them; a test reads them
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    for key, value in scenario.query:
        at.query_params[key] = value
    at.switch_page(scenario.page)
    try:
        at.run()
        outcome.problems += check(at, draws_by_default)
        for step, move in enumerate(scenario.moves):
            if outcome.problems:
                break
            if not apply(at, move):
                outcome.skipped = f"move {step + 1} ({move}) found no widget to make it on"
                break
            at.run()
            outcome.problems += check(at, draws_by_default)
    except Exception as error:  # a failure of the run itself (e.g. a timeout) is a finding too
        outcome.problems.append(f"run failed: {type(error).__name__}: {error}")
    finally:
        streamlit_config.set_option("client.showErrorDetails", details)
    outcome.at = at
    return outcome


def baseline(page: str) -> tuple[AppTest, bool]:
    """The page as it first opens, and whether it draws a chart or table then."""
    outcome = run_scenario(Scenario(page), draws_by_default=False)
    assert not outcome.problems, f"{page} fails as it opens: {outcome.problems}"
    return outcome.at, page_draws(outcome.at)


def _is_number(label: str) -> bool:
    try:
        float(label)
    except ValueError:
        return False
    return True


def is_numeric(widget: Widget) -> bool:
    """Sliders and number inputs, and pickers whose every option is a number (heads: 1 2 4 8)."""
    if widget.type in ("slider", "number_input", "select_slider"):
        return True
    options = getattr(widget, "options", [])
    return widget.type in PICKER_TYPES and len(options) > 1 and all(map(_is_number, options))


def is_numeric_extreme(move: Move, widget: Widget) -> bool:
    return is_numeric(widget) and move.kind in ("number", "label", "labels") and _is_end(move, widget)


def plan(page: str) -> tuple[list[Scenario], list[Scenario], AppTest, bool]:
    """The scenarios a page starts from: each move alone, and each numeric extreme with each
    picker option. Returns (singles, pairs, the page as it opens, draws_by_default)."""
    at, draws = baseline(page)
    found = widgets(at)
    singles = [Scenario(page, (move,)) for widget in found for move in moves_of(widget)]
    extremes = [
        move for widget in found for move in moves_of(widget) if is_numeric_extreme(move, widget)
    ]
    picks = [move for widget in found if widget.type in PICKER_TYPES for move in moves_of(widget)
             if move.kind in ("label", "labels") and move.value]  # pickers' options (not "cleared")
    pairs = [Scenario(page, (extreme, pick)) for extreme in extremes for pick in picks if pick.key != extreme.key]
    return singles, pairs, at, draws


def _is_end(move: Move, widget: Widget) -> bool:
    """A slider's ends; a picker's first and last option (its middle ones are not extremes)."""
    if widget.type in ("slider", "number_input"):
        return True
    chosen = move.value if move.kind == "label" else (move.value[0] if len(move.value) == 1 else None)
    return chosen in (widget.options[0], widget.options[-1])


def explore(
    page: str, sample: int | None = None, seed: int = 0, keep: Iterable[Scenario] = ()
) -> Iterator[Outcome]:
    """Run a page's scenarios, walking into the widgets each one reveals (breadth first).

    `sample`: run every single move but only this many (seeded) of the extreme × picker
    pairs, and of the moves on revealed widgets other than pickers; a revealed picker (the
    stage picker of a part that opens) has every option run, or its ends and middle when it has
    more than MAX_OPTIONS_EACH. None runs them all. `keep`: scenarios run whatever the sample.
    """
    singles, pairs, at, draws = plan(page)
    rng = random.Random(f"{page}:{seed}")
    if sample is not None and len(pairs) > sample:
        pairs = rng.sample(pairs, sample)
    queue = deque([*singles, *keep, *pairs])
    seen_scenarios = set(queue)
    seen_widgets = {(widget.key, signature(widget)) for widget in widgets(at)}
    revealed_budget = None if sample is None else sample
    while queue:
        scenario = queue.popleft()
        outcome = run_scenario(scenario, draws)
        yield outcome
        if outcome.problems or outcome.skipped or len(scenario.moves) >= MAX_DEPTH:
            continue
        for widget in widgets(outcome.at):
            mark = (widget.key, signature(widget))
            if widget.key is None or mark in seen_widgets:
                continue
            seen_widgets.add(mark)
            moves = moves_of(widget)
            if revealed_budget is not None:  # a sampled walk
                if widget.type in PICKER_TYPES:
                    moves = _spread(moves)  # a picker's every option (its ends and middle if it has many)
                else:
                    moves = moves[: max(0, revealed_budget)]
                    revealed_budget -= len(moves)
            children = [Scenario(page, (*scenario.moves, move), scenario.query) for move in moves]
            for child in children:
                if child not in seen_scenarios:
                    seen_scenarios.add(child)
                    queue.append(child)


# --- links -----------------------------------------------------------------------------------


def url_extremes(key: str) -> list[str]:
    """The values of one `URL_PARAMS` setting worth putting in a link: its ends, or every
    option, read from the setting's own reader (so a new setting is covered unasked)."""
    from ui.url import MAX_URL_POSITION, MAX_URL_TEXT, URL_PARAMS

    param = URL_PARAMS[key]
    reader = param.read
    name = reader.__qualname__.split(".")[0]
    bound = inspect.getclosurevars(reader).nonlocals
    if name == "_integer":
        return [str(bound["low"]), str(bound["high"])]
    if name == "_choice":
        return [str(option) for option in bound["options"]]
    if name == "_typed_choice":
        options = sorted(bound["options"])
        return [param.write(options[0]), param.write(options[-1])]
    if name == "_names":
        options = list(bound["options"])
        return ["", ",".join(options), options[0]]
    if name == "_boolean":
        return ["true", "false"]
    if name == "_text":
        words = " ".join(f"w{index}" for index in range(MAX_URL_TEXT))
        return ["", words[:MAX_URL_TEXT]]
    if name == "_positions":
        return ["", f"0,{MAX_URL_POSITION - 1}"]
    raise AssertionError(f"no extremes known for the URL setting {key!r} (reader {reader.__qualname__})")


def url_scenarios(page: str, each_alone: bool) -> list[Scenario]:
    """Links to `page`: one with every setting at its first extreme, one at its last, one per
    further option (cycling); with `each_alone`, also each setting's each extreme alone."""
    from ui.url import URL_PARAMS

    extremes = {key: url_extremes(key) for key in URL_PARAMS}
    width = max(len(values) for values in extremes.values())
    links = []
    for index in range(width):
        forwards = tuple((key, values[index % len(values)]) for key, values in extremes.items())
        backwards = tuple((key, values[-1 - index % len(values)]) for key, values in extremes.items())
        links += [Scenario(page, query=forwards), Scenario(page, query=backwards)]
    if each_alone:
        links += [Scenario(page, query=((key, value),)) for key, values in extremes.items() for value in values]
    unique = list(dict.fromkeys(links))
    return unique

