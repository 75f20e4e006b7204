"""The step-through page as a user drives it (AppTest): what is drawn follows the controls."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_ids, heatmap_z, plotly_specs, run_app, spec_ending

from attention_core import MAX_TOKENS, MaskSpec, ToySettings, build_toy_trace
from attention_core.figures import MAX_DRAWN_SIDE, heatmap
from attention_core.stages import STAGES
from ui import cache, views

STAGE_NAMES = [stage.name for stage in STAGES]


def _spec_of(at, matrix: str) -> dict:
    """The drawn figure of one matrix of the current stage (chart keys end with the matrix name)."""
    return spec_ending(at, f"-{matrix}")


def _at_stage(stage: str, **session):
    return run_app(stage=stage, **session)


def test_default_page_runs_and_shows_the_first_stage():
    at = run_app()
    assert not at.exception
    assert at.title[0].value == "Attention Explorer"
    x = heatmap_z(_spec_of(at, "x_query"))
    np.testing.assert_allclose(x, build_toy_trace(ToySettings()).x_query)


@pytest.mark.parametrize("stage", STAGE_NAMES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_stage_renders_in_both_languages(stage, lang):
    at = _at_stage(stage, lang=lang)
    assert not at.exception
    stage_charts = [chart_id for chart_id in chart_ids(at) if f"-step-{stage}-" in chart_id]  # not X · W's
    assert len(stage_charts) == len(next(s for s in STAGES if s.name == stage).matrices)
    assert at.latex, "each stage shows its formula"
    text = " ".join(element.value for element in at.markdown)
    if lang == "zh":
        assert any("\u4e00" <= char <= "\u9fff" for char in text)


def test_next_and_previous_walk_through_the_stages():
    at = run_app()
    for expected in STAGE_NAMES[1:]:
        at.button(key="next").click().run()
        assert at.segmented_control(key="stage").value == expected
    at.button(key="next").click().run()  # stays on the last stage
    assert at.segmented_control(key="stage").value == STAGE_NAMES[-1]
    at.button(key="previous").click().run()
    assert at.segmented_control(key="stage").value == STAGE_NAMES[-2]


def test_moving_the_dk_slider_changes_the_drawn_scores():
    at = _at_stage("scaled_scores")
    before = heatmap_z(_spec_of(at, "scaled_scores"))
    at.slider(key="dk").set_value(32).run()
    after = heatmap_z(_spec_of(at, "scaled_scores"))
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, build_toy_trace(ToySettings(dk=32)).attention.scaled_scores)


def test_raising_dk_by_one_adds_a_column_to_q():
    at = _at_stage("qkv")
    before = heatmap_z(_spec_of(at, "q"))
    at.slider(key="dk").set_value(9).run()
    after = heatmap_z(_spec_of(at, "q"))
    assert after.shape == (before.shape[0], before.shape[1] + 1)
    np.testing.assert_allclose(after[:, :-1], before)


def test_editing_the_tokens_changes_the_drawn_weights_and_labels():
    at = _at_stage("weights")
    at.text_area(key="text").input("我爱自然语言处理。").run()
    spec = _spec_of(at, "weights")
    assert spec["data"][0]["y"][:2] == ["0:我", "1:爱"]
    np.testing.assert_allclose(
        heatmap_z(spec), build_toy_trace(ToySettings(text="我爱自然语言处理。")).attention.weights
    )


def test_changing_the_mask_changes_the_weights_and_marks_masked_cells():
    at = _at_stage("weights")
    before = heatmap_z(_spec_of(at, "weights"))
    at.radio(key="mask_kind").set_value("causal").run()
    after = heatmap_z(_spec_of(at, "weights"))
    expected = build_toy_trace(ToySettings(mask=MaskSpec(causal=True))).attention
    assert np.isnan(after[~expected.mask]).all()
    np.testing.assert_allclose(after[expected.mask], expected.weights[expected.mask])
    assert not np.allclose(np.nan_to_num(before), np.nan_to_num(after))


def test_padding_mask_uses_the_chosen_pad_tokens():
    at = _at_stage("masked_scores", mask_kind="padding")
    assert "Pick the tokens" in " ".join(c.value for c in at.sidebar.caption)
    at.multiselect(key="pad_positions").set_value([9, 10]).run()
    z = heatmap_z(_spec_of(at, "masked_scores"))
    assert np.isnan(z[:, 9:]).all() and not np.isnan(z[:, :9]).any()


def test_fully_masked_rows_are_explained():
    at = _at_stage("weights", mask_kind="padding", text="a b c", pad_positions=[0, 1, 2])
    assert any("NaN" in warning.value for warning in at.warning)


def test_loading_an_example_fills_the_sentence():
    at = run_app()
    at.selectbox(key="example").select("猫坐在垫子上，因为它累了。").run()
    assert at.text_area(key="text").value == "猫坐在垫子上，因为它累了。"
    assert heatmap_z(_spec_of(at, "x_query")).shape[0] == 13


def test_cross_attention_draws_n_by_m_scores():
    at = _at_stage("raw_scores", cross=True, query_text="猫坐在垫子上。", text="The cat sat on the mat today.")
    z = heatmap_z(_spec_of(at, "raw_scores"))
    assert z.shape == (7, 8)


def test_identity_projection_and_positional_encoding_change_what_is_drawn():
    at = _at_stage("qkv")
    at.radio(key="projection").set_value("identity").run()
    expected = build_toy_trace(ToySettings(projection="identity"))
    np.testing.assert_allclose(heatmap_z(_spec_of(at, "q")), expected.x_query)
    at.toggle(key="positional").set_value(True).run()
    np.testing.assert_allclose(
        heatmap_z(_spec_of(at, "q")), build_toy_trace(ToySettings(projection="identity", positional=True)).x_query
    )


def test_overview_shows_every_stage():
    at = run_app(view="overview")
    stage_charts = [chart_id for chart_id in chart_ids(at) if "-overview-" in chart_id]  # not X · W's
    assert len(stage_charts) == sum(len(stage.matrices) for stage in STAGES)


def test_switching_language_keeps_the_settings():
    at = _at_stage("weights", dk=12, text="a b c d")
    at.segmented_control(key="lang").set_value("zh").run()
    assert at.slider(key="dk").value == 12
    assert at.segmented_control(key="stage").value == "weights"
    assert "注意力权重 A" in at.subheader[0].value
    np.testing.assert_allclose(
        heatmap_z(_spec_of(at, "weights")), build_toy_trace(ToySettings(text="a b c d", dk=12)).attention.weights
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "The sentence is empty"), ("   \n ", "The sentence is empty"), ("alone", "at least two tokens")],
)
def test_bad_input_gets_a_message_not_a_traceback(text, message):
    at = run_app(text=text)
    assert not at.exception
    assert message in at.info[0].value
    assert not at.get("plotly_chart")


def test_too_many_tokens_are_cut_with_a_notice():
    at = run_app(text=" ".join(f"w{i}" for i in range(MAX_TOKENS + 5)))
    assert f"at most {MAX_TOKENS} tokens" in at.warning[0].value and "5 dropped" in at.warning[0].value
    drawn = heatmap_z(_spec_of(at, "x_query"))
    assert drawn.shape[0] == -(-MAX_TOKENS // (-(-MAX_TOKENS // MAX_DRAWN_SIDE)))  # rows drawn in blocks




def test_a_long_sentence_is_drawn_in_blocks_with_an_exact_zoom_window():
    """2048 tokens: weights drawn as block maxima; the Zoom view shows exact cells."""
    text = " ".join(f"w{i % 700}" for i in range(MAX_TOKENS))
    at = _at_stage("weights", text=text, mask_kind="causal")
    expected = build_toy_trace(ToySettings(text=text, mask=MaskSpec(causal=True))).attention
    assert expected.weights.dtype == np.float32, "long inputs are computed in float32"
    [blocks] = plotly_specs(at)
    overview = heatmap_z(blocks)
    block = -(-MAX_TOKENS // MAX_DRAWN_SIDE)
    assert overview.shape == (-(-MAX_TOKENS // block),) * 2
    # block maximum of the weights, gaps where a whole block is masked
    np.testing.assert_allclose(overview[1, 0], expected.weights[block : 2 * block, :block].max(), rtol=1e-6)
    assert np.isnan(overview[0, 1])
    assert "largest weight" in blocks["layout"]["title"]["text"]
    assert any("choose Zoom" in caption.value for caption in at.caption), "the heatmap says where exact cells are"
    at.button_group(key="step-weights-weights-tab").set_value("zoom").run()
    [zoom] = plotly_specs(at)
    np.testing.assert_allclose(np.nan_to_num(heatmap_z(zoom)), np.where(expected.mask, expected.weights, 0)[:24, :24])
    at.slider(key="step-weights-weights-zoom-row").set_value(1000).run()
    zoom = heatmap_z(plotly_specs(at)[0])
    np.testing.assert_allclose(np.nan_to_num(zoom), np.where(expected.mask, expected.weights, 0)[1000:1024, :24])
    assert sum(len(chart.proto.spec) for chart in at.get("plotly_chart")) < 2_000_000, "payload under 2 MB"


@pytest.mark.parametrize("view", ["steps", "overview"])
def test_a_large_matrix_sends_one_figure_until_its_zoom_is_chosen(view):
    """Every figure costs the browser about 0.05 s to draw, whatever its size: a stage of three
    2,048-token matrices draws three, not six, and the overview one per matrix."""
    text = " ".join(f"w{i}" for i in range(MAX_TOKENS))
    at = run_app(stage="qkv", view=view, text=text)
    assert not at.exception
    matrices = [name for stage in STAGES for name in stage.matrices_for(False)]
    shown = matrices if view == "overview" else STAGES[1].matrices_for(False)
    assert len(plotly_specs(at)) == len(shown)
    assert not [slider for slider in at.slider if slider.key and slider.key.endswith("-zoom-row")], "no zoom sliders"


def test_a_small_matrix_has_no_zoom_view():
    at = _at_stage("weights")
    assert at.button_group(key="step-weights-weights-tab").options == ["Heatmap", "Table"]
    assert not at.tabs, "a row of buttons, not a tab bar (which the browser draws again on every rerun)"


def test_projector_mode_enlarges_type_and_gaps_and_the_palette_changes_colours():
    at = _at_stage("weights")
    normal = _spec_of(at, "weights")
    at.radio(key="display").set_value("projector").run()
    projected = _spec_of(at, "weights")
    assert projected["layout"]["font"]["size"] > normal["layout"]["font"]["size"]
    assert projected["data"][0]["xgap"] > normal["data"][0]["xgap"]
    assert projected["data"][0]["texttemplate"], "numbers are printed in cells"
    assert any("font-size: 20px" in element.proto.body for element in at.get("html"))
    at.selectbox(key="palette").set_value("viridis").run()
    assert _spec_of(at, "weights")["data"][0]["colorscale"] != projected["data"][0]["colorscale"]


def test_export_offers_every_format_and_small_matrix_snippets():
    at = _at_stage("weights", text="a b c")
    assert not at.get("download_button"), "the closed export panel is neither built nor sent"
    at.session_state["step-export-export"] = True  # what a click on its title sets
    at.run()
    labels = [button.proto.label for button in at.get("download_button")]
    assert labels[:3] == [".npz", "CSV files (.zip)", "JSON"]
    assert "Figure as an offline HTML file" in labels
    assert not at.tabs, "LaTeX · Markdown is a row of buttons, not a tab bar"
    snippets = [block.value for block in at.code]
    assert any(snippet.startswith("% columns: 0:a, 1:b, 2:c") for snippet in snippets)
    assert not any(snippet.startswith("| |") for snippet in snippets), "only the chosen snippet is sent"
    at.button_group(key="step-export-weights-snippet").set_value("markdown").run()
    snippets = [block.value for block in at.code]
    assert any(snippet.startswith("| | 0:a | 1:b | 2:c |") for snippet in snippets)


def test_arrow_keys_step_and_autoplay_is_offered():
    at = run_app()
    keys_script = [block for block in at.get("html") if "ArrowRight" in block.proto.body]
    assert keys_script and keys_script[0].proto.unsafe_allow_javascript, "the ← / → listener is on the page"
    assert {"previous", "next"} <= {button.key for button in at.button}, "and the buttons it clicks"
    at.toggle(key="autoplay").set_value(True).run()
    assert not at.exception


def test_a_rerun_that_finds_the_slide_due_moves_on_without_an_error():
    """Any control moved while the slide show runs reruns the whole page, and the slide's clock
    may have run out by then: the page must show the next stage, not an error box (the timer
    once changed the stage after its picker had been drawn, which Streamlit refuses)."""
    at = run_app(stage=STAGE_NAMES[2])
    at.toggle(key="autoplay").set_value(True).run()
    at.session_state["_autoplay_clock"] = 0.0  # started long ago: the next run finds the slide due
    at.run()  # a full rerun, as after any control's change (AppTest runs the fragment inline)
    assert not at.exception, [exception.value for exception in at.exception]
    at.run()  # the run the slide show asked for
    assert not at.exception
    assert at.session_state["stage"] == STAGE_NAMES[3]
    at.toggle(key="autoplay").set_value(False).run()
    assert not at.exception and at.session_state["stage"] == STAGE_NAMES[3], "stopped: no further slide"


@pytest.mark.parametrize("stage", ["raw_scores", "scaled_scores", "weights", "output"])
def test_a_stage_with_one_matrix_prints_its_numbers_in_the_cells(stage):
    """One matrix has the page's whole width: an 11-token matrix is not a narrow side-by-side panel."""
    at = run_app(stage=stage)
    spec = _spec_of(at, stage)
    [heat] = [trace for trace in spec["data"] if trace.get("type") == "heatmap"]
    assert heat.get("texttemplate") == "%{z:.2f}", "the numbers are printed in the cells"


def test_a_chosen_zoom_gives_way_to_the_heatmap_when_the_sentence_gets_short():
    """Zoom is offered above 64 tokens only; chosen, then the sentence shortened: the heatmap."""
    at = run_app(stage="weights", text=" ".join(f"w{i}" for i in range(300)))
    at.button_group(key="step-weights-weights-tab").set_value("zoom").run()
    assert at.slider(key="step-weights-weights-zoom-row")
    at.text_area(key="text").set_value("the cat sat on the mat").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button_group(key="step-weights-weights-tab").value == "heatmap"
    assert _spec_of(at, "weights")


def test_the_table_is_made_only_when_chosen_and_holds_the_exact_numbers():
    """A settings change sends the heatmap alone; clicking "Table" brings the exact matrix."""
    at = _at_stage("weights")
    assert not at.dataframe, "the table, not chosen, is neither built nor sent"
    assert _spec_of(at, "weights")
    at.button_group(key="step-weights-weights-tab").set_value("table").run()
    assert not at.exception
    expected = build_toy_trace(ToySettings()).attention.weights
    (table,) = at.dataframe
    np.testing.assert_allclose(table.value.to_numpy(dtype=float), expected, rtol=1e-6)
    heatmaps = [chart for chart in chart_ids(at) if chart.endswith("-step-weights-weights")]
    assert not heatmaps, "the heatmap is not sent beside it"


def test_a_chosen_table_stays_through_a_language_switch():
    """The chosen view is kept by its name, not its label: the table stays in the other language."""
    at = _at_stage("weights")
    at.button_group(key="step-weights-weights-tab").set_value("table").run()
    at.session_state["lang"] = "zh"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.dataframe and not [chart for chart in chart_ids(at) if chart.endswith("-step-weights-weights")]
    assert at.button_group(key="step-weights-weights-tab").options == ["热力图", "表格"]


def test_the_table_of_a_long_matrix_shows_the_window_chosen_under_zoom():
    settings = ToySettings(text=" ".join(f"w{i}" for i in range(300)))
    at = run_app(stage="weights", text=settings.text)
    at.button_group(key="step-weights-weights-tab").set_value("zoom").run()
    at.slider(key="step-weights-weights-zoom-row").set_value(100).run()
    at.button_group(key="step-weights-weights-tab").set_value("table").run()
    assert not at.exception
    expected = build_toy_trace(settings).attention.weights[100:124, :24]
    (table,) = at.dataframe
    np.testing.assert_allclose(table.value.to_numpy(dtype=float), expected, rtol=1e-6)


def _fresh_specs(at) -> list[dict]:
    """The page's charts built again from nothing: the kept figure specs forgotten, then a rerun."""
    cache.derived_results.clear()
    at.run()
    return plotly_specs(at)


def test_a_rerun_with_nothing_changed_builds_no_heatmap_again(monkeypatch):
    cache.derived_results.clear()  # earlier tests in this process may have drawn dk = 9
    at = run_app(view="overview")
    drawn = plotly_specs(at)
    built = []
    monkeypatch.setattr(views, "heatmap", lambda *args, **kwargs: built.append(args[1]) or heatmap(*args, **kwargs))
    at.run()
    assert not built
    assert plotly_specs(at) == drawn
    at.slider(key="dk").set_value(9).run()  # a new trace: each of its matrices built once
    assert sorted(built) == sorted({name for stage in STAGES for name in stage.matrices})  # weights: drawn twice


@pytest.mark.parametrize("view", ["steps", "overview"])
def test_every_kept_heatmap_is_the_one_its_settings_build(view):
    """Each change that alters a figure but not the trace, then back: every chart sent equals the
    one built anew for the settings of that moment (a kept figure missing a setting in its key
    would be the old one)."""
    at = run_app(view=view, stage="weights")
    changes = [
        ("lang", "zh"),
        ("display", "projector"),
        ("highlight", True),
        ("highlight_j", 3),
        ("palette", "viridis"),
        ("lang", "en"),
        ("display", "screen"),
        ("highlight", False),
    ]
    for key, value in changes:
        at.session_state[key] = value
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        sent = plotly_specs(at)
        assert sent == _fresh_specs(at), f"after {key} = {value!r}"


@pytest.mark.parametrize(
    "settings, d_model",
    [
        (ToySettings(dk=8, d_model=16), 16),
        (ToySettings(dk=4, d_model=16, projection="identity"), 4),  # Q = K = V = X: X is dk wide
        (ToySettings(dk=8, d_model=32, query_text="Le chat dort."), 32),  # cross-attention: n ≠ m
    ],
)
def test_the_stage_sentences_quote_the_sizes_the_settings_chose(settings, d_model):
    """The numbers under each stage's formula are read from the trace; they must be the sizes
    the sidebar chose (the step-through and the multi-head page share this reading)."""
    trace = build_toy_trace(settings)
    numbers = views.stage_numbers(trace)
    assert numbers["dk"] == numbers["dv"] == settings.dk and numbers["d_model"] == d_model
    assert (numbers["n"], numbers["m"]) == trace.attention.weights.shape
    assert numbers["scale"] == pytest.approx(1 / np.sqrt(settings.dk))


def test_one_head_s_sentences_quote_the_head_s_sizes():
    from attention_core.toy_multihead import build_toy_multihead, head_trace

    trace = head_trace(build_toy_multihead(ToySettings(), d_model=32, num_heads=4), 1)
    numbers = views.stage_numbers(trace)
    assert (numbers["dk"], numbers["dv"], numbers["d_model"]) == (8, 8, 32)  # dk = d_model / h
    assert numbers["scale"] == pytest.approx(1 / np.sqrt(8))
