"""The page `kept_charts.py` times: `count` copies of the app's weights heatmap under a dk slider.

    streamlit run benchmarks/kept_chart_app.py   (then open ?count=5&chart=kept)

The heatmap of a 16-word sentence at the slider's dk, built by `attention_core.figures` as
the app builds it, with its numbers printed, drawn one of two ways:

- `chart=app`: sent by the app's own `ui.views.draw`. Streamlit's chart element takes a
  changed figure for a new element: moving dk mounts `count` new plotly.js plots.
- `chart=kept`: the same spec (`ui.views.ready_spec`) handed to a small `st.components.v2`
  component that keeps its plot from one rerun to the next and calls `Plotly.react` with the
  new figure. Its layout's `datarevision` is the dk, so that plotly.js redraws the new numbers
  (with an unchanged revision it would keep the old ones). plotly.js is the `plotly` package's
  own file, served by Streamlit's route for component files: a v1 component is declared on
  that directory and never mounted.

The app does not draw this way: Streamlit runs a component's inline JavaScript from a `blob:`
URL, which the deployment's Content-Security-Policy refuses (`script-src 'self'`,
deploy/nginx.conf.template), and only a component shipped in an installed package may load
its script from a file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import plotly
import streamlit as st
import streamlit.components.v1 as components_v1

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the app's packages, without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import sentence

from attention_core import ToySettings, build_toy_trace
from attention_core.figures import heatmap
from ui.views import draw, ready_spec

DK_LABEL = "dk: size of each query and key vector"
# Only for its URL: Streamlit serves the directory's files under component/<name>/. (A comment,
# not a string: Streamlit would print a bare string on the page.)
PLOTLY_FILES = components_v1.declare_component("plotly_files", path=str(Path(plotly.__file__).parent / "package_data"))

KEPT_CHART_JS = r"""
function plotlyLoaded(source) {  // one <script> for the whole page, however many charts
  if (!window.keptChartPlotly) {
    window.keptChartPlotly = new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = source;
      script.onload = () => resolve(window.Plotly);
      script.onerror = reject;
      document.head.appendChild(script);
    });
  }
  return window.keptChartPlotly;
}
export default function (component) {
  const { data, parentElement } = component;
  let graph = parentElement.querySelector('.kept-chart');
  if (!graph) {
    graph = document.createElement('div');
    graph.className = 'kept-chart';
    parentElement.appendChild(graph);
  }
  plotlyLoaded(data.plotly).then(Plotly => Plotly.react(graph, data.figure.data, data.figure.layout, data.config));
}
"""
kept_chart = st.components.v2.component("kept_chart", js=KEPT_CHART_JS, isolate_styles=False)

count = int(st.query_params.get("count", 1))
kept = st.query_params.get("chart", "app") == "kept"
dk = st.sidebar.slider(DK_LABEL, 1, 64, 8, key="dk")
figure = heatmap(build_toy_trace(ToySettings(text=sentence(16), dk=dk)), "weights")
if kept:
    spec = ready_spec(figure)
    spec["layout"]["datarevision"] = dk  # a new revision with new numbers: plotly.js redraws them
    data = {
        "figure": spec,
        "config": {"displaylogo": False, "responsive": True},
        "plotly": f"component/{PLOTLY_FILES.name}/plotly.min.js",  # relative: the page is at the server's root
    }
    for index in range(count):
        kept_chart(key=f"figure-{index}", data=data)
else:
    for index in range(count):
        draw(figure, key=f"figure-{index}")
