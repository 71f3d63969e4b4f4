"""The numpy array types evalkit's annotations name, defined once (``npt.NDArray`` of one
dtype): ``FloatArray`` (float64 values, scores, measures), ``IntArray`` (int64 positions,
counts, offsets), ``IndexArray`` (intp indices, as numpy's indexing functions return them),
``BoolArray`` (masks) and ``U64Array`` (packed sort keys)."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["BoolArray", "FloatArray", "IndexArray", "IntArray", "U64Array"]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
IndexArray: TypeAlias = npt.NDArray[np.intp]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
U64Array: TypeAlias = npt.NDArray[np.uint64]
