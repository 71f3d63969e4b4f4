"""The measures engine: ir_measures-style names, vectorized per-query kernels, trec_eval parity.

Public API: :func:`score`, :func:`aggregate`, :func:`parse_measure`, :class:`Measure`,
:func:`trec_name`, each measure's direction and description (:func:`higher_is_better`,
:func:`describe_measure`), and the kernel registry :data:`KERNELS` (one entry per measure ``score``
computes).
"""

from evalkit.measures.engine import aggregate, parse_measures, score
from evalkit.measures.kernels import KERNELS, JudgedRanking
from evalkit.measures.names import (
    LOWER_IS_BETTER,
    MEASURE_NAMES,
    Measure,
    describe_measure,
    higher_is_better,
    parse_measure,
    trec_name,
)

__all__ = [
    "KERNELS",
    "LOWER_IS_BETTER",
    "MEASURE_NAMES",
    "JudgedRanking",
    "Measure",
    "aggregate",
    "describe_measure",
    "higher_is_better",
    "parse_measure",
    "parse_measures",
    "score",
    "trec_name",
]
