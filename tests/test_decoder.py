"""The decoder's building blocks, each against an independent reference: readable tokens,
rotary position embedding, RMSNorm, SiLU, the head finder's scores and the overview summaries.

None of these needs the checkpoint (tests/test_decoder_reference.py compares the whole model).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.decoder.finder import SCORE_NAMES, head_scores, repeated_random_ids
from attention_core.decoder.forward import rms_norm, rotary, rotary_angles, silu
from attention_core.decoder.heads import prompt_head_summary, query_groups
from attention_core.decoder.readable import readable_tokens

tokenizers = pytest.importorskip("tokenizers", reason="readable tokens are checked against tokenizers' ByteLevel")


# ---------------------------------------------------------------------------- readable tokens


def byte_level(text: str) -> str:
    """`text` in GPT-2's byte alphabet, one character per UTF-8 byte, by the tokenizers library."""
    pieces = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize_str(text)
    return "".join(piece for piece, _ in pieces)


def split_at(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(text))), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def strip_parts(shown: str) -> str:
    """A readable token without its "(k/m)" part markers."""
    return re.sub(r"\(\d+/\d+\)", "", shown)


def test_chinese_character_split_over_three_tokens_is_shown_in_each_never_as_replacement():
    mapped = byte_level("猫")  # three bytes
    assert len(mapped) == 3
    assert readable_tokens([mapped[0], mapped[1], mapped[2]]) == ["猫(1/3)", "猫(2/3)", "猫(3/3)"]
    assert readable_tokens([mapped[:2], mapped[2]]) == ["猫(1/2)", "猫(2/2)"]
    assert readable_tokens([mapped]) == ["猫"]


def test_spaces_tabs_and_newlines_are_visible():
    assert readable_tokens([byte_level(" cat"), byte_level("\t"), byte_level("\n\n")]) == ["␣cat", "⇥", "↵↵"]


def test_invalid_utf8_bytes_are_shown_as_hex_not_replacement_characters():
    lone_continuation = byte_level("猫")[2]  # a continuation byte with no lead byte
    assert readable_tokens([lone_continuation]) == ["‹0x{:02x}›".format("猫".encode()[2])]


def test_special_tokens_are_shown_as_they_are():
    assert readable_tokens(["<|im_start|>", byte_level("hi")], frozenset({"<|im_start|>"})) == ["<|im_start|>", "hi"]


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab 猫坐在垫子上，😀é\n\t1")), min_size=1, max_size=12),
       cuts=st.lists(st.integers(1, 60), max_size=12))
def test_readable_tokens_rebuild_the_text_and_never_show_replacement_characters(text, cuts):
    tokens = split_at(byte_level(text), cuts)
    shown = readable_tokens(tokens)
    assert len(shown) == len(tokens)
    assert not any("\ufffd" in piece for piece in shown)
    visible = text.replace(" ", "␣").replace("\t", "⇥").replace("\n", "↵")
    # every character appears whole in one token, or as parts (1/m) … (m/m) in m consecutive tokens
    rebuilt = [char for piece in shown for char, part in _pieces(piece) if part is None or part[0] == 1]
    assert "".join(rebuilt) == visible
    decoder = tokenizers.decoders.ByteLevel()
    for token, piece in zip(tokens, shown, strict=True):
        if strip_parts(piece) == piece:  # a token holding whole characters only
            assert piece == decoder.decode([token]).replace(" ", "␣").replace("\t", "⇥").replace("\n", "↵")


def _pieces(shown: str):
    """(character, (k, m) or None) for each character a readable token shows."""
    for match in re.finditer(r"(.)(?:\((\d+)/(\d+)\))?", shown, flags=re.S):
        char, k, m = match.groups()
        yield char, (int(k), int(m)) if k else None


# ---------------------------------------------------------------------------- rotary, RMSNorm, SiLU


def rotate_half_reference(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Hugging Face's rotary (pairs (i, i + dk/2)) on the rows permuted the way llama.cpp's
    converter un-does, written with explicit loops in float64."""
    length, dk = x.shape
    half = dk // 2
    hf = np.empty_like(x, dtype=np.float64)
    hf[:, :half], hf[:, half:] = x[:, 0::2], x[:, 1::2]  # GGUF pair (2i, 2i+1) ↔ HF pair (i, i + half)
    out = np.empty_like(hf)
    for p in range(length):
        for i in range(half):
            angle = positions[p] * base ** (-2 * i / dk)
            out[p, i] = hf[p, i] * math.cos(angle) - hf[p, i + half] * math.sin(angle)
            out[p, i + half] = hf[p, i + half] * math.cos(angle) + hf[p, i] * math.sin(angle)
    back = np.empty_like(out)
    back[:, 0::2], back[:, 1::2] = out[:, :half], out[:, half:]
    return back


def test_rotary_equals_hugging_faces_rotate_half_on_the_converters_row_order():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 9, 8)).astype(np.float32)  # (heads, L, dk)
    turned = rotary(x, rotary_angles(9, 8, 100_000.0))
    for head in range(2):
        np.testing.assert_allclose(turned[head], rotate_half_reference(x[head], np.arange(9), 100_000.0),
                                   rtol=1e-5, atol=1e-5)


def test_rotary_keeps_lengths_and_makes_scores_depend_on_the_distance_only():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(1, 64)), rng.normal(size=(1, 64))
    angles = rotary_angles(40, 64, 100_000.0).astype(np.float64)
    q_at = rotary(np.repeat(q, 40, axis=0), angles)  # the same query at positions 0..39
    k_at = rotary(np.repeat(k, 40, axis=0), angles)
    np.testing.assert_allclose(np.linalg.norm(q_at, axis=1), np.linalg.norm(q), rtol=1e-5)
    # q at position p against k at position p − 3: the same score for every p
    scores = [float(q_at[p] @ k_at[p - 3]) for p in range(3, 40)]
    np.testing.assert_allclose(scores, scores[0], rtol=1e-4, atol=1e-4)
    assert not np.isclose(float(q_at[10] @ k_at[7]), float(q_at[10] @ k_at[2]))


def test_rms_norm_and_silu_match_their_formulas():
    rng = np.random.default_rng(2)
    x, gain = rng.normal(size=(3, 5)).astype(np.float32), rng.normal(size=5).astype(np.float32)
    expected = [[x[i, j] / math.sqrt(sum(v * v for v in x[i]) / 5 + 1e-5) * gain[j] for j in range(5)]
                for i in range(3)]
    np.testing.assert_allclose(rms_norm(x, gain, 1e-5), expected, rtol=1e-5)
    values = np.array([-3.0, -0.5, 0.0, 2.0], dtype=np.float32)
    np.testing.assert_allclose(silu(values), [v / (1 + math.exp(-v)) for v in values], rtol=1e-6)


def test_query_heads_share_key_value_heads_in_consecutive_groups_of_three():
    assert query_groups(9, 3) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


# ---------------------------------------------------------------------------- head finder


def causal_uniform(length: int) -> np.ndarray:
    """Each query spreads its attention evenly over itself and every earlier token."""
    a = np.tril(np.ones((length, length)))
    return a / a.sum(axis=1, keepdims=True)


def planted(period: int) -> np.ndarray:
    """(1 layer, 5 heads, 2T, 2T): previous-token, first-token, duplicate, induction, uniform."""
    length = 2 * period
    heads = np.zeros((5, length, length))
    for i in range(length):
        heads[0, i, max(i - 1, 0)] = 1.0
        heads[1, i, 0] = 1.0
        heads[2, i, i - period if i >= period else i] = 1.0
        heads[3, i, i - period + 1 if i >= period else i] = 1.0
    heads[4] = causal_uniform(length)
    return heads[None]


def test_planted_heads_score_one_on_their_own_pattern():
    scores = head_scores(planted(6), 6).scores
    for head, name in enumerate(SCORE_NAMES):
        assert scores[name][0, head] == pytest.approx(1.0), name
    assert scores["previous_token"][0, 1] == pytest.approx(1 / 11)  # the first-token head: only at i = 1
    assert scores["induction"][0, 0] == pytest.approx(0.0)


def test_uniform_head_scores_are_the_averages_of_one_over_the_visible_count():
    period = 5
    scores = head_scores(planted(period), period).scores
    length = 2 * period
    expected_previous = sum(1 / (i + 1) for i in range(1, length)) / (length - 1)
    expected_induction = sum(1 / (i + 1) for i in range(period, length)) / period
    assert scores["previous_token"][0, 4] == pytest.approx(expected_previous)
    assert scores["first_token"][0, 4] == pytest.approx(expected_previous)
    assert scores["duplicate_token"][0, 4] == pytest.approx(expected_induction)
    assert scores["induction"][0, 4] == pytest.approx(expected_induction)


def test_strongest_head_and_rows():
    result = head_scores(planted(4), 4)
    assert result.strongest("induction") == (0, 3, pytest.approx(1.0))
    rows = result.rows()
    assert len(rows) == 5 and rows[3]["head"] == 4 and rows[3]["induction"] == pytest.approx(1.0)


def test_repeated_random_ids_repeat_once_and_avoid_control_tokens():
    ids = repeated_random_ids(49152, period=30, seed=3)
    assert len(ids) == 60 and ids[:30] == ids[30:] and min(ids) >= 17
    assert ids == repeated_random_ids(49152, period=30, seed=3)
    with pytest.raises(ValueError):
        head_scores(np.zeros((1, 1, 10, 10)), 4)


def test_prompt_summary_on_planted_heads():
    summary = prompt_head_summary(planted(3))
    assert summary["previous_token"][0, 0] == pytest.approx(1.0)
    assert summary["first_token"][0, 1] == pytest.approx(1.0)
    assert summary["distance"][0, 0] == pytest.approx(1.0)  # one token back, every query
    assert summary["current_token"][0, 0] == pytest.approx(0.0)
    length = 6
    expected_distance = sum(sum(i - j for j in range(i + 1)) / (i + 1) for i in range(1, length)) / (length - 1)
    assert summary["distance"][0, 4] == pytest.approx(expected_distance)
