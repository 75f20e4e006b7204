"""Inside a decoder: a trained GPT-style model (SmolLM2-135M) with its causal attention, every
head through the same engine, step by step, plus a head finder."""

from typing import NoReturn

import streamlit as st

from attention_core import STAGES
from attention_core.decoder import checkpoint as decoder_checkpoint_module
from attention_core.decoder.finder import SCORE_NAMES
from attention_core.decoder.forward import MAX_PROMPT_TOKENS, top_predictions
from attention_core.decoder.heads import STAGE_MATRICES, SUMMARY_NAMES, head_views, prompt_head_summary, query_groups
from attention_core.decoder.readable import readable_text
from attention_core.figures import heatmap
from attention_core.figures.cell import CellFigureText, cell_locator, dot_product_latex, softmax_bars, softmax_latex
from attention_core.figures.decoder import DecoderFigureText, head_grid, prediction_bars
from attention_core.lessons.cell import follow_cell
from ui.cache import decoder_checkpoint, decoder_greedy, decoder_head_scores, decoder_run
from ui.controls import controls
from ui.display import figure_style, figure_text, panels, projector_mode
from ui.first_run import run_through_app
from ui.language import t
from ui.notices import unreadable_character_notice
from ui.url import DECODER_PARTS, DECODER_PROMPT, part_named_by_link, write_url
from ui.views import (
    chart,
    checkpoint_problem_and_stop,
    choice_strip,
    draw,
    escape_markdown,
    export_panel,
    install_notice_and_stop,
    matrix_view,
    matrix_views,
    token_picker,
)

run_through_app()  # a link opened as a fresh server's first request: see ui/first_run.py

# Below the layer and head pickers the page shows one part at a time (DECODER_PARTS): shown
# together they were ten figures, every one drawn again by the browser when the layer, the head,
# the language or the display mode changed (benchmarks/README.md, "the multi-head and decoder
# pages one part at a time").

DEFAULT_PROMPT = DECODER_PROMPT  # a repeated phrase: the model copies, and induction heads light up
MAX_STEPS = 10
MAX_CELL_LOCATOR = 200  # beyond this many tokens heatmaps are drawn in blocks: no cell to outline
STAGE_NAMES = list(STAGE_MATRICES)
PLAIN_FORMULAS = {stage.name: stage.formula for stage in STAGES}
FORMULAS = {
    "embeddings": r"N = \frac{X}{\sqrt{\tfrac{1}{d}\sum_t X_{\cdot t}^2 + \varepsilon}} \odot \gamma",
    "qkv": r"Q_h = N W^Q_h,\quad K_g = N W^K_g,\quad V_g = N W^V_g,\qquad g = \lfloor h / 3 \rfloor",
    "rotary": (r"\begin{pmatrix}\tilde q_{p,2i}\\ \tilde q_{p,2i+1}\end{pmatrix} = "
               r"\begin{pmatrix}\cos p\theta_i & -\sin p\theta_i\\ \sin p\theta_i & \cos p\theta_i\end{pmatrix}"
               r"\begin{pmatrix}q_{p,2i}\\ q_{p,2i+1}\end{pmatrix},\qquad \theta_i = 100000^{-2i/64}"),
    "raw_scores": r"S = \tilde Q \tilde K^\top,\qquad S_{ij} = \tilde q_i \cdot \tilde k_j",
    "masked_scores": (r"\tilde S_{ij} \leftarrow -\infty \ \text{where } j > i"
                      r"\quad(\text{causal: } M_{ij} = [\,j \le i\,])"),
}
def gguf_or_stop() -> str:
    """The installed GGUF file's path; without one, say how to install it and stop the page."""
    path = decoder_checkpoint_module.locate_gguf()
    if path is None:
        install_notice_and_stop("decoder", decoder_checkpoint_module.INSTALL_COMMAND)
    return str(path)


def explain_problem(problem: Exception) -> NoReturn:
    """A broken, different or unreadable checkpoint, explained (never a traceback); stops the page."""
    codes, command = decoder_checkpoint_module.ERROR_CODES, decoder_checkpoint_module.INSTALL_COMMAND
    checkpoint_problem_and_stop(problem, "decoder", codes, "gguf, tokenizers", command)


def checkpoint_or_stop(path: str):
    try:
        with st.spinner(t("decoder.loading")):
            return decoder_checkpoint(path)
    except (decoder_checkpoint_module.CheckpointError, ImportError, ValueError, OSError) as problem:
        explain_problem(problem)


def prompt_input() -> str:
    st.session_state.setdefault("dec_prompt", DEFAULT_PROMPT)
    prompt = st.text_area(t("decoder.prompt"), key="dec_prompt", height=80, help=t("decoder.prompt.help"),
                          persist_state="session")
    unreadable_character_notice(prompt)
    return prompt


def token_table(run) -> None:
    """Position, readable token, the vocabulary's spelling and the id, one row per token."""
    encoding = run.encoding
    st.markdown(t("decoder.tokens.explain", count=encoding.length))
    st.dataframe(
        {
            t("decoder.tokens.position"): list(range(encoding.length)),
            t("decoder.tokens.shown"): list(encoding.shown),
            t("decoder.tokens.spelling"): list(encoding.tokens),
            t("decoder.tokens.id"): encoding.ids.tolist(),
        },
        hide_index=True,
        height=min(36 + 35 * encoding.length, 300),
        key="dec-tokens",
    )
    if any("(" in shown and "/" in shown for shown in encoding.shown):
        st.caption(t("decoder.tokens.parts"))


def prediction(path: str, run, checkpoint, words: DecoderFigureText) -> None:
    """Top-10 next tokens with probabilities, and optionally a few greedy steps."""
    st.subheader(t("decoder.predict.title"))
    best = top_predictions(run, checkpoint.tokenizer, 10)
    st.markdown(t("decoder.predict.explain", vocab=run.config.vocab_size, token=escape_markdown(best[0].shown),
                  probability=f"{best[0].probability:.1%}"))
    chart(prediction_bars([p.shown for p in best], [p.probability for p in best], text=words,
                          title=t("decoder.predict.figure")), key="dec-predictions")
    steps = st.slider(t("decoder.steps"), 0, MAX_STEPS, 0, key="dec_steps", help=t("decoder.steps.help"),
                      persist_state="session")
    if steps:
        with st.spinner(t("working")):
            encoding, chosen = decoder_greedy(path, run.encoding.text, steps, MAX_PROMPT_TOKENS)
        prompt_text = readable_text(run.encoding.tokens)
        full_text = readable_text(encoding.tokens)
        added = full_text[len(prompt_text):] if full_text.startswith(prompt_text) else full_text
        space = " " if added[:1].isspace() else ""  # outside the bold: "** mat**" would not be bold
        st.markdown(t("decoder.steps.result", prompt=escape_markdown(prompt_text), space=space,
                      added=escape_markdown(added)))
        st.dataframe(
            {
                t("decoder.steps.step"): list(range(1, len(chosen) + 1)),
                t("decoder.tokens.shown"): [p.shown for p in chosen],
                t("decoder.steps.probability"): [round(p.probability, 4) for p in chosen],
            },
            hide_index=True,
            key="dec-steps-table",
        )
        if len(chosen) < steps:
            st.caption(t("decoder.steps.stopped", count=len(chosen)))


def overview(run, layer: int, head: int, words: DecoderFigureText) -> None:
    """The 30 × 9 grid of what each head does on this prompt."""
    st.subheader(t("decoder.overview.title"))
    summary_name = choice_strip(
        t("decoder.overview.measure"), SUMMARY_NAMES, "dec_summary", "previous_token", "decoder.summary",
        width="content",
    )
    st.markdown(t(f"decoder.summary.{summary_name}.explain"))
    values = prompt_head_summary(run.weights)[summary_name]  # (layers, heads)
    chart(
        head_grid(values, chosen=(layer, head), text=words, zmax=None if summary_name == "distance" else 1.0,
                  kv_groups=run.config.num_kv_heads,
                  title=t("decoder.overview.figure", measure=t(f"decoder.summary.{summary_name}"))),
        key="dec-overview",
    )


def sharing(run, layer: int, head: int) -> None:
    """Grouped-query attention: which query heads read the same keys and values."""
    config = run.config
    st.subheader(t("decoder.gqa.title"))
    groups = query_groups(config.num_heads, config.num_kv_heads)
    st.markdown(t("decoder.gqa.explain", heads=config.num_heads, kv=config.num_kv_heads, group=config.group_size))
    st.dataframe(
        {
            t("decoder.gqa.kv_head"): [str(kv + 1) for kv in range(config.num_kv_heads)],
            t("decoder.gqa.query_heads"): [", ".join(str(h + 1) for h in group) for group in groups],
        },
        hide_index=True,
        key="dec-gqa-table",
    )
    kv = config.kv_head(head)
    st.markdown(t("decoder.gqa.group", kv=kv + 1, heads=", ".join(str(h + 1) for h in groups[kv]), layer=layer + 1))
    text, style = figure_text(), figure_style()
    for column, other in zip(panels(len(groups[kv])), groups[kv], strict=True):  # stacked on a projector
        with column:
            view = head_views(run, layer, other).main
            figure = heatmap(view, "weights", text=text, style=style, show_numbers=False,
                             title=t("decoder.gqa.head", head=other + 1))
            draw(figure, key=f"dec-gqa-{other - groups[kv][0]}")


def stage_text(stage_name: str, view, run, layer: int) -> None:
    config = run.config
    values = dict(layer=layer + 1, head=view.head + 1, kv=view.kv_head + 1, n=len(view.query_tokens), dk=config.dk,
                  d_model=config.d_model, root=config.sqrt_dk, scale=view.attention.scale)
    st.markdown(t(f"decoder.stage.{stage_name}.explain", **values))


def one_head(run, layer: int, head: int) -> None:
    """The chosen head's stages, one at a time, with the toy pages' heatmaps, tables and exports."""
    views = head_views(run, layer, head)
    view = views.main
    stage_name = choice_strip(t("decoder.stage"), STAGE_NAMES, "dec_stage", "weights", "decoder.stage")
    st.subheader(f"{t('decoder.chosen', layer=layer + 1, head=head + 1, kv=view.kv_head + 1)} · "
                 f"{t(f'decoder.stage.{stage_name}')}")
    st.latex(FORMULAS.get(stage_name, PLAIN_FORMULAS.get(stage_name, "")))
    stage_text(stage_name, view, run, layer)
    if stage_name == "embeddings":
        before_column, after_column = panels(2)
        with before_column:
            st.caption(t("decoder.stage.embeddings.before"))
            matrix_view(views.residual, "x_query", key="dec-step-residual", side_by_side=not projector_mode())
        with after_column:
            st.caption(t("decoder.stage.embeddings.after"))
            matrix_view(view, "x_query", key="dec-step", side_by_side=not projector_mode())
    elif stage_name in ("qkv", "rotary"):
        source = views.before_rotary if stage_name == "qkv" else view
        matrix_views(source, STAGE_MATRICES[stage_name], key=f"dec-step-{stage_name}")
        if stage_name == "rotary":
            st.caption(t("decoder.stage.rotary.compare"))
    else:
        matrix_views(view, STAGE_MATRICES[stage_name], key="dec-step")
    export_panel(view, STAGE_MATRICES[stage_name], key="dec-export")


def one_cell(run, layer: int, head: int) -> None:
    """Follow one cell (i, j) of the chosen head, with the page "Follow one cell"'s figures."""
    st.subheader(t("decoder.cell.title"))
    view = head_views(run, layer, head).main
    labels = view.query_labels
    st.markdown(t("decoder.cell.explain", dk=run.config.dk))
    picker_column, locator_column = panels([2, 3], gap="large")  # stacked on a projector
    with picker_column:
        i = token_picker(t("decoder.cell.query"), labels, "dec_cell_i", len(labels) - 1)
        j = token_picker(t("decoder.cell.key"), labels, "dec_cell_j", 0)
    cell = follow_cell(view.attention, i, j)
    with locator_column:
        if len(labels) <= MAX_CELL_LOCATOR:
            chart(cell_locator(view, cell, text=figure_text(), title=t("decoder.cell.locator", i=i, j=j)),
                  key="dec-cell-locator")
    if j > i:
        st.info(t("decoder.cell.future", i=i, j=j))
    raw, scaled, mask, weight = st.columns(4)
    raw.metric(t("decoder.cell.metric.raw"), cell.raw_score, format="%.4f", border=True)
    scaled.metric(t("decoder.cell.metric.scaled"), cell.scaled_score, format="%.4f", border=True)
    mask.metric(t("decoder.cell.metric.mask"), int(cell.allowed), border=True)
    weight.metric(t("decoder.cell.metric.weight"), cell.weight, format="%.4f", border=True)
    st.latex(dot_product_latex(cell))
    st.latex(softmax_latex(cell))
    words = CellFigureText(key=t("decoder.cell.key_token"), exp=t("decoder.cell.exp"),
                           weight=t("decoder.cell.weight"), masked=t("figure.masked"))
    chart(softmax_bars(cell, labels, text=words, title=t("decoder.cell.softmax", i=i)), key="dec-cell-softmax")


def open_head(layer: int, head: int) -> None:
    """Button callback: show this head step by step (runs before the widgets are drawn)."""
    st.session_state["dec_layer"] = layer + 1
    st.session_state["dec_head"] = head + 1
    st.session_state["dec_stage"] = "weights"
    st.session_state["dec_part"] = "one_head"


def part_picker() -> str:
    """Which part below the layer and head pickers is shown (a link naming a setting of one part
    opens that part)."""
    named = part_named_by_link(
        {"heads": ("dec_summary",), "cell": ("dec_cell_j",), "finder": ("dec_score",)}, "one_head"
    )
    return choice_strip(t("decoder.part"), DECODER_PARTS, "dec_part", named, "decoder.part")


def one_head_part(run, layer: int, head: int) -> None:
    """The chosen head's stages under the part's title."""
    st.subheader(t("decoder.steps.title"))
    st.markdown(t("decoder.steps.explain"))
    one_head(run, layer, head)


def head_finder(path: str, layer: int, head: int, words: DecoderFigureText) -> None:
    """Scores of every head on a repeated random sequence, a table, a grid, and a button."""
    st.subheader(t("decoder.finder.title"))
    with st.spinner(t("decoder.finder.working")):
        scores, sequence_run = decoder_head_scores(path)
    st.markdown(t("decoder.finder.explain", period=scores.period, length=2 * scores.period))
    score_name = choice_strip(
        t("decoder.finder.score"), SCORE_NAMES, "dec_score", "induction", "decoder.score", width="content"
    )
    st.markdown(t(f"decoder.score.{score_name}.explain", period=scores.period))
    best_layer, best_head, best_score = scores.strongest(score_name)
    grid_column, table_column = st.columns([3, 2], gap="large")
    with grid_column:
        chart(head_grid(scores.scores[score_name], chosen=(layer, head), text=words,
                        kv_groups=sequence_run.config.num_kv_heads,
                        title=t("decoder.finder.figure", score=t(f"decoder.score.{score_name}"))),
              key="dec-finder-grid")
    with table_column:
        st.markdown(t("decoder.finder.strongest", score=t(f"decoder.score.{score_name}"), layer=best_layer + 1,
                      head=best_head + 1, value=f"{best_score:.3f}"))
        st.button(t("decoder.finder.open", layer=best_layer + 1, head=best_head + 1), key="dec-open-strongest",
                  on_click=open_head, args=(best_layer, best_head), icon=":material/open_in_new:", type="primary")
        rows = scores.rows()
        columns = {t("decoder.finder.layer"): [row["layer"] for row in rows],
                   t("decoder.finder.head"): [row["head"] for row in rows]}
        columns.update({t(f"decoder.score.{name}"): [round(row[name], 4) for row in rows] for name in SCORE_NAMES})
        st.caption(t("decoder.finder.table"))
        st.dataframe(columns, hide_index=True, height=360, key="dec-finder-table")
    strongest_view = head_views(sequence_run, best_layer, best_head).main
    draw(
        heatmap(strongest_view, "weights", text=figure_text(), style=figure_style(), show_numbers=False,
                title=t("decoder.finder.pattern", layer=best_layer + 1, head=best_head + 1)),
        key="dec-finder-pattern",
    )


controls(uses=())  # the trained decoder has its own prompt, sizes, weights and causal mask
st.title(t("page.decoder"))
st.caption(t("decoder.tagline"))
path = gguf_or_stop()
checkpoint = checkpoint_or_stop(path)
config = checkpoint.config
words = DecoderFigureText(layer=t("decoder.figure.layer"), head=t("decoder.figure.head"),
                          kv_head=t("decoder.figure.kv_head"), score=t("decoder.figure.score"),
                          probability=t("decoder.figure.probability"), token=t("decoder.figure.token"))

prompt = prompt_input()
if not prompt.strip():
    st.info(t("decoder.empty"))
    st.stop()
try:
    with st.spinner(t("working")):
        run = decoder_run(path, prompt, MAX_PROMPT_TOKENS)
except (decoder_checkpoint_module.CheckpointError, ImportError, ValueError, OSError) as problem:
    explain_problem(problem)
st.caption(t("decoder.sizes", layers=config.num_layers, heads=config.num_heads, kv=config.num_kv_heads,
             d_model=config.d_model, dk=config.dk, vocab=config.vocab_size) + " " + t("decoder.sidebar_note"))
if run.encoding.dropped:
    st.warning(t("decoder.truncated", limit=MAX_PROMPT_TOKENS, dropped=run.encoding.dropped))

st.subheader(t("decoder.tokens.title"))
token_table(run)
prediction(path, run, checkpoint, words)
st.divider()

layer_column, head_column = st.columns([3, 2], vertical_alignment="bottom", gap="large")
st.session_state.setdefault("dec_layer", 19)
st.session_state.setdefault("dec_head", 7)
layer = layer_column.slider(t("decoder.layer"), 1, config.num_layers, key="dec_layer", persist_state="session") - 1
head = head_column.segmented_control(
    t("decoder.head"), list(range(1, config.num_heads + 1)), required=True, key="dec_head", persist_state="session",
    width="stretch",
) - 1
part = part_picker()
if part == "heads":
    overview(run, layer, head, words)
    sharing(run, layer, head)
elif part == "one_head":
    one_head_part(run, layer, head)
elif part == "cell":
    one_cell(run, layer, head)
else:
    head_finder(path, layer, head, words)
write_url()
