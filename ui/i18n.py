"""Every string of the user interface, in English and Chinese: one lookup.

The translations live in `ui/strings/*.toml`, one file per page plus `common.toml`,
each entry a table with an `en` and a `zh` text:

    ["stage.weights.title"]
    en = "Softmax weights A"
    zh = "Softmax 权重 A"

`translate(key, lang, **values)` looks a key up and fills in `{placeholders}`. A key
defined twice, or missing a language, is a bug that `load_strings` reports (and a test
runs it).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT_LANGUAGE = "en"
STRINGS_DIR = Path(__file__).with_name("strings")


@cache
def load_strings(directory: Path = STRINGS_DIR) -> dict[str, dict[str, str]]:
    """All translations, keyed by string key then language; raises ValueError on a duplicate
    key or a missing language."""
    strings: dict[str, dict[str, str]] = {}
    for path in sorted(directory.glob("*.toml")):
        with path.open("rb") as file:
            for key, entry in tomllib.load(file).items():
                if key in strings:
                    raise ValueError(f"string {key!r} is defined twice (again in {path.name})")
                missing = [lang for lang in LANGUAGES if not isinstance(entry.get(lang), str) or not entry[lang]]
                if missing:
                    raise ValueError(f"string {key!r} in {path.name} lacks {', '.join(missing)}")
                strings[key] = entry
    return strings


def translate(key: str, lang: str, **values) -> str:
    """The string `key` in `lang` ("en" or "zh"), with `{placeholders}` filled from `values`.

    An unknown language falls back to English; an unknown key is returned as itself, so
    a missing string shows up visibly instead of crashing a page.
    """
    entry = load_strings().get(key)
    if entry is None:
        return key
    text = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    return text.format(**values) if values else text
