"""The page `figure_cost.py` times: `count` copies of the app's weights heatmap, nothing else.

    streamlit run benchmarks/figures_app.py   (then open ?count=12&n=2048 and tick "Draw")

The heatmap of a sentence of `n` distinct words, built by `attention_core.figures` as the app
builds it and sent by the app's own `ui.views.draw`, `count` times
under one checkbox: ticking it mounts `count` new figures, as opening a stage or the overview
does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the app's packages, without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import DRAW_LABEL, sentence

from attention_core import ToySettings, build_toy_trace
from attention_core.figures import heatmap
from ui.views import draw


@st.cache_resource
def weights_figure(n: int):
    """The app's heatmap of the weights for `n` tokens (in blocks beyond 200, as in the app)."""
    return heatmap(build_toy_trace(ToySettings(text=sentence(n))), "weights")


count = int(st.query_params.get("count", 1))
n = int(st.query_params.get("n", 16))
if st.checkbox(DRAW_LABEL, key="draw"):
    figure = weights_figure(n)
    for index in range(count):
        draw(figure, key=f"figure-{index}")  # as every page draws, margins reserved
