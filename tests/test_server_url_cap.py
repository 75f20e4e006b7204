"""Links are capped by their percent-encoded bytes, not characters (a Chinese character is
9 bytes in a URL): what the app reads from a link and what it writes both fit the request
line that deploy/nginx.conf.template admits (tests/browser/test_server_proxy.py sends them
through nginx)."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

from apptest_helpers import run_app

from ui.i18n import translate
from ui.url import MAX_URL_BYTES, MAX_URL_TEXT, fit_link, read_url

ROOT = Path(__file__).resolve().parents[1]
CHINESE = "注意力就是你所需要的一切"


def percent_encoded(text: str) -> int:
    """Bytes of `text` in a URL, counted independently: UTF-8 bytes, 3 per escaped byte."""
    return sum(1 if ch.isascii() and (ch.isalnum() or ch in "_.-~ ") else 3 * len(ch.encode()) for ch in text)


def test_a_chinese_link_is_cut_by_encoded_bytes():
    text = (CHINESE * 300)[:3000]  # 27,000 bytes encoded, 3,000 characters
    values, problems = read_url({"text": text})
    kept = values["text"]
    assert text.startswith(kept) and problems == [("text", "clamped", text)]
    assert percent_encoded(kept) <= MAX_URL_TEXT < percent_encoded(text[: len(kept) + 1])


def test_a_2048_token_chinese_sentence_fits_in_a_link():
    text = "".join(chr(0x4E00 + i) for i in range(2048))
    assert read_url({"text": text}) == ({"text": text}, [])
    assert fit_link({"text": text, "mask_kind": "causal"}) == ({"text": text, "mask_kind": "causal"}, [])


def test_a_sentence_too_long_is_left_out_of_the_written_link():
    params = {"text": CHINESE * 200, "dk": "12", "lang": "zh"}
    kept, left_out = fit_link(params)
    assert kept == {"dk": "12", "lang": "zh"} and left_out == ["text"]


def test_two_sentences_together_stay_under_the_link_cap():
    params = {"text": "甲" * 2000, "query_text": "乙" * 1500, "cross": "true"}  # 18,000 + 13,500 bytes
    kept, left_out = fit_link(params)
    assert left_out == ["text"] and len(urllib.parse.urlencode(kept)) <= MAX_URL_BYTES


def test_the_proxy_admits_the_longest_link_the_app_writes():
    template = (ROOT / "deploy" / "nginx.conf.template").read_text()
    number, size = re.search(r"large_client_header_buffers\s+(\d+)\s+(\d+)k;", template).groups()
    request_line = len("GET /") + len("multi-head") + len("?") + MAX_URL_BYTES + len(" HTTP/1.1\r\n")
    assert request_line <= int(size) * 1024 and int(number) >= 2


def test_the_sidebar_says_when_the_sentence_is_left_out_of_the_link():
    notice = translate("share.left_out.short", "en")
    short = run_app(text="甲" * 2000)  # 18,000 bytes: kept
    assert notice not in [caption.value for caption in short.sidebar.caption]
    long = run_app(text="甲" * 2300)  # 20,700 bytes: left out
    assert notice in [caption.value for caption in long.sidebar.caption]


def test_the_share_box_shows_the_link_with_and_without_the_sentence():
    short = run_app(text="甲乙丙")
    assert [code.value for code in short.code if "text=" in code.value], "the link, with its sentence"
    long = run_app(text="甲" * 2300)
    links = [code.value for code in long.code if "://" in code.value or code.value.startswith("/")]
    assert links and all("text=" not in link for link in links), "the link, without the sentence"
    assert translate("share.left_out", "en", limit=MAX_URL_TEXT) in [w.value for w in long.warning]


def test_the_notice_numbers_hold():
    """share.left_out says a Chinese character takes 9 bytes, and gives the cap."""
    assert percent_encoded("甲") == 9 == len(urllib.parse.quote_plus("甲"))
    assert str(MAX_URL_TEXT) in translate("share.left_out", "en", limit=MAX_URL_TEXT)
    assert "9" in translate("share.left_out", "en", limit=MAX_URL_TEXT).split("bytes", 1)[1]
