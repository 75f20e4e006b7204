"""Turn a sentence into tokens, the rows and columns of every attention matrix.

Rules (documented because users see the result as axis labels):
- white space separates tokens and is never a token itself; so do invisible control and
  format characters (NUL, zero-width space, direction overrides…), which are dropped, and
  so are marks or joiners with nothing to attach to;
- in alphabetic scripts a token is a run of letters, digits and combining marks;
  an apostrophe between letters stays inside the word ("don't" is one token);
- every Chinese/Japanese character (Han, Hiragana, Katakana) is a token of its own,
  since those scripts put no spaces between words;
- every other character (punctuation, symbols, emoji) is a token of its own, except
  that joiners, variation selectors and skin-tone modifiers stay with the character
  before them, so "👩‍💻" is one token, and a flag such as "🇨🇳" is one token;
- no token is empty.
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_TEXT_CHARS", "MAX_TOKENS", "token_labels", "tokenize"]

MAX_TOKENS = 2048
"""Longest input the toy pipeline accepts; longer input is cut to this many tokens."""
MAX_TEXT_CHARS = 100_000
"""Characters of a pasted text that are read at all (far more than MAX_TOKENS words)."""

_APOSTROPHES = "'’"
_ZERO_WIDTH_JOINER = "\u200d"
_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x3134F),  # CJK Extensions B–G
)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _joins_previous(char: str) -> bool:
    """Characters that belong to the one before: marks, joiners, emoji modifiers."""
    return (
        unicodedata.category(char).startswith("M")
        or char == _ZERO_WIDTH_JOINER
        or 0xFE00 <= ord(char) <= 0xFE0F  # variation selectors
        or 0x1F3FB <= ord(char) <= 0x1F3FF  # skin-tone modifiers
        or 0xE0020 <= ord(char) <= 0xE007F  # tag characters (subdivision flags such as Scotland's)
    )


def _is_regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _is_word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LN" and not _is_cjk(char)


def _is_invisible(char: str) -> bool:
    """Control and format characters: NUL, zero-width space, direction overrides, BOM…"""
    return unicodedata.category(char) in ("Cc", "Cf")


def tokenize(text: str) -> list[str]:
    """Split `text` into tokens by the rules in this module's docstring."""
    tokens: list[str] = []
    word = ""  # the alphabetic word being read, if any
    glue_next = False  # the previous character was a zero-width joiner
    touching = False  # the last token ends right before this character (nothing in between)

    def flush() -> None:
        nonlocal word
        if word:
            tokens.append(word)
            word = ""

    def attach(char: str) -> None:
        nonlocal word
        if word:
            word += char
        else:
            tokens[-1] += char

    for index, char in enumerate(text):
        joinable = bool(word) or (bool(tokens) and touching)
        if glue_next and joinable and not char.isspace() and not _is_invisible(char):
            attach(char)
            glue_next = False
            continue
        glue_next = False
        if _joins_previous(char) and joinable:
            attach(char)
            glue_next = char == _ZERO_WIDTH_JOINER
        elif char.isspace() or _is_invisible(char) or _joins_previous(char):
            flush()  # a separator; invisible characters and stray marks are dropped
            touching = False
            continue
        elif _is_word_char(char):
            word += char
        elif char in _APOSTROPHES and word and index + 1 < len(text) and _is_word_char(text[index + 1]):
            word += char
        elif _is_regional_indicator(char) and not word and joinable and _is_single_regional_indicator(tokens[-1]):
            tokens[-1] += char  # two regional indicators make one flag: 🇨 + 🇳 = 🇨🇳
        else:
            flush()
            tokens.append(char)
        touching = True
    flush()
    return tokens


def _is_single_regional_indicator(token: str) -> bool:
    return len(token) == 1 and _is_regional_indicator(token)


def token_labels(tokens: list[str]) -> list[str]:
    """Axis labels "position:token", so that two equal tokens stay two rows."""
    return [f"{position}:{token}" for position, token in enumerate(tokens)]
