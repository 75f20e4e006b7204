"""Boolean attention masks: True means "query i may attend to key j" (PyTorch's convention).

Every function returns an (n, m) boolean array that `scaled_dot_product_attention`
accepts as its `mask`; masks combine with logical AND (`combine_masks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "block_mask",
    "causal_mask",
    "combine_masks",
    "padding_mask",
    "sliding_window_mask",
]


def _check_size(name: str, value: int) -> int:
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be at least 1; got {value}")
    return value


def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """Look-ahead mask, (n, m): query i may attend to keys 0..i.

    Lower-triangular and aligned to the upper-left corner, like PyTorch's ``is_causal``:
    with n ≠ m, query i still sees keys j ≤ i.
    """
    n = _check_size("n", n)
    m = n if m is None else _check_size("m", m)
    return np.tril(np.ones((n, m), dtype=bool))  # (n, m)


def padding_mask(key_is_real: Sequence[bool] | np.ndarray, n: int) -> np.ndarray:
    """Padding mask, (n, m): every query may attend to the real keys only.

    `key_is_real` has one entry per key (m), False for a padding token.
    """
    key_is_real = np.asarray(key_is_real)
    if key_is_real.dtype != np.bool_ or key_is_real.ndim != 1:
        raise ValueError(
            f"key_is_real must be a 1-D boolean array (one entry per key); got dtype "
            f"{key_is_real.dtype} with shape {key_is_real.shape}"
        )
    n = _check_size("n", n)
    return np.broadcast_to(key_is_real, (n, key_is_real.size)).copy()  # (n, m)


def sliding_window_mask(n: int, width: int, m: int | None = None, causal: bool = False) -> np.ndarray:
    """Local attention, (n, m): query i may attend to keys with |i − j| < width.

    With ``causal=True`` only the keys i − width < j ≤ i (the window looks back only).
    """
    n = _check_size("n", n)
    m = n if m is None else _check_size("m", m)
    width = _check_size("width", width)
    offset = np.arange(m)[None, :] - np.arange(n)[:, None]  # (n, m): j − i
    if causal:
        return (offset <= 0) & (offset > -width)
    return np.abs(offset) < width


def block_mask(query_segments: Iterable[int], key_segments: Iterable[int] | None = None) -> np.ndarray:
    """Segment mask, (n, m): query i may attend to key j only within the same segment.

    `query_segments[i]` is the segment (e.g. sentence) number of query i.
    """
    query_segments = np.asarray(list(query_segments))
    key_segments = query_segments if key_segments is None else np.asarray(list(key_segments))
    if query_segments.ndim != 1 or key_segments.ndim != 1:
        raise ValueError("segments must be 1-D sequences of segment numbers")
    return query_segments[:, None] == key_segments[None, :]  # (n, m)


def combine_masks(*masks: np.ndarray | None) -> np.ndarray | None:
    """Logical AND of the given masks (None entries are ignored); None if none remain."""
    present = [np.asarray(mask, dtype=bool) for mask in masks if mask is not None]
    if not present:
        return None
    combined = present[0]
    for mask in present[1:]:
        if mask.shape != combined.shape:
            raise ValueError(f"cannot combine masks of shapes {combined.shape} and {mask.shape}")
        combined = combined & mask
    return combined
