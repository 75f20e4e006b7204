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
import re
import zipfile

import numpy as np

from .toy import ToyTrace

__all__ = [
    "MAX_TEXT_EXPORT_CELLS",
    "csv_label",
    "csv_zip_bytes",
    "json_text",
    "latex_matrix",
    "load_csv_zip",
    "load_npz",
    "markdown_table",
    "npz_bytes",
    "recorded_matrices",
    "settings_record",
    "text_export_fits",
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


MAX_TEXT_EXPORT_CELLS = 256 * 256
"""CSV and JSON are offered up to this many query × key cells (256 tokens of self-attention):
the whole view is then a few megabytes of text, which a spreadsheet or an editor opens. At
2,048 tokens it would be about 500 MB; the .npz file holds every size."""


def text_export_fits(trace: ToyTrace) -> bool:
    """Whether the trace is small enough for the text formats (CSV, JSON)."""
    return len(trace.query_tokens) * len(trace.key_tokens) <= MAX_TEXT_EXPORT_CELLS


def csv_label(label: str) -> str:
    """A "position:token" label as a spreadsheet keeps it: "[position] token".

    "26:12" (position 26, token "12") would be read as a time, "3/4" or "1:2" as a date or
    a time, and a token starting with "=" as a formula; a cell starting with "[" is text in
    every spreadsheet. Labels of the dimension axis ("d0", …) are kept.
    """
    position, separator, token = label.partition(":")
    if not separator or not position.isdigit():
        return label
    return f"[{position}] {token}"


_NUMBER_FORMAT = "%.17g"  # enough digits to read back exactly the float64 written; -inf as "-inf"
_NON_FINITE = re.compile(r"(?<![\w\"])(-?inf|nan)\b")


def _write_csv(stream: io.StringIO, values: np.ndarray, rows: list[str], columns: list[str]) -> None:
    """The matrix as CSV with labelled rows and columns; the numbers are written by
    np.savetxt (one line of text per row, no Python object per number)."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["", *map(csv_label, columns)])
    body = io.StringIO()
    np.savetxt(body, np.atleast_2d(values), fmt=_NUMBER_FORMAT, delimiter=",", newline="\n")
    for label, line in zip(rows, body.getvalue().splitlines(), strict=True):
        stream.write(f"{_csv_cell(csv_label(label))},{line}\n")


def _csv_cell(text: str) -> str:
    """One CSV cell, quoted as the csv module quotes it."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([text])
    return buffer.getvalue()


def csv_zip_bytes(trace: ToyTrace) -> bytes:
    """A .zip of token-labelled CSV files, one per stage (masked scores keep "-inf"),
    with `settings.json` and `tokens.json`. UTF-8 with a BOM, so spreadsheets read Chinese;
    labels as "[position] token" (`csv_label`), so no spreadsheet turns them into times."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for position, name in enumerate(EXPORTED):
            rows, columns = trace.axis_labels(name)
            stream = io.StringIO()
            stream.write("\ufeff")
            _write_csv(stream, np.asarray(trace.matrix(name), dtype=float), rows, columns)
            archive.writestr(f"{position + 1:02d}_{name}.csv", stream.getvalue())
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


def _json_rows(values: np.ndarray) -> str:
    """The matrix's rows as a JSON array of arrays, written by np.savetxt; −∞ (and any
    other non-finite number) as a string, since JSON has no infinity."""
    values = np.atleast_2d(values)
    if values.size == 0:
        return "[" + ", ".join("[]" for _ in range(values.shape[0])) + "]"
    stream = io.StringIO()
    np.savetxt(stream, values, fmt=_NUMBER_FORMAT, delimiter=", ", newline="],\n  [")
    body = _NON_FINITE.sub(r'"\1"', stream.getvalue().removesuffix(",\n  ["))
    return "[\n  [" + body + "\n ]"


def json_text(trace: ToyTrace) -> str:
    """Every stage as JSON: settings, tokens, and per matrix its row labels, column labels
    and values (−∞ written as the string "-inf", since JSON has no infinity). The numbers
    are written by np.savetxt, not through a Python list per matrix."""
    document = {
        "settings": settings_record(trace),
        "query_tokens": list(trace.query_tokens),
        "key_tokens": list(trace.key_tokens),
        "matrices": "@MATRICES@",
    }
    head, tail = json.dumps(document, ensure_ascii=False, indent=1).split('"@MATRICES@"')
    stream = io.StringIO()
    stream.write(head + "{")
    for index, name in enumerate(EXPORTED):
        rows, columns = trace.axis_labels(name)
        values = np.asarray(trace.matrix(name), dtype=float)
        described = json.dumps({"shape": list(values.shape), "rows": rows, "columns": columns}, ensure_ascii=False)
        stream.write(("," if index else "") + f"\n  {json.dumps(name)}: " + described[:-1] + ', "values": ')
        stream.write(_json_rows(values) + "}")
    stream.write("\n }" + tail)
    return stream.getvalue()


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
