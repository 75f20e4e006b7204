"""Input the app cannot take is said, briefly: the fully-masked notice at 2,048 tokens, and
the sentence box's limit (a longer paste is refused by the box, with its counter shown)."""

from __future__ import annotations

import pytest
from apptest_helpers import run_app

import ui.views
from attention_core import MAX_TEXT_CHARS, MaskSpec, ToySettings, build_toy_trace
from ui.i18n import LANGUAGES, translate


@pytest.fixture(scope="module")
def everything_masked():
    text = " ".join(f"w{i}" for i in range(2048))
    return build_toy_trace(ToySettings(text=text, mask=MaskSpec(padding=tuple(range(2048)))))


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_fully_masked_notice_is_brief_at_2048_tokens(everything_masked, monkeypatch, lang):
    shown = []
    monkeypatch.setattr(ui.views.st, "warning", lambda message, **_: shown.append(message))
    monkeypatch.setattr(ui.views, "t", lambda key, **values: translate(key, lang, **values))
    ui.views.fully_masked_notice(everything_masked)
    (message,) = shown
    assert len(message) < 400, len(message)  # was 15,414 characters
    assert "2048" in message
    named = everything_masked.query_labels[: ui.views.FULLY_MASKED_NAMED]
    unnamed = everything_masked.query_labels[ui.views.FULLY_MASKED_NAMED]
    assert all(label in message for label in named) and unnamed not in message


def test_one_row_more_than_named_is_counted(monkeypatch):
    words = [f"w{i}" for i in range(ui.views.FULLY_MASKED_NAMED + 1)]
    trace = build_toy_trace(ToySettings(text=" ".join(words), mask=MaskSpec(padding=tuple(range(len(words))))))
    shown = []
    monkeypatch.setattr(ui.views.st, "warning", lambda message, **_: shown.append(message))
    monkeypatch.setattr(ui.views, "t", lambda key, **values: translate(key, "en", **values))
    ui.views.fully_masked_notice(trace)
    count = len(words)
    assert f"{count} of the {count} queries" in shown[0] and shown[0].count(":w") == count - 1 and "…" in shown[0]


def test_the_sentence_boxes_refuse_more_than_the_engine_reads():
    """A 17 MB paste used to reach the WebSocket (16 MB limit), which dropped it and the
    connection without a word; the box now refuses it and shows its counter."""
    at = run_app(text="a b c", cross=True)
    for key in ("text", "query_text"):
        assert at.text_area(key=key).proto.max_chars == MAX_TEXT_CHARS
    assert f"{MAX_TEXT_CHARS:,}" in at.text_area(key="text").help
