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
    from evalkit.fixtures import (
        Fixture as Fixture,
        generate_fixture as generate_fixture,
        load_fixture as load_fixture,
        validate_fixture as validate_fixture,
    )
    from evalkit.fixtures.beir import fixture_from_beir as fixture_from_beir
    from evalkit.formats import (
        read_beir as read_beir,
        read_qrels as read_qrels,
        read_run as read_run,
        write_qrels as write_qrels,
        write_run as write_run,
    )
    from evalkit.gates import (
        GateVerdict as GateVerdict,
        baseline_history as baseline_history,
        gate_verdict as gate_verdict,
    )
    from evalkit.measures import (
        aggregate as aggregate,
        parse_measure as parse_measure,
        score as score,
    )
    from evalkit.report import (
        Verdict as Verdict,
        build_verdict as build_verdict,
        plots as plot,  # noqa: F401 (a module; evalkit/_lazy.py)
    )
    from evalkit.run import (
        Evaluation as Evaluation,
        QueryExplanation as QueryExplanation,
        evaluate as evaluate,
        explain as explain,
        write_report as write_report,
    )
    from evalkit.stats import (
        abstention as abstention,
        anova as anova,
        compare as compare,
        randomized_tukey_hsd as randomized_tukey_hsd,
        summarize_with_ci as summarize_with_ci,
        tukey_hsd as tukey_hsd,
    )
    from evalkit.systems import (
        SYSTEMS as SYSTEMS,
        BaseRetriever as BaseRetriever,
        FunctionRetriever as FunctionRetriever,
        Hit as Hit,
        Retriever as Retriever,
    )

__version__ = "0.1.0"

# __all__ and each public name, from the block above (the one list of the public names)
__getattr__, _ = lazy_attributes(__name__, globals(), __file__)


def __dir__() -> list[str]:
    """The public API only (``__all__`` and ``__version__``): what ``dir(evalkit)`` and
    completion in JupyterLab show, not the helpers this module imports."""
    return sorted([*__getattr__("__all__"), "__version__"])


del TYPE_CHECKING, annotations, lazy_attributes  # not part of the API
