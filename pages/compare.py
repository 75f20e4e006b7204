"""Two settings side by side: A's weights, B's weights and where they differ (B − A)."""

import dataclasses

import streamlit as st

from attention_core import MAX_DIM, MaskSpec
from attention_core.figures.compare import difference_figure, weights_figure
from attention_core.lessons.custom import changed_settings, weight_difference
from ui.cache import trace_or_stop
from ui.controls import controls
from ui.display import colour_words, figure_text, panels
from ui.first_run import run_through_app
from ui.language import option_label, t
from ui.lesson_views import untrained_note
from ui.settings import PROJECTIONS
from ui.views import chart, escape_markdown, fully_masked_notice

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

COMPARE_MAX_TOKENS = 128  # longer input is cut (with a notice): both sides and their difference are drawn cell by cell

SIDES = ("a", "b")
MASKS = ("none", "causal", "padding")
# Quick comparisons: what each side changes from the sidebar's settings.
PRESETS = {
    "scaled_vs_unscaled": {"a": {"scaled": True}, "b": {"scaled": False}},
    "dk_4_vs_64": {"a": {"dk": 4}, "b": {"dk": 64}},
    "dk_64_unscaled": {"a": {"dk": 64, "scaled": True}, "b": {"dk": 64, "scaled": False}},
    "mask_off_vs_causal": {"a": {"mask": "none"}, "b": {"mask": "causal"}},
    "projection": {"a": {"projection": "random"}, "b": {"projection": "identity"}},
}
DEFAULT_PRESET = "scaled_vs_unscaled"


def sidebar_choices(settings) -> dict:
    """The sidebar's settings as the values of one side's controls."""
    mask = "causal" if settings.mask.causal else "padding" if settings.mask.padding else "none"
    return {
        "scaled": settings.scale is None,
        "dk": settings.dk,
        "mask": mask,
        "seed": settings.seed,
        "projection": settings.projection,
    }


def preset_values(preset: str, base: dict) -> dict[str, object]:
    """The value of every side control under `preset`: the sidebar's choices with its changes."""
    return {
        f"compare.{side}.{name}": value for side in SIDES for name, value in {**base, **PRESETS[preset][side]}.items()
    }


def apply_preset(preset: str, base: dict, only_missing: bool = False) -> None:
    """Set both sides to the sidebar's choices, then apply the preset's changes.

    only_missing: fill in only the controls that have no value yet (a link may set some).
    """
    for key, value in preset_values(preset, base).items():
        if not (only_missing and key in st.session_state):
            st.session_state[key] = value


def active_preset(base: dict) -> str | None:
    """The quick comparison the two sides show now, if any (None once they are changed by hand)."""
    for preset in PRESETS:
        if all(st.session_state.get(key) == value for key, value in preset_values(preset, base).items()):
            return preset
    return None


def _on_preset(base: dict) -> None:
    preset = st.session_state.get("compare.preset")
    if preset:
        apply_preset(preset, base)


def side_controls(side: str, cross: bool = False) -> dict:
    """One side's small set of controls; returns its choices. In cross-attention there is no
    causal mask (§3.2.3: encoder–decoder attention sees every input position)."""
    masks = [mask for mask in MASKS if not (cross and mask == "causal")]
    if st.session_state.get(f"compare.{side}.mask", masks[0]) not in masks:
        st.session_state[f"compare.{side}.mask"] = masks[0]
    dk_column, seed_column = st.columns(2)
    mask_column, scaled_column = st.columns([5, 3], vertical_alignment="bottom")
    return {
        "dk": dk_column.number_input(
            t("compare.dk"), 1, MAX_DIM, step=1, key=f"compare.{side}.dk", persist_state="session"
        ),
        "seed": seed_column.number_input(
            t("control.seed"), 0, 2**31 - 1, step=1, key=f"compare.{side}.seed", persist_state="session"
        ),
        "mask": mask_column.segmented_control(
            t("control.mask"),
            masks,
            format_func=option_label("compare.mask"),
            required=True,
            key=f"compare.{side}.mask",
            persist_state="session",
        ),
        "scaled": scaled_column.toggle(t("compare.scaled"), key=f"compare.{side}.scaled", persist_state="session"),
        "projection": st.segmented_control(
            t("control.projection"),
            PROJECTIONS,
            format_func=option_label("compare.projection"),
            required=True,
            key=f"compare.{side}.projection",
            persist_state="session",
        ),
    }


def side_settings(settings, choices: dict):
    """The sidebar's settings with one side's choices applied (sentence, d_model etc. stay)."""
    return dataclasses.replace(
        settings,
        dk=int(choices["dk"]),
        seed=int(choices["seed"]),
        projection=choices["projection"],
        scale=None if choices["scaled"] else 1.0,
        mask=MaskSpec(
            causal=choices["mask"] == "causal",
            padding=settings.mask.padding if choices["mask"] == "padding" else (),
        ),
    )


# dk, seed, mask and projection: each side has its own (the sidebar's only seed a preset)
settings = controls(max_tokens=COMPARE_MAX_TOKENS, uses={"sentence", "padding", "d_model", "positional"})
st.title(t("page.compare"))
untrained_note()  # the toy weights are random: say so, and link a trained model
st.caption(t("compare.intro"))

base = sidebar_choices(settings)
if any(f"compare.{side}.{name}" not in st.session_state for side in SIDES for name in base):
    apply_preset(DEFAULT_PRESET, base, only_missing=True)  # first visit: A = the sidebar, B = A unscaled

st.session_state["compare.preset"] = active_preset(base)  # the box names the comparison on show
preset_column, reset_column = st.columns([3, 1], vertical_alignment="bottom")
preset_column.selectbox(
    t("compare.preset"),
    list(PRESETS),
    index=None,
    format_func=option_label("compare.preset"),
    placeholder=t("compare.preset.placeholder"),
    key="compare.preset",
    on_change=_on_preset,
    args=(base,),
)
reset_column.button(
    t("compare.reset"), on_click=apply_preset, args=(DEFAULT_PRESET, base), key="compare.reset", width="stretch"
)

side_traces = {}
for side, column in zip(SIDES, panels(2, gap="medium"), strict=True):  # stacked on a projector
    with column:
        with st.container(border=True):
            st.markdown(f"**{t(f'compare.side.{side}')}**")
            choices = side_controls(side, cross=bool(settings.query_text.strip()))
        if choices["mask"] == "padding" and not settings.mask.padding:
            st.caption(t("compare.padding_hint"))
        side_traces[side] = trace_or_stop(side_settings(settings, choices))
trace_a, trace_b = side_traces["a"], side_traces["b"]
difference = weight_difference(trace_a, trace_b)
text = figure_text()

for side, column in zip(SIDES, panels(2, gap="medium"), strict=True):  # stacked on a projector
    trace = side_traces[side]
    with column:
        chart(
            weights_figure(trace, t(f"compare.weights.{side}"), text=text, half_width=True),
            key=f"compare-weights-{side}",
            config={"displaylogo": False},
        )
        st.caption(t("compare.peak", peak=difference.peak_a if side == "a" else difference.peak_b))
        fully_masked_notice(trace)

st.subheader(t("compare.difference"))
changed = changed_settings(trace_a.settings, trace_b.settings)
if not changed:
    st.info(t("compare.same_settings"))
else:
    st.markdown(t("compare.changed", fields=", ".join(t(f"compare.field.{name}") for name in changed)))
if difference.changed:
    i, j = difference.argmax
    st.markdown(
        t(
            "compare.summary",
            change=difference.change,
            query=escape_markdown(trace_a.query_labels[i]),
            key_label=escape_markdown(trace_a.key_labels[j]),
            a=difference.weight_a,
            b=difference.weight_b,
        )
    )
else:
    st.markdown(t("compare.no_change"))
chart(
    difference_figure(trace_a, trace_b, difference, t("compare.difference.title"), text=text),
    key="compare-difference",
    config={"displaylogo": False},
)
st.caption(t("compare.difference.explain", **colour_words()))
