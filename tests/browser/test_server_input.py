"""A 17 MB paste into the sentence box: refused by the box (its counter shows the limit),
the connection stays up, and the next sentence is drawn. Before, the paste reached the
WebSocket, whose 16 MB limit closed the connection: the old sentence stayed, unexplained."""

from __future__ import annotations

from plotly_page import closed_connections, first_heatmap, wait_for_app, wait_for_row_labels

from attention_core import MAX_TEXT_CHARS, ToySettings, build_toy_trace

PASTE_JS = """
(size) => {
    const box = document.querySelector('[data-testid="stTextArea"] textarea');
    box.focus();
    const data = new DataTransfer();
    data.setData('text/plain', 'zz '.repeat(Math.ceil(size / 3)));
    box.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
}
"""


def test_a_huge_paste_is_refused_with_the_limit_shown_and_the_session_goes_on(page):
    closed = closed_connections(page)
    page.goto(page.app_url + "/")
    wait_for_app(page, timeout=90_000)
    box = page.get_by_role("textbox", name="Sentence", exact=True)
    before = box.input_value()
    box.click()
    page.evaluate(PASTE_JS, 17_000_000)
    page.keyboard.insert_text("zz " * (MAX_TEXT_CHARS // 3 + 1))  # typed or dropped in: the same
    box.press("Control+Enter")
    page.wait_for_timeout(3000)
    assert box.input_value() == before
    counter = page.locator('[data-testid="stTextArea"]').first.inner_text()
    assert f"{len(before)}/{MAX_TEXT_CHARS}" in counter
    sentence = "Attention is all you need."
    box.fill(sentence)
    box.press("Control+Enter")
    expected = build_toy_trace(ToySettings(text=sentence)).query_labels
    wait_for_row_labels(page, expected)
    assert first_heatmap(page)["y"] == expected
    assert not closed, closed
    assert not page.console_errors, page.console_errors
