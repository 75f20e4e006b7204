"""Byte-level BPE tokens shown readably: the characters they complete, parts marked.

A byte-level BPE token is a run of UTF-8 *bytes*, written in GPT-2's printable byte
alphabet ("Ġ" for a space). A Chinese character is three bytes and often becomes two or
three tokens; decoding one such token alone gives a replacement character "�". Here every
token is shown as the characters its bytes belong to: a character the token holds whole is
shown as itself, one it holds only part of is shown with "(k/m)", meaning "part k of the m
tokens that spell it". Spaces, tabs and line breaks are shown as ␣, ⇥ and ↵; bytes that
are not valid UTF-8 at all (possible with random token ids) as ‹0x91›.
"""

from __future__ import annotations

from functools import cache

__all__ = ["byte_decoder", "readable_text", "readable_tokens", "token_bytes"]

VISIBLE = {" ": "␣", "\t": "⇥", "\n": "↵", "\r": "␍"}


@cache
def byte_decoder() -> dict[str, int]:
    """GPT-2's byte alphabet reversed: printable character → byte (as in its encoder.py)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1))
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return {chr(code): byte for byte, code in zip(printable, codes, strict=True)}


def token_bytes(token: str) -> bytes:
    """The bytes a byte-level token stands for; a special token (e.g. <|im_start|>) is its UTF-8 text."""
    table = byte_decoder()
    if all(char in table for char in token):
        return bytes(table[char] for char in token)
    return token.encode("utf-8")


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0  # a continuation byte or an invalid lead


def _characters(data: bytes, visible: dict[str, str] = VISIBLE) -> list[tuple[int, int, str]]:
    """(start, end, text) of each UTF-8 character of `data`; an invalid byte is its own ‹0x..›."""
    result, position = [], 0
    while position < len(data):
        length = _utf8_length(data[position])
        chunk = data[position : position + length] if length else b""
        try:
            text = chunk.decode("utf-8") if length and len(chunk) == length else None
        except UnicodeDecodeError:
            text = None
        if text is None:
            result.append((position, position + 1, f"‹0x{data[position]:02x}›"))
            position += 1
        else:
            result.append((position, position + length, visible.get(text, text)))
            position += length
    return result


def readable_tokens(tokens: list[str] | tuple[str, ...], special: frozenset[str] = frozenset()) -> list[str]:
    """Each token as the characters it completes; a character split over several tokens is
    shown in each of them with "(k/m)". Special tokens are shown as they are."""
    pieces = [token.encode("utf-8") if token in special else token_bytes(token) for token in tokens]
    starts, position = [], 0
    for piece in pieces:
        starts.append(position)
        position += len(piece)
    data = b"".join(pieces)
    characters = _characters(data)
    shown = []
    for index, piece in enumerate(pieces):
        if tokens[index] in special:
            shown.append(tokens[index])
            continue
        start, end = starts[index], starts[index] + len(piece)
        text = []
        for char_start, char_end, char in characters:
            if char_end <= start or char_start >= end:
                continue
            if start <= char_start and char_end <= end:
                text.append(char)
                continue
            sharing = [k for k, first in enumerate(starts)
                       if pieces[k] and first < char_end and first + len(pieces[k]) > char_start]
            text.append(f"{char}({sharing.index(index) + 1}/{len(sharing)})")
        shown.append("".join(text) or "∅")
    return shown


def readable_text(tokens: list[str] | tuple[str, ...], special: frozenset[str] = frozenset()) -> str:
    """The tokens as running text: their bytes decoded together (a character split over tokens
    appears once), spaces kept as spaces, invalid bytes as ‹0x..›, never a replacement character."""
    data = b"".join(token.encode("utf-8") if token in special else token_bytes(token) for token in tokens)
    return "".join(char for _, _, char in _characters(data, visible={}))
