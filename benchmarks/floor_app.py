"""The floor for `many_users.py`: the least a page can do for the same two controls.

    streamlit run benchmarks/floor_app.py

A sidebar text area and dk slider with the app's labels, and one Plotly heatmap of plain
attention weights for the sentence's tokens (one row per token, labelled `position:token`),
nothing else: no shared controls, no cache, no other chart, and the chart drawn once (no
theme, no template), as the app draws its charts. `many_users.py --floor` serves
it with the same sessions and the same changes as the app, in the same run, so that the
app's latencies can be read as a multiple of what Streamlit, Plotly and the browsers cost
on this machine at that moment. `control_latency.py --floor` times its two controls too,
once as it is and once opened with `?numbers=1`: the weights printed in the cells, as the
app prints them in a matrix of up to 400 cells.
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import plotly.graph_objects as go
import streamlit as st

TEXT_LABEL = "Sentence"
DK_LABEL = "dk: size of each query and key vector"
DEFAULT_TEXT = "the cat sat on the mat"
MAX_CELLS_WITH_NUMBERS = 400
MAX_LISTED_NUMBERS = 4096  # as in the app (ui.views): larger arrays go as base64, as Plotly sends them
# As in the app (attention_core.figures.matrices), which this file does not import: beyond
# MAX_DRAWN_SIDE tokens the weights are drawn in blocks, each the largest weight in it, as the
# app draws them (4 million cells would be about 56 MB of JSON, over the server's message limit:
# Streamlit would show its error box instead of a heatmap). A comment, not a string: Streamlit
# would print a bare string on the page.
MAX_DRAWN_SIDE = 200


def embeddings(tokens: list[str], dk: int) -> np.ndarray:
    """One fixed random vector per token text, (n, dk)."""
    return np.stack([np.random.default_rng(zlib.crc32(token.encode())).standard_normal(dk) for token in tokens])


text = st.sidebar.text_area(TEXT_LABEL, DEFAULT_TEXT, height=80, key="text")
dk = st.sidebar.slider(DK_LABEL, 1, 64, 8, key="dk")
tokens = re.findall(r"\w+", text)[:2048] or ["empty"]
x = embeddings(tokens, dk)  # (n, dk)
scores = x @ x.T / np.sqrt(dk)  # (n, n)
scores -= scores.max(axis=-1, keepdims=True)
weights = np.exp(scores)
weights /= weights.sum(axis=-1, keepdims=True)  # (n, n)
labels = [f"{position}:{token}" for position, token in enumerate(tokens)]
block = -(-len(tokens) // MAX_DRAWN_SIDE)
if block > 1:  # every block of block × block weights drawn as one cell, its largest weight
    blocks = -(-len(tokens) // block)
    padded = np.zeros((blocks * block, blocks * block))
    padded[: len(tokens), : len(tokens)] = weights
    weights = padded.reshape(blocks, block, blocks, block).max(axis=(1, 3))  # (blocks, blocks)
    labels = [f"{start}–{min(start + block, len(tokens)) - 1}" for start in range(0, len(tokens), block)]
numbers = st.query_params.get("numbers") == "1" and weights.size <= MAX_CELLS_WITH_NUMBERS
# Drawn once, as the app draws its charts (ui.views.draw): no Streamlit theme or template, the
# weights as a list (up to MAX_LISTED_NUMBERS), a fixed datarevision, and the reversed axis's
# range given outright. Otherwise Streamlit's chart hands plotly.js a copy that it computes and
# draws a second time.
figure = go.Figure(
    go.Heatmap(z=weights.tolist() if weights.size <= MAX_LISTED_NUMBERS else weights, x=labels, y=labels,
               zmin=0, zmax=1, colorscale="Viridis", texttemplate="%{z:.2f}" if numbers else None),
    layout={"datarevision": 0, "yaxis": {"autorange": False, "range": [len(labels) - 0.5, -0.5]}},
)
figure.layout.template = None
st.plotly_chart(figure, key="weights", theme=None)
