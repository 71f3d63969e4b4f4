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

The names are resolved on first use (PEP 562): ``evalkit trec-eval`` ranks and scores with
:mod:`~evalkit.measures.ranking` and the kernels, numpy only, without loading :func:`score`'s
pandas and pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.measures.engine import (
        aggregate as aggregate,
        parse_measures as parse_measures,
        score as score,
        score_list as score_list,
    )
    from evalkit.measures.judged import JudgedRanking as JudgedRanking
    from evalkit.measures.names import (
        KERNELS as KERNELS,
        LOWER_IS_BETTER as LOWER_IS_BETTER,
        MEASURE_NAMES as MEASURE_NAMES,
        Measure as Measure,
        describe_measure as describe_measure,
        higher_is_better as higher_is_better,
        measure_range as measure_range,
        parse_measure as parse_measure,
        trec_name as trec_name,
    )
    from evalkit.measures.ranking import ScoreOptions as ScoreOptions


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
