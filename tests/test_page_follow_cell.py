"""The "Follow one cell" page as a user drives it (AppTest): every number and bar it shows is
the trace's own record for the picked cell (i, j), read here straight from the engine's
AttentionTrace, not from `follow_cell`."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import APP, chart_ids, decode_array, heatmap_z, key_segments, plotly_specs, run_app
from streamlit.testing.v1 import AppTest

from attention_core import MaskSpec, ToySettings, build_toy_trace

SENTENCE = ToySettings().text  # 11 tokens: "0:The" … "10:."
QUERY_SENTENCE = "猫坐在垫子上。"  # 7 tokens: cross-attention with n = 7 ≠ m = 11


def open_page(lang: str = "en", **session):
    """The page with the default sentence and some settings preset, in `lang`."""
    session.setdefault("text", SENTENCE)
    at = run_app(page="cell", **session)
    if lang != "en":  # switched with the sidebar widget, as a user does
        at.segmented_control(key="lang").set_value(lang).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def expected_trace(**settings):
    """The engine's attention record for the given toy settings."""
    return build_toy_trace(ToySettings(text=SENTENCE, **settings)).attention


def chart(at, key: str) -> dict:
    """The drawn spec of the chart with `key=`."""
    for chart_id, spec in zip(chart_ids(at), plotly_specs(at), strict=True):
        if chart_id.endswith(f"-{key}") or chart_id.endswith(key):
            return spec
    raise AssertionError(f"no chart {key!r}: {chart_ids(at)}")


STEPS = ("dot", "scale", "mask", "softmax", "output")
"""The chain's steps, in the order of the page's "Show step" buttons."""
STEP_CHARTS = {
    "dot": ["cell-locator", "cell-vectors", "cell-products"],
    "scale": ["cell-locator"],
    "mask": ["cell-locator"],
    "softmax": ["cell-locator", "cell-softmax"],
    "output": ["cell-locator", "cell-output"],
}
"""The charts on the page with each step shown: the locator above the steps, then the step's own."""


def show(at, step: str):
    """Pick a step of the chain with the page's "Show step" buttons, as a user does."""
    at.button_group(key="cell_part").set_value(step).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def drawn_charts(at) -> list[str]:
    """The `key=` of every chart on the page, in page order (a chart's id ends with "-<key>")."""
    return ["cell-" + chart_id.rsplit("-cell-", 1)[-1] for chart_id in chart_ids(at)]


def bars(spec: dict) -> list[dict]:
    return [trace for trace in spec["data"] if trace.get("type") == "bar"]


def y(trace: dict) -> np.ndarray:
    return decode_array(trace["y"]).astype(float)


def metrics(at) -> dict[str, str]:
    """The five metrics in page order: raw, scaled, mask, exp, weight."""
    values = [metric.value for metric in at.metric]
    assert len(values) == 5, values
    return dict(zip(["raw", "scaled", "mask", "exp", "weight"], values, strict=True))


def row_softmax(trace, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(exp(S̃ − max), weights) of row i, straight from the trace's masked scores and weights."""
    row = np.asarray(trace.masked_scores[i], dtype=float)
    allowed = np.asarray(trace.mask[i])
    top = row[allowed].max() if allowed.any() else 0.0
    return np.exp(row - top), np.asarray(trace.weights[i])


def shown_row_table(at):
    """Row i's softmax numbers, read as a user does: choose the Numbers view, read its table,
    then go back to the chart."""
    at.button_group(key="cell-softmax-tab").set_value("table").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "cell-softmax" not in " ".join(chart_ids(at)), "only the chosen view is drawn"
    (table,) = at.dataframe
    at.button_group(key="cell-softmax-tab").set_value("chart").run()
    return table.value


def assert_page_shows_cell(at, trace, i: int, j: int) -> None:
    """Every number and bar on the page is the trace's record for cell (i, j)."""
    assert at.selectbox(key="cell_i").value == i
    assert at.selectbox(key="cell_j").value == j
    exp_row, weights = row_softmax(trace, i)

    shown = metrics(at)
    assert float(shown["raw"]) == pytest.approx(trace.raw_scores[i, j], rel=1e-12, abs=1e-12)
    assert float(shown["scaled"]) == pytest.approx(trace.scaled_scores[i, j], rel=1e-12, abs=1e-12)
    assert int(shown["mask"]) == int(trace.mask[i, j])
    assert float(shown["exp"]) == pytest.approx(exp_row[j], rel=1e-12, abs=1e-15)
    assert float(shown["weight"]) == pytest.approx(trace.weights[i, j], rel=1e-12, abs=1e-15)

    drawn_weights = np.where(trace.mask, trace.weights, np.nan)  # masked cells are drawn as gaps
    np.testing.assert_allclose(heatmap_z(chart(at, "cell-locator")), drawn_weights, atol=1e-15)

    formulas = []  # every step's formula, read step by step
    show(at, "dot")
    formulas += [latex.value for latex in at.latex]
    vectors = bars(chart(at, "cell-vectors"))
    np.testing.assert_allclose(y(vectors[0]), trace.q[i])
    np.testing.assert_allclose(y(vectors[1]), trace.k[j])
    products = bars(chart(at, "cell-products"))[0]
    np.testing.assert_allclose(y(products), trace.q[i] * trace.k[j], rtol=1e-12)

    for step in ("scale", "mask"):
        show(at, step)
        formulas += [latex.value for latex in at.latex]

    show(at, "softmax")
    formulas += [latex.value for latex in at.latex]
    at.button_group(key="cell-softmax-tab").set_value("chart").run()
    softmax = bars(chart(at, "cell-softmax"))[0]
    np.testing.assert_allclose(y(softmax), exp_row, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(decode_array(softmax["customdata"]).astype(float), weights, rtol=1e-12, atol=1e-15)
    table = shown_row_table(at)
    np.testing.assert_array_equal(table.iloc[:, 1].to_numpy(dtype=bool), trace.mask[i])
    np.testing.assert_array_equal(table.iloc[:, 2].to_numpy(dtype=float), trace.masked_scores[i])
    np.testing.assert_allclose(table.iloc[:, 4].to_numpy(dtype=float), exp_row, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(table.iloc[:, 5].to_numpy(dtype=float), weights, rtol=1e-12, atol=1e-15)

    show(at, "output")
    formulas += [latex.value for latex in at.latex]
    output = chart(at, "cell-output")
    stacked = key_segments(output, trace.v.shape[1])
    assert len(stacked) == trace.v.shape[0]
    for key, segment in enumerate(stacked):
        np.testing.assert_allclose(segment["y"], trace.weights[i, key] * trace.v[key], rtol=1e-12, atol=1e-15)
    diamonds = next(t for t in output["data"] if t.get("type") == "scatter")
    np.testing.assert_allclose(y(diamonds), trace.output[i], rtol=1e-12, atol=1e-12)
    assert [segment["outline"] > 0 for segment in stacked] == [key == j for key in range(len(stacked))]

    assert len(formulas) == len(STEPS), "one formula per step"
    formulas = " ".join(formulas)
    assert f"= {trace.raw_scores[i, j]:.4f}" in formulas
    assert f"{trace.scaled_scores[i, j]:.4f}" in formulas
    if not trace.fully_masked_rows[i]:
        assert f"= {trace.weights[i, j]:.4f}" in formulas


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_renders_in_both_languages(lang):
    at = open_page(lang)
    assert at.button_group(key="cell_part").value == "dot", "the chain opens on its first step"
    for step in STEPS:
        show(at, step)
        assert drawn_charts(at) == STEP_CHARTS[step], f"only the step {step!r} is drawn"
        assert len(at.latex) == 1, "one formula per step"
        (heading,) = [heading.value for heading in at.subheader]
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", heading), heading
    if lang == "zh":
        cjk = re.compile(r"[\u4e00-\u9fff]")
        assert all(cjk.search(metric.label) for metric in at.metric if "M_ij" not in metric.label)
        assert at.selectbox(key="cell_i").label.startswith("查询词元")
    else:
        assert at.title[0].value == "Follow one cell"


@pytest.mark.parametrize(
    ("lang", "labels"),
    [
        ("en", ["① Dot product", "② Scale", "③ Mask", "④ Softmax", "⑤ Output"]),
        ("zh", ["① 点积", "② 缩放", "③ 掩码", "④ softmax", "⑤ 输出"]),
    ],
)
def test_the_steps_are_picked_with_buttons_that_keep_the_cell(lang, labels):
    """One step at a time: picking another keeps the cell, and the cell's numbers stay above."""
    at = open_page(lang)
    at.selectbox(key="cell_i").set_value(4).run()
    at.selectbox(key="cell_j").set_value(2).run()
    picker = at.button_group(key="cell_part")
    assert picker.options == labels
    numbers = metrics(at)
    for step in reversed(STEPS):
        show(at, step)
        assert at.selectbox(key="cell_i").value == 4 and at.selectbox(key="cell_j").value == 2
        assert metrics(at) == numbers
    at.selectbox(key="cell_j").set_value(3).run()
    assert at.button_group(key="cell_part").value == "dot", "the step stays when the cell changes"


@pytest.mark.parametrize("step", STEPS)
def test_a_link_opens_the_step_it_names(step):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update({"cell_part": step, "cell_i": "2", "cell_j": "6"})
    at.run()
    at.switch_page("pages/cell.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button_group(key="cell_part").value == step
    assert drawn_charts(at) == STEP_CHARTS[step]
    assert at.selectbox(key="cell_i").value == 2 and at.selectbox(key="cell_j").value == 6


@pytest.mark.parametrize(("lang", "labels"), [("en", ["Chart", "Numbers of row 1"]), ("zh", ["图", "第 1 行的数字"])])
def test_the_softmax_row_is_a_chart_or_its_numbers_chosen_with_buttons(lang, labels):
    """A row of buttons, not a tab bar (which the browser draws again on every rerun, about
    12 ms): the chart opens first, and only the chosen view is built and sent."""
    at = show(open_page(lang), "softmax")
    assert not at.tabs
    picker = at.button_group(key="cell-softmax-tab")
    assert picker.options == labels and picker.value == "chart"
    assert not at.dataframe
    at.button_group(key="cell-softmax-tab").set_value("table").run()
    at.selectbox(key="cell_i").set_value(4).run()
    assert at.button_group(key="cell-softmax-tab").value == "table", "the choice stays when the row changes"
    assert at.button_group(key="cell-softmax-tab").options[1] == labels[1].replace("1", "4")
    assert len(at.dataframe) == 1


def test_every_number_shown_equals_the_trace_record():
    at = open_page()
    assert_page_shows_cell(at, expected_trace(), 1, 0)


@pytest.mark.parametrize(("i", "j"), [(7, 1), (3, 10), (0, 0)])
def test_picking_a_cell_draws_that_cell(i, j):
    at = open_page()
    at.selectbox(key="cell_i").set_value(i).run()
    at.selectbox(key="cell_j").set_value(j).run()
    assert not at.exception
    assert_page_shows_cell(at, expected_trace(), i, j)


def test_changing_the_key_changes_the_bars_and_the_numbers():
    at = open_page()
    before_k = y(bars(chart(at, "cell-vectors"))[1])
    before_q = y(bars(chart(at, "cell-vectors"))[0])
    before_products = y(bars(chart(at, "cell-products"))[0])
    before_metrics = metrics(at)
    at.selectbox(key="cell_j").set_value(5).run()
    assert not np.allclose(before_k, y(bars(chart(at, "cell-vectors"))[1]))
    np.testing.assert_array_equal(before_q, y(bars(chart(at, "cell-vectors"))[0]))  # same query
    assert not np.allclose(before_products, y(bars(chart(at, "cell-products"))[0]))
    assert metrics(at)["raw"] != before_metrics["raw"]
    assert metrics(at)["weight"] != before_metrics["weight"]
    assert_page_shows_cell(at, expected_trace(), 1, 5)


def test_changing_the_query_changes_the_softmax_row():
    at = show(open_page(), "softmax")
    before = y(bars(chart(at, "cell-softmax"))[0])
    at.selectbox(key="cell_i").set_value(7).run()
    assert not np.allclose(before, y(bars(chart(at, "cell-softmax"))[0]))
    assert_page_shows_cell(at, expected_trace(), 7, 0)


def test_cross_attention_lets_i_run_over_queries_and_j_over_keys():
    at = open_page(cross=True, query_text=QUERY_SENTENCE)
    n, m = 7, 11
    assert at.selectbox(key="cell_i").options == [f"{p}:{c}" for p, c in enumerate(QUERY_SENTENCE)]
    assert len(at.selectbox(key="cell_j").options) == m
    at.selectbox(key="cell_i").set_value(n - 1).run()
    at.selectbox(key="cell_j").set_value(m - 1).run()
    assert not at.exception
    assert_page_shows_cell(at, expected_trace(query_text=QUERY_SENTENCE), n - 1, m - 1)
    assert any(str(n) in caption.value and str(m) in caption.value for caption in at.caption)


def test_cross_attention_in_chinese():
    at = open_page("zh", cross=True, query_text=QUERY_SENTENCE)
    assert_page_shows_cell(at, expected_trace(query_text=QUERY_SENTENCE), 1, 0)


def test_a_shorter_sentence_clamps_the_picked_cell():
    at = open_page()
    at.selectbox(key="cell_i").set_value(10).run()
    at.selectbox(key="cell_j").set_value(9).run()
    at.text_area(key="text").input("我爱自然语言处理。").run()  # 9 tokens: positions 0..8
    assert not at.exception
    trace = build_toy_trace(ToySettings(text="我爱自然语言处理。")).attention
    assert_page_shows_cell(at, trace, 8, 8)


def test_a_longer_sentence_keeps_the_picked_positions():
    at = open_page()
    at.selectbox(key="cell_i").set_value(3).run()
    at.selectbox(key="cell_j").set_value(2).run()
    text = "The animal didn't cross the street because it was too tired."
    at.text_area(key="text").input(text).run()
    assert not at.exception
    assert_page_shows_cell(at, build_toy_trace(ToySettings(text=text)).attention, 3, 2)


def test_a_masked_cell_is_explained_as_minus_infinity_and_weight_zero():
    at = open_page(mask_kind="causal")
    at.selectbox(key="cell_j").set_value(5).run()  # 1:cat may not look ahead at 5:mat
    trace = expected_trace(mask=MaskSpec(causal=True))
    assert_page_shows_cell(at, trace, 1, 5)
    assert float(metrics(at)["weight"]) == 0.0
    assert at.metric[2].proto.delta == "masked → −∞"
    show(at, "mask")
    assert any("−∞" in notice.value for notice in at.info) and not at.error  # a lesson, not a red error box
    assert any(r"\leftarrow -\infty" in latex.value for latex in at.latex)


def test_an_allowed_cell_under_a_mask_is_said_to_be_allowed():
    at = open_page(mask_kind="causal")
    at.selectbox(key="cell_i").set_value(7).run()
    at.selectbox(key="cell_j").set_value(1).run()
    assert_page_shows_cell(at, expected_trace(mask=MaskSpec(causal=True)), 7, 1)
    assert show(at, "mask").success and not at.error


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fully_masked_row_is_explained_without_nan(lang):
    every_key = list(range(11))
    at = open_page(lang, mask_kind="padding", pad_positions=every_key)
    trace = expected_trace(mask=MaskSpec(padding=tuple(every_key)))
    assert trace.fully_masked_rows.all()
    assert_page_shows_cell(at, trace, 1, 0)
    for step in STEPS:
        show(at, step)
        explained = step in ("softmax", "output")
        assert len(at.warning) == explained, f"the softmax and the output steps both explain the empty row ({step})"
        for spec in plotly_specs(at)[1:]:  # the bar charts (the heatmap shows masked cells as gaps)
            for trace_spec in spec["data"]:
                assert not np.isnan(decode_array(trace_spec["y"]).astype(float)).any()
    assert float(metrics(at)["weight"]) == 0.0
    show(at, "softmax")
    assert all(value == 0 for value in shown_row_table(at).iloc[:, 5])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_past_the_legends_limit_the_bars_name_their_key_and_the_page_says_so(lang):
    from attention_core.figures.cell import MAX_KEYS_IN_LEGEND

    for count in (MAX_KEYS_IN_LEGEND, MAX_KEYS_IN_LEGEND + 1, 40):
        text = " ".join(f"w{position}" for position in range(count))
        at = open_page(lang, text=text, cell_i=3, cell_j=count - 2)
        trace = build_toy_trace(ToySettings(text=text)).attention
        assert_page_shows_cell(at, trace, 3, count - 2)
        output = chart(at, "cell-output")
        captions = " ".join(caption.value for caption in at.caption)
        said = str(MAX_KEYS_IN_LEGEND) in captions and ("legend" in captions or "图例" in captions)
        if count <= MAX_KEYS_IN_LEGEND:
            assert len(bars(output)) == count and not said
        else:
            (bar,) = bars(output)
            assert bar["showlegend"] is False and said
            legend = [trace["name"] for trace in output["data"] if trace.get("showlegend") is not False]
            assert legend == [diamonds["name"] for diamonds in output["data"] if diamonds.get("type") == "scatter"]
            keys = list(bar["customdata"])
            assert keys == [label for label in (f"{p}:w{p}" for p in range(count)) for _ in range(trace.v.shape[1])]
            assert "%{customdata}" in bar["hovertemplate"]
