"""evalkit: offline, deterministic, privacy-safe evaluation of search and RAG retrieval.

The public API. Everything else is reachable through its module (``evalkit.stats.paired``,
``evalkit.systems``, ``evalkit.probes``, ...) but not promised to stay put.

The names are resolved on first use (PEP 562): ``import evalkit.measures`` or
``from evalkit.formats import read_run`` does not import pandas-heavy modules it does not need
(systems, statistics, fixtures, reports).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture, generate_fixture, load_fixture, validate_fixture
    from evalkit.fixtures.beir import fixture_from_beir
    from evalkit.formats import read_beir, read_qrels, read_run, write_qrels, write_run
    from evalkit.measures import aggregate, parse_measure, score
    from evalkit.report.verdict import Verdict, build_verdict
    from evalkit.run.evaluate import Evaluation, evaluate
    from evalkit.run.report_json import write_report
    from evalkit.stats.multi import anova, randomized_tukey_hsd, tukey_hsd
    from evalkit.stats.paired import compare, summarize_with_ci
    from evalkit.systems import SYSTEMS, BaseRetriever, FunctionRetriever, Hit, Retriever

__version__ = "0.1.0"

__all__ = [
    "SYSTEMS",
    "BaseRetriever",
    "Evaluation",
    "Fixture",
    "FunctionRetriever",
    "Hit",
    "Retriever",
    "Verdict",
    "aggregate",
    "anova",
    "build_verdict",
    "compare",
    "evaluate",
    "fixture_from_beir",
    "generate_fixture",
    "load_fixture",
    "parse_measure",
    "randomized_tukey_hsd",
    "read_beir",
    "read_qrels",
    "read_run",
    "score",
    "summarize_with_ci",
    "tukey_hsd",
    "validate_fixture",
    "write_qrels",
    "write_report",
    "write_run",
]

# public name -> the module that defines it
_MODULE_OF = {
    "Evaluation": "evalkit.run.evaluate",
    "evaluate": "evalkit.run.evaluate",
    "Fixture": "evalkit.fixtures",
    "generate_fixture": "evalkit.fixtures",
    "load_fixture": "evalkit.fixtures",
    "validate_fixture": "evalkit.fixtures",
    "fixture_from_beir": "evalkit.fixtures.beir",
    "read_beir": "evalkit.formats",
    "read_qrels": "evalkit.formats",
    "read_run": "evalkit.formats",
    "write_qrels": "evalkit.formats",
    "write_run": "evalkit.formats",
    "aggregate": "evalkit.measures",
    "parse_measure": "evalkit.measures",
    "score": "evalkit.measures",
    "write_report": "evalkit.run.report_json",
    "compare": "evalkit.stats.paired",
    "summarize_with_ci": "evalkit.stats.paired",
    "anova": "evalkit.stats.multi",
    "tukey_hsd": "evalkit.stats.multi",
    "randomized_tukey_hsd": "evalkit.stats.multi",
    "SYSTEMS": "evalkit.systems",
    "BaseRetriever": "evalkit.systems",
    "FunctionRetriever": "evalkit.systems",
    "Hit": "evalkit.systems",
    "Retriever": "evalkit.systems",
    "Verdict": "evalkit.report.verdict",
    "build_verdict": "evalkit.report.verdict",
}


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _MODULE_OF)


class _Package(types.ModuleType):
    """Keeps a public name bound to its value when a same-named submodule is imported.

    Importing ``evalkit.run.evaluate`` (the module) binds the package attribute ``evaluate``; as
    with an eager ``from evalkit.run.evaluate import evaluate``, ``evalkit.run.evaluate`` stays the
    function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, types.ModuleType)
            and _MODULE_OF.get(name) == value.__name__
            and hasattr(value, name)
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
