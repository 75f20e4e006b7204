"""The app's own scripts on its pages, each allowed by its hash in a Content-Security-Policy.

A script runs once per browser tab (it marks `window` on its first run); the reruns that
follow find it installed. `deploy/nginx.conf.template` lists every script's `csp_source()`.
"""

from __future__ import annotations

import base64
import hashlib

import streamlit as st


def csp_source(script: str) -> str:
    """The CSP source that allows exactly this inline script ('sha256-…')."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def add_script(script: str, container=st) -> None:
    """Put `script` on the page, in `container` (the main area unless given)."""
    container.html(f"<script>{script}</script>", unsafe_allow_javascript=True)


WHOLE_CHARACTERS_SCRIPT = """
(() => {
  if (window.__wholeCharacters || !String.prototype.isWellFormed) return;
  window.__wholeCharacters = true;
  const setters = [HTMLTextAreaElement, HTMLInputElement].map(
    (kind) => [kind, Object.getOwnPropertyDescriptor(kind.prototype, "value").set]);
  window.addEventListener("input", (event) => {
    const box = event.target;
    const found = setters.find(([kind]) => box instanceof kind);
    if (!found || typeof box.value !== "string" || box.value.isWellFormed()) return;
    const [start, end] = [box.selectionStart, box.selectionEnd];
    found[1].call(box, box.value.toWellFormed());  // past React's record of the value: it sees a change
    if (start !== null) box.setSelectionRange(start, end);  // one code unit for one: the caret stays
  }, true);
})();
"""
"""Half of a UTF-16 surrogate pair (a broken emoji pasted from some programs) becomes U+FFFD
as it is typed or pasted into any text box. Streamlit's protocol refuses a message holding
one ("String field had bad UTF-8"): the browser would reconnect and the text never arrive.
The listener runs in the capture phase, before React reads the box."""


def whole_characters(container=st) -> None:
    """Install the text boxes' guard against half characters (`WHOLE_CHARACTERS_SCRIPT`)."""
    add_script(WHOLE_CHARACTERS_SCRIPT, container)
