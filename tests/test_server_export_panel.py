"""The export panel (AppTest): text formats only for views small enough to open, nothing
built before it is asked for, and no session holding on to a large trace through its
download buttons."""

from __future__ import annotations

import gc
import weakref

import pytest
from apptest_helpers import run_app

import ui.views
from attention_core import ToyTrace
from attention_core.export import MAX_TEXT_EXPORT_CELLS
from ui import cache

EXPORT_OPEN = {"step-export-export": True}
"""The step-through's export panel opened, as a click on its title does (closed, it holds nothing)."""


def download_buttons(at) -> dict[str, object]:
    """The page's download buttons by their key's end ("csv", "json", …), as protos."""
    buttons = {}
    for element in at.get("download_button"):
        buttons[element.proto.id.rsplit("-", 1)[-1]] = element.proto
    return buttons


def words(count: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(count))


@pytest.mark.parametrize(("tokens", "offered"), [(12, True), (256, True), (257, False)])
def test_csv_and_json_are_offered_only_up_to_the_limit(tokens, offered):
    assert (tokens * tokens <= MAX_TEXT_EXPORT_CELLS) == offered
    at = run_app(text=words(tokens), **EXPORT_OPEN)
    buttons = download_buttons(at)
    assert buttons["csv"].disabled is not offered and buttons["json"].disabled is not offered
    assert buttons["npz"].disabled is False, "the .npz file is offered at every size"
    captions = " ".join(caption.value for caption in at.caption)
    assert ("too much text to open" in captions) is not offered


def test_no_export_is_built_on_a_rerun(monkeypatch):
    built = []
    for name in ("npz_bytes", "csv_zip_bytes", "json_text", "standalone_html"):
        original = getattr(ui.views, name)
        monkeypatch.setattr(ui.views, name, lambda *a, _f=original, _n=name, **k: built.append(_n) or _f(*a, **k))
    at = run_app(text=words(20), **EXPORT_OPEN)
    at.session_state["dk"] = 5
    at.run()
    assert not at.exception and download_buttons(at)
    assert built == []


def test_an_open_session_does_not_keep_its_trace_alive():
    """Streamlit keeps a session's download callables and widget callbacks (whose page
    globals held `trace`) as long as the session; neither may hold the (up to 72 MB) trace
    once the cache has let it go."""
    sentence = words(30, tag="keepalive")
    at = run_app(text=sentence, **EXPORT_OPEN)
    assert download_buttons(at)
    held = [
        entry.value
        for store in (cache.small_results, cache.large_results)
        for entry in list(store._entries.values())
        if isinstance(entry.value, ToyTrace) and entry.value.settings.text == sentence
    ]
    assert held, "the page's trace is in the shared cache"
    watched = weakref.ref(held[0])
    del held
    cache.small_results.clear()
    cache.large_results.clear()
    gc.collect()
    assert watched() is None, "something besides the cache holds the trace: " + repr(
        [type(referrer).__name__ for referrer in gc.get_referrers(watched())]
    )
    assert at.session_state["text"] == sentence  # the session is still open
