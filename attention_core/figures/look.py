"""The app's chart look written into a figure's own properties, with no Plotly template.

The look is that of Streamlit's chart theme (light): its fonts, colours, axis styling and
left-aligned bold titles. Streamlit would apply it as a template, in the browser, to a fresh
copy of the figure each time the chart is rendered, and plotly.js recomputes and redraws a
whole figure whenever its template is a new object: every chart was drawn twice when it
first appeared. A figure that carries its look in its own properties is drawn once (the
other causes of a second drawing are handled where figures are sent: `ui.views.draw`).

Only what Streamlit's theme sets and the app's figures show is copied. Some settings mean
more when a figure sets them than when a template does: a grid, zero-line, minor grid or tick
colour set on the axis itself turns that line on, so the theme's colour is given only to an
axis that turns the line on itself, and its tick colour to a heatmap's axes, which plotly.js
gives tick marks of its own accord.

Works on the plain dict of a figure (`figure.to_dict()`): a figure's explicit settings win,
the look fills in only what a figure leaves unset, as a template would.
"""

from __future__ import annotations

import copy
import re

import plotly.graph_objects as go

from .matrices import deep_merged

FONT_FAMILY = '"Source Sans", sans-serif'
"""The app's own typeface (Streamlit loads it with the page)."""
TEXT = "#808495"
TITLE = "#2F2D2B"
WHITE = "#FFFFFF"

SEQUENTIAL_LOOK = [[0, "#e4f5ff"], [0.1111111111111111, "#c7ebff"], [0.2222222222222222, "#a6dcff"],
                   [0.3333333333333333, "#83c9ff"], [0.4444444444444444, "#60b4ff"], [0.5555555555555556, "#3d9df3"],
                   [0.6666666666666666, "#1c83e1"], [0.7777777777777778, "#0068c9"],
                   [0.8888888888888888, "#0054a3"], [1, "#004280"]]
DIVERGING_LOOK = [[0, "#7d353b"], [0.1111111111111111, "#bd4043"], [0.2222222222222222, "#ff4b4b"],
                  [0.3333333333333333, "#ff8c8c"], [0.4444444444444444, "#ffc7c7"], [0.5555555555555556, "#a6dcff"],
                  [0.6666666666666666, "#60b4ff"], [0.7777777777777778, "#1c83e1"],
                  [0.8888888888888888, "#0054a3"], [1, "#004280"]]
"""Streamlit's colour scales, for a trace that names none (the app's figures name theirs)."""

_AXIS = {
    "automargin": True,
    "tickfont": {"color": TEXT, "size": 12},
}
LAYOUT_LOOK: dict = {
    "font": {"color": TEXT, "family": FONT_FAMILY, "size": 12, "weight": 400},
    "title": {
        "font": {"family": FONT_FAMILY, "size": 16, "color": TITLE, "weight": "bold"},
        "pad": {"l": 4},
        "xanchor": "left",
        "x": 0,
    },
    "legend": {
        "title": {"font": {"size": 12, "color": TEXT}, "side": "top"},
        "valign": "top",
        "bordercolor": "rgba(0, 0, 0, 0)",
        "borderwidth": 0,
        "font": {"size": 12, "color": "#262730"},
    },
    "colorway": ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a",
                 "#6d3fc0", "#d5dae5"],
    "paper_bgcolor": WHITE,
    "plot_bgcolor": WHITE,
    "margin": {"pad": 8, "r": 0, "l": 0},
    "hoverlabel": {"bgcolor": WHITE, "bordercolor": "#DCD8D4",
                   "font": {"color": TEXT, "family": FONT_FAMILY, "size": 12}},
    "colorscale": {"sequential": SEQUENTIAL_LOOK, "sequentialminus": SEQUENTIAL_LOOK, "diverging": DIVERGING_LOOK},
}
"""Layout settings every figure gets unless it sets them itself."""
COLORAXIS_LOOK: dict = {
    "colorscale": SEQUENTIAL_LOOK,
    "colorbar": {"thickness": 16, "xpad": 24, "ticklabelposition": "outside", "outlinecolor": "rgba(0, 0, 0, 0)",
                 "outlinewidth": 8, "len": 0.75, "y": 0.5745, "title": {"font": {"color": TEXT, "size": 14}},
                 "tickfont": {"color": TEXT, "size": 12}},
}
"""Every shared colour axis the figure has (`coloraxis`, `coloraxis2`, …)."""
X_AXIS_LOOK: dict = {**_AXIS, "showgrid": False, "zeroline": False,
                     "title": {"font": {"color": TEXT, "size": 14}, "standoff": 20}}
Y_AXIS_LOOK: dict = {**_AXIS, "ticklabelposition": "outside",
                     "title": {"font": {"color": TEXT, "size": 14}, "standoff": 24}}
"""Every x axis and every y axis (`xaxis`, `xaxis2`, …) gets these, as a template's would."""
LINES = "#e6eaf1"
_LINE_COLOURS = {"ticks": "tickcolor", "showgrid": "gridcolor", "zeroline": "zerolinecolor"}
"""The theme's colour for tick marks, grid and zero lines, given only to an axis that turns
them on itself."""
TRACE_LOOK: dict[str, dict] = {"scatter": {"marker": {"line": {"width": 0}}},
                               "heatmap": {"colorscale": SEQUENTIAL_LOOK}}
"""Per trace type."""

_AXIS_NAME = re.compile(r"([xy])axis\d*$")
_TWO_D_MAPS = {"heatmap", "contour", "histogram2d", "histogram2dcontour"}
_COLORAXIS_NAME = re.compile(r"coloraxis\d*$")


def _under(defaults: dict, explicit: dict) -> dict:
    """`explicit` with (a copy of) `defaults` filled in where it has no value."""
    return deep_merged(copy.deepcopy(defaults), explicit)


def with_app_look(spec: dict) -> dict:
    """The figure dict `spec` with the app's look in its own properties and no template.

    Returns a new dict; `spec` is not changed. A title set as a plain string becomes
    {"text": …} so that the look can style it.
    """
    layout = {key: value for key, value in spec.get("layout", {}).items() if key != "template"}
    if isinstance(layout.get("title"), str):
        layout["title"] = {"text": layout["title"]}
    layout.setdefault("xaxis", {})  # the first axes exist as soon as a trace is drawn on them
    layout.setdefault("yaxis", {})
    heatmap_axes = {
        f"{letter}axis{trace.get(f'{letter}axis', letter)[1:]}"
        for trace in spec.get("data", []) if trace.get("type") in _TWO_D_MAPS for letter in "xy"
    }
    for name, value in list(layout.items()):
        axis = _AXIS_NAME.match(name)
        if axis and isinstance(value, dict):
            lines = {colour: LINES for switch, colour in _LINE_COLOURS.items() if value.get(switch)}
            if name in heatmap_axes:  # plotly.js gives a heatmap's axes tick marks itself
                lines["tickcolor"] = LINES
            layout[name] = _under({**(X_AXIS_LOOK if axis.group(1) == "x" else Y_AXIS_LOOK), **lines}, value)
        elif _COLORAXIS_NAME.match(name) and isinstance(value, dict):
            layout[name] = _under(COLORAXIS_LOOK, value)
    traces = [_under(TRACE_LOOK.get(trace.get("type", "scatter"), {}), trace) for trace in spec.get("data", [])]
    look = LAYOUT_LOOK
    font_size = (layout.get("font") or {}).get("size")
    if font_size and font_size > LAYOUT_LOOK["font"]["size"]:  # larger type (projector): a title to match
        title = {**look["title"], "font": {**look["title"]["font"], "size": round(1.4 * font_size)}}
        look = {**look, "title": title}
    return {**spec, "data": traces, "layout": _under(look, layout)}


def in_app_look(figure: go.Figure) -> go.Figure:
    """A copy of `figure` as the app draws it: its look, no template (for a notebook)."""
    looked = go.Figure(with_app_look(figure.to_dict()))
    looked.layout.template = None  # a new Figure takes Plotly's default template: none here
    return looked
