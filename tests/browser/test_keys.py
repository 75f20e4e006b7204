"""← / → step the stages whatever was clicked last, and never change the clicked control.

In class the teacher clicks a sidebar control, then presses → to go on: the stage must move
and the control must keep its value. Typing in a text field keeps its arrow keys.
"""

from __future__ import annotations

import re

import pytest
from plotly_page import wait_for_app

PROGRESS = re.compile(r"Step (\d+) of (\d+)")


def _stage(page) -> int:
    """The stage number the page shows (from its "Step n of 8" line)."""
    text = page.locator('[data-testid="stCaptionContainer"]').filter(has_text=PROGRESS).first.inner_text()
    return int(PROGRESS.search(text).group(1))


def _idle(page) -> None:
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')"
        ".getAttribute('data-test-script-state') === 'notRunning'",
        timeout=60_000,
    )
    page.wait_for_timeout(300)


def _wait_for_stage(page, expected: int) -> None:
    for _ in range(80):
        _idle(page)
        if _stage(page) == expected:
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"the page stayed on stage {_stage(page)}, expected {expected}")


def _focus_radio(page):
    option = page.locator(".st-key-mask_kind label").filter(has=page.locator("input:checked"))
    option.click()  # the chosen option: clicking it changes nothing
    return lambda: page.locator(".st-key-mask_kind label").filter(has=page.locator("input:checked")).inner_text()


def _focus_slider(page):
    value = page.locator(".st-key-dk input[type='range']")
    value.locator("xpath=../..").click()  # on the thumb itself: the value stays
    return value.input_value


def _focus_select_box(page):
    box = page.locator(".st-key-example [data-testid='stSelectbox']")
    box.locator("input").click()  # opens the menu ...
    page.keyboard.press("Escape")  # ... closed again without choosing: the focus stays on the box
    return lambda: (box.locator("input").input_value(), box.inner_text())


def _focus_toggle(page):
    toggle = page.locator(".st-key-positional label")
    toggle.click()  # switches positional encoding on (a run), then the focus rests on the toggle
    _idle(page)
    return lambda: page.locator(".st-key-positional input").is_checked()


def _focus_number_step(page):
    page.locator(".st-key-seed [data-testid='stNumberInputStepUp']").click()  # seed + 1 (a run)
    _idle(page)
    return lambda: page.locator(".st-key-seed input").input_value()


def _focus_segmented_control(page):
    page.locator(".st-key-lang button").filter(has_text="English").click()  # the chosen language
    return lambda: page.locator(".st-key-lang button[aria-checked='true']").inner_text()


def _focus_stage_picker(page):
    page.locator(".st-key-stage button").nth(1).click()  # picks stage 2 with the mouse
    _idle(page)
    return lambda: "the stage picker itself"


CONTROLS = {
    "radio": _focus_radio,
    "slider": _focus_slider,
    "select box": _focus_select_box,
    "toggle": _focus_toggle,
    "number input step button": _focus_number_step,
    "segmented control": _focus_segmented_control,
    "stage picker": _focus_stage_picker,
}


@pytest.mark.parametrize("kind", CONTROLS)
def test_right_arrow_after_clicking_a_control_steps_the_stage_only(page, kind):
    page.goto(page.app_url + "/")
    wait_for_app(page)
    value_of = CONTROLS[kind](page)
    _idle(page)
    stage, before = _stage(page), value_of()
    page.keyboard.press("ArrowRight")
    _wait_for_stage(page, stage + 1)
    assert value_of() == before, f"→ changed the {kind}"
    page.keyboard.press("ArrowLeft")
    _wait_for_stage(page, stage)
    assert value_of() == before, f"← changed the {kind}"


@pytest.mark.parametrize(
    ("field", "typed"),
    [(".st-key-text textarea", ("Z", "Y")), (".st-key-seed input", ("7", "8"))],
    ids=["sentence", "number"],
)
def test_arrows_in_a_text_field_move_the_caret_not_the_stage(page, field, typed):
    page.goto(page.app_url + "/")
    wait_for_app(page)
    stage = _stage(page)
    box = page.locator(field)
    original = box.input_value()
    box.click()
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    page.keyboard.type(typed[0])
    assert box.input_value() == original[:-1] + typed[0] + original[-1], "← moved the caret one character back"
    page.keyboard.press("ArrowRight")
    page.keyboard.type(typed[1])
    assert box.input_value() == original[:-1] + typed[0] + original[-1] + typed[1], "→ moved the caret forward"
    page.wait_for_timeout(500)
    assert _stage(page) == stage, "typing never steps the stage"
