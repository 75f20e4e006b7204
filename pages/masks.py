"""Mask lab: switch masks on, see them combine with AND, and see what a fully masked row becomes."""

import dataclasses

import pandas as pd
import streamlit as st

from attention_core import MaskSpec, ToyTrace
from attention_core.figures.masks import fill_weights_heatmap, mask_thumbnail, row_comparison_heatmap
from attention_core.lessons.mask_lab import MASK_PARTS, all_allowed, compare_fill, fit_grid, grid_of, mask_parts
from attention_core.toy import sentence_segments
from ui.cache import trace_or_stop
from ui.controls import SETTINGS, controls
from ui.display import figure_text, panels, projector_mode
from ui.first_run import run_through_app
from ui.language import option_label, t
from ui.lesson_views import attention_use_buttons, attention_use_note, untrained_note
from ui.views import chart, escape_markdown, matrix_view

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

MASK_LAB_MAX_TOKENS = 64  # longer input is cut (with a notice): the hand-drawn grid has one checkbox per cell

FILL_VALUE = -1e9
GRID_ROW_PIXELS = 35  # the data editor's row height
GRID_MAX_PIXELS = 630
GRID_INDEX_PIXELS = 100  # the query labels
GRID_COLUMN_PIXELS = 75  # one key's column of checkboxes
NARROW_COLUMNS = 6  # two heatmaps side by side: beyond this many keys the cells are too narrow for numbers
SENTENCES_EXAMPLE = "I saw a cat. The cat saw me. It ran away."
GRID_KEY = "mask_lab_custom"  # the custom grid (nested tuples of bools) as last seen
GRID_VERSION_KEY = "mask_lab_grid_version"  # part of the editor's key: a new version drops its edits


# ----- callbacks (they run before the page, so they may set widget values) ------------------


def _replace_grid(grid) -> None:
    """Put `grid` in the custom editor; a new widget key drops the editor's pending edits."""
    st.session_state[GRID_KEY] = grid
    st.session_state[GRID_VERSION_KEY] = st.session_state.get(GRID_VERSION_KEY, 0) + 1


def _fully_masked_example() -> None:
    """Causal mask + key 0 is padding: query 0 may only see key 0, which is padding."""
    st.session_state["mask_lab_presets"] = ["causal", "padding"]
    st.session_state["mask_lab_pad"] = [0]


def _load_sentences_example() -> None:
    st.session_state["text"] = SENTENCES_EXAMPLE


# ----- the page ---------------------------------------------------------------------------------


def preset_controls(base: ToyTrace) -> MaskSpec:
    """The preset pills and the settings of the presets that are on; returns the combined spec."""
    n, m = len(base.query_tokens), len(base.key_tokens)
    st.session_state.setdefault("mask_lab_presets", [])
    presets = st.pills(
        t("mask_lab.presets"),
        MASK_PARTS,
        selection_mode="multi",
        format_func=option_label("mask_lab.part"),
        key="mask_lab_presets",
        persist_state="session",
        help=t("mask_lab.presets.help"),
    )
    if not presets:
        st.caption(t("mask_lab.presets.none"))

    padding: tuple[int, ...] = ()
    window = None
    key_labels = base.key_labels
    settings_columns = [name for name in ("padding", "window", "same_sentence") if name in presets]
    for column, name in zip(st.columns(max(len(settings_columns), 1)), settings_columns, strict=False):
        with column:
            if name == "padding":
                chosen = st.session_state.get("mask_lab_pad", [])
                st.session_state["mask_lab_pad"] = [p for p in chosen if 0 <= p < m]  # the sentence may have shrunk
                padding = tuple(
                    st.multiselect(
                        t("mask_lab.pad"),
                        list(range(m)),
                        format_func=key_labels.__getitem__,
                        key="mask_lab_pad",
                        persist_state="session",
                        placeholder=t("mask_lab.pad.placeholder"),
                    )
                )
                if not padding:
                    st.caption(t("mask_lab.pad.hint"))
            elif name == "window":
                largest = max(n, m, 2)
                st.session_state.setdefault("mask_lab_window", min(2, largest))
                st.session_state["mask_lab_window"] = min(st.session_state["mask_lab_window"], largest)
                window = st.slider(
                    t("mask_lab.window"),
                    1,
                    largest,
                    key="mask_lab_window",
                    persist_state="session",
                    help=t("mask_lab.window.help"),
                )
            else:
                sentences_explanation(base)

    spec = MaskSpec(
        causal="causal" in presets,
        padding=padding,
        window=window,
        same_sentence="same_sentence" in presets,
    )
    grid = custom_grid(base, spec, shown="custom" in presets)
    return dataclasses.replace(spec, custom=grid) if "custom" in presets else spec


def sentences_explanation(base: ToyTrace) -> None:
    """How many sentences the block mask found, and an example when there is only one."""
    query_sentences = max(sentence_segments(list(base.query_tokens))) + 1
    key_sentences = max(sentence_segments(list(base.key_tokens))) + 1
    if base.is_cross_attention:
        st.caption(t("mask_lab.sentences.cross", queries=query_sentences, keys=key_sentences))
    else:
        st.caption(t("mask_lab.sentences.count", count=key_sentences))
    if max(query_sentences, key_sentences) == 1:
        st.button(t("mask_lab.sentences.example"), key="mask_lab_sentences_example", on_click=_load_sentences_example)


def custom_grid(base: ToyTrace, others: MaskSpec, shown: bool):
    """The user's (n, m) grid of checkboxes, kept valid for the current tokens."""
    n, m = len(base.query_tokens), len(base.key_tokens)
    stored = st.session_state.get(GRID_KEY)
    grid, was_reset = fit_grid(stored, n, m)
    if was_reset:
        st.session_state[GRID_VERSION_KEY] = st.session_state.get(GRID_VERSION_KEY, 0) + 1
        st.session_state[GRID_KEY] = grid
        if shown:
            st.info(
                t(
                    "error.custom_mask_shape",
                    shape=f"({len(stored)}, {len(stored[0]) if stored else 0})",
                    expected=f"({n}, {m})",
                )
            )
    if not shown:
        return None

    with st.expander(t("mask_lab.custom.title"), expanded=True):
        st.caption(t("mask_lab.custom.explain"))
        frame = pd.DataFrame(list(grid), index=base.query_labels, columns=base.key_labels)
        version = st.session_state.get(GRID_VERSION_KEY, 0)
        edited = st.data_editor(
            frame,
            key=f"mask_lab_grid_{version}",
            num_rows="fixed",
            height=min(GRID_ROW_PIXELS * (n + 1) + 3, GRID_MAX_PIXELS),  # every row visible up to ~17 tokens
            column_config={
                "_index": st.column_config.TextColumn(width=GRID_INDEX_PIXELS),
                **{key: st.column_config.CheckboxColumn(key, width=GRID_COLUMN_PIXELS) for key in base.key_labels},
            },
        )
        grid = tuple(tuple(bool(cell) for cell in row) for row in edited.itertuples(index=False))
        st.session_state[GRID_KEY] = grid
        allow_column, copy_column, _ = st.columns([1, 1.6, 2])
        allow_column.button(
            t("mask_lab.custom.all_allowed"),
            key="mask_lab_grid_all",
            on_click=_replace_grid,
            args=(all_allowed(n, m),),
            width="stretch",
        )
        copy_column.button(
            t("mask_lab.custom.copy"),
            key="mask_lab_grid_copy",
            on_click=_replace_grid,
            args=(grid_of(others.build(list(base.query_tokens), list(base.key_tokens)), n, m),),
            disabled=others.is_empty,
            width="stretch",
        )
    return grid


def mask_combination(trace: ToyTrace, spec: MaskSpec) -> None:
    """The formula of the combination, a thumbnail of each part, and the combined mask itself."""
    parts = mask_parts(spec, trace.query_tokens, trace.key_tokens)
    if parts:
        # each part named in the current language: M = M_{causal} ∧ M_{pad} (M_{因果} ∧ M_{填充})
        symbols = [rf"M_{{\text{{{t(f'mask_lab.symbol.{part.name}')}}}}}" for part in parts]
        st.latex("M = " + r" \wedge ".join(symbols))
    else:
        st.latex(r"M_{ij} = 1 \quad \forall\, i, j")
    text = figure_text()
    parts_column, combined_column = panels(2, gap="medium")
    with parts_column:
        if not parts:
            st.caption(t("mask_lab.parts.empty"))
        for start in range(0, len(parts), 2):
            for column, part in zip(st.columns(2), parts[start : start + 2], strict=False):
                with column:
                    title = t(f"mask_lab.part.{part.name}")
                    figure = mask_thumbnail(part.mask, trace.query_labels, trace.key_labels, title=title, text=text)
                    chart(figure, key=f"mask_lab-part-{part.name}", config={"displaylogo": False})
                    st.caption(t(f"mask_lab.part.{part.name}.rule"))
    with combined_column:
        st.markdown(f"**{t('mask_lab.combined')}**")
        matrix_view(trace, "mask", key="mask_lab-main", square=True)
        st.caption(t("mask_lab.part.combined.rule"))


def fully_masked_section(trace: ToyTrace) -> None:
    """What happens to a query that may attend to nothing: the engine's answer and the −1e9 one."""
    st.subheader(t("mask_lab.fully.title"))
    flagged = trace.attention.fully_masked_rows
    rows = [label for label, flag in zip(trace.query_labels, flagged, strict=True) if flag]
    if not rows:
        st.caption(t("mask_lab.fully.none"))
        st.button(t("mask_lab.fully.example"), key="mask_lab_fully_example", on_click=_fully_masked_example)
        return

    m = len(trace.key_tokens)
    st.warning(t("mask_lab.fully.rows", rows=", ".join(map(escape_markdown, rows)), count=len(rows)))
    st.markdown(t("mask_lab.fully.explain", m=m, uniform=f"{1 / m:.4f}"))
    st.latex(
        r"\operatorname{softmax}(-10^9, \dots, -10^9)_j = \frac{e^{0}}{\sum_{j'=1}^{m} e^{0}} = \frac{1}{m}"
        + rf" = \frac{{1}}{{{m}}}"
    )
    comparison = compare_fill(trace.attention, FILL_VALUE)
    text = figure_text()
    chart(
        row_comparison_heatmap(
            comparison.engine_weights,
            comparison.fill_weights,
            [index for index, flag in enumerate(flagged) if flag],
            trace.query_labels,
            trace.key_labels,
            engine_name=t("mask_lab.fully.engine.short"),
            fill_name=t("mask_lab.fully.fill.short"),
            title=t("mask_lab.fully.rows.title"),
            text=text,
        ),
        key="mask_lab-fill-rows",
        config={"displaylogo": False},
    )
    st.markdown(t("mask_lab.fully.whole"))
    engine_column, fill_column = panels(2, gap="medium")
    for column, name, weights, output in (
        (engine_column, "engine", comparison.engine_weights, comparison.engine_output),
        (fill_column, "fill", comparison.fill_weights, comparison.fill_output),
    ):
        with column:
            figure = fill_weights_heatmap(
                weights,
                comparison.mask,
                comparison.fully_masked_rows,
                trace.query_labels,
                trace.key_labels,
                title=t(f"mask_lab.fully.{name}.title"),
                text=text,
                show_numbers=False if m > NARROW_COLUMNS and not projector_mode() else None,
            )
            chart(figure, key=f"mask_lab-fill-{name}", config={"displaylogo": False})
            st.caption(t(f"mask_lab.fully.{name}.output"))
            output_rows = pd.DataFrame(
                output[flagged],
                index=rows,
                columns=[f"d{index}" for index in range(output.shape[-1])],
            )
            st.dataframe(output_rows.style.format("{:.4f}"), key=f"mask_lab-fill-{name}-output")
    st.caption(t("mask_lab.fully.practice"))


settings = controls(max_tokens=MASK_LAB_MAX_TOKENS, uses=SETTINGS - {"mask", "padding"})  # its own masks
st.title(t("page.mask_lab"))
st.caption(t("mask_lab.intro"))
base = trace_or_stop(dataclasses.replace(settings, mask=MaskSpec()))  # the tokens; stops on input to fix
untrained_note()  # the toy weights are random: say so, and link a trained model
if settings.mask.is_empty:
    st.caption(t("mask_lab.replaces_sidebar"))
else:
    sidebar_kind = "causal" if settings.mask.causal else "padding"
    st.info(t("mask_lab.replaces_sidebar.active", kind=t(f"mask.{sidebar_kind}")))

attention_use_buttons(base)
spec = preset_controls(base)
trace = trace_or_stop(dataclasses.replace(settings, mask=spec))
attention_use_note(trace, spec)

st.subheader(t("mask_lab.combination.title"))
mask_combination(trace, spec)

st.subheader(t("mask_lab.effect.title"))
st.markdown(t("mask_lab.effect.explain"))
for column, name in zip(panels(2, gap="medium"), ("masked_scores", "weights"), strict=True):
    with column:  # one under the other on a projector: side by side the cells would be strips
        matrix_view(trace, name, key="mask_lab-main", side_by_side=not projector_mode(), square=True)

fully_masked_section(trace)
