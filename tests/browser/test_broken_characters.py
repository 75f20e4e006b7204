"""Half of a UTF-16 surrogate pair typed or pasted into a text box (a broken emoji copied from
some programs). Streamlit's protocol refuses such a message ("String field had bad UTF-8"):
before, the browser reconnected and the old sentence stayed, without a word. The page now
replaces the lone half by U+FFFD as it is typed, so the sentence arrives, and says so."""

from __future__ import annotations

from installed_models import installed_encoder
from plotly_page import closed_connections, first_heatmap, graphs, wait_for_app, wait_for_row_labels

from attention_core import ToySettings, build_toy_trace

TYPE_JS = """
([units, selector]) => {
    const box = document.querySelector(selector);
    box.focus();
    box.select();
    document.execCommand('insertText', false, String.fromCharCode(...units));
}
"""
"""Replaces a text box's text as the browser's own editing does (one input event), given the
text's UTF-16 code units: Playwright carries strings as UTF-8, which has no lone surrogate."""

SENTENCE_BOX = '[data-testid="stTextArea"] textarea'


def code_units(text: str) -> list[int]:
    """The UTF-16 code units of `text`, lone surrogates included."""
    encoded = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(encoded[i : i + 2], "little") for i in range(0, len(encoded), 2)]


def test_a_lone_surrogate_is_replaced_and_the_sentence_is_drawn_with_a_notice(page):
    closed = closed_connections(page)
    page.goto(page.app_url + "/")
    wait_for_app(page, timeout=90_000)
    box = page.get_by_role("textbox", name="Sentence", exact=True)
    page.evaluate(TYPE_JS, [code_units("Tea \ud83d time"), SENTENCE_BOX])
    assert box.input_value() == "Tea \ufffd time"  # what the box shows is what the app will get
    box.press("Control+Enter")
    expected = build_toy_trace(ToySettings(text="Tea \ufffd time")).query_labels
    wait_for_row_labels(page, expected)
    assert first_heatmap(page)["y"] == expected
    notice = page.get_by_text("could not be read", exact=False)
    assert notice.count() >= 1 and notice.first.is_visible()
    assert not closed, closed
    assert not page.console_errors, page.console_errors


def test_a_whole_emoji_is_kept_as_it_is(page):
    page.goto(page.app_url + "/")
    wait_for_app(page, timeout=90_000)
    box = page.get_by_role("textbox", name="Sentence", exact=True)
    page.evaluate(TYPE_JS, [code_units("Tea \U0001F375 time"), SENTENCE_BOX])
    assert box.input_value() == "Tea \U0001F375 time"
    box.press("Control+Enter")
    expected = build_toy_trace(ToySettings(text="Tea \U0001F375 time")).query_labels
    wait_for_row_labels(page, expected)
    assert page.get_by_text("could not be read", exact=False).count() == 0


def test_the_real_models_own_sentence_box_is_guarded_too(page):
    """A one-line box (an <input>, not a <textarea>) on another page: the same guard, the same notice."""
    installed_encoder()
    page.goto(page.app_url + "/real-model")
    wait_for_app(page, timeout=120_000)
    box = page.get_by_role("textbox", name="Sentence for the model", exact=True)
    before = graphs(page)
    page.evaluate(TYPE_JS, [code_units("\udc00 tea"), 'input[aria-label="Sentence for the model"]'])
    assert box.input_value() == "\ufffd tea"
    box.press("Enter")
    notice = page.get_by_text("could not be read", exact=False)
    notice.first.wait_for(timeout=60_000)
    for _ in range(120):  # the new heatmaps follow the notice once Plotly has drawn them
        if graphs(page) != before:
            break
        page.wait_for_timeout(250)
    assert graphs(page) != before
    assert not page.console_errors, page.console_errors
