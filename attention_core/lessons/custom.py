"""Attention on numbers the user types, and the difference between two toy traces.

Two pages rest on this module:

- "Type your own numbers": the user fills Q, K and V in small tables. `parse_matrix`
  turns one table (a list of rows of whatever the table holds: numbers, strings such
  as ``"1.5"``, ``None`` for an emptied cell) into a float matrix, or raises a
  `CellError` that names the matrix, the row and the column of the first bad cell, so
  the UI can say exactly what to fix. `custom_trace` then runs the engine's
  `scaled_dot_product_attention` on the parsed matrices and labels every axis.
- "Compare two settings": `weight_difference(trace_a, trace_b)` is B's attention
  weights minus A's for the same tokens, with the largest change and where it is.

NumPy only: tables and figures are built elsewhere.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from ..attention import AttentionTrace, _read_only, scaled_dot_product_attention
from ..masks import causal_mask
from ..stages import MATRICES
from ..toy import InputError, ToySettings, ToyTrace

__all__ = [
    "EXAMPLES",
    "MAX_ABS_VALUE",
    "MAX_SIZE",
    "CellError",
    "CellExample",
    "CustomTrace",
    "WeightDifference",
    "axis_names",
    "cell_errors",
    "cell_text",
    "cell_texts",
    "changed_settings",
    "custom_trace",
    "dot_product_latex",
    "parse_cell",
    "parse_matrix",
    "resize_cells",
    "weight_difference",
]

MAX_SIZE = 8
"""Largest n, m, dk and dv of a typed example: 8 × 8 tables still fit on a projector."""
MAX_ABS_VALUE = 1e6
"""Largest magnitude of a typed number; keeps every score and exponent comfortably finite."""

# ---------------------------------------------------------------------------------------
# Typed numbers: one cell, one matrix
# ---------------------------------------------------------------------------------------

CELL_PROBLEMS = ("cell_empty", "cell_not_a_number", "cell_not_finite", "cell_too_large")
"""Codes of `CellError`, in the order a cell is checked."""

_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-"})  # − ‒ – typed or pasted as minus


class CellError(InputError):
    """A cell of a typed matrix that is not a usable number.

    `code` is one of `CELL_PROBLEMS`; `details` (for the translated message) holds the
    matrix name, the 0-based row and column, and the cell's text as typed.
    """

    def __init__(self, code: str, matrix: str, row: int, column: int, value: object):
        shown = "" if value is None else str(value)
        super().__init__(
            code,
            f"{matrix}[{row}, {column}] = {shown!r}: {code.removeprefix('cell_').replace('_', ' ')}",
            matrix=matrix,
            row=row,
            column=column,
            value=shown,
        )
        self.matrix = matrix
        """Name of the matrix, e.g. "Q"."""
        self.row = row
        """0-based row of the bad cell."""
        self.column = column
        """0-based column of the bad cell."""
        self.value = shown
        """The cell as typed ("" for an empty cell)."""


def _problem(value: object) -> tuple[str | None, float]:
    """(None, number) for a usable cell, else (problem code, nan)."""
    if value is None or isinstance(value, bool):
        return ("cell_empty", math.nan) if value is None else ("cell_not_a_number", math.nan)
    if isinstance(value, str):
        text = unicodedata.normalize("NFKC", value).translate(_MINUS_SIGNS).strip()  # "１.５" → "1.5"
        if not text:
            return "cell_empty", math.nan
        try:
            number = float(text)  # accepts "2", "-0.5", "1e-3"; also "nan" and "inf", refused below
        except ValueError:
            return "cell_not_a_number", math.nan
    elif isinstance(value, numbers.Real):
        number = float(value)
    else:
        return "cell_not_a_number", math.nan
    if not math.isfinite(number):
        return "cell_not_finite", math.nan
    if abs(number) > MAX_ABS_VALUE:
        return "cell_too_large", math.nan
    return None, number


def parse_cell(value: object, matrix: str = "", row: int = 0, column: int = 0) -> float:
    """One typed cell as a float; raises `CellError` if it is empty, text, NaN, ±inf or too large.

    Numbers and numeric strings are accepted ("1.5", " -2 ", "1e-3", full-width "１.５",
    "−1" with a typographic minus). NaN and ±inf are refused, typed ("nan", "inf") or not.
    """
    code, number = _problem(value)
    if code is not None:
        raise CellError(code, matrix, row, column, value)
    return number


def cell_errors(rows: Sequence[Sequence[object]], name: str) -> list[CellError]:
    """Every bad cell of the matrix `name`, row by row (empty if all cells are numbers)."""
    errors = []
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            code, _ = _problem(value)
            if code is not None:
                errors.append(CellError(code, name, i, j, value))
    return errors


def parse_matrix(rows: Sequence[Sequence[object]], name: str) -> np.ndarray:
    """A typed table as a read-only float matrix, (rows, columns).

    Raises `CellError` for the first bad cell (row by row), and ValueError if the rows
    are ragged or there are none.
    """
    widths = {len(row) for row in rows}
    if not rows or len(widths) != 1 or 0 in widths:
        raise ValueError(f"{name} must be a non-empty table with rows of equal length; got widths {sorted(widths)}")
    errors = cell_errors(rows, name)
    if errors:
        raise errors[0]
    matrix = np.array([[parse_cell(value) for value in row] for row in rows], dtype=np.float64)  # (rows, columns)
    return _read_only(matrix)


def cell_text(value: object) -> str | None:
    """How a cell is shown in an editable text table: "2" for 2.0, "-0.5", None for an empty cell."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if number.is_integer() and abs(number) < 1e15:
            return str(int(number))
        return repr(number)
    return str(value)


def cell_texts(rows: Sequence[Sequence[object]]) -> list[list[str | None]]:
    """Every cell of a table as `cell_text` shows it."""
    return [[cell_text(value) for value in row] for row in rows]


def resize_cells(
    rows: Sequence[Sequence[object]], n_rows: int, n_columns: int, fill: object = "0"
) -> list[list[object]]:
    """The table cut or padded to (n_rows, n_columns): cells that still fit keep their value,
    new cells get `fill`."""
    return [
        [rows[i][j] if i < len(rows) and j < len(rows[i]) else fill for j in range(n_columns)] for i in range(n_rows)
    ]


def axis_names(names: Sequence[str], count: int, prefix: str, numbered: bool = True) -> list[str]:
    """Labels for `count` rows or columns: the named ones first, then ``prefix + i``.

    Named rows carry their position like tokens do (``"0:cat"``); with ``numbered=False``
    (feature columns) the name alone. ``axis_names(["cat", "dog"], 3, "k")`` →
    ``["0:cat", "1:dog", "k2"]``.
    """
    return [(f"{i}:{names[i]}" if numbered else names[i]) if i < len(names) else f"{prefix}{i}" for i in range(count)]


@dataclass(frozen=True)
class CellExample:
    """A ready-made Q, K, V to start typing from; names are ids the UI translates."""

    name: str
    """Stable id of the example, used in translations (``your_numbers.example.<name>``)."""
    q: tuple[tuple[float, ...], ...]
    """Queries, (n, dk)."""
    k: tuple[tuple[float, ...], ...]
    """Keys, (m, dk)."""
    v: tuple[tuple[float, ...], ...]
    """Values, (m, dv)."""
    query_names: tuple[str, ...] = ()
    """Ids naming the n queries (empty: generic labels q0, q1, …)."""
    key_names: tuple[str, ...] = ()
    """Ids naming the m keys (and values)."""
    feature_names: tuple[str, ...] = ()
    """Ids naming the dk features shared by queries and keys."""
    value_names: tuple[str, ...] = ()
    """Ids naming the dv features of the values."""

    @property
    def cells(self) -> dict[str, list[list[str | None]]]:
        """The example as editable text tables, keyed "q", "k", "v"."""
        return {name: cell_texts(getattr(self, name)) for name in ("q", "k", "v")}


def _times(matrix: tuple[tuple[float, ...], ...], factor: float) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(factor * entry for entry in row) for row in matrix)


# Features in the spirit of "animal, furry, has wheels": a query scores high on a key that
# has the features it looks for (a negative entry means "not that, please").
_FEATURES = CellExample(
    "features",
    q=((1, 2, 0), (0, -1, 2)),
    k=((2, 2, 0), (2, 1, 0), (0, 0, 2), (0, -1, 1)),
    v=((3, 0), (2, 1), (0, 3), (0, 1)),
    query_names=("pet", "ride"),
    key_names=("cat", "dog", "car", "bike"),
    feature_names=("animal", "furry", "wheels"),
    value_names=("cuddly", "speed"),
)
EXAMPLES: dict[str, CellExample] = {
    example.name: example
    for example in (
        _FEATURES,
        # The same story with Q and K ten times larger: every score is ×100, and softmax
        # puts almost all the weight on one key.
        replace(_FEATURES, name="loud", q=_times(_FEATURES.q, 10), k=_times(_FEATURES.k, 10)),
        # All scores equal: every key gets the same weight 1/m, the output is the mean of V.
        CellExample(
            "equal",
            q=((0, 0), (0, 0), (0, 0)),
            k=((0, 0), (0, 0), (0, 0)),
            v=((1, 0), (0, 1), (1, 1)),
        ),
    )
}
"""Starting points of the "Type your own numbers" page; the first is the default."""


@dataclass(frozen=True, eq=False)
class CustomTrace:
    """Attention on typed matrices, with labelled axes.

    Offers the same `matrix(name)` and `axis_labels(name)` as `ToyTrace`, so the app's
    heatmaps and tables draw it unchanged.
    """

    attention: AttentionTrace
    """Every stage of the attention (scale 1/√dk)."""
    query_labels: tuple[str, ...]
    """Labels of the n query rows."""
    key_labels: tuple[str, ...]
    """Labels of the m key (and value) rows."""
    feature_labels: tuple[str, ...]
    """Labels of the dk columns of Q and K."""
    value_labels: tuple[str, ...]
    """Labels of the dv columns of V and of the output."""

    def matrix(self, name: str) -> np.ndarray:
        """The recorded matrix called `name` (a key of `MATRICES`, except the embeddings)."""
        if name not in MATRICES or name.startswith("x_"):
            raise KeyError(f"unknown matrix {name!r}; typed numbers have no embeddings")
        return self.attention.stage(name)

    def axis_labels(self, name: str) -> tuple[list[str], list[str]]:
        """(row labels, column labels) of the matrix called `name`."""
        info = MATRICES[name]
        dims = self.value_labels if name in ("v", "output") else self.feature_labels
        by_axis = {"query": self.query_labels, "key": self.key_labels, "dim": dims}
        return list(by_axis[info.rows]), list(by_axis[info.columns])


def custom_trace(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    causal: bool = False,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    feature_labels: Sequence[str] | None = None,
    value_labels: Sequence[str] | None = None,
) -> CustomTrace:
    """Attention(Q, K, V) = softmax(mask(QKᵀ/√dk))V on typed matrices, every stage recorded.

    q: (n, dk), k: (m, dk), v: (m, dv); `causal` applies the look-ahead mask (query i sees
    keys 0..i). Missing labels default to q0…, k0…, d0….
    """
    n, dk = q.shape
    m, dv = v.shape
    mask = causal_mask(n, m) if causal else None  # (n, m) or None
    attention = scaled_dot_product_attention(q, k, v, mask=mask)

    def labels(given: Sequence[str] | None, count: int, prefix: str) -> tuple[str, ...]:
        chosen = axis_names((), count, prefix) if given is None else list(given)
        if len(chosen) != count:
            raise ValueError(f"{count} labels needed for the {prefix} axis; got {len(chosen)}")
        return tuple(chosen)

    return CustomTrace(
        attention=attention,
        query_labels=labels(query_labels, n, "q"),
        key_labels=labels(key_labels, m, "k"),
        feature_labels=labels(feature_labels, dk, "d"),
        value_labels=labels(value_labels, dv, "d"),
    )


def _latex_number(x: float) -> str:
    text = f"{x:.4g}".replace("e", r"\mathrm{e}")
    return f"({text})" if x < 0 else text


def dot_product_latex(trace: CustomTrace, i: int, j: int) -> str:
    """One raw score worked out term by term, then scaled, as LaTeX:
    ``q_0 · k_1 = 1·2 + 2·1 + 0·0 = 4  →  4 × 1/√3 = 2.309``."""
    q_row, k_row = trace.attention.q[i], trace.attention.k[j]  # (dk,), (dk,)
    terms = " + ".join(rf"{_latex_number(a)}\cdot{_latex_number(b)}" for a, b in zip(q_row, k_row, strict=True))
    raw = _latex_number(float(trace.attention.raw_scores[i, j]))
    scaled = _latex_number(float(trace.attention.scaled_scores[i, j]))
    return (
        rf"q_{{{i}}}\cdot k_{{{j}}} = {terms} = {raw}"
        rf"\quad\Rightarrow\quad \frac{{{raw}}}{{\sqrt{{{trace.attention.dk}}}}} = {scaled}"
    )


# ---------------------------------------------------------------------------------------
# Two settings compared
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class WeightDifference:
    """B's attention weights minus A's, for the same query and key tokens."""

    diff: np.ndarray
    """B − A, (n, m): positive where B attends more than A."""
    max_abs: float
    """Largest |B − A| over all cells (0 when the weights are identical)."""
    argmax: tuple[int, int]
    """(query i, key j) of the largest |B − A| (the first one, row by row, on a tie)."""
    change: float
    """B − A at `argmax`: ±max_abs, positive if B attends more there."""
    weight_a: float
    """A's weight at `argmax`."""
    weight_b: float
    """B's weight at `argmax`."""
    both_masked: np.ndarray
    """Boolean, (n, m): True where A and B both mask the cell (its difference is 0 by construction)."""
    peak_a: float
    """A's largest weight per query row, averaged over the rows that attend to something."""
    peak_b: float
    """The same for B: closer to 1 means sharper attention (nearly one key per query)."""

    @property
    def changed(self) -> bool:
        """Whether any weight differs (beyond rounding)."""
        return self.max_abs > 1e-12


def _mean_peak(weights: np.ndarray, fully_masked_rows: np.ndarray) -> float:
    peaks = weights.max(axis=-1)[~fully_masked_rows]  # (rows that attend,)
    return float(peaks.mean()) if peaks.size else 0.0


def weight_difference(trace_a: ToyTrace, trace_b: ToyTrace) -> WeightDifference:
    """Compare the attention weights of two toy traces of the same tokens: B − A.

    Raises ValueError if the traces' query or key tokens differ (their cells would not
    refer to the same pairs of tokens).
    """
    if trace_a.query_tokens != trace_b.query_tokens or trace_a.key_tokens != trace_b.key_tokens:
        raise ValueError("the two traces must have the same query and key tokens to be compared cell by cell")
    a, b = trace_a.attention, trace_b.attention
    diff = b.weights - a.weights  # (n, m)
    size = np.abs(diff)  # (n, m)
    i, j = np.unravel_index(int(np.argmax(size)), size.shape)
    return WeightDifference(
        diff=_read_only(diff),
        max_abs=float(size[i, j]),
        argmax=(int(i), int(j)),
        change=float(diff[i, j]),
        weight_a=float(a.weights[i, j]),
        weight_b=float(b.weights[i, j]),
        both_masked=_read_only(~a.mask & ~b.mask),  # (n, m)
        peak_a=_mean_peak(a.weights, a.fully_masked_rows),
        peak_b=_mean_peak(b.weights, b.fully_masked_rows),
    )


def changed_settings(settings_a: ToySettings, settings_b: ToySettings) -> list[str]:
    """Names of the `ToySettings` fields that differ between A and B, in declaration order."""
    return [f.name for f in fields(ToySettings) if getattr(settings_a, f.name) != getattr(settings_b, f.name)]
