"""← / → step the stages, whatever was clicked last, and never change another control.

Streamlit's button `shortcut=` loses to a focused radio, slider or select box: they consume
the arrow keys themselves (the mask radio went from Causal to Padding). One keydown listener on
the page, in the capture phase, sees the key before any control: outside text fields it stops
the key there and clicks Previous or Next instead.
"""

from __future__ import annotations

from .page_scripts import add_script

PREVIOUS_KEY = "previous"
NEXT_KEY = "next"
"""Widget keys of the two stage buttons; Streamlit marks their containers `st-key-<key>`."""

STAGE_KEYS_SCRIPT = """
(() => {
  if (window.__stageKeys) return;  // installed once per browser tab, whatever reruns follow
  window.__stageKeys = true;
  const TEXT_TYPES = ["text", "search", "email", "url", "password", "tel", "number"];
  const isTyping = (element) => {
    if (!element) return false;
    if (element.isContentEditable || element.tagName === "TEXTAREA") return true;
    if (element.tagName !== "INPUT") return false;
    // a select box's search field holds text only while the user types a filter
    if (element.getAttribute("role") === "combobox") return element.value !== "";
    return TEXT_TYPES.includes((element.type || "text").toLowerCase());
  };
  window.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.isComposing) return;
    if (isTyping(event.target)) return;
    if (document.querySelector('[role="dialog"], [role="listbox"]')) return;  // an open dialog or menu keeps its keys
    const key = event.key === "ArrowRight" ? "NEXT_KEY" : "PREVIOUS_KEY";
    const button = document.querySelector(`.st-key-${key} button`);
    if (!button) return;  // not the step-through page: keys behave as usual
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!button.disabled) button.click();
  }, true);
})();
""".replace("PREVIOUS_KEY", PREVIOUS_KEY).replace("NEXT_KEY", NEXT_KEY)
"""The listener. A Content-Security-Policy must allow it by its hash, `csp_source(STAGE_KEYS_SCRIPT)`."""


def stage_keys() -> None:
    """Install the page's ← / → listener (once per tab; later runs find it installed)."""
    add_script(STAGE_KEYS_SCRIPT)
