"""evalkit: offline, deterministic, privacy-safe evaluation of search and RAG retrieval.

The public API. Everything else is reachable through its module (``evalkit.stats``,
``evalkit.systems``, ``evalkit.probes``, ...) but not promised to stay put.
"""

from evalkit.evaluate import Evaluation, evaluate
from evalkit.fixtures import Fixture, generate_fixture, load_fixture, validate_fixture
from evalkit.fixtures.beir import fixture_from_beir
from evalkit.formats import read_beir, read_qrels, read_run, write_qrels, write_run
from evalkit.measures import aggregate, parse_measure, score
from evalkit.report import write_report
from evalkit.stats import compare, summarize_with_ci
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
    "aggregate",
    "compare",
    "evaluate",
    "fixture_from_beir",
    "generate_fixture",
    "load_fixture",
    "parse_measure",
    "read_beir",
    "read_qrels",
    "read_run",
    "score",
    "summarize_with_ci",
    "validate_fixture",
    "write_qrels",
    "write_report",
    "write_run",
]
