"""Recorded matrices as pandas DataFrames labelled by tokens, for tables and export.

A separate submodule (it imports pandas): ``from attention_core.frames import matrix_frame``.
"""

from __future__ import annotations

import pandas as pd

from .toy import ToyTrace

__all__ = ["matrix_frame"]


def matrix_frame(trace: ToyTrace, name: str, window: tuple[slice, slice] | None = None) -> pd.DataFrame:
    """The matrix called `name` as a DataFrame: rows and columns labelled "position:token"
    (or "d<t>" for feature dimensions). Masked scores keep their −inf. `window` = (rows,
    columns) slices keeps only that part."""
    rows, columns = trace.axis_labels(name)
    values = trace.matrix(name)
    if window is not None:
        values, rows, columns = values[window], rows[window[0]], columns[window[1]]
    return pd.DataFrame(values, index=rows, columns=columns)
