"""The floor app with extra elements of one kind: what each costs the browser on every rerun.

    streamlit run benchmarks/widgets_app.py   then open /?kind=selectbox&count=10

`floor_app.py` as it is (its sentence box, dk slider and one heatmap), then `count` elements
of `kind` (`widget_cost.KINDS`, each a branch of `draw`) in the sidebar or the main area, as
the app places them. None of them depends on dk: a dk move changes only the heatmap, and
everything else is sent again unchanged, as Streamlit sends every element on every rerun.
`widget_cost.py` times dk moves for each kind against `kind=none`.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import streamlit as st

OPTIONS = ["one", "two", "three", "four", "five"]
FORMULA = (r"Q = \begin{bmatrix} 1 & 0 & 2 \\ 0 & 1 & 1 \end{bmatrix},"
           r"\quad \mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V")
TEXT = "Row *i* of the weights says how much query token *i* takes from each value row; it sums to 1."


def draw(kind: str, index: int) -> None:
    """One element of `kind`, its label and key numbered by `index`."""
    label, key = f"Extra {index}", f"extra-{kind}-{index}"
    side = st.sidebar
    if kind == "selectbox":
        side.selectbox(label, OPTIONS, key=key)
    elif kind == "radio":
        side.radio(label, OPTIONS[:3], key=key, horizontal=True)
    elif kind == "segmented_control":
        side.segmented_control(label, OPTIONS[:3], default=OPTIONS[0], required=True, key=key)
    elif kind == "toggle":
        side.toggle(label, key=key, help="A help text, as the app's controls have.")
    elif kind == "slider":
        side.slider(label, 1, 64, 8, key=key)
    elif kind == "select_slider":
        st.select_slider(label, [1, 2, 3, 5, 8, 13], value=3, key=key)
    elif kind == "number_input":
        side.number_input(label, 0, 1000, 0, key=key)
    elif kind == "text_area":
        side.text_area(label, "some words", height=68, key=key)
    elif kind == "button":
        st.button(label, key=key)
    elif kind == "markdown":
        st.markdown(TEXT)
    elif kind == "caption":
        st.caption(TEXT)
    elif kind == "latex":
        st.latex(FORMULA)
    elif kind == "expander":
        with st.expander(label, expanded=False):
            st.markdown(TEXT)
    elif kind == "tabs":
        first, second = st.tabs([f"{label} a", f"{label} b"])
        first.markdown(TEXT)
        second.markdown(TEXT)
    elif kind == "tabs_lazy":  # as the app's matrices: a key, a rerun on a switch, only the open tab filled
        first, second = st.tabs([f"{label} a", f"{label} b"], key=key, on_change="rerun")
        if first.open:
            first.markdown(TEXT)
        if second.open:
            second.markdown(TEXT)
    elif kind == "columns":
        for column in st.columns(3):
            column.caption(TEXT)
    elif kind == "popover":
        with side.popover(label):
            st.markdown(TEXT)
    else:
        raise ValueError(f"unknown kind {kind!r}")


runpy.run_path(str(Path(__file__).with_name("floor_app.py")))
kind = st.query_params.get("kind", "none")
if kind != "none":
    for index in range(int(st.query_params.get("count", "10"))):
        draw(kind, index)
