"""evalkit: offline, deterministic, privacy-safe evaluation of search and RAG retrieval.

The public API. Each package names its own public entry points in its ``__all__``
(``evalkit.stats``, ``evalkit.systems``, ``evalkit.probes``, ...); its private modules
(``_name.py``) may move.

The names are resolved on first use (PEP 562): ``import evalkit.measures`` or
``from evalkit.formats import read_run`` does not import pandas-heavy modules it does not need
(systems, statistics, fixtures, reports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture, generate_fixture, load_fixture, validate_fixture
    from evalkit.fixtures.beir import fixture_from_beir
    from evalkit.formats import read_beir, read_qrels, read_run, write_qrels, write_run
    from evalkit.gates import GateVerdict, baseline_history, gate_verdict
    from evalkit.measures import aggregate, parse_measure, score
    from evalkit.report import Verdict, build_verdict
    from evalkit.report import plots as plot
    from evalkit.run import Evaluation, QueryExplanation, evaluate, explain, write_report
    from evalkit.stats import (
        abstention,
        anova,
        compare,
        randomized_tukey_hsd,
        summarize_with_ci,
        tukey_hsd,
    )
    from evalkit.systems import SYSTEMS, BaseRetriever, FunctionRetriever, Hit, Retriever

__version__ = "0.1.0"

__all__ = [
    "SYSTEMS",
    "BaseRetriever",
    "Evaluation",
    "Fixture",
    "FunctionRetriever",
    "GateVerdict",
    "Hit",
    "QueryExplanation",
    "Retriever",
    "Verdict",
    "abstention",
    "aggregate",
    "anova",
    "baseline_history",
    "build_verdict",
    "compare",
    "evaluate",
    "explain",
    "fixture_from_beir",
    "gate_verdict",
    "generate_fixture",
    "load_fixture",
    "parse_measure",
    "plot",
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

# public name -> the package (or module) it is taken from
_MODULE_OF = {
    "Evaluation": "evalkit.run",
    "evaluate": "evalkit.run",
    "explain": "evalkit.run",
    "QueryExplanation": "evalkit.run",
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
    "write_report": "evalkit.run",
    "abstention": "evalkit.stats",
    "compare": "evalkit.stats",
    "summarize_with_ci": "evalkit.stats",
    "anova": "evalkit.stats",
    "tukey_hsd": "evalkit.stats",
    "randomized_tukey_hsd": "evalkit.stats",
    "SYSTEMS": "evalkit.systems",
    "BaseRetriever": "evalkit.systems",
    "FunctionRetriever": "evalkit.systems",
    "Hit": "evalkit.systems",
    "Retriever": "evalkit.systems",
    "GateVerdict": "evalkit.gates",
    "gate_verdict": "evalkit.gates",
    "baseline_history": "evalkit.gates",
    "Verdict": "evalkit.report",
    "build_verdict": "evalkit.report",
}


# public name -> the module it is (``evalkit.plot``: the report's figures, matplotlib)
_MODULES = {"plot": "evalkit.report.plots"}

__getattr__, _ = lazy_attributes(__name__, globals(), _MODULE_OF, _MODULES)


def __dir__() -> list[str]:
    """The public API only (``__all__`` and ``__version__``): what ``dir(evalkit)`` and
    completion in JupyterLab show, not the helpers this module imports."""
    return sorted([*__all__, "__version__"])


del TYPE_CHECKING, annotations, lazy_attributes  # not part of the API
