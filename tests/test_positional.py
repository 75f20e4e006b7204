"""Positional encoding lesson (paper §3.5): checked against the formula written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import ToySettings, build_toy_trace
from attention_core.lessons.positional import positional_lesson, sinusoids, wavelengths


def _pe_by_hand(positions: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same), one cell at a time."""
    pe = np.zeros((positions, d_model))
    for pos in range(positions):
        for dim in range(d_model):
            i = dim // 2
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos, dim] = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
    return pe


@pytest.mark.parametrize("d_model", [1, 4, 16, 17])
def test_sinusoids_follow_the_paper_formula(d_model):
    np.testing.assert_allclose(sinusoids(64, d_model), _pe_by_hand(64, d_model), atol=1e-12)
    assert np.all(np.abs(sinusoids(64, d_model)) <= 1), "every value between −1 and 1, as the page says"


def test_wavelengths_range_from_2_pi():
    spread = wavelengths(16)
    assert spread[0] == pytest.approx(2 * math.pi)  # "from 6.3 …"
    assert spread[-1] == pytest.approx(2 * math.pi * 10000 ** (14 / 16))  # pair i = 7 of d_model = 16
    # the period really is the wavelength: PE of pair i repeats after 2π·10000^(2i/d) positions
    pos = np.linspace(0, 50, 11)
    shifted = pos + spread[1]
    np.testing.assert_allclose(np.sin(pos / 10000 ** (2 / 16)), np.sin(shifted / 10000 ** (2 / 16)), atol=1e-9)


def test_x_is_e_plus_pe():
    lesson = positional_lesson(ToySettings())
    n, width = lesson.x.shape
    np.testing.assert_allclose(lesson.encoding, _pe_by_hand(n, width), atol=1e-12)
    np.testing.assert_allclose(lesson.x, lesson.embeddings + _pe_by_hand(n, width), atol=1e-12)
    np.testing.assert_allclose(lesson.x, build_toy_trace(ToySettings(positional=True)).x_query)


def test_the_two_the_rows_are_equal_without_pe_and_differ_with_it():
    lesson = positional_lesson(ToySettings())  # "The cat sat on the mat because it was tired."
    assert [(pair.first, pair.second) for pair in lesson.repeated] == [(0, 4)]
    pair = lesson.repeated[0]
    without = build_toy_trace(ToySettings(positional=False))
    with_pe = build_toy_trace(ToySettings(positional=True))
    np.testing.assert_array_equal(without.x_query[0], without.x_query[4])
    np.testing.assert_array_equal(without.attention.output[0], without.attention.output[4])
    assert pair.x_distance_without == 0 and pair.output_distance_without == 0
    assert pair.x_distance_with == pytest.approx(np.linalg.norm(with_pe.x_query[0] - with_pe.x_query[4]))
    assert pair.output_distance_with == pytest.approx(
        np.linalg.norm(with_pe.attention.output[0] - with_pe.attention.output[4])
    )
    assert pair.x_distance_with > 0.1 and pair.output_distance_with > 0.01


def test_the_lesson_ignores_the_mask_and_the_second_sentence():
    from attention_core import MaskSpec

    plain = positional_lesson(ToySettings())
    other = positional_lesson(ToySettings(mask=MaskSpec(causal=True), query_text="a b"))
    assert plain.repeated == other.repeated


def test_without_pe_word_order_only_reorders_the_outputs():
    """The page's sentence: “dog bites man” and “man bites dog” give each word the same output row."""
    forward = build_toy_trace(ToySettings(text="dog bites man"))
    backward = build_toy_trace(ToySettings(text="man bites dog"))
    np.testing.assert_allclose(forward.attention.output[[2, 1, 0]], backward.attention.output, atol=1e-12)
    with_pe = [build_toy_trace(ToySettings(text=text, positional=True)) for text in ("dog bites man", "man bites dog")]
    assert not np.allclose(with_pe[0].attention.output[[2, 1, 0]], with_pe[1].attention.output)


def test_the_readme_numbers_are_measured():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| **Positional encoding**"))
    assert f"{round(2 * math.pi * 10000 ** (14 / 16)):,} at d_model = 16" in row
    pair = positional_lesson(ToySettings()).repeated[0]
    assert f"rows {pair.x_distance_with:.2f} apart (outputs {pair.output_distance_with:.2f} apart)" in row
