"""The lesson additions as a user meets them (AppTest): the first example, X · W, the highlight,
the three uses of attention, the random-weights note and what follows AV."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from apptest_helpers import chart_ids, plotly_specs, run_app, spec_ending

from attention_core import MaskSpec, ToySettings, build_toy_trace
from ui.lesson_views import TAB_LABELS


def _bmatrices(latex: str) -> list[np.ndarray]:
    """Every bmatrix of a LaTeX string, as numbers."""
    found = []
    for body in re.findall(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", latex):
        found.append(np.array([[float(cell) for cell in row.split("&")] for row in body.split(r"\\")]))
    return found


def _captions(at) -> str:
    return "\n".join(element.value for element in at.caption)


# ----- the first example -------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_first_thing_a_visitor_sees_is_the_hand_numbered_example(lang):
    at = run_app(lang=lang)
    expander = at.expander[0]
    assert expander.proto.expanded, "open by default"
    assert "dk = 4" in expander.label
    page_order = list(at.main)  # every element and container, depth first: the order on screen
    assert page_order.index(expander) < next(i for i, node in enumerate(page_order) if node.type == "subheader"), (
        "before the first stage of the sentence"
    )
    q, k, v, raw, scaled, weights, output = (m for latex in expander.latex for m in _bmatrices(latex.value))
    e = math.e
    np.testing.assert_array_equal(raw, q @ k.T)  # by hand: [[4, 0, 0], [0, 2, 2], [2, 2, 0]]
    np.testing.assert_array_equal(raw, [[4, 0, 0], [0, 2, 2], [2, 2, 0]])
    np.testing.assert_array_equal(scaled, raw / 2)  # ÷ √4
    by_hand = np.array([[e**2, 1, 1], [1, e, e], [e, e, 1]])
    by_hand /= by_hand.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(weights, by_hand, atol=0.005)  # printed with two decimals
    np.testing.assert_allclose(output, by_hand @ v, atol=0.005)
    worked = " ".join(element.value for element in expander.markdown)
    assert "= 4" in worked and "0.79" in worked and "7.39" in worked and "9.39" in worked


def test_the_first_example_can_be_folded_away():
    at = run_app()
    assert at.expander[0].proto.expanded is True
    assert len(at.get("plotly_chart")) >= 1, "the sentence's first matrix is drawn below it"


# ----- random, untrained ----------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_random_weights_are_called_untrained_with_a_link_to_the_trained_model(lang):
    at = run_app(lang=lang)
    assert ("untrained" if lang == "en" else "未经训练") in _captions(at)
    assert next(link.proto.page for link in at.get("page_link")) == "real-model"


# ----- X · W --------------------------------------------------------------------------------------


def test_the_qkv_stage_draws_x_times_each_w_when_chosen():
    at = run_app(stage="qkv")
    trace = build_toy_trace(ToySettings())
    sides = (("q", trace.w_q, trace.attention.q), ("k", trace.w_k, trace.attention.k),
             ("v", trace.w_v, trace.attention.v))
    assert at.button_group(key="projection-tab").options == list(TAB_LABELS)
    for name, w, product in sides:
        at.button_group(key="projection-tab").set_value(name).run()
        drawn = [chart for chart in chart_ids(at) if chart.endswith("-xw")]
        assert len(drawn) == 1 and drawn[0].endswith(f"projection-{name}-xw"), "only the chosen projection is sent"
        x_drawn, w_drawn, product_drawn = _heatmaps(spec_ending(at, f"projection-{name}-xw"))
        np.testing.assert_allclose(w_drawn, w)
        np.testing.assert_allclose(product_drawn, product)
        np.testing.assert_allclose(x_drawn @ w_drawn, product_drawn, atol=1e-9)


def _heatmaps(spec: dict) -> list[np.ndarray]:
    from apptest_helpers import decode_array

    return [decode_array(trace["z"]).astype(float) for trace in spec["data"] if trace["type"] == "heatmap"]


def test_the_asymmetry_sentence_states_the_trace_s_own_scores():
    at = run_app(stage="qkv")
    scores = build_toy_trace(ToySettings()).attention.raw_scores
    sentence = next(c.value for c in at.caption if "not symmetric" in c.value)
    numbers = [float(x) for x in re.findall(r"= (-?\d+\.\d\d)", sentence)]
    labels = re.findall(r"S\((\d+):\w+, (\d+):\w+\)", sentence)
    (i, j), (j2, i2) = [(int(a), int(b)) for a, b in labels]
    assert (i, j) == (i2, j2)
    assert numbers == [round(scores[i, j], 2), round(scores[j, i], 2)]
    assert numbers[0] != numbers[1]


def test_without_projections_the_page_measures_the_weight_on_the_diagonal():
    at = run_app(stage="qkv", projection="identity")
    weights = build_toy_trace(ToySettings(projection="identity")).attention.weights
    n = len(weights)
    sentence = next(c.value for c in at.caption if "piles weight" in c.value)
    self_share, even_share = (int(x) for x in re.findall(r"(\d+)%", sentence))
    assert self_share == round(100 * sum(weights[i, i] for i in range(n)) / n)
    assert even_share == round(100 / n)
    largest = sum(1 for i in range(n) if weights[i, i] == weights[i].max())
    assert f"in {largest} of {n} rows" in sentence
    assert not any("projection-" in chart_id for chart_id in chart_ids(at)), "no W to draw"


# ----- the linked highlight -----------------------------------------------------------------------


def _shapes(spec: dict) -> list[tuple[float, float, float, float]]:
    return [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in spec["layout"].get("shapes", [])]


def test_choosing_a_cell_outlines_it_in_every_stage():
    at = run_app(view="overview")
    assert all(not _shapes(spec) for spec in plotly_specs(at)), "nothing outlined until asked"
    at.toggle(key="highlight").set_value(True).run()
    at.selectbox(key="highlight_i").set_value(3).run()
    at.selectbox(key="highlight_j").set_value(6).run()
    assert not at.exception
    assert _shapes(spec_ending(at, "overview-qkv-q")) == [(-0.5, 7.5, 2.5, 3.5)]  # row i = 3 of Q (11 × 8)
    assert _shapes(spec_ending(at, "overview-qkv-k")) == [(-0.5, 7.5, 5.5, 6.5)]  # row j = 6 of K
    assert _shapes(spec_ending(at, "overview-output-v")) == [(-0.5, 7.5, 5.5, 6.5)]  # the row of V it weighs
    for name in ("raw_scores-raw_scores", "scaled_scores-scaled_scores", "weights-weights", "output-weights"):
        assert _shapes(spec_ending(at, f"overview-{name}")) == [(5.5, 6.5, 2.5, 3.5)]  # cell (3, 6)
    assert _shapes(spec_ending(at, "overview-output-output")) == [(-0.5, 7.5, 2.5, 3.5)]
    assert "3:on" in _captions(at) and "6:because" in _captions(at)


def test_the_highlight_comes_from_the_url_and_is_clamped_to_the_sentence():
    at = run_app(stage="weights", highlight=True, highlight_i=9, highlight_j=1, text="a b c")
    assert at.selectbox(key="highlight_i").value == 2  # the last token of three
    assert _shapes(spec_ending(at, "step-weights-weights")) == [(0.5, 1.5, 1.5, 2.5)]


# ----- the three uses of attention ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("session", "use"),
    [
        ({}, "encoder self-attention"),
        ({"mask_kind": "causal"}, "decoder self-attention"),
        ({"cross": True, "query_text": "猫坐在垫子上。"}, "encoder–decoder attention"),
    ],
)
def test_the_mask_stage_names_the_use_of_the_settings(session, use):
    at = run_app(stage="masked_scores", **session)
    text = " ".join(element.value for element in at.markdown)
    assert "§3.2.3" in text and "decoder self-attention" in text
    assert f"**{use}**" in _captions(at)
    assert "masks" in [link.proto.page for link in at.get("page_link")]


def test_each_use_is_one_click_away_in_the_mask_lab():
    at = run_app(page="masks")
    m = 11  # "The cat sat on the mat because it was tired."
    at.button(key="mask_lab_use_decoder_self").click().run()
    assert sorted(at.session_state["mask_lab_presets"]) == ["causal", "padding"]
    expected = MaskSpec(causal=True, padding=(m - 1,)).build(list("abcdefghijk"), list("abcdefghijk"))
    mask = _heatmaps(spec_ending(at, "mask_lab-main-mask"))[0]
    np.testing.assert_array_equal(mask > 0.5, expected)
    assert "**decoder self-attention**" in _captions(at)

    at.button(key="mask_lab_use_encoder_decoder").click().run()
    assert at.session_state["cross"] is True and at.session_state["mask_lab_presets"] == ["padding"]
    mask = _heatmaps(spec_ending(at, "mask_lab-main-mask"))[0]
    assert mask.shape[1] == m and mask[:, : m - 1].all() and not mask[:, m - 1].any()  # padding only
    assert "**encoder–decoder attention**" in _captions(at)

    at.button(key="mask_lab_use_encoder_self").click().run()
    assert at.session_state["cross"] is False
    assert "**encoder self-attention**" in _captions(at)


# ----- after AV -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_output_stage_says_what_follows_in_a_real_layer(lang):
    at = run_app(stage="output", lang=lang)
    text = _captions(at)
    assert "W^O" in text and "LayerNorm" in text and "§3.3" in text


@pytest.mark.parametrize("page", ["cell", "masks", "multi-head", "compare", "quiz"])
def test_every_page_drawing_toy_weights_says_they_are_untrained(page):
    at = run_app(page=page)
    assert "**random, untrained**" in _captions(at)
    assert "real-model" in {link.proto.page for link in at.get("page_link")}


def test_cross_attention_of_equal_lengths_claims_no_symmetry_or_self_weight():
    """Query i and key i belong to two different sentences: S_ij against S_ji and A_ii mean nothing."""
    for projection in ("random", "identity"):
        at = run_app(stage="qkv", cross=True, text="a b c", query_text="x y z", projection=projection)
        captions = _captions(at)
        assert "not symmetric" not in captions and "piles weight" not in captions
