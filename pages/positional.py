"""Positional encoding (paper §3.5): the formula, its sinusoids, X = E + PE for the sentence,
and what goes wrong without it (a repeated word gets identical rows)."""

import pandas as pd
import streamlit as st

from attention_core.figures import matrix_heatmap
from attention_core.lessons.positional import positional_lesson, sinusoids, wavelengths
from ui.cache import memo, trace_or_stop
from ui.controls import SETTINGS, controls
from ui.display import figure_text, panels
from ui.first_run import run_through_app
from ui.language import t
from ui.settings import DEFAULTS
from ui.views import chart, escape_markdown

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

SINUSOID_POSITIONS = 64  # positions drawn in the sinusoid heatmap: enough to see the slow columns move
POSITIONAL_MAX_TOKENS = 128  # longer input is cut (with a notice): rows of E and X beyond are unreadable
NARROW_COLUMNS = 6  # three heatmaps side by side: beyond this many columns the cells are too narrow for numbers


def _load_repeated_example() -> None:
    st.session_state["text"] = DEFAULTS.text  # "The cat sat on the mat …": "The" and "the"


# the page draws X with and without PE, so the sidebar's PE switch does nothing here
settings = controls(max_tokens=POSITIONAL_MAX_TOKENS, uses=SETTINGS - {"positional"})
st.title(t("page.positional"))
st.markdown(t("positional.intro"))
st.latex(
    r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{\mathrm{model}}}}\right),\qquad "
    r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{\mathrm{model}}}}\right),\qquad X = E + PE"
)

trace_or_stop(settings)  # says what was cut, or explains input to fix and stops
lesson = memo(positional_lesson, settings)
width = lesson.x.shape[1]
n = len(lesson.labels)
text = figure_text()

st.subheader(t("positional.sinusoids.title"))
spread = memo(wavelengths, width)
st.caption(
    t(
        "positional.sinusoids.explain",
        last=SINUSOID_POSITIONS - 1,
        d_model=width,
        shortest=float(spread[0]),
        longest=float(spread[-1]),
    )
)
encoding = memo(sinusoids, SINUSOID_POSITIONS, width)
chart(
    matrix_heatmap(
        encoding,
        [str(position) for position in range(SINUSOID_POSITIONS)],
        [f"d{index}" for index in range(width)],
        row_title=t("positional.figure.position"),
        column_title=text.feature,
        title=t("positional.sinusoids.figure", rows=SINUSOID_POSITIONS, columns=width),
        text=text,
        show_numbers=False,
    ),
    key="positional-sinusoids",
)

st.subheader(t("positional.sum.title"))
st.caption(t("positional.sum.explain", n=n, width=width, last=n - 1, toggle=t("control.positional")))
if settings.projection == "identity":
    st.caption(t("positional.sum.identity", width=width))
pair = lesson.repeated[0] if lesson.repeated else None
outlined = (pair.first, pair.second) if pair else ()
features = [f"d{index}" for index in range(width)]
for column, (name, values, rows) in zip(
    panels(3, gap="small"),  # stacked on a projector
    (("E", lesson.embeddings, outlined), ("PE", lesson.encoding, ()), ("X = E + PE", lesson.x, outlined)),
    strict=True,
):
    with column:
        figure = matrix_heatmap(
            values,
            list(lesson.labels),
            features,
            row_title=text.query,
            column_title=text.feature,
            title=f"{name}   {n}×{width}",
            text=text,
            show_numbers=False if width > NARROW_COLUMNS else None,
            highlight_rows=rows,
        )
        chart(figure, key=f"positional-{name.split()[0].lower()}")

st.subheader(t("positional.without.title"))
if pair is None:
    st.info(t("positional.without.none"))
    st.button(t("positional.without.example"), key="positional_example", on_click=_load_repeated_example)
else:
    st.markdown(
        t(
            "positional.without.explain",
            first=escape_markdown(lesson.labels[pair.first]),
            second=escape_markdown(lesson.labels[pair.second]),
            x_without=pair.x_distance_without,
            x_with=pair.x_distance_with,
            output_without=pair.output_distance_without,
            output_with=pair.output_distance_with,
        )
    )
    st.caption(t("positional.without.table"))
    table = pd.DataFrame(
        [
            {
                t("positional.column.pair"): f"{lesson.labels[p.first]} · {lesson.labels[p.second]}",
                t("positional.column.x_without"): p.x_distance_without,
                t("positional.column.x_with"): p.x_distance_with,
                t("positional.column.output_without"): p.output_distance_without,
                t("positional.column.output_with"): p.output_distance_with,
            }
            for p in lesson.repeated
        ]
    )
    st.dataframe(table.style.format(precision=3), hide_index=True, key="positional-repeated")
st.caption(t("positional.without.order"))
