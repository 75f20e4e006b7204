"""Blocks of the lesson a teacher would give, drawn on the step-through page (and the mask lab):
the first example by hand, the random-weights note, X · W, the linked highlight, the three
uses of attention and what follows AV in a real layer."""

from __future__ import annotations

import streamlit as st

from attention_core import MaskSpec, ToyTrace
from attention_core.figures.lessons import MAX_PROJECTION_SIDE, projection_figure
from attention_core.lessons.first_example import bmatrix, first_example, worked_row
from attention_core.lessons.mask_lab import ATTENTION_USES, attention_use, mask_parts, use_of_parts
from attention_core.lessons.projections import most_asymmetric_pair, self_weight

from .display import figure_style, figure_text
from .language import t
from .views import draw, escape_markdown, token_picker, view_picker

DECODER_EXAMPLE = "猫坐在垫子上。"
"""The decoder's sentence loaded by the encoder–decoder button when none is typed (the bundled
translation example's target)."""
REAL_MODEL_PAGE = "pages/real-model.py"
MASK_LAB_PAGE = "pages/masks.py"
TAB_LABELS = ("Q = X · W^Q", "K = X · W^K", "V = X · W^V")


def first_example_panel() -> None:
    """Three tokens, dk = 4, small integers: every stage of the formula, readable by hand.

    Open by default (what a new visitor sees first) and collapsible, so that a class that
    knows it gets the sentence's matrices on the first screen.
    """
    example = first_example()
    attention = example.attention
    tokens = ", ".join(example.labels)
    with st.expander(t("first.title", n=len(example.tokens), dk=example.dk), expanded=True, icon=":material/edit:"):
        st.markdown(t("first.intro", dk=example.dk, tokens=escape_markdown(tokens)))
        st.latex(f"Q = {bmatrix(attention.q)},\\quad K = {bmatrix(attention.k)},\\quad V = {bmatrix(attention.v)}")
        st.markdown(t("first.steps", dk=example.dk, root=example.sqrt_dk))
        st.latex(
            f"QK^\\top = {bmatrix(attention.raw_scores)}"
            f"\\ \\xrightarrow{{\\ \\div {example.sqrt_dk:g}\\ }}\\ {bmatrix(attention.scaled_scores)}"
            f"\\ \\xrightarrow{{\\ \\mathrm{{softmax}}\\ }}\\ A = {bmatrix(attention.weights)}"
        )
        st.markdown(t("first.output"))
        st.latex(f"AV = {bmatrix(attention.output)}")
        st.markdown(t("first.worked", root=example.sqrt_dk, **worked_row(example, 0)))
        st.caption(t("first.next"))


def untrained_note() -> None:
    """Say that the toy weights are random and untrained, with a link to a trained model."""
    st.caption(t("untrained.note"))
    st.page_link(REAL_MODEL_PAGE, label=t("untrained.link"), icon=":material/neurology:")


def projection_panel(trace: ToyTrace) -> None:
    """X · W^Q = Q, X · W^K = K, X · W^V = V drawn side by side, and what W does to the scores."""
    self_attention = not trace.is_cross_attention  # in cross-attention query i and key i are different tokens
    if trace.w_q is None:  # Q = K = V = X
        weights = self_weight(trace.attention.weights, trace.attention.fully_masked_rows)
        if weights is not None and self_attention:
            st.caption(
                t(
                    "projection.identity_diagonal",
                    dk=trace.settings.dk,
                    self_weight=weights.mean_self_weight,
                    uniform=weights.uniform_weight,
                    largest=weights.rows_where_self_is_largest,
                    rows=weights.rows,
                )
            )
        return
    with st.expander(t("projection.title"), expanded=True, icon=":material/grid_on:"):
        st.caption(t("projection.explain"))
        if max(*trace.x_query.shape, *trace.w_q.shape) > MAX_PROJECTION_SIDE:
            st.caption(t("projection.too_big", limit=MAX_PROJECTION_SIDE))
        else:
            text, style = figure_text(), figure_style()
            sides = {  # name → (X, W, the rows' token labels, the three panels' titles)
                "q": (trace.x_query, trace.w_q, trace.query_labels, ("X", "W<sup>Q</sup>", "Q")),
                "k": (trace.x_key, trace.w_k, trace.key_labels, ("X", "W<sup>K</sup>", "K")),
                "v": (trace.x_key, trace.w_v, trace.key_labels, ("X", "W<sup>V</sup>", "V")),
            }
            name = view_picker(dict(zip(sides, TAB_LABELS, strict=True)), key="projection-tab",
                               label=t("projection.picker"))
            x, w, labels, names = sides[name]
            figure = projection_figure(x, w, trace.matrix(name), labels, names=names, text=text, style=style)
            # built in the display style, panels placed for it: no restyle (it would square each panel)
            draw(figure, key=f"projection-{name}-xw")
        pair = most_asymmetric_pair(trace.attention.raw_scores) if self_attention else None
        if pair is not None:
            labels = trace.query_labels
            st.caption(
                t(
                    "projection.asymmetric",
                    i=escape_markdown(labels[pair.i]),
                    j=escape_markdown(labels[pair.j]),
                    score_ij=pair.score_ij,
                    score_ji=pair.score_ji,
                )
            )


def highlight_controls(trace: ToyTrace) -> tuple[int, int] | None:
    """A toggle and two token pickers choosing (query i, key j); None while the toggle is off.

    The choice is kept in the URL, so a link shows the same cell outlined.
    """
    toggle_column, query_column, key_column = st.columns([2, 2, 2], vertical_alignment="bottom")
    on = toggle_column.toggle(
        t("highlight.toggle"), key="highlight", help=t("highlight.toggle.help"), persist_state="session"
    )
    if not on:
        return None
    with query_column:
        i = token_picker(t("highlight.query"), trace.query_labels, key="highlight_i", default=0)
    with key_column:
        j = token_picker(t("highlight.key"), trace.key_labels, key="highlight_j", default=0)
    query, key_token = escape_markdown(trace.query_labels[i]), escape_markdown(trace.key_labels[j])
    st.caption(t("highlight.explain", query=query, key_token=key_token))
    return i, j


def mask_uses_note(trace: ToyTrace) -> None:
    """The paper's three uses of attention and their masks, which one the settings are, and the lab."""
    st.markdown(t("uses.explain"))
    use = attention_use(trace.settings.mask.causal, trace.is_cross_attention)
    if use is None:
        st.caption(t("uses.cross_causal"))
    else:
        st.caption(t("uses.current", use=t(f"uses.use.{use}")))
    st.page_link(MASK_LAB_PAGE, label=t("uses.link"), icon=":material/theater_comedy:")


def output_next_note() -> None:
    """One line on what follows AV in a real transformer layer."""
    st.caption(t("output.next"))


def _apply_use(name: str, key_count: int) -> None:
    """Callback: switch the mask lab (and the sidebar's self/cross choice) to one of the paper's uses."""
    use = ATTENTION_USES[name]
    st.session_state["mask_lab_presets"] = list(use.parts)
    chosen = [p for p in st.session_state.get("mask_lab_pad", []) if 0 <= p < key_count]
    st.session_state["mask_lab_pad"] = chosen or [key_count - 1]  # the last key plays a padding token
    st.session_state["cross"] = use.cross
    if use.cross and not str(st.session_state.get("query_text", "")).strip():
        st.session_state["query_text"] = DECODER_EXAMPLE


def attention_use_buttons(base: ToyTrace) -> None:
    """One button for each of the paper's three uses of attention (§3.2.3), in the mask lab."""
    st.markdown(f"**{t('uses.lab.title')}**")
    st.caption(t("uses.lab.explain"))
    for column, name in zip(st.columns(len(ATTENTION_USES)), ATTENTION_USES, strict=True):
        column.button(
            t(f"uses.button.{name}"),
            key=f"mask_lab_use_{name}",
            on_click=_apply_use,
            args=(name, len(base.key_tokens)),
            width="stretch",
        )


def attention_use_note(trace: ToyTrace, spec: MaskSpec) -> None:
    """Name the paper's use of attention that the mask lab's masks are, when they are one."""
    parts = [part.name for part in mask_parts(spec, trace.query_tokens, trace.key_tokens)]
    use = use_of_parts(parts, trace.is_cross_attention)
    if use is not None:
        st.caption(t("uses.lab.active", use=t(f"uses.use.{use}")))
