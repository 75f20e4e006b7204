"""Named stages and matrices of the step-through, in the paper's order.

A *matrix* is one recorded array (``"raw_scores"``); a *stage* is one step of the
explanation, showing one or more matrices (the ``"qkv"`` stage shows Q, K and V).
Names are stable: the app, the exports and the tests refer to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["MATRICES", "STAGES", "MatrixInfo", "Stage", "stage_by_name"]

Axis = Literal["query", "key", "dim"]
ColourKind = Literal["signed", "weights", "mask"]


@dataclass(frozen=True)
class MatrixInfo:
    """How to label and colour one recorded matrix."""

    name: str
    """Stable name, equal to the `ToyTrace.matrix` argument."""
    symbol: str
    """LaTeX symbol, e.g. ``QK^\\top``, for formulas."""
    label: str
    """Plain-text symbol, e.g. ``QKᵀ``, for figure titles (no LaTeX renderer needed)."""
    rows: Axis
    """What a row is: a query token, a key token."""
    columns: Axis
    """What a column is: a key token, or a feature dimension."""
    colour: ColourKind
    """signed: diverging scale centred at 0; weights: 0–1 sequential; mask: two colours."""
    shape: str
    """Shape in words, e.g. ``(n, m)``."""
    marks_masked: bool = False
    """Whether its figure greys and crosses the masked cells. Only from the mask stage on: QKᵀ
    and QKᵀ/√dk are computed for every pair, and the mask is applied after the scaling."""


MATRICES: dict[str, MatrixInfo] = {
    info.name: info
    for info in (
        MatrixInfo("x_query", "X", "X", "query", "dim", "signed", "(n, d_model)"),
        MatrixInfo("x_key", "X_{K,V}", "X → K, V", "key", "dim", "signed", "(m, d_model)"),
        MatrixInfo("q", "Q", "Q", "query", "dim", "signed", "(n, d_k)"),
        MatrixInfo("k", "K", "K", "key", "dim", "signed", "(m, d_k)"),
        MatrixInfo("v", "V", "V", "key", "dim", "signed", "(m, d_v)"),
        MatrixInfo("raw_scores", "QK^\\top", "QKᵀ", "query", "key", "signed", "(n, m)"),
        MatrixInfo("scaled_scores", "QK^\\top/\\sqrt{d_k}", "QKᵀ/√dₖ", "query", "key", "signed", "(n, m)"),
        MatrixInfo("mask", "M", "M", "query", "key", "mask", "(n, m)"),
        MatrixInfo(
            "masked_scores", "\\mathrm{mask}(QK^\\top/\\sqrt{d_k})", "mask(QKᵀ/√dₖ)",
            "query", "key", "signed", "(n, m)", marks_masked=True,
        ),
        MatrixInfo(
            "weights", "A=\\mathrm{softmax}(\\cdot)", "A = softmax(mask(QKᵀ/√dₖ))",
            "query", "key", "weights", "(n, m)", marks_masked=True,
        ),
        MatrixInfo("output", "AV", "AV", "query", "dim", "signed", "(n, d_v)"),
    )
}


@dataclass(frozen=True)
class Stage:
    """One step of the computation as the step-through page shows it."""

    name: str
    """Stable name, used in URLs and translations (``stage.<name>.*``)."""
    matrices: tuple[str, ...]
    """The matrices drawn at this step, keys of `MATRICES`."""
    formula: str
    """The step's formula in LaTeX (symbols only, no words: it reads the same in every language)."""
    cross_matrices: tuple[str, ...] | None = None
    """The matrices drawn in cross-attention, where they differ (both sentences' X at stage 1)."""
    cross_formula: str | None = None
    """The formula in cross-attention, where it differs."""

    def matrices_for(self, cross: bool) -> tuple[str, ...]:
        """The matrices to draw, in self-attention (cross=False) or cross-attention."""
        return self.cross_matrices if cross and self.cross_matrices is not None else self.matrices

    def formula_for(self, cross: bool) -> str:
        """The formula to show, in self-attention (cross=False) or cross-attention."""
        return self.cross_formula if cross and self.cross_formula is not None else self.formula


STAGES: tuple[Stage, ...] = (
    Stage(
        "embeddings",
        ("x_query",),
        r"X \in \mathbb{R}^{n \times d_{\mathrm{model}}}",
        cross_matrices=("x_query", "x_key"),
        cross_formula=(
            r"X \in \mathbb{R}^{n \times d_{\mathrm{model}}},\qquad "
            r"X_{K,V} \in \mathbb{R}^{m \times d_{\mathrm{model}}}"
        ),
    ),
    Stage(
        "qkv",
        ("q", "k", "v"),
        r"Q = XW^Q,\quad K = XW^K,\quad V = XW^V",
        cross_formula=r"Q = XW^Q,\quad K = X_{K,V}W^K,\quad V = X_{K,V}W^V",
    ),
    Stage("raw_scores", ("raw_scores",), r"S = QK^\top,\qquad S_{ij} = q_i \cdot k_j = \sum_t q_{it}\,k_{jt}"),
    Stage("scaled_scores", ("scaled_scores",), r"\tilde S = \frac{QK^\top}{\sqrt{d_k}}"),
    Stage(
        "masked_scores",
        ("mask", "masked_scores"),
        r"\tilde S_{ij} \leftarrow \begin{cases} \tilde S_{ij} & M_{ij} = 1 \\ -\infty & M_{ij} = 0 \end{cases}",
    ),
    Stage("weights", ("weights",), r"A_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_{j'} e^{\tilde S_{ij'}}}"),
    Stage("output", ("weights", "v", "output"), r"\mathrm{Attention}(Q,K,V) = AV,\qquad o_i = \sum_j A_{ij}\, v_j"),
)


def stage_by_name(name: str) -> Stage:
    """The stage called `name`; KeyError names the known ones."""
    for stage in STAGES:
        if stage.name == name:
            return stage
    raise KeyError(f"unknown stage {name!r}; known: {', '.join(s.name for s in STAGES)}")
