"""URL state: every setting in `URL_PARAMS` lives in the address bar, so a copied link
restores the view.

On a session's first run the URL's values are checked (they are untrusted: out-of-range
numbers are clamped, unknown values dropped, each with a visible notice) and seed the
widgets; after every run the current values are written back.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from attention_core import MAX_DIM, MAX_TOKENS, STAGES
from attention_core.decoder.finder import SCORE_NAMES as DECODER_SCORES
from attention_core.decoder.heads import STAGE_MATRICES as _DECODER_STAGE_MATRICES
from attention_core.decoder.heads import SUMMARY_NAMES as DECODER_SUMMARIES
from attention_core.figures import PALETTES
from attention_core.lessons.mask_lab import MASK_PARTS
from attention_core.lessons.scaling import KEY_COUNTS, TEMPERATURES, log_dk_steps
from attention_core.toy_multihead import D_MODEL_CHOICES, MAX_HEADS

from .i18n import DEFAULT_LANGUAGE, LANGUAGES
from .language import t
from .settings import DEFAULTS, DISPLAY_MODES, MASK_KINDS, PROJECTIONS

DECODER_PROMPT = "The cat sat on the mat. The cat sat on the"
"""The decoder page's default prompt (pages/decoder.py uses this one)."""
DECODER_STAGES = tuple(_DECODER_STAGE_MATRICES)
MULTI_HEAD_PARTS = ("heads", "one_head", "combine")
"""The multi-head page's parts, one shown at a time (pages/multi-head.py); the first opens."""
WHY_SQRT_DK_PARTS = ("spread", "saturation", "gradient", "sentence")
"""The √dk page's four sections, one shown at a time (pages/why-sqrt-dk.py); the first opens."""
CELL_PARTS = ("dot", "scale", "mask", "softmax", "output")
"""The steps of the cell page's chain, one shown at a time below its numbers (pages/cell.py);
the first opens."""
REAL_MODEL_PARTS = ("one_head", "cell", "masks", "embedding")
"""The encoder page's parts below its overview of every head, one shown at a time
(pages/real-model.py); the first opens."""
DECODER_PARTS = ("heads", "one_head", "cell", "finder")
"""The decoder page's parts below the layer and head pickers, one shown at a time
(pages/decoder.py); "one_head" opens."""
PAGE_PARTS = {
    "why-sqrt-dk": tuple(f"why_part={part}" for part in WHY_SQRT_DK_PARTS[1:]),
    "cell": tuple(f"cell_part={part}" for part in CELL_PARTS[1:]),
    "multi-head": tuple(f"mh_part={part}" for part in MULTI_HEAD_PARTS[1:]),
    "real-model": tuple(f"rm_part={part}" for part in REAL_MODEL_PARTS[1:]),
    "decoder": tuple(f"dec_part={part}" for part in DECODER_PARTS if part != "one_head"),
}
"""Views of a page beyond the one it opens on, as the query of a link, by the page's URL path:
parts shown one at a time, whose figures and controls are only there. The browser tests and
benchmarks that visit every page visit these too."""
MAX_URL_TEXT = 20_000
"""Longest sentence kept in a link, in bytes once percent-encoded (a Chinese character takes
9, a letter 1, so 2,048 Chinese characters fit). A longer one is cut when read from a link,
and left out of the links the app writes (with a notice)."""
MAX_URL_BYTES = 24_000
"""Longest query string the app writes. deploy/nginx.conf.template's
`large_client_header_buffers 4 32k` admits a request line of this plus the path; nginx's
default (8k) answered "414 Request-URI Too Large" to a link of 1,500 Chinese characters."""


def encoded_bytes(text: str) -> int:
    """The length of `text` percent-encoded as a URL value (what the request line carries)."""
    return len(urllib.parse.quote_plus(text, safe="", errors="surrogatepass"))


class UrlValueError(ValueError):
    """A URL value that cannot be used at all (it is dropped)."""


@dataclass(frozen=True)
class UrlParam:
    """One setting that lives in the URL: its default, and how to read and write it.

    `read(text)` returns ``(value, clamped)``: the value to use and whether it had to be
    changed to fit; it raises UrlValueError for a value that cannot be used at all.
    """

    default: Any
    """Left out of the URL while the setting has this value; ALWAYS: written whenever set."""
    read: Callable[[str], tuple[Any, bool]]
    write: Callable[[Any], str] = str


ALWAYS = object()
"""A UrlParam default for settings whose default is not fixed (it follows other settings),
so the link must say their value."""


def _integer(low: int, high: int) -> Callable[[str], tuple[int, bool]]:
    def read(text: str) -> tuple[int, bool]:
        try:
            value = int(text.strip())
        except ValueError:
            raise UrlValueError(text) from None
        fitted = min(max(value, low), high)
        return fitted, fitted != value

    return read


def _choice(options) -> Callable[[str], tuple[str, bool]]:
    def read(text: str) -> tuple[str, bool]:
        if text not in options:
            raise UrlValueError(text)
        return text, False

    return read


def _typed_choice(options, cast: Callable[[str], Any]) -> Callable[[str], tuple[Any, bool]]:
    """A reader for numbers that must be one of `options` (e.g. the steps of a slider)."""

    def read(text: str) -> tuple[Any, bool]:
        try:
            value = cast(text)
        except ValueError:
            raise UrlValueError(text) from None
        if value not in options:
            raise UrlValueError(text)
        return value, False

    return read


def _names(options) -> Callable[[str], tuple[list[str], bool]]:
    def read(text: str) -> tuple[list[str], bool]:
        names = [name for name in text.split(",") if name]
        kept = [name for name in options if name in names]  # in the options' order, once each
        if names and not kept:
            raise UrlValueError(text)
        return kept, len(kept) != len(set(names))

    return read


def _boolean(text: str) -> tuple[bool, bool]:
    if text.lower() in ("true", "1", "yes"):
        return True, False
    if text.lower() in ("false", "0", "no"):
        return False, False
    raise UrlValueError(text)


def _text(text: str) -> tuple[str, bool]:
    """The longest start of `text` that is at most MAX_URL_TEXT bytes encoded."""
    if encoded_bytes(text) <= MAX_URL_TEXT:
        return text, False
    low, high = 0, min(len(text), MAX_URL_TEXT)  # every character takes at least one byte
    while low < high:
        middle = (low + high + 1) // 2
        if encoded_bytes(text[:middle]) <= MAX_URL_TEXT:
            low = middle
        else:
            high = middle - 1
    return text[:low], True


def _positions(text: str) -> tuple[list[int], bool]:
    try:
        positions = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UrlValueError(text) from None
    valid = [position for position in positions if 0 <= position < MAX_URL_POSITION]
    return sorted(set(valid)), len(valid) != len(positions)


MAX_URL_POSITION = 2048


def _join(values) -> str:
    return ",".join(map(str, values))


def _write_bool(value: bool) -> str:
    return "true" if value else "false"


URL_PARAMS: dict[str, UrlParam] = {
    # key in session state and in the URL: default, reader, writer
    "lang": UrlParam(DEFAULT_LANGUAGE, _choice(LANGUAGES)),
    "text": UrlParam(DEFAULTS.text, _text),
    "cross": UrlParam(False, _boolean, _write_bool),
    "query_text": UrlParam("", _text),
    "dk": UrlParam(DEFAULTS.dk, _integer(1, MAX_DIM)),
    "mask_kind": UrlParam("none", _choice(MASK_KINDS)),
    "pad_positions": UrlParam([], _positions, _join),
    "projection": UrlParam("random", _choice(PROJECTIONS)),
    "d_model": UrlParam(DEFAULTS.d_model, _integer(1, MAX_DIM)),
    "positional": UrlParam(False, _boolean, _write_bool),
    "seed": UrlParam(DEFAULTS.seed, _integer(0, 2**31 - 1)),
    "display": UrlParam("screen", _choice(DISPLAY_MODES)),
    "palette": UrlParam("blue-red", _choice(PALETTES)),
    # the step-through page
    "view": UrlParam("steps", _choice(("steps", "overview"))),
    "stage": UrlParam(STAGES[0].name, _choice([stage.name for stage in STAGES])),
    # the step-through's linked highlight: query i and key j outlined in every stage
    "highlight": UrlParam(False, _boolean, _write_bool),
    "highlight_i": UrlParam(0, _integer(0, MAX_TOKENS - 1)),
    "highlight_j": UrlParam(0, _integer(0, MAX_TOKENS - 1)),
    # why √dk
    "why_dk": UrlParam(64, _typed_choice(log_dk_steps(1024), int)),
    "why_temperature": UrlParam(1.0, _typed_choice(TEMPERATURES, float), "{:g}".format),
    "why_keys": UrlParam(16, _typed_choice(KEY_COUNTS, int)),
    "why_part": UrlParam(WHY_SQRT_DK_PARTS[0], _choice(WHY_SQRT_DK_PARTS)),
    # follow one cell
    "cell_i": UrlParam(1, _integer(0, MAX_TOKENS - 1)),
    "cell_j": UrlParam(0, _integer(0, MAX_TOKENS - 1)),
    "cell_part": UrlParam(CELL_PARTS[0], _choice(CELL_PARTS)),
    # mask lab
    "mask_lab_presets": UrlParam([], _names(MASK_PARTS), _join),
    "mask_lab_pad": UrlParam([], _positions, _join),
    "mask_lab_window": UrlParam(ALWAYS, _integer(1, MAX_TOKENS)),
    # multi-head attention
    "mh_d_model": UrlParam(64, _typed_choice(D_MODEL_CHOICES, int)),
    "mh_heads": UrlParam(8, _integer(1, MAX_HEADS)),
    "mh_head": UrlParam(0, _integer(0, MAX_HEADS - 1)),
    "mh_stage": UrlParam(STAGES[1].name, _choice([stage.name for stage in STAGES[1:]])),  # X is not per head
    "mh_part": UrlParam(MULTI_HEAD_PARTS[0], _choice(MULTI_HEAD_PARTS)),
    # predict, then reveal (the guesses and the reveal stay out of links: they are the answers)
    "quiz_mode": UrlParam("argmax", _choice(("argmax", "sketch"))),
    "quiz_row": UrlParam(0, _integer(0, MAX_TOKENS - 1)),
    # compare two settings: both sides follow the sidebar until changed, so links always carry them
    **{
        f"compare.{side}.{name}": UrlParam(ALWAYS, read, write)
        for side in ("a", "b")
        for name, read, write in (
            ("dk", _integer(1, MAX_DIM), str),
            ("seed", _integer(0, 2**31 - 1), str),
            ("mask", _choice(MASK_KINDS), str),
            ("scaled", _boolean, _write_bool),
            ("projection", _choice(PROJECTIONS), str),
        )
    },
    # inside a real model (the encoder): which part is shown below the overview
    "rm_part": UrlParam(REAL_MODEL_PARTS[0], _choice(REAL_MODEL_PARTS)),
    # inside a decoder (layers and heads numbered from 1, as on screen)
    "dec_prompt": UrlParam(DECODER_PROMPT, _text),
    "dec_steps": UrlParam(0, _integer(0, 10)),
    "dec_layer": UrlParam(19, _integer(1, 30)),
    "dec_head": UrlParam(7, _integer(1, 9)),
    "dec_summary": UrlParam("previous_token", _choice(DECODER_SUMMARIES)),
    "dec_stage": UrlParam("weights", _choice(DECODER_STAGES)),
    "dec_score": UrlParam("induction", _choice(DECODER_SCORES)),
    "dec_cell_i": UrlParam(ALWAYS, _integer(0, 255)),
    "dec_cell_j": UrlParam(0, _integer(0, 255)),
    "dec_part": UrlParam("one_head", _choice(DECODER_PARTS)),
}


def part_named_by_link(parts: dict[str, tuple[str, ...]], default: str) -> str:
    """The part of a page to open when the session has picked none: the first of `parts` (a
    part → the settings only it shows) with one of them away from its default, as in a link made
    when every part was on the page at once; else `default`."""
    for part, keys in parts.items():
        if any(st.session_state.get(key, URL_PARAMS[key].default) != URL_PARAMS[key].default for key in keys):
            return part
    return default


def read_url(query: dict[str, str]) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """Values to use from an untrusted URL, and the problems found: (key, kind, raw value)
    with kind "clamped" (changed to fit) or "dropped" (ignored). Pure: no Streamlit needed."""
    values, problems = {}, []
    for key, raw in query.items():
        param = URL_PARAMS.get(key)
        if param is None:
            continue  # not a setting of this app: ignored
        try:
            values[key], clamped = param.read(raw)
        except UrlValueError:
            problems.append((key, "dropped", raw))
            continue
        if clamped:
            problems.append((key, "clamped", raw))
    return values, problems


def _quote(raw: str) -> str:
    """A URL value shown inside a message: short, and as code so that nothing in it renders."""
    shown = " ".join(raw.split())  # a blank line would end the code span and let Markdown through
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    return "`" + shown.replace("`", "'") + "`"


def load_url_once() -> None:
    """On a session's first run, seed the settings from the URL and note what had to be fixed."""
    if st.session_state.get("_url_loaded"):
        return
    st.session_state["_url_loaded"] = True
    values, problems = read_url({key: st.query_params[key] for key in st.query_params})
    for key, value in values.items():
        st.session_state[key] = value
    st.session_state["_url_problems"] = problems


def url_notices() -> None:
    for key, kind, raw in st.session_state.pop("_url_problems", []):
        st.warning(t(f"url.{kind}", setting=key, value=_quote(raw)), icon=":material/link:")


def restore_settings() -> None:
    """Keep every setting through page switches, whatever set it.

    On a page switch Streamlit re-creates the widgets and drops a value that came from a
    link (set through session state, never touched by the user), although session state
    still reports it. Setting each known setting again before its widget is drawn makes
    the widget take it; a setting missing altogether comes back from the last known values.
    """
    saved = st.session_state.setdefault("_settings", {})
    for key in URL_PARAMS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
        elif key in saved:
            st.session_state[key] = saved[key]


def write_url() -> dict[str, str]:
    """Put every non-default setting in the address bar (defaults are left out to keep links
    short); returns the parameters written."""
    wanted = {}
    saved = st.session_state.setdefault("_settings", {})
    for key, param in URL_PARAMS.items():
        if key in st.session_state:
            saved[key] = st.session_state[key]
        value = st.session_state.get(key, param.default)
        if value is None or value is ALWAYS or value == param.default:
            continue
        wanted[key] = param.write(value)
    wanted, st.session_state["_url_left_out"] = fit_link(wanted)
    current = {key: st.query_params[key] for key in st.query_params}
    if current != wanted:
        st.query_params.from_dict(wanted)
    return wanted


def fit_link(params: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The parameters that fit in a link, and the keys left out: a value over MAX_URL_TEXT
    bytes, then the largest values until the query string is at most MAX_URL_BYTES."""
    kept = {key: value for key, value in params.items() if encoded_bytes(value) <= MAX_URL_TEXT}
    while kept and len(urllib.parse.urlencode(kept, errors="surrogatepass")) > MAX_URL_BYTES:
        del kept[max(kept, key=lambda key: encoded_bytes(kept[key]))]
    return kept, [key for key in params if key not in kept]


def share_link(sidebar, params: dict[str, str]) -> None:
    """The address of this exact view, with a copy button, for a lesson plan or a chat."""
    scheme, host, path, _, _ = urllib.parse.urlsplit(st.context.url or "")
    link = urllib.parse.urlunsplit((scheme, host, path or "/", urllib.parse.urlencode(params), ""))
    with sidebar.popover(t("share.button"), icon=":material/link:", width="stretch"):
        st.caption(t("share.explain"))
        if st.session_state.get("_url_left_out"):
            st.warning(t("share.left_out", limit=MAX_URL_TEXT), icon=":material/link_off:")
        st.code(link, language=None, wrap_lines=True)
    if st.session_state.get("_url_left_out"):
        sidebar.caption(t("share.left_out.short"))

