"""Why divide by √dk? Measured on random vectors, then shown on the user's own sentence.

Paper §3.2.1 and its footnote 4: dot products of unit-variance vectors spread like √dk,
large scores saturate the softmax and starve it of gradient; dividing by √dk prevents both.
"""

from dataclasses import replace

import streamlit as st

from attention_core.figures import heatmap
from attention_core.figures.scaling import (
    ScalingText,
    dot_product_histograms,
    entropy_against_dk,
    jacobian_against_dk,
    max_weight_against_dk,
    std_against_dk,
    weight_row_bars,
)
from attention_core.lessons.scaling import (
    KEY_COUNTS,
    PAPER_D_MODEL,
    PAPER_DK,
    PAPER_HEADS,
    TEMPERATURES,
    dot_product_spread,
    log_dk_steps,
    sample_attention_pair,
    sample_dot_products,
    scaling_sweep,
    softmax_scale,
    sweep_index,
)
from ui.cache import memo, trace_or_stop
from ui.controls import controls
from ui.display import figure_text, panels
from ui.first_run import run_through_app
from ui.language import t
from ui.url import WHY_SQRT_DK_PARTS
from ui.views import chart, fully_masked_notice, part_strip

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

DKS = log_dk_steps(1024)  # the experiment's dks: 1, 2, 4, …, 1024
HISTOGRAM_PAIRS = 4000  # query–key pairs in the histograms
SWEEP_ROWS = 500  # sampled queries (rows of m weights) per dk in the curves
MAX_KEYS_WITH_NUMBERS = 6  # print weights inside the cells only when half a page is wide enough
CHART = {"displaylogo": False}

settings = controls()
st.title(t("why_sqrt_dk.title"))
st.markdown(t("why_sqrt_dk.intro"))
st.info(t("why_sqrt_dk.paper", d_model=PAPER_D_MODEL, heads=PAPER_HEADS, dk=PAPER_DK))

with st.container(border=True):
    dk_column, temperature_column, keys_column = st.columns([3, 2, 1.4])
    dk = dk_column.select_slider(
        t("why_sqrt_dk.control.dk"),
        options=DKS,
        value=PAPER_DK,
        key="why_dk",
        help=t("why_sqrt_dk.control.dk.help"),
        persist_state="session",
    )
    temperature = temperature_column.select_slider(
        t("why_sqrt_dk.control.temperature"),
        options=TEMPERATURES,
        value=1.0,
        format_func=lambda value: f"{value:g}",
        key="why_temperature",
        help=t("why_sqrt_dk.control.temperature.help"),
        persist_state="session",
    )
    num_keys = keys_column.select_slider(
        t("why_sqrt_dk.control.keys"),
        options=KEY_COUNTS,
        value=16,
        key="why_keys",
        help=t("why_sqrt_dk.control.keys.help"),
        persist_state="session",
    )
    st.caption(t("why_sqrt_dk.sampling", seed=settings.seed, pairs=HISTOGRAM_PAIRS, rows=SWEEP_ROWS, m=num_keys))
    st.caption(t("why_sqrt_dk.which_dk", dk=dk, sidebar_dk=settings.dk))

plain = temperature == 1.0
text = ScalingText(
    dk_axis=t("why_sqrt_dk.figure.dk_axis"),
    count_axis=t("why_sqrt_dk.figure.count"),
    std_axis=t("why_sqrt_dk.figure.std"),
    unscaled=t("why_sqrt_dk.figure.unscaled"),
    scaled=t("why_sqrt_dk.figure.scaled")
    if plain
    else t("why_sqrt_dk.figure.scaled_temperature", temperature=temperature),
    raw_std=t("why_sqrt_dk.figure.raw_std"),
    scaled_std=t("why_sqrt_dk.figure.scaled_std" if plain else "why_sqrt_dk.figure.scaled_std_temperature"),
    theory=t("why_sqrt_dk.figure.theory"),
    chosen=t("why_sqrt_dk.figure.chosen", dk=dk),
    paper=t("why_sqrt_dk.figure.paper", dk=PAPER_DK),
    max_weight_axis=t("why_sqrt_dk.figure.max_weight"),
    uniform_weight=t("why_sqrt_dk.figure.uniform_weight"),
    entropy_axis=t("why_sqrt_dk.figure.entropy"),
    uniform_entropy=t("why_sqrt_dk.figure.uniform_entropy"),
    jacobian_axis=t("why_sqrt_dk.figure.jacobian"),
    key_axis=t("why_sqrt_dk.figure.key"),
    weight_axis=t("why_sqrt_dk.figure.weight"),
)


def part_picker() -> str:
    """Which of the four sections is shown. Shown together they were eight charts, every one drawn
    again by the browser when the display mode, the colours or the language changed, and at 2,048
    tokens the sentence's two heatmaps were sent again on every move of the experiment's sliders
    (benchmarks/README.md, "the √dk page one section at a time")."""
    return part_strip("why_sqrt_dk.part", WHY_SQRT_DK_PARTS, "why_part")


def sweep():
    """Max weight, entropy, spread and gradient of SWEEP_ROWS sampled rows at every dk of DKS."""
    return memo(scaling_sweep, DKS, num_keys, SWEEP_ROWS, settings.seed, temperature)


# ---------------------------------------------------------------- 1 · the spread of q·k
def spread_part() -> None:
    sample = memo(sample_dot_products, dk, HISTOGRAM_PAIRS, settings.seed)
    spread = dot_product_spread(sample)
    st.header(t("why_sqrt_dk.spread.title"), divider="gray")
    st.markdown(t("why_sqrt_dk.spread.explain"))
    st.latex(
        r"\mathrm{E}[q\cdot k]=\sum_{i=1}^{d_k}\mathrm{E}[q_i]\,\mathrm{E}[k_i]=0,\qquad"
        r"\mathrm{Var}(q\cdot k)=\sum_{i=1}^{d_k}\mathrm{Var}(q_i k_i)=d_k,\qquad"
        r"\mathrm{std}(q\cdot k)=\sqrt{d_k}"
    )
    st.markdown(t("why_sqrt_dk.spread.conclusion"))
    chart(
        dot_product_histograms(
            sample,
            raw_title=t("why_sqrt_dk.hist.raw", std=spread.raw_std, dk=dk, theory=spread.theory_raw_std),
            scaled_title=t("why_sqrt_dk.hist.scaled", std=spread.scaled_std, dk=dk),
            text=text,
        ),
        key="why-dk-histograms",
        config=CHART,
    )
    st.caption(t("why_sqrt_dk.hist.caption", pairs=HISTOGRAM_PAIRS))
    std_column, std_text_column = panels([3, 2], vertical_alignment="center")  # stacked on a projector
    with std_column:
        chart(std_against_dk(sweep(), dk, text), key="why-dk-std", config=CHART)
    with std_text_column:
        level = (
            t("why_sqrt_dk.std.level_one") if plain else t("why_sqrt_dk.std.level_temperature", temperature=temperature)
        )
        st.markdown(t("why_sqrt_dk.std.explain", level=level))


# ---------------------------------------------------------------- 2 · softmax saturation
def saturation_part() -> None:
    measured = sweep()
    at_dk = sweep_index(measured, dk)
    pair = memo(sample_attention_pair, dk, num_keys, SWEEP_ROWS, settings.seed, temperature)
    st.header(t("why_sqrt_dk.saturation.title"), divider="gray")
    row_column, saturation_text_column = panels([3, 2], vertical_alignment="center")
    with row_column:
        chart(
            weight_row_bars(pair, title=t("why_sqrt_dk.row.title", m=num_keys, dk=dk), text=text),
            key="why-dk-row",
            config=CHART,
        )
    with saturation_text_column:
        st.markdown(t("why_sqrt_dk.saturation.explain"))
        st.markdown(
            t(
                "why_sqrt_dk.saturation.measured",
                dk=dk,
                rows=SWEEP_ROWS,
                m=num_keys,
                max_unscaled=measured.max_weight_unscaled[at_dk],
                max_scaled=measured.max_weight_scaled[at_dk],
                entropy_unscaled=measured.entropy_unscaled[at_dk],
                entropy_scaled=measured.entropy_scaled[at_dk],
                uniform_entropy=measured.uniform_entropy,
            )
        )
    max_weight_column, entropy_column = panels(2)
    with max_weight_column:
        chart(max_weight_against_dk(measured, dk, text), key="why-dk-max-weight", config=CHART)
    with entropy_column:
        chart(entropy_against_dk(measured, dk, text), key="why-dk-entropy", config=CHART)
    st.caption(t("why_sqrt_dk.entropy.explain"))


# ---------------------------------------------------------------- 3 · vanishing gradients
def gradient_part() -> None:
    measured = sweep()
    at_dk = sweep_index(measured, dk)
    st.header(t("why_sqrt_dk.gradient.title"), divider="gray")
    st.markdown(t("why_sqrt_dk.gradient.explain"))
    st.latex(r"J=\frac{\partial p}{\partial s}=\mathrm{diag}(p)-p\,p^\top,\qquad J_{ij}=p_i\,(\delta_{ij}-p_j)")
    gradient_column, gradient_text_column = panels([3, 2], vertical_alignment="center")
    with gradient_column:
        chart(jacobian_against_dk(measured, dk, text), key="why-dk-jacobian", config=CHART)
    with gradient_text_column:
        st.markdown(t("why_sqrt_dk.gradient.conclusion"))
        st.markdown(
            t(
                "why_sqrt_dk.gradient.measured",
                dk=dk,
                unscaled=measured.jacobian_norm_unscaled[at_dk],
                scaled=measured.jacobian_norm_scaled[at_dk],
            )
        )


# ---------------------------------------------------------------- 4 · the user's own sentence
def sentence_part() -> None:
    st.header(t("why_sqrt_dk.sentence.title"), divider="gray")
    unscaled_trace = trace_or_stop(replace(settings, scale=softmax_scale(settings.dk, scaled=False)))
    scaled_trace = trace_or_stop(replace(settings, scale=softmax_scale(settings.dk, temperature)))
    numbers = len(scaled_trace.key_tokens) <= MAX_KEYS_WITH_NUMBERS
    st.markdown(
        t(
            "why_sqrt_dk.sentence.explain",
            dk=settings.dk,
            n=len(scaled_trace.query_tokens),
            m=len(scaled_trace.key_tokens),
            temperature=temperature,
        )
    )
    off_column, on_column = panels(2)  # stacked on a projector
    with off_column:
        chart(
            heatmap(
                unscaled_trace, "weights", text=figure_text(), title=t("why_sqrt_dk.weights.off"), show_numbers=numbers
            ),
            key="why-dk-weights-off",
            config=CHART,
        )
    with on_column:
        on_title = (
            t("why_sqrt_dk.weights.on", dk=settings.dk)
            if plain
            else t("why_sqrt_dk.weights.on_temperature", dk=settings.dk, temperature=temperature)
        )
        chart(
            heatmap(scaled_trace, "weights", text=figure_text(), title=on_title, show_numbers=numbers),
            key="why-dk-weights-on",
            config=CHART,
        )
    fully_masked_notice(scaled_trace)
    st.caption(
        t("why_sqrt_dk.sentence.try.identity" if settings.projection == "identity" else "why_sqrt_dk.sentence.try")
    )

    st.subheader(t("why_sqrt_dk.temperature.title"))
    st.markdown(t("why_sqrt_dk.temperature.explain"))
    st.latex(
        r"\mathrm{softmax}\!\left(\frac{QK^\top}{T\sqrt{d_k}}\right)=\mathrm{softmax}(QK^\top\cdot s),\qquad "
        rf"s=\frac{{1}}{{T\sqrt{{d_k}}}}=\frac{{1}}{{{temperature:g}\cdot\sqrt{{{settings.dk}}}}}"
        rf"={scaled_trace.attention.scale:.4f}"
    )


{"spread": spread_part, "saturation": saturation_part, "gradient": gradient_part, "sentence": sentence_part}[
    part_picker()
]()
st.success(t("why_sqrt_dk.takeaway"))
