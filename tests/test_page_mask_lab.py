"""The mask lab page as a user drives it (AppTest): what is drawn follows the chosen masks.

Expected matrices come from `build_toy_trace` with the same `MaskSpec` and from masks built
cell by cell in this file, never from the page's own helpers.

Two AppTest limits shape these tests:
- the sentence is passed explicitly (`text=`): after `switch_page`, AppTest hands the shared
  sidebar's text area an empty value on pages other than the default one;
- Chinese is switched on for the last run only (`in_chinese`): before each run AppTest
  re-formats the sidebar's radio options with their `format_func` outside the script, where
  the language is always English, and fails on the Chinese labels.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_ids, heatmap_z, plotly_specs, run_app

from attention_core import MaskSpec, ToySettings, build_toy_trace, tokenize

TEXT = ToySettings().text
TOKENS = tokenize(TEXT)
N = len(TOKENS)
QUERY_TEXT = "猫坐在垫子上。"
SENTENCES = "I saw a cat. The cat saw me. It ran away."


def open_lab(**session):
    session.setdefault("text", TEXT)
    return run_app(page="masks", **session)


def in_chinese(at):
    """Run once more with the interface in Chinese (see the module docstring: no run after this one)."""
    at.session_state["lang"] = "zh"
    at.run()
    assert not at.exception
    return at


def drawn(at, name: str) -> np.ndarray:
    """The z matrix of the chart whose key ends with `name` (NaN where a cell is a masked gap)."""
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith(f"-{name}"):
            return heatmap_z(spec)
    raise AssertionError(f"no chart {name!r}: {chart_ids(at)}")


def has_chart(at, name: str) -> bool:
    return any(chart_id.endswith(f"-{name}") for chart_id in chart_ids(at))


def expected_trace(spec: MaskSpec, **settings):
    return build_toy_trace(ToySettings(mask=spec, **settings))


def assert_draws(at, spec: MaskSpec, **settings) -> None:
    """The page's mask, masked scores and weights are those of the engine run with `spec`."""
    attention = expected_trace(spec, **settings).attention
    np.testing.assert_array_equal(drawn(at, "main-mask"), attention.mask.astype(float))
    np.testing.assert_allclose(drawn(at, "main-weights"), np.where(attention.mask, attention.weights, np.nan))
    np.testing.assert_allclose(
        drawn(at, "main-masked_scores"), np.where(attention.mask, attention.scaled_scores, np.nan)
    )


def loop_mask(n: int, m: int, allowed) -> np.ndarray:
    return np.array([[bool(allowed(i, j)) for j in range(m)] for i in range(n)])


def page_text(at) -> str:
    parts = [element.value for kind in ("markdown", "caption", "warning", "info", "title", "subheader")
             for element in at.get(kind)]
    return " ".join(str(part) for part in parts)


# ----- runs everywhere ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("cross", [False, True], ids=["self", "cross"])
def test_page_runs_in_both_languages_with_and_without_cross_attention(lang, cross):
    session = {"mask_lab_presets": ["causal", "same_sentence", "custom"]}
    if cross:
        session.update(cross=True, query_text=QUERY_TEXT)
    at = open_lab(**session)
    if lang == "zh":
        in_chinese(at)
    assert not at.exception
    assert has_chart(at, "main-weights")
    weights = drawn(at, "main-weights")
    assert weights.shape == ((len(tokenize(QUERY_TEXT)) if cross else N), N)
    text = page_text(at)
    if lang == "zh":
        assert at.title[0].value == "掩码实验室"
        assert "combine" not in text and "Custom grid" not in text, "no English left in the Chinese page"
    spec = MaskSpec(causal=True, same_sentence=True, custom=tuple((True,) * N for _ in range(weights.shape[0])))
    assert_draws(at, spec, query_text=QUERY_TEXT if cross else "")


def test_without_presets_nothing_is_masked_and_the_page_says_it_replaces_the_sidebar():
    at = open_lab()
    assert_draws(at, MaskSpec())
    assert "replace the sidebar" in page_text(at)
    assert not at.warning


def test_the_sidebar_mask_is_ignored_here_and_the_page_says_so():
    at = open_lab(mask_kind="causal")
    assert_draws(at, MaskSpec())  # the sidebar's causal mask does not apply on this page
    assert any("not used on this page" in info.value for info in at.info)


# ----- each preset, driven through its widget ---------------------------------------------------


def switch_on(at, *presets):
    at.button_group(key="mask_lab_presets").set_value(list(presets)).run()
    assert not at.exception
    return at


def test_causal_preset_changes_the_drawn_mask_and_weights():
    at = open_lab()
    before = drawn(at, "main-weights")
    switch_on(at, "causal")
    assert not np.allclose(drawn(at, "main-weights"), before, equal_nan=True)
    assert_draws(at, MaskSpec(causal=True))
    np.testing.assert_array_equal(drawn(at, "part-causal"), loop_mask(N, N, lambda i, j: j <= i).astype(float))


def test_padding_preset_masks_the_chosen_key_columns():
    at = switch_on(open_lab(), "padding")
    assert_draws(at, MaskSpec())  # nothing picked yet
    at.multiselect(key="mask_lab_pad").set_value([1, 5]).run()
    assert_draws(at, MaskSpec(padding=(1, 5)))
    np.testing.assert_array_equal(drawn(at, "main-mask"), loop_mask(N, N, lambda i, j: j not in (1, 5)))


@pytest.mark.parametrize("width", [1, 3])
def test_window_slider_sets_the_width_of_the_band(width):
    at = switch_on(open_lab(), "window")
    at.slider(key="mask_lab_window").set_value(width).run()
    assert_draws(at, MaskSpec(window=width))
    np.testing.assert_array_equal(drawn(at, "main-mask"), loop_mask(N, N, lambda i, j: abs(i - j) < width))


def test_same_sentence_preset_draws_blocks_and_offers_an_example_for_one_sentence():
    at = switch_on(open_lab(), "same_sentence")
    assert_draws(at, MaskSpec(same_sentence=True))  # one sentence: a single block, nothing masked
    at.button(key="mask_lab_sentences_example").click().run()
    tokens = tokenize(SENTENCES)
    sentence = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2]  # "I saw a cat ." | "The cat saw me ." | "It ran away ."
    assert len(tokens) == len(sentence)
    np.testing.assert_array_equal(
        drawn(at, "main-mask"), loop_mask(len(tokens), len(tokens), lambda i, j: sentence[i] == sentence[j])
    )
    assert_draws(at, MaskSpec(same_sentence=True), text=SENTENCES)


def test_presets_combine_with_and():
    at = open_lab(mask_lab_pad=[2], mask_lab_window=3)
    switch_on(at, "causal", "padding", "window")
    parts = [drawn(at, f"part-{name}") for name in ("causal", "padding", "window")]
    by_definition = loop_mask(N, N, lambda i, j: j <= i and j != 2 and abs(i - j) < 3)
    np.testing.assert_array_equal(drawn(at, "main-mask"), by_definition)
    np.testing.assert_array_equal(drawn(at, "main-mask").astype(bool), np.logical_and.reduce([p > 0.5 for p in parts]))
    assert_draws(at, MaskSpec(causal=True, padding=(2,), window=3))


def test_cross_attention_presets_use_n_queries_and_m_keys():
    n = len(tokenize(QUERY_TEXT))
    at = open_lab(cross=True, query_text=QUERY_TEXT, mask_lab_presets=["causal", "window"], mask_lab_window=2)
    assert drawn(at, "main-mask").shape == (n, N)
    np.testing.assert_array_equal(drawn(at, "main-mask"), loop_mask(n, N, lambda i, j: j <= i and abs(i - j) < 2))
    assert_draws(at, MaskSpec(causal=True, window=2), query_text=QUERY_TEXT)


# ----- the custom grid --------------------------------------------------------------------------


def all_true(n: int, m: int):
    return tuple((True,) * m for _ in range(n))


def test_custom_grid_starts_all_allowed_so_switching_it_on_changes_nothing():
    at = open_lab(mask_lab_presets=["custom"])
    assert_draws(at, MaskSpec(custom=all_true(N, N)))
    assert not np.isnan(drawn(at, "main-weights")).any()
    editor = at.data_editor(key="mask_lab_grid_0")
    assert editor.value.shape == (N, N) and editor.value.to_numpy().all()


def test_editing_the_grid_in_the_data_editor_changes_the_weights():
    """The editor's edit state is seeded as the browser would send it after two clicks."""
    at = open_lab(mask_lab_presets=["custom"])
    before = drawn(at, "main-weights")
    labels = [f"{index}:{token}" for index, token in enumerate(TOKENS)]
    at.session_state["mask_lab_grid_0"] = {
        "edited_rows": {4: {labels[0]: False, labels[4]: False}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    grid = [list(row) for row in all_true(N, N)]
    grid[4][0] = grid[4][4] = False
    spec = MaskSpec(custom=tuple(tuple(row) for row in grid))
    assert_draws(at, spec)
    after = drawn(at, "main-weights")
    assert not np.allclose(after[4], before[4], equal_nan=True)
    np.testing.assert_allclose(after[:4], before[:4])  # other rows unchanged


def test_copy_button_fills_the_grid_with_the_other_masks_and_tick_all_undoes_it():
    at = open_lab(mask_lab_presets=["causal", "custom"])
    at.button(key="mask_lab_grid_copy").click().run()
    causal = loop_mask(N, N, lambda i, j: j <= i)
    np.testing.assert_array_equal(np.array(at.session_state["mask_lab_custom"]), causal)
    assert_draws(at, MaskSpec(causal=True, custom=tuple(tuple(bool(c) for c in row) for row in causal)))
    switch_on(at, "custom")  # causal off: the copied triangle now masks on its own
    np.testing.assert_array_equal(drawn(at, "main-mask"), causal)
    at.button(key="mask_lab_grid_all").click().run()
    assert_draws(at, MaskSpec(custom=all_true(N, N)))


def test_a_grid_of_another_shape_is_reset_with_a_notice():
    at = open_lab(mask_lab_presets=["custom"], mask_lab_custom=((False, True), (True, False)))
    assert any("(2, 2)" in info.value and f"({N}, {N})" in info.value for info in at.info)
    assert_draws(at, MaskSpec(custom=all_true(N, N)))
    at.text_area(key="text").input("我爱自然语言处理。").run()  # 9 tokens: the grid is reset again
    n = len(tokenize("我爱自然语言处理。"))
    assert any(f"({N}, {N})" in info.value and f"({n}, {n})" in info.value for info in at.info)
    assert at.data_editor[0].value.shape == (n, n)


# ----- fully masked rows ------------------------------------------------------------------------


def test_fully_masked_explanation_appears_only_when_a_row_is_fully_masked():
    at = open_lab(mask_lab_presets=["causal"])
    assert not at.warning
    assert not has_chart(at, "fill-rows")
    at.button(key="mask_lab_fully_example").click().run()
    assert at.button_group(key="mask_lab_presets").value == ["causal", "padding"]
    assert at.multiselect(key="mask_lab_pad").value == [0]
    assert any("0:The" in warning.value for warning in at.warning)
    assert "1/11" in page_text(at)

    attention = expected_trace(MaskSpec(causal=True, padding=(0,))).attention
    assert attention.fully_masked_rows.tolist() == [True] + [False] * (N - 1)
    rows = drawn(at, "fill-rows")  # row 0 under the engine, then under the −1e9 fill
    np.testing.assert_array_equal(rows[0], np.zeros(N))
    np.testing.assert_allclose(rows[1], np.full(N, 1 / N))
    engine, fill = drawn(at, "fill-engine"), drawn(at, "fill-fill")
    np.testing.assert_array_equal(engine[0], np.zeros(N))
    np.testing.assert_allclose(fill[0], np.full(N, 1 / N))
    np.testing.assert_allclose(engine[1:], fill[1:])  # every other row is the same

    at.button_group(key="mask_lab_presets").set_value(["causal"]).run()
    assert not at.warning and not has_chart(at, "fill-rows")


def test_a_custom_grid_with_an_all_false_row_is_explained_in_chinese():
    grid = [list(row) for row in all_true(N, N)]
    grid[3] = [False] * N
    at = in_chinese(open_lab(mask_lab_presets=["custom"], mask_lab_custom=tuple(tuple(row) for row in grid)))
    assert any("3:on" in warning.value and "遮蔽" in warning.value for warning in at.warning)
    rows = drawn(at, "fill-rows")
    np.testing.assert_array_equal(rows[0], np.zeros(N))
    np.testing.assert_allclose(rows[1], np.full(N, 1 / N))
