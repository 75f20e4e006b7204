"""Streamlit glue: the shared sidebar controls, session state, URL state and caching.

Every page calls `controls()` first. The widgets have fixed keys and
``persist_state="session"``, so their values survive page switches and language
changes; pages never read `st.session_state` for settings themselves.

URL state: every setting in `URL_PARAMS` lives in the address bar, so a copied link
restores the view. On a session's first run the URL's values are checked (they are
untrusted: out-of-range numbers are clamped, unknown values dropped, each with a visible
notice) and seed the widgets; after every run the current values are written back.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st

from attention_core import (
    MAX_DIM,
    MAX_TEXT_CHARS,
    MAX_TOKENS,
    STAGES,
    InputError,
    MaskSpec,
    ToySettings,
    ToyTrace,
    build_toy_trace,
    token_labels,
    tokenize,
)
from attention_core.figures import PALETTES, PROJECTOR, FigureStyle, FigureText
from attention_core.mask_lab import MASK_PARTS
from attention_core.scaling import KEY_COUNTS, TEMPERATURES, log_dk_steps
from attention_core.toy_multihead import D_MODEL_CHOICES, MAX_HEADS

from .i18n import DEFAULT_LANGUAGE, LANGUAGES, translate

EXAMPLES: dict[str, tuple[str, str]] = {
    # shown name: (sentence for keys and values, sentence for queries or "" for self-attention)
    "The cat sat on the mat because it was tired.": ("The cat sat on the mat because it was tired.", ""),
    "The animal didn't cross the street because it was too tired.": (
        "The animal didn't cross the street because it was too tired.",
        "",
    ),
    "I saw a cat. The cat saw me. It ran away.": ("I saw a cat. The cat saw me. It ran away.", ""),
    "猫坐在垫子上，因为它累了。": ("猫坐在垫子上，因为它累了。", ""),
    "我爱自然语言处理。": ("我爱自然语言处理。", ""),
    "The cat sat on the mat. → 猫坐在垫子上。": ("The cat sat on the mat.", "猫坐在垫子上。"),
}
DEFAULTS = ToySettings()
MASK_KINDS = ("none", "causal", "padding")
DISPLAY_MODES = ("screen", "projector")

T = TypeVar("T")
PROJECTIONS = ("random", "identity")


MAX_URL_TEXT = 4000
"""Longest sentence kept in a link; a longer one is left out of the URL (browsers cut long URLs)."""


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
    return text[:MAX_URL_TEXT], len(text) > MAX_URL_TEXT


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
    # why √dk
    "why_dk": UrlParam(64, _typed_choice(log_dk_steps(1024), int)),
    "why_temperature": UrlParam(1.0, _typed_choice(TEMPERATURES, float), "{:g}".format),
    "why_keys": UrlParam(16, _typed_choice(KEY_COUNTS, int)),
    # follow one cell
    "cell_i": UrlParam(1, _integer(0, MAX_TOKENS - 1)),
    "cell_j": UrlParam(0, _integer(0, MAX_TOKENS - 1)),
    # mask lab
    "mask_lab_presets": UrlParam([], _names(MASK_PARTS), _join),
    "mask_lab_pad": UrlParam([], _positions, _join),
    "mask_lab_window": UrlParam(ALWAYS, _integer(1, MAX_TOKENS)),
    # multi-head attention
    "mh_d_model": UrlParam(64, _typed_choice(D_MODEL_CHOICES, int)),
    "mh_heads": UrlParam(8, _integer(1, MAX_HEADS)),
    "mh_head": UrlParam(0, _integer(0, MAX_HEADS - 1)),
    "mh_stage": UrlParam(STAGES[1].name, _choice([stage.name for stage in STAGES[1:]])),  # X is not per head
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
}


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


def _url_notices() -> None:
    for key, kind, raw in st.session_state.pop("_url_problems", []):
        st.warning(t(f"url.{kind}", setting=key, value=_quote(raw)), icon=":material/link:")


def _restore_settings() -> None:
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
        text = param.write(value)
        if len(text) <= MAX_URL_TEXT:
            wanted[key] = text
    current = {key: st.query_params[key] for key in st.query_params}
    if current != wanted:
        st.query_params.from_dict(wanted)
    return wanted


def _share_link(sidebar, params: dict[str, str]) -> None:
    """The address of this exact view, with a copy button, for a lesson plan or a chat."""
    scheme, host, path, _, _ = urllib.parse.urlsplit(st.context.url or "")
    link = urllib.parse.urlunsplit((scheme, host, path or "/", urllib.parse.urlencode(params), ""))
    with sidebar.popover(t("share.button"), icon=":material/link:", width="stretch"):
        st.caption(t("share.explain"))
        st.code(link, language=None, wrap_lines=True)


def language() -> str:
    """The interface language chosen in the sidebar ("en" or "zh")."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def t(key: str, **values) -> str:
    """`key` translated into the current interface language."""
    return translate(key, language(), **values)


def option_label(prefix: str) -> Callable[[str], str]:
    """A `format_func` labelling option x with the string ``<prefix>.<x>`` in the current language.

    The language is bound now, not looked up when called: AppTest calls format functions
    outside the script run, where session state is not available.
    """
    lang = language()
    return lambda option: translate(f"{prefix}.{option}", lang)


def projector_mode() -> bool:
    """True when the display is set up for a projector (large type everywhere)."""
    return st.session_state.get("display") == "projector"


def figure_style() -> FigureStyle:
    """The look of figures: palette and, in projector mode, large type and thick gaps."""
    palette = st.session_state.get("palette", "blue-red")
    palette = palette if palette in PALETTES else "blue-red"
    base = PROJECTOR if projector_mode() else FigureStyle()
    return FigureStyle(
        font_size=base.font_size,
        cell_gap=base.cell_gap,
        row_height=base.row_height,
        max_cells_with_numbers=base.max_cells_with_numbers,
        palette=palette,
    )


PROJECTOR_CSS = (
    "<style>html { font-size: 20px; } [data-testid='stSidebar'] { min-width: 340px; }"
    " h1 { font-size: 2.2rem !important; }</style>"
)
"""Projector mode: Streamlit sizes its text in rem, so a larger root font scales the whole page."""


def _display_controls(sidebar) -> None:
    with sidebar.expander(t("control.display_section"), expanded=projector_mode()):
        st.radio(
            t("control.display"),
            DISPLAY_MODES,
            format_func=option_label("display"),
            key="display",
            horizontal=True,
            persist_state="session",
        )
        st.selectbox(
            t("control.palette"),
            list(PALETTES),
            format_func=option_label("palette"),
            key="palette",
            help=t("control.palette.help"),
            persist_state="session",
        )
    if projector_mode():
        st.html(PROJECTOR_CSS)


def figure_text() -> FigureText:
    """The words inside figures, in the current language."""
    return FigureText(
        query=t("figure.query"),
        key=t("figure.key"),
        feature=t("figure.feature"),
        value=t("figure.value"),
        masked=t("figure.masked"),
        allowed=t("figure.allowed"),
        block_max=t("figure.block_max"),
        block_mean=t("figure.block_mean"),
        blocks=t("figure.blocks"),
    )


def _load_example() -> None:
    example = st.session_state.get("example")
    if example:
        st.session_state["text"], st.session_state["query_text"] = EXAMPLES[example]
        st.session_state["cross"] = bool(EXAMPLES[example][1])
        st.session_state["example"] = None


def controls(max_tokens: int = MAX_TOKENS) -> ToySettings:
    """Draw the shared sidebar controls and return the settings they describe.

    `max_tokens`: the longest input this page draws (pages built for small examples pass a
    smaller number; longer text is cut, with a notice saying so).

    The URL is written here too, with the page's own settings as they stood when this run
    started; a page that changes a setting itself calls `write_url()` again at its end.
    """
    load_url_once()
    _restore_settings()
    st.session_state["_notices_shown"] = set()  # a page may ask for several traces: say each thing once
    sidebar = st.sidebar
    sidebar.segmented_control(
        t("control.language"),
        list(LANGUAGES),
        format_func=LANGUAGES.get,
        default=DEFAULT_LANGUAGE,
        required=True,
        key="lang",
        persist_state="session",
    )
    sidebar.header(t("sidebar.settings"))
    text = sidebar.text_area(
        t("control.text"),
        DEFAULTS.text,
        height=80,
        key="text",
        help=t("control.text.help"),
        persist_state="session",
    )
    cross = sidebar.toggle(t("control.cross"), key="cross", help=t("control.cross.help"), persist_state="session")
    query_text = ""
    if cross:
        st.session_state.setdefault("query_text", "")
        query_text = sidebar.text_area(t("control.query_text"), height=68, key="query_text", persist_state="session")
    sidebar.selectbox(
        t("control.example"),
        list(EXAMPLES),
        index=None,
        placeholder=t("control.example.placeholder"),
        key="example",
        on_change=_load_example,
    )
    dk = sidebar.slider(
        t("control.dk"), 1, MAX_DIM, DEFAULTS.dk, key="dk", help=t("control.dk.help"), persist_state="session"
    )
    mask_kind = sidebar.radio(
        t("control.mask"),
        MASK_KINDS,
        format_func=option_label("mask"),
        horizontal=True,
        key="mask_kind",
        persist_state="session",
    )
    padding: tuple[int, ...] = ()
    if mask_kind == "causal" and cross:
        sidebar.caption(t("control.mask.causal_cross"))
    if mask_kind == "padding":
        labels = token_labels(tokenize(text[:MAX_TEXT_CHARS])[:max_tokens])  # the tokens the page will use
        options = list(range(len(labels)))
        chosen = st.session_state.get("pad_positions", [])
        st.session_state["pad_positions"] = [p for p in chosen if 0 <= p < len(labels)]  # tokens may have changed
        padding = tuple(
            sidebar.multiselect(
                t("control.pad_positions"),
                options,
                format_func=lambda position: labels[position],
                key="pad_positions",
                persist_state="session",
            )
        )
        if not padding:
            sidebar.caption(t("control.pad_positions.hint"))
    projection = sidebar.radio(
        t("control.projection"),
        PROJECTIONS,
        format_func=option_label("projection"),
        key="projection",
        persist_state="session",
    )
    d_model = sidebar.slider(
        t("control.d_model"),
        1,
        MAX_DIM,
        DEFAULTS.d_model,
        key="d_model",
        disabled=projection == "identity",
        help=t("control.d_model.identity") if projection == "identity" else None,
        persist_state="session",
    )
    positional = sidebar.toggle(t("control.positional"), key="positional", persist_state="session")
    seed = sidebar.number_input(
        t("control.seed"), 0, 2**31 - 1, DEFAULTS.seed, step=1, key="seed", help=t("control.seed.help"),
        persist_state="session",
    )
    _display_controls(sidebar)
    _url_notices()
    _share_link(sidebar, write_url())
    return ToySettings(
        text=text,
        query_text=query_text,
        dk=int(dk),
        d_model=int(d_model),
        seed=int(seed),
        projection=projection,
        positional=bool(positional),
        mask=MaskSpec(causal=mask_kind == "causal", padding=padding),
        max_tokens=max_tokens,
    )


@st.cache_resource(max_entries=128, show_spinner=False)
def _memo(name: str, _function: Callable[..., T], args: tuple[Hashable, ...]) -> T:
    # cache_resource shares one object instead of copying it: safe, because the engine's
    # records are frozen and their arrays read-only. `name` keys the function.
    return _function(*args)


def memo(function: Callable[..., T], *args: Hashable) -> T:
    """function(*args), computed once per distinct small, hashable arguments and shared.

    For the engine's pure functions only (their results are immutable records).
    """
    return _memo(f"{function.__module__}.{function.__qualname__}", function, args)


def trace_or_stop(settings: ToySettings) -> ToyTrace:
    """The cached trace for `settings`; on input the user must fix, explain and stop the page."""
    ignored = max(len(settings.text), len(settings.query_text)) - MAX_TEXT_CHARS
    if ignored > 0:  # said first: it may be why the text below is not what the user expects
        _notice_once(t("notice.characters", limit=MAX_TEXT_CHARS, ignored=ignored))
    try:
        with st.spinner(t("working")):
            trace = memo(build_toy_trace, settings)
    except InputError as problem:
        st.info(t(f"error.{problem.code}", **problem.details))
        st.stop()
    if trace.dropped_tokens:
        _notice_once(t("notice.truncated", limit=settings.max_tokens, dropped=trace.dropped_tokens))
    return trace


def _notice_once(message: str) -> None:
    shown = st.session_state.setdefault("_notices_shown", set())
    if message not in shown:
        shown.add(message)
        st.warning(message)


def autoplay(seconds: float, advance: Callable[[], None]) -> None:
    """While drawn, call `advance()` every `seconds` and rerun the page (a slide show).

    A fragment that reruns on a timer; its first run only starts the clock, so that
    drawing the page does not itself advance it.
    """

    @st.fragment(run_every=seconds)
    def tick() -> None:
        now = time.monotonic()
        started = st.session_state.get("_autoplay_clock")
        if started is None or now - started < 0.9 * seconds:
            st.session_state.setdefault("_autoplay_clock", now)
            return
        st.session_state["_autoplay_clock"] = now
        advance()
        st.rerun(scope="app")

    tick()


def stop_autoplay_clock() -> None:
    """Forget the slide-show clock (autoplay is off), so that turning it on starts afresh."""
    st.session_state.pop("_autoplay_clock", None)
