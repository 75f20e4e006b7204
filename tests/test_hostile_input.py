"""Hostile and broken input, typed into the sidebar or carried by a link (AppTest, pure functions).

Every input must end in a clear message or a correct drawing, and never in a traceback.
Token text may only reach the user as Plotly labels (escaped: Plotly reads a subset of
HTML in labels) and as `st.dataframe` cells (plain text); it must never be rendered by
Streamlit as Markdown, HTML or LaTeX. Drawn data must stay finite (masked gaps aside) and
small enough for a browser to paint.

Expected values come from the tokenizer's documented rules and the engine's limits, never
from the pages' own helpers.
"""

from __future__ import annotations

import ast
import html
import json
import re
import tomllib
import unicodedata

import numpy as np
import pytest
from apptest_helpers import APP, ROOT, decode_array, heatmap_traces, plotly_specs
from installed_models import installed_encoder
from streamlit import config as streamlit_config
from streamlit.testing.v1 import AppTest

from attention_core import MAX_DIM, STAGES, ToySettings, build_toy_trace, token_labels, tokenize
from attention_core.tokens import MAX_TEXT_CHARS, MAX_TOKENS
from ui.i18n import translate
from ui.url import MAX_URL_TEXT, read_url

# ----- the inputs ------------------------------------------------------------------------------

MEGABYTE = 1_000_000
HOSTILE_TEXTS: dict[str, str] = {
    "empty": "",
    "whitespace_only": " \t\n \u3000\u00a0\u2003\r\n ",
    "paste_1mb": ("lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 20_000)[:MEGABYTE],
    "thousands_of_tokens": " ".join(f"w{i}" for i in range(5000)),
    "thousands_of_emoji": "😀" * 3000,
    "family_emoji": "👩\u200d👩\u200d👧\u200d👦 and 👨🏽\u200d💻 code",
    "flags": "🇨🇳 🇺🇸 flags",
    "arabic": "مرحبا بالعالم",
    "hebrew_mixed": "שלום world עולם",
    "bidi_override": "user \u202egnp.exe\u202c file \u202dx",
    "zalgo": "Z̷̢͎̈́a̸l̵g̶o̴ t̶e̷x̸t̵ i̴s̸ h̷e̶r̸e̵",
    "zero_width_only": "\u200b\u200c\u200d\ufeff\u2060",
    "zero_width_in_words": "a\u200bb c\u200cd e\ufefff",
    "nul_and_controls": "a\x00b\x01c\x7f d\x1b[31m e\x08 f",
    "combining_marks_alone": "\u0301\u0301 a b",
    "script_tag": "<script>alert(1)</script>",
    "img_onerror": "<img src=x onerror=alert(1)>",
    "svg_onload": "<svg/onload=alert(1)> <iframe src=javascript:alert(1)>",
    "plotly_html_subset": "<br> <b>x</b> <a href='https://example.com/'>y</a> <sup>2</sup>",
    "html_entities": "&lt;b&gt; &amp; &#60;script&#62;",
    "markdown_link": "[x](javascript:alert(1))",
    "markdown_bold_heading": "**bold** _it_ # heading\n---\n> quote",
    "markdown_code": "`code` ```fence``` ~~strike~~",
    "latex_href": r"$\href{javascript:alert(1)}{x}$",
    "latex_def": r"\def\x{y} $$x$$ \(y\)",
    "latex_dollars": "$ $ $$ price $5",
    "format_placeholders": "{rows} {0} %s %{y} {{x}}",
    "newlines": "a\n\n\nb\r\nc\u2028d\u2029e",
    "long_token": "a" * 50_000 + " b",
    "long_token_beyond_limit": "a" * (MAX_TEXT_CHARS + 10) + " b",
    "single_token": "hello",
    "only_punctuation": "?!…",
    "cjk_mixed": "猫坐在垫子上 the cat 🐱",
}

MESSAGE_ONLY = {  # inputs with nothing to draw: the page must say why
    "empty": "error.empty_keys",
    "whitespace_only": "error.empty_keys",
    "zero_width_only": "error.empty_keys",
    "single_token": "error.single_token",
    "long_token_beyond_limit": "error.single_token",
}
OVER_CHARACTER_LIMIT = {"paste_1mb", "long_token_beyond_limit"}
OVER_TOKEN_LIMIT = {"paste_1mb", "thousands_of_tokens", "thousands_of_emoji"}

SENTENCE_PAGES = {"step", "cell", "masks", "multi-head", "compare"}
"""Pages drawn from the sidebar sentence alone, which must say what is wrong with it in the
app's shared words (others have their own messages or do not use the sentence)."""

# A sample for every page of the app.
PAGE_SAMPLE = (
    "empty",
    "thousands_of_tokens",
    "script_tag",
    "latex_dollars",
    "markdown_bold_heading",
    "family_emoji",
    "long_token",
)

MAX_CHART_PAYLOAD = (
    tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["server"].get(
        "maxMessageSize", 200
    )
    * MEGABYTE
)
"""Plotly JSON of one chart: Streamlit refuses a message over `server.maxMessageSize` and shows
its "exceeds the message size limit" error instead of the chart."""

MARKDOWN_ACTIVE = set("`*_[]$~")
"""Characters that change how a Markdown (or KaTeX) line renders when left unescaped."""
INVISIBLE_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp"}


def _registered_pages() -> list[str]:
    """Page names (pages/<name>.py) in app.py's PAGES tuple, read without running the app."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "PAGES" for target in node.targets):
            return [entry[0].removeprefix("pages/").removesuffix(".py") for entry in ast.literal_eval(node.value)]
    raise AssertionError("app.py has no PAGES tuple")


PAGES = _registered_pages()


# ----- running and reading the app ---------------------------------------------------------


@pytest.fixture(autouse=True, scope="module")
def _show_error_details():
    """The served app hides tracebacks (client.showErrorDetails = "none"); here a failure should
    name its cause."""
    before = streamlit_config.get_option("client.showErrorDetails")
    streamlit_config.set_option("client.showErrorDetails", "full")
    yield
    streamlit_config.set_option("client.showErrorDetails", before)


def open_page(page: str = "step", *, query: dict | None = None, timeout: float = 240, **session) -> AppTest:
    """The app on `page`, with some session state preset (as a user's earlier choices would be)
    and optionally a URL query on the first run."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    if query:
        at.query_params.update(query)
    for key, value in session.items():
        at.session_state[key] = value
    at.run()
    if page != "step" and not at.exception:
        at.switch_page(f"pages/{page}.py")
        at.run()
    return at


def assert_no_exception(at: AppTest, what: str) -> None:
    assert not at.exception, f"{what}: " + "; ".join(f"{e.value}\n{''.join(e.stack_trace)}" for e in at.exception)


def messages(at: AppTest) -> list[str]:
    return [element.value for kind in ("info", "warning", "error") for element in getattr(at, kind)]


def says(at: AppTest, key: str) -> bool:
    """Whether an info, warning or error shows the English string `key` (any placeholder values)."""
    template = translate(key, "en")
    pattern = ".*".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", template))
    return any(re.fullmatch(pattern, message, flags=re.DOTALL) for message in messages(at))


def assert_says(at: AppTest, key: str, what: str) -> None:
    shown = says(at, key)
    assert shown, f"{what}: expected the message {key!r}; shown: {messages(at)}"


def markdown_bodies(at: AppTest) -> list[tuple[str, str]]:
    """(kind, source) of every element whose text Streamlit renders as Markdown (or LaTeX)."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader", "latex")
    return [(kind, str(element.value)) for kind in kinds for element in getattr(at, kind)]


def _outside_code_spans(source: str) -> str:
    return re.sub(r"(`+)(?:(?!\1).)+?\1", " ", source, flags=re.DOTALL)


def raw_labels_in_markdown(at: AppTest, labels: list[str]) -> list[tuple[str, str, str]]:
    """(kind, label, source) for every token label with Markdown-active characters that appears
    unescaped (verbatim, outside a code span) in text rendered as Markdown."""
    risky = [label for label in labels if MARKDOWN_ACTIVE & set(label.split(":", 1)[1])]
    found = []
    for kind, source in markdown_bodies(at):
        plain = _outside_code_spans(source)
        found += [(kind, label, source[:200]) for label in risky if label in plain]
    return found


def expected_tokens(text: str) -> list[str]:
    """The tokens a page draws: the first MAX_TOKENS of the first MAX_TEXT_CHARS characters."""
    return tokenize(text[:MAX_TEXT_CHARS])[:MAX_TOKENS]


def drawn_row_labels(spec: dict) -> list[str]:
    """The first heatmap's row labels as the user reads them (Plotly decodes &lt; &gt; &amp;)."""
    return [html.unescape(str(label)) for label in heatmap_traces(spec)[0]["y"]]


def is_visible(token: str) -> bool:
    return any(unicodedata.category(char) not in INVISIBLE_CATEGORIES for char in token)


def assert_draws_or_explains(at: AppTest, name: str, text: str) -> None:
    """A clear message, or heatmaps of the sentence's tokens with finite values, small enough
    to paint; and no token label rendered as Markdown anywhere."""
    assert_no_exception(at, name)
    labels = token_labels(expected_tokens(text))
    rendered = raw_labels_in_markdown(at, labels)
    assert not rendered, rendered
    if len(text) > 1 and MARKDOWN_ACTIVE & set(text):
        echoed = [kind for kind, source in markdown_bodies(at) if text in _outside_code_spans(source)]
        assert not echoed, f"{name}: the sentence itself is rendered as Markdown in {echoed}"
    too_big = {
        chart.proto.id[-40:]: f"{len(chart.proto.spec) / MEGABYTE:.1f} MB"
        for chart in at.get("plotly_chart")
        if len(chart.proto.spec) > MAX_CHART_PAYLOAD
    }
    assert not too_big, f"{name}: charts over the {MAX_CHART_PAYLOAD / MEGABYTE:.0f} MB message limit: {too_big}"
    specs = plotly_specs(at)
    if not specs:
        assert messages(at), f"{name}: nothing drawn and nothing said"


# ----- the sentence, typed in the sidebar (step-through page) ----------------------------------


@pytest.mark.parametrize("name", list(HOSTILE_TEXTS))
def test_hostile_sentence_on_the_step_through_page(name):
    text = HOSTILE_TEXTS[name]
    at = open_page(text=text)
    assert_draws_or_explains(at, name, text)
    if name in MESSAGE_ONLY:
        assert_says(at, MESSAGE_ONLY[name], name)
        assert not plotly_specs(at)
    else:
        specs = plotly_specs(at)
        assert specs, f"{name}: no heatmap drawn; messages {messages(at)}"
        tokens = expected_tokens(text)
        if len(tokens) <= 200:
            assert drawn_row_labels(specs[0]) == token_labels(tokens), "the rows are the typed tokens"
        for spec in specs:  # no mask: every drawn cell holds a finite number
            for trace in heatmap_traces(spec):
                z = decode_array(trace["z"]).astype(float)
                assert np.isfinite(z).all(), f"{name}: NaN or Inf drawn in {spec['layout'].get('title')}"
        if tokens and len(tokens) <= 200:
            first = STAGES[0]  # its first matrix's table, chosen above it
            at.button_group(key=f"step-{first.name}-{first.matrices_for(False)[0]}-tab").set_value("table").run()
            table = at.dataframe[0].value
            assert list(table.index) == token_labels(tokens), "table cells hold the token text as typed"
    if name in OVER_CHARACTER_LIMIT:
        assert_says(at, "notice.characters", f"{name}: the cut at {MAX_TEXT_CHARS} characters")
    if name in OVER_TOKEN_LIMIT:
        assert_says(at, "notice.truncated", f"{name}: the cut at {MAX_TOKENS} tokens")


@pytest.mark.parametrize("name", [name for name in HOSTILE_TEXTS if name not in MESSAGE_ONLY])
def test_every_drawn_token_is_visible(name):
    """A row labelled "3:" with nothing after it is not a correct drawing: format and control
    characters (zero-width spaces, bidi overrides, NUL, ESC) must not become tokens of their own."""
    invisible = [token for token in expected_tokens(HOSTILE_TEXTS[name]) if not is_visible(token)]
    assert not invisible, f"{name}: invisible tokens {[ascii(token) for token in invisible]}"


def test_a_flag_is_one_token():
    """A flag is one picture made of two regional-indicator letters (or a tag sequence)."""
    assert tokenize("🇨🇳 🇺🇸") == ["🇨🇳", "🇺🇸"]
    assert tokenize("🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f") == [
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    ]


@pytest.mark.parametrize(
    "name", ["script_tag", "markdown_link", "latex_href", "family_emoji", "zalgo", "format_placeholders"]
)
def test_typing_into_the_text_area(name):
    """The same inputs typed into the widget after a first normal run (not preset)."""
    at = open_page()
    assert_no_exception(at, "default")
    at.text_area(key="text").input(HOSTILE_TEXTS[name])
    at.run()
    assert_draws_or_explains(at, name, HOSTILE_TEXTS[name])
    assert drawn_row_labels(plotly_specs(at)[0]) == token_labels(expected_tokens(HOSTILE_TEXTS[name]))


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("box", ["text", "query_text"])
def test_a_replacement_character_in_a_sentence_is_explained(box, language):
    """U+FFFD is what the page's text boxes put in place of half an emoji (ui/page_scripts.py;
    the browser test types one): the page says what the sign means, in the user's language."""
    session = {"text": "the cat sat", "cross": True, "query_text": "a dog ran", "lang": language}
    session[box] = "tea \ufffd time"
    at = open_page(**session)
    assert_no_exception(at, box)
    assert translate("notice.unreadable_character", language) in messages(at)
    clean = open_page(text="the cat sat", cross=True, query_text="a dog ran", lang=language)
    assert translate("notice.unreadable_character", language) not in messages(clean)


def test_the_notice_is_said_once_when_two_boxes_hold_the_sign():
    """The real model's page reads its own sentence box and the sidebar's: one notice, not two."""
    installed_encoder()
    at = open_page("real-model", text="tea \ufffd time", rm_text="\ufffd cup")
    assert_no_exception(at, "two boxes")
    assert messages(at).count(translate("notice.unreadable_character", "en")) == 1


def test_cross_attention_with_hostile_query_sentence():
    query = HOSTILE_TEXTS["latex_href"] + " " + HOSTILE_TEXTS["img_onerror"]
    at = open_page(text="the cat sat", cross=True, query_text=query, stage="weights")
    assert_draws_or_explains(at, "cross", query)
    assert drawn_row_labels(plotly_specs(at)[0]) == token_labels(tokenize(query))


def test_whitespace_only_query_sentence_falls_back_to_self_attention():
    at = open_page(text="the cat sat", cross=True, query_text=" \n\t ")
    assert_no_exception(at, "blank query")
    assert drawn_row_labels(plotly_specs(at)[0]) == token_labels(tokenize("the cat sat"))


def test_padding_choices_stay_within_the_drawn_tokens_for_a_1mb_paste():
    """The padding picker offers the positions that exist in the drawn trace, not one option per
    token of the whole paste (a megabyte of text made ~185 000 options and a 12 s rerun)."""
    at = open_page(text=HOSTILE_TEXTS["paste_1mb"], mask_kind="padding")
    assert_no_exception(at, "1 MB with padding")
    offered = len(at.multiselect(key="pad_positions").options)
    assert offered <= MAX_TOKENS, f"{offered} padding options for a trace of at most {MAX_TOKENS} tokens"


# ----- token text must never be rendered as Markdown / LaTeX ------------------------------------

MARKUP_SENTENCE = "$ x $ *a* _b_ [c](d) ~~e~~"
MARKUP_LABELS = token_labels(tokenize(MARKUP_SENTENCE))


def test_fully_masked_notice_on_step_through_shows_tokens_as_text():
    n = len(MARKUP_LABELS)
    at = open_page(text=MARKUP_SENTENCE, mask_kind="padding", pad_positions=list(range(n)), stage="weights")
    assert_no_exception(at, "fully masked")
    assert_says(at, "warning.fully_masked", "every key padded")
    rendered = raw_labels_in_markdown(at, MARKUP_LABELS)
    assert not rendered, rendered


def test_fully_masked_rows_on_the_mask_lab_show_tokens_as_text():
    n = len(MARKUP_LABELS)
    at = open_page("masks", text=MARKUP_SENTENCE, mask_lab_presets=["padding"], mask_lab_pad=list(range(n)))
    assert_no_exception(at, "mask lab fully masked")
    rendered = raw_labels_in_markdown(at, MARKUP_LABELS)
    assert not rendered, rendered


def test_compare_summary_shows_tokens_as_text():
    at = open_page("compare", text="$ $ *")
    assert_no_exception(at, "compare")
    labels = token_labels(tokenize("$ $ *"))
    rendered = raw_labels_in_markdown(at, labels)
    assert not rendered, rendered


def test_follow_cell_titles_show_tokens_as_text():
    at = open_page("cell", text="$ $ *")
    assert_no_exception(at, "follow cell")
    labels = token_labels(tokenize("$ $ *"))
    rendered = raw_labels_in_markdown(at, labels)
    assert not rendered, rendered


@pytest.mark.parametrize(
    "typed",
    ["**bold**", r"$\href{javascript:alert(1)}{x}$", "[x](javascript:alert(1))", "<img src=x onerror=alert(1)>"],
)
def test_a_bad_typed_number_is_quoted_as_text(typed):
    """On "Type your own numbers" the error quotes the cell as typed; it must not render."""
    cells = {"q": [[typed, "1"], ["0", "1"]], "k": [["1", "0"], ["0", "1"]], "v": [["1", "0"], ["0", "1"]]}
    at = open_page("your-numbers", **{"your_numbers.cells": cells})
    assert_no_exception(at, typed)
    errors = [element.value for element in at.error]
    assert errors, "the bad cell is reported"
    rendered = [source for source in errors if typed in _outside_code_spans(source)]
    assert not rendered, f"the typed text is put into Markdown unescaped: {rendered}"


# ----- a sample on every page -----------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("name", PAGE_SAMPLE)
def test_hostile_sentence_on_every_page(page, name):
    text = HOSTILE_TEXTS[name]
    at = open_page(page, text=text)
    assert_draws_or_explains(at, f"{page}/{name}", text)
    if name in MESSAGE_ONLY and page not in ("your-numbers", "decoder"):  # those pages do not use the sentence
        assert messages(at), f"{page}/{name}: the sentence cannot be drawn and nothing says why"
    if name in MESSAGE_ONLY and page in SENTENCE_PAGES:
        assert_says(at, MESSAGE_ONLY[name], f"{page}/{name}")


# ----- the URL: read_url on its own -------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "values", "problems"),
    [
        ({"dk": "NaN"}, {}, [("dk", "dropped", "NaN")]),
        ({"dk": "inf"}, {}, [("dk", "dropped", "inf")]),
        ({"dk": "1e3"}, {}, [("dk", "dropped", "1e3")]),
        ({"dk": "0x10"}, {}, [("dk", "dropped", "0x10")]),
        ({"dk": "9" * 5000}, {}, [("dk", "dropped", "9" * 5000)]),  # beyond Python's int-parsing limit
        ({"dk": "9" * 4000}, {"dk": MAX_DIM}, [("dk", "clamped", "9" * 4000)]),
        ({"dk": " 12 "}, {"dk": 12}, []),
        ({"dk": "１２"}, {"dk": 12}, []),  # full-width digits, as typed with a Chinese keyboard
        ({"dk": "-0"}, {"dk": 1}, [("dk", "clamped", "-0")]),
        ({"dk": "8\x00"}, {}, [("dk", "dropped", "8\x00")]),
        ({"seed": "-1"}, {"seed": 0}, [("seed", "clamped", "-1")]),
        ({"d_model": "<script>alert(1)</script>"}, {}, [("d_model", "dropped", "<script>alert(1)</script>")]),
        ({"lang": "ZH"}, {}, [("lang", "dropped", "ZH")]),
        ({"lang": "zh\x00"}, {}, [("lang", "dropped", "zh\x00")]),
        ({"stage": "__class__"}, {}, [("stage", "dropped", "__class__")]),
        ({"view": "overview "}, {}, [("view", "dropped", "overview ")]),
        ({"palette": "javascript:alert(1)"}, {}, [("palette", "dropped", "javascript:alert(1)")]),
        ({"cross": "TRUE"}, {"cross": True}, []),
        (
            {"pad_positions": "99999999999999999999999"},
            {"pad_positions": []},
            [("pad_positions", "clamped", "99999999999999999999999")],
        ),
        ({"pad_positions": ",,,"}, {"pad_positions": []}, []),
        ({"text": ""}, {"text": ""}, []),
        ({"text": "<img src=x onerror=alert(1)>"}, {"text": "<img src=x onerror=alert(1)>"}, []),
        ({"__proto__": "1", "constructor": "x", "utm_source": "mail"}, {}, []),
    ],
)
def test_read_url_with_hostile_values(query, values, problems):
    assert read_url(query) == (values, problems)


def test_read_url_with_a_1mb_text_keeps_a_bounded_prefix():
    values, problems = read_url({"text": "x" * MEGABYTE})
    assert values["text"] == "x" * MAX_URL_TEXT
    assert [(key, kind) for key, kind, _ in problems] == [("text", "clamped")]


def test_read_url_with_a_huge_position_list_stays_bounded():
    values, problems = read_url({"pad_positions": ",".join(map(str, range(200_000)))})
    assert len(values["pad_positions"]) <= 2048
    assert problems and problems[0][:2] == ("pad_positions", "clamped")


# ----- the URL, opened in the app (AppTest honours the query on the first run) ----------------

URL_CASES: dict[str, dict] = {
    "dk_not_a_number": {"dk": "abc"},
    "dk_out_of_range": {"dk": "-99999"},
    "every_number_bad": {"dk": "1e9", "d_model": "0", "seed": "-5", "pad_positions": "x"},
    "repeated_param": {"dk": ["5", "600"]},
    "unknown_params": {"utm_source": "mail", "__proto__": "x", "<b>": "<i>"},
    "text_100kb": {"text": "a " * 50_000},
    "text_script": {"text": "<script>alert(1)</script> hi"},
    "text_latex": {"text": r"$\href{javascript:alert(1)}{x}$ \def\x{y}"},
    "text_empty": {"text": ""},
    "text_zero_width": {"text": "\u200b\u200b"},
    "stage_html": {"stage": "<img src=x onerror=alert(1)>"},
    "lang_garbage": {"lang": "../../etc/passwd"},
    "pad_without_padding": {"pad_positions": "0,1,2,500", "text": "a b"},
    "padding_every_position": {
        "text": "$ x $ *",
        "mask_kind": "padding",
        "pad_positions": "0,1,2,3",
        "stage": "weights",
    },
    "cross_with_empty_query": {"cross": "true", "query_text": ""},
    "overview_of_2000_tokens": {"text": "a " * (MAX_URL_TEXT // 2), "view": "overview"},
    "markdown_breakout_in_notice": {"dk": "\n\n**bold** [x](javascript:alert(1)) $x$"},
    "code_span_breakout_in_notice": {"seed": "`` **bold** ``"},
}


@pytest.mark.parametrize("name", list(URL_CASES))
def test_hostile_link(name):
    query = URL_CASES[name]
    at = open_page(query=query)
    # a repeated parameter counts with its last value, as st.query_params reads it
    values, problems = read_url({key: value[-1] if isinstance(value, list) else value for key, value in query.items()})
    assert_draws_or_explains(at, name, values.get("text", ToySettings().text))
    notices = [element.value for element in at.warning]
    for key, kind, _ in problems:
        assert any(f"“{key}”" in notice for notice in notices), f"{name}: no notice for {key} ({kind}): {notices}"
    for notice in notices:
        breaks_out = "\n\n" in notice or "\r" in notice
        assert not breaks_out, f"{name}: the quoted value breaks out of its code span: {notice!r}"
        assert notice.count("`") % 2 == 0, f"{name}: unbalanced code span in {notice!r}"
    if "dk" in values:
        assert at.slider(key="dk").value == values["dk"]


def test_a_1mb_link_draws_the_default_view():
    """Streamlit itself ignores a query string over 524 288 characters (it logs so): the app
    never sees such a link and must simply draw its default view."""
    at = open_page(query={"text": "a " * (MEGABYTE // 2), "dk": "12"})
    assert_no_exception(at, "1 MB link")
    assert drawn_row_labels(plotly_specs(at)[0]) == token_labels(tokenize(ToySettings().text))


def test_repeated_param_uses_the_last_value_and_says_it_was_clamped():
    at = open_page(query={"dk": ["5", "600"]})
    assert_no_exception(at, "repeated")
    assert at.slider(key="dk").value == MAX_DIM
    assert any("dk" in message for message in messages(at))


def test_unknown_params_are_ignored_quietly_and_the_default_view_is_drawn():
    at = open_page(query={"utm_source": "mail", "fbclid": "x" * 5000})
    assert_no_exception(at, "unknown")
    assert not at.warning
    assert plotly_specs(at)


def test_link_with_every_position_padded_shows_tokens_as_text():
    at = open_page(query=URL_CASES["padding_every_position"])
    assert_no_exception(at, "padding link")
    labels = token_labels(tokenize("$ x $ *"))
    rendered = raw_labels_in_markdown(at, labels)
    assert not rendered, rendered


# ----- the figures: any label is shown as text ----------------------------------------------------

PLOTLY_MARKUP_LABELS = ("<br>", "<b>bold</b>", "<a href='https://example.com/'>x</a>", "&lt;i&gt;", "<sup>2</sup>")


def _figures_with_labels(labels: tuple[str, ...]):
    """One figure from every builder the pages use, for a trace whose tokens are `labels`."""
    import dataclasses

    from attention_core.figures import heatmap
    from attention_core.figures.cell import cell_locator, contribution_bars, softmax_bars, vector_bars
    from attention_core.figures.compare import difference_figure, weights_figure
    from attention_core.figures.masks import fill_weights_heatmap, mask_thumbnail, row_comparison_heatmap
    from attention_core.figures.multihead import head_weights_grid
    from attention_core.lessons.cell import follow_cell
    from attention_core.lessons.custom import weight_difference
    from attention_core.toy_multihead import build_toy_multihead

    words = " ".join(f"w{i}" for i in range(len(labels)))
    trace = build_toy_trace(ToySettings(text=words))
    trace = dataclasses.replace(trace, query_tokens=labels, key_tokens=labels)
    other = dataclasses.replace(
        build_toy_trace(ToySettings(text=words, scale=1.0)), query_tokens=labels, key_tokens=labels
    )
    cell = follow_cell(trace.attention, 1, 0)
    attention = trace.attention
    rows = np.zeros(len(labels), dtype=bool)
    rows[0] = True
    heads = build_toy_multihead(ToySettings(text=words), 16, 2)
    heads = dataclasses.replace(heads, query_tokens=labels, key_tokens=labels)
    return {
        "heatmap": heatmap(trace, "weights"),
        "head_weights_grid": head_weights_grid(heads, ["head 1", "head 2"]),
        "weights_figure": weights_figure(trace, "A"),
        "difference_figure": difference_figure(trace, other, weight_difference(trace, other), "B − A"),
        "cell_locator": cell_locator(trace, cell),
        "vector_bars": vector_bars(cell, trace.query_labels[1], trace.key_labels[0]),
        "softmax_bars": softmax_bars(cell, trace.key_labels),
        "contribution_bars": contribution_bars(cell, trace.key_labels),
        "mask_thumbnail": mask_thumbnail(np.asarray(attention.mask), trace.query_labels, trace.key_labels, title="M"),
        "fill_weights_heatmap": fill_weights_heatmap(
            np.asarray(attention.weights),
            np.asarray(attention.mask),
            rows,
            trace.query_labels,
            trace.key_labels,
            title="fill",
        ),
        "row_comparison_heatmap": row_comparison_heatmap(
            np.asarray(attention.weights),
            np.asarray(attention.weights),
            [0],
            trace.query_labels,
            trace.key_labels,
            engine_name="engine",
            fill_name="fill",
        ),
    }


def _label_strings(spec: dict) -> list[str]:
    """Every string of a figure spec that Plotly draws with its HTML subset: axis categories,
    trace names (legend entries), the title and annotations."""
    found = []
    for trace in spec["data"]:
        for axis in ("x", "y"):
            values = trace.get(axis)
            if isinstance(values, list):
                found += [value for value in values if isinstance(value, str)]
        if isinstance(trace.get("name"), str):
            found.append(trace["name"])
    title = spec["layout"].get("title") or {}
    found += [title.get("text", "")] if isinstance(title, dict) else []
    found += [note.get("text", "") for note in spec["layout"].get("annotations", [])]
    return found


@pytest.mark.parametrize(
    "builder",
    [
        "heatmap",
        "weights_figure",
        "difference_figure",
        "cell_locator",
        "vector_bars",
        "softmax_bars",
        "contribution_bars",
        "mask_thumbnail",
        "fill_weights_heatmap",
        "row_comparison_heatmap",
        "head_weights_grid",
    ],
)
def test_figure_labels_are_escaped_for_plotly(builder):
    """Plotly reads <b>, <br>, <a href>, <sup> and entities in category labels: every figure
    builder must escape & < > (as `plain_label` does) so that a label shows as typed."""
    figure = _figures_with_labels(PLOTLY_MARKUP_LABELS)[builder]
    spec = json.loads(figure.to_json())
    raw = [label for label in _label_strings(spec) if "<" in label or re.search(r"&(?!amp;|lt;|gt;)", label)]
    assert not raw, f"{builder}: labels Plotly would read as markup: {raw}"
