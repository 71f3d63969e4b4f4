"""The measures engine: ir_measures-style names, vectorized per-query kernels, trec_eval parity.

Public API: :func:`score` (per-query values of a run judged by qrels), :func:`score_list` (the
values of one ranked list of IDs), :func:`aggregate` (their means), the options they share
(:class:`ScoreOptions`), measure names (:func:`parse_measure`, :class:`Measure`,
:func:`trec_name`, :data:`MEASURE_NAMES`), each measure's direction, range and description
(:func:`higher_is_better`, :func:`measure_range`, :func:`describe_measure`), and the kernel
registry :data:`KERNELS` over the :class:`JudgedRanking` (one entry per measure ``score``
computes on a ranking).

Where things are: a measure is declared next to its kernel in its family's module
(:mod:`~evalkit.measures.binary`, :mod:`~evalkit.measures.gain`,
:mod:`~evalkit.measures.diversity`, :mod:`~evalkit.measures.spans`); :mod:`~evalkit.measures.
names` parses names; :mod:`~evalkit.measures.ranking` builds the judged ranking of a run in
memory, :mod:`~evalkit.measures.stream` of a run file, :mod:`~evalkit.measures.cluster` on Dask;
:mod:`~evalkit.measures.engine` puts them together.
"""

from evalkit.measures.engine import aggregate, parse_measures, score, score_list
from evalkit.measures.judged import KERNELS, JudgedRanking
from evalkit.measures.names import (
    LOWER_IS_BETTER,
    MEASURE_NAMES,
    Measure,
    describe_measure,
    higher_is_better,
    measure_range,
    parse_measure,
    trec_name,
)
from evalkit.measures.ranking import ScoreOptions

__all__ = [
    "KERNELS",
    "LOWER_IS_BETTER",
    "MEASURE_NAMES",
    "JudgedRanking",
    "Measure",
    "ScoreOptions",
    "aggregate",
    "describe_measure",
    "higher_is_better",
    "measure_range",
    "parse_measure",
    "parse_measures",
    "score",
    "score_list",
    "trec_name",
]
