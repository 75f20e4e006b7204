"""Heatmaps: labels, colour scales and masked cells as the app's conventions say."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import MaskSpec, ToySettings, build_toy_trace
from attention_core.figures import DIVERGING, SEQUENTIAL, FigureText, heatmap
from attention_core.figures.matrices import MAX_CELLS_WITH_NUMBERS, MAX_DRAWN_SIDE, block_reduce


def _heat(figure):
    return next(trace for trace in figure.data if trace.type == "heatmap")


def test_weights_use_a_fixed_zero_to_one_scale_and_scores_a_centred_one():
    trace = build_toy_trace(ToySettings())
    weights = _heat(heatmap(trace, "weights"))
    assert (weights.zmin, weights.zmax) == (0.0, 1.0)
    scores = _heat(heatmap(trace, "raw_scores"))
    assert scores.zmid == 0.0
    assert scores.colorscale != weights.colorscale
    assert DIVERGING != SEQUENTIAL


def test_repeated_tokens_stay_separate_rows():
    trace = build_toy_trace(ToySettings(text="the cat the cat"))
    heat = _heat(heatmap(trace, "weights"))
    assert list(heat.y) == ["0:the", "1:cat", "2:the", "3:cat"]
    assert len(set(heat.x)) == 4


def test_heatmap_draws_the_recorded_values():
    trace = build_toy_trace(ToySettings(text="a b c d", dk=3))
    np.testing.assert_array_equal(np.asarray(_heat(heatmap(trace, "raw_scores")).z), trace.attention.raw_scores)
    heat = _heat(heatmap(trace, "q"))
    np.testing.assert_array_equal(np.asarray(heat.z), trace.attention.q)
    assert list(heat.x) == ["d0", "d1", "d2"]


def test_masked_cells_are_gaps_with_a_marker_but_the_record_keeps_its_numbers():
    trace = build_toy_trace(ToySettings(text="a b c", mask=MaskSpec(causal=True)))
    figure = heatmap(trace, "weights", text=FigureText(masked="已遮蔽"))
    z = np.asarray(_heat(figure).z, dtype=float)
    masked = ~trace.attention.mask
    assert np.isnan(z[masked]).all()
    np.testing.assert_array_equal(z[~masked], trace.attention.weights[~masked])
    markers = [t for t in figure.data if t.type == "scatter"]
    assert len(markers) == 1 and len(markers[0].x) == masked.sum() == 3
    assert markers[0].name == "已遮蔽"
    assert not np.isnan(trace.attention.weights).any()  # display only


@pytest.mark.parametrize("marked_side, crosses", [(3, 3), (2, 0), (0, 0)])
def test_masked_cells_carry_a_cross_only_up_to_the_marked_side(marked_side, crosses):
    """`marked_side` is the longest side drawn with ×; beyond it masked cells are gaps only."""
    trace = build_toy_trace(ToySettings(text="a b c", mask=MaskSpec(causal=True)))
    figure = heatmap(trace, "weights", marked_side=marked_side)
    markers = [t for t in figure.data if t.type == "scatter"]
    assert sum(len(marker.x) for marker in markers) == crosses
    assert np.isnan(np.asarray(_heat(figure).z, dtype=float)[~trace.attention.mask]).all()


def test_numbers_are_printed_in_small_matrices_only():
    small = build_toy_trace(ToySettings(text="a b c"))
    assert _heat(heatmap(small, "weights")).texttemplate
    side = int(MAX_CELLS_WITH_NUMBERS**0.5) + 2
    large = build_toy_trace(ToySettings(text=" ".join(f"w{i}" for i in range(side))))
    assert not _heat(heatmap(large, "weights")).texttemplate


def test_figure_words_are_the_callers():
    trace = build_toy_trace(ToySettings())
    figure = heatmap(trace, "weights", text=FigureText(query="查询词元", key="键词元"))
    assert figure.layout.yaxis.title.text == "查询词元"
    assert figure.layout.xaxis.title.text == "键词元"
    assert "查询词元" in _heat(figure).hovertemplate


def _margin(figure) -> dict:
    margin = figure.layout.margin
    return {side: getattr(margin, side) or 0 for side in "lrtb"}


def test_reserved_margins_grow_with_the_labels_and_never_shrink_what_the_figure_set():
    from attention_core.figures import reserve_label_room

    short = reserve_label_room(heatmap(build_toy_trace(ToySettings(text="a b c")), "weights"))
    long = reserve_label_room(heatmap(build_toy_trace(ToySettings(text="a extraordinarily c")), "weights"))
    chinese = reserve_label_room(heatmap(build_toy_trace(ToySettings(text="甲 非常非常长的词 丙")), "weights"))
    assert _margin(short)["l"] < _margin(long)["l"]  # a longer row label needs more room to its left
    assert _margin(long)["b"] > _margin(short)["b"]  # and, tilted, more room below
    # 8 wide characters take more room than 16 narrow ones ("1:" and 14 letters vs "1:" and 6 characters)
    assert _margin(chinese)["l"] > _margin(short)["l"]
    wide = heatmap(build_toy_trace(ToySettings(text="a b c")), "weights")
    wide.update_layout(margin={"l": 400, "b": 300})
    assert (_margin(reserve_label_room(wide))["l"], _margin(wide)["b"]) == (400, 300)
    assert short.layout.xaxis.automargin is not False  # Plotly may still widen a margin the guess missed


def test_a_numeric_axis_gets_room_for_its_longest_number_and_a_histogram_for_its_counts():
    import plotly.graph_objects as go

    from attention_core.figures import reserve_label_room

    def left(values, trace_type=go.Bar):
        figure = go.Figure(trace_type(x=["a", "b"], y=values))
        figure.update_layout(margin={"l": 0, "r": 0, "t": 0, "b": 0})
        return _margin(reserve_label_room(figure))["l"]

    assert left([0.5, 0.7]) < left([-123456.5, 0.7])  # "−120000" is longer than "0.7"
    histogram = lambda count: go.Figure(go.Histogram(x=np.zeros(count)))  # noqa: E731
    few, many = (_margin(reserve_label_room(histogram(count)))["l"] for count in (9, 90_000))
    assert few < many  # counts up to 9 are one digit, up to 90,000 five


PROJECTOR_ROWS = (1, 2, 11, 16, 17, 24, 25, 64, 65, 200)
"""Row counts around every threshold of the figure builders: numbers, labelled rows (16, 24),
cell gaps (64), blocks (200)."""


def _projector_matrices():
    """Matrices of every row count above, as the pages make them for the projector: built in the
    screen style and restyled (most pages), or built in the projector style (the step-through)."""
    import pytest

    from attention_core.figures import PROJECTOR, matrix_heatmap, restyle

    for rows in PROJECTOR_ROWS:
        for columns in sorted({1, 16, rows}):
            values = np.random.default_rng(rows).normal(size=(rows, columns))
            labels = [f"{index}:w{index}" for index in range(rows)], [f"{index}:w{index}" for index in range(columns)]
            restyled = restyle(matrix_heatmap(values, *labels), PROJECTOR)
            built = matrix_heatmap(values, *labels, style=PROJECTOR)
            built_and_restyled = restyle(matrix_heatmap(values, *labels, style=PROJECTOR), PROJECTOR)  # square cells
            for how, figure in (("restyled", restyled), ("built", built), ("built-restyled", built_and_restyled)):
                yield pytest.param(figure, id=f"{how}-{rows}x{columns}")


def test_in_projector_mode_a_matrix_of_any_length_fits_the_screen_with_its_row_labels_a_line_apart():
    """Scrolled to, a matrix shows whole on a 1280 × 720 projector (before, a 64-row matrix
    restyled for it was 2,007 px tall); labelled rows are at least a line of type apart, and
    no more rows go unlabelled than that needs."""
    from attention_core.figures import PROJECTOR, reserve_label_room

    for case in _projector_matrices():
        (figure,) = case.values
        assert figure.layout.height <= PROJECTOR.screen_height, case.id
        labelled = figure.layout.yaxis.tickvals
        if labelled is not None:  # every row, or every k-th, labelled over the plot area's height
            margin = reserve_label_room(figure).layout.margin
            plot_height = figure.layout.height - margin.t - margin.b
            spacing = plot_height / len(labelled)
            assert spacing >= PROJECTOR.font_size, case.id
            if len(labelled) > 2:  # and never thinned more than needed (nor twice: built thinned, then restyled)
                assert spacing <= 2.5 * (PROJECTOR.font_size + 6), case.id


def _block_reference(values: np.ndarray, row_size: int, column_size: int, how: str) -> np.ndarray:
    """Each block's max or mean of its non-NaN cells, by explicit loops in float64 (NaN if none)."""
    rows, columns = values.shape
    out = np.full((-(-rows // row_size), -(-columns // column_size)), np.nan)
    for block_row in range(out.shape[0]):
        for block_column in range(out.shape[1]):
            block = values[block_row * row_size:(block_row + 1) * row_size,
                           block_column * column_size:(block_column + 1) * column_size].astype(np.float64)
            present = block[~np.isnan(block)]
            if present.size:
                out[block_row, block_column] = present.max() if how == "max" else present.mean()
    return out


@pytest.mark.parametrize("shape, row_size, column_size", [
    ((37, 41), 5, 3), ((40, 40), 4, 4), ((19, 64), 1, 7), ((64, 19), 7, 1), ((201, 203), 2, 2), ((12, 9), 12, 9),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocks_hold_the_max_or_mean_of_their_cells_ignoring_nan(shape, row_size, column_size, dtype):
    rng = np.random.default_rng(sum(shape) + row_size)
    values = rng.normal(size=shape).astype(dtype)
    values[rng.random(shape) < 0.3] = np.nan  # masked cells
    values[:row_size, :column_size] = np.nan  # one block with nothing to show stays NaN
    for how in ("max", "mean"):
        drawn = block_reduce(values, row_size, column_size, how)
        expected = _block_reference(values, row_size, column_size, how)
        assert drawn.dtype == np.float32 and drawn.shape == expected.shape
        assert np.isnan(drawn[0, 0])
        np.testing.assert_array_equal(np.isnan(drawn), np.isnan(expected))
        if how == "max":  # a maximum is one of the cells: exact (after float32)
            np.testing.assert_array_equal(drawn, expected.astype(np.float32))
        else:
            np.testing.assert_allclose(drawn, expected, rtol=1e-5, atol=1e-6)


def test_a_long_sentence_draws_each_block_as_its_cells_maximum_or_mean():
    trace = build_toy_trace(ToySettings(text=" ".join(f"w{i}" for i in range(MAX_DRAWN_SIDE + 45)), dk=4))
    for name, how in (("weights", "max"), ("scaled_scores", "mean")):
        heat = _heat(heatmap(trace, name))
        values = np.asarray(trace.matrix(name), dtype=np.float64)
        expected = _block_reference(values, 2, 2, how)
        np.testing.assert_allclose(np.asarray(heat.z, dtype=float), expected, rtol=1e-5, atol=1e-6)
        assert list(heat.y[:2]) == ["0–1", "2–3"]
