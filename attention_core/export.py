"""Take the numbers away: every recorded matrix of a toy trace as .npz, CSV files, JSON,
and any one matrix as a LaTeX ``bmatrix`` or a Markdown table for worksheets and slides.

NumPy and the standard library only. Every format carries the tokens and the settings, so
a file can be read back without the app (`load_npz`, `load_csv_zip` do exactly that).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import zipfile

import numpy as np

from .toy import ToyTrace

__all__ = [
    "csv_zip_bytes",
    "json_text",
    "latex_matrix",
    "load_csv_zip",
    "load_npz",
    "markdown_table",
    "npz_bytes",
    "recorded_matrices",
    "settings_record",
]

EXPORTED = ("x_query", "x_key", "q", "k", "v", "raw_scores", "scaled_scores", "mask", "masked_scores", "weights",
            "output")
"""The matrices every export holds, in the paper's order (names of `attention_core.stages.MATRICES`)."""


def recorded_matrices(trace: ToyTrace) -> dict[str, np.ndarray]:
    """Every exported matrix of the trace, plus the projections when there are some."""
    matrices = {name: np.asarray(trace.matrix(name)) for name in EXPORTED}
    for name in ("w_q", "w_k", "w_v"):
        projection = getattr(trace, name)
        if projection is not None:
            matrices[name] = projection
    matrices["fully_masked_rows"] = np.asarray(trace.attention.fully_masked_rows)
    return matrices


def settings_record(trace: ToyTrace) -> dict:
    """The settings that produced the trace, as plain JSON-ready values."""
    record = dataclasses.asdict(trace.settings)
    record["scale_used"] = trace.attention.scale
    return record


def npz_bytes(trace: ToyTrace) -> bytes:
    """A compressed .npz: every matrix by name, `query_tokens`, `key_tokens` and `settings_json`."""
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        **recorded_matrices(trace),
        query_tokens=np.array(trace.query_tokens, dtype=str),
        key_tokens=np.array(trace.key_tokens, dtype=str),
        settings_json=np.array(json.dumps(settings_record(trace), ensure_ascii=False)),
    )
    return buffer.getvalue()


def load_npz(data: bytes) -> tuple[dict[str, np.ndarray], list[str], list[str], dict]:
    """Read `npz_bytes` back: (matrices, query tokens, key tokens, settings)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        matrices = {name: archive[name] for name in archive.files if name not in _NPZ_EXTRAS}
        return (
            matrices,
            archive["query_tokens"].tolist(),
            archive["key_tokens"].tolist(),
            json.loads(str(archive["settings_json"])),
        )


_NPZ_EXTRAS = ("query_tokens", "key_tokens", "settings_json")


def _csv_text(values: np.ndarray, rows: list[str], columns: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["", *columns])
    for label, row in zip(rows, np.atleast_2d(values), strict=True):
        writer.writerow([label, *(repr(float(value)) for value in row)])  # repr: exact, "-inf" kept
    return buffer.getvalue()


def csv_zip_bytes(trace: ToyTrace) -> bytes:
    """A .zip of token-labelled CSV files, one per stage (masked scores keep "-inf"),
    with `settings.json` and `tokens.json`. UTF-8 with a BOM, so spreadsheets read Chinese."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for position, name in enumerate(EXPORTED):
            rows, columns = trace.axis_labels(name)
            values = np.asarray(trace.matrix(name), dtype=float)
            archive.writestr(f"{position + 1:02d}_{name}.csv", "\ufeff" + _csv_text(values, rows, columns))
        archive.writestr("settings.json", json.dumps(settings_record(trace), ensure_ascii=False, indent=2))
        tokens = {"query_tokens": list(trace.query_tokens), "key_tokens": list(trace.key_tokens)}
        archive.writestr("tokens.json", json.dumps(tokens, ensure_ascii=False, indent=2))
    return buffer.getvalue()


def load_csv_zip(data: bytes) -> dict[str, tuple[list[str], list[str], np.ndarray]]:
    """Read `csv_zip_bytes` back: matrix name → (row labels, column labels, values)."""
    matrices = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for file_name in archive.namelist():
            if not file_name.endswith(".csv"):
                continue
            rows = list(csv.reader(io.StringIO(archive.read(file_name).decode("utf-8-sig"))))
            name = file_name.removesuffix(".csv").split("_", 1)[1]
            values = np.array([[float(cell) for cell in row[1:]] for row in rows[1:]])
            matrices[name] = ([row[0] for row in rows[1:]], rows[0][1:], values)
    return matrices


def _json_number(value: float) -> float | str:
    return value if math.isfinite(value) else ("-inf" if value < 0 else "inf")


def json_text(trace: ToyTrace) -> str:
    """Every stage as JSON: settings, tokens, and per matrix its row labels, column labels
    and values (−∞ written as the string "-inf", since JSON has no infinity)."""
    matrices = {}
    for name in EXPORTED:
        rows, columns = trace.axis_labels(name)
        values = np.asarray(trace.matrix(name), dtype=float)
        matrices[name] = {
            "shape": list(values.shape),
            "rows": rows,
            "columns": columns,
            "values": [[_json_number(float(value)) for value in row] for row in values],
        }
    document = {
        "settings": settings_record(trace),
        "query_tokens": list(trace.query_tokens),
        "key_tokens": list(trace.key_tokens),
        "matrices": matrices,
    }
    return json.dumps(document, ensure_ascii=False, indent=1)


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _latex_text(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def _latex_number(value: float, digits: int) -> str:
    if value == -math.inf:
        return r"-\infty"
    return f"{value:.{digits}f}"


def latex_matrix(values: np.ndarray, row_labels: list[str], column_labels: list[str], digits: int = 2) -> str:
    """A LaTeX ``bmatrix`` of the values, with the tokens as a comment line above each row
    (token text is escaped, so any sentence compiles)."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    lines = [f"% columns: {_latex_text(', '.join(column_labels))}", r"\begin{bmatrix}"]
    for label, row in zip(row_labels, values, strict=True):
        cells = " & ".join(_latex_number(float(value), digits) for value in row)
        lines.append(f"  {cells} \\\\  % {_latex_text(label)}")
    lines.append(r"\end{bmatrix}")
    return "\n".join(lines)


def _markdown_text(text: str) -> str:
    return "".join("\\" + char if char in "\\|`*_[]<>#" else char for char in text)


def markdown_table(values: np.ndarray, row_labels: list[str], column_labels: list[str], digits: int = 2) -> str:
    """A Markdown table of the values with token labels (escaped, so nothing in a token renders)."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    header = "| | " + " | ".join(_markdown_text(label) for label in column_labels) + " |"
    rule = "|---|" + "---:|" * len(column_labels)
    body = [
        f"| {_markdown_text(label)} | " + " | ".join("−∞" if v == -math.inf else f"{v:.{digits}f}" for v in row) + " |"
        for label, row in zip(row_labels, values, strict=True)
    ]
    return "\n".join([header, rule, *body])
