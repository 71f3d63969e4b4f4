"""The measures engine: ir_measures-style names, vectorized per-query kernels, trec_eval parity.

Public API: :func:`score`, :func:`aggregate`, :func:`parse_measure`, :class:`Measure`,
:func:`trec_name`, and the kernel registry :data:`KERNELS` (one entry per measure ``score``
computes).
"""

from evalkit.measures.engine import aggregate, parse_measures, score
from evalkit.measures.kernels import KERNELS, JudgedRanking
from evalkit.measures.names import MEASURE_NAMES, Measure, parse_measure, trec_name

__all__ = [
    "KERNELS",
    "MEASURE_NAMES",
    "JudgedRanking",
    "Measure",
    "aggregate",
    "parse_measure",
    "parse_measures",
    "score",
    "trec_name",
]
