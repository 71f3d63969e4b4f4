"""The registry of named systems, pre-filled with the five offline reference ablations.

``SYSTEMS.get(name)`` returns a factory; every call builds a fresh, unindexed system, so repeated
evaluations never share state. Register your own with ``SYSTEMS.register("name", factory)``, or
name it on the command line as ``package.module:factory``.

Reference settings (issue 14; none was chosen on ``synthetic-bilingual-v1``, which is held out):

- ``alias-vector`` uses the fixture's ``aliases.yaml`` (no table: it returns no results).
- ``hybrid`` is reciprocal rank fusion of ``lexical`` and ``alias-vector`` with the paper's
  settings (Cormack et al. 2009): equal weights, ``rrf_k`` 60, each component's top 50. With no
  table, the alias component returns nothing and ``hybrid`` ranks as ``lexical`` does.
- ``hybrid-rerank`` reranks that hybrid's top 30 with the defaults of ``HeuristicReranker``,
  fitted on the development fixture and generated fixtures (see ``evalkit.systems.rerank``); its
  opt-in abstention rules 3 and 4 stay off (they did not generalize to held-out data).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from evalkit.registry import Registry
from evalkit.systems.lexical import LexicalRetriever
from evalkit.systems.protocol import Retriever, load_factory

if TYPE_CHECKING:
    from evalkit.systems.fusion import HybridRetriever

# The other systems' modules are imported by their factories: a run of lexical alone does not
# load the vector spaces (SciPy's sparse matrices) or the reranker's features.

__all__ = ["ALIAS_SYSTEMS", "REFERENCE_SYSTEMS", "SYSTEMS", "no_aliases_notice", "resolve_system"]

SystemFactory = Callable[[], Retriever]

SYSTEMS: Registry[SystemFactory] = Registry("system", ids=True)


def _lexical() -> Retriever:
    return LexicalRetriever(name="lexical")


def _token_hash() -> Retriever:
    from evalkit.systems.vectors import TokenHashEmbedder, VectorRetriever

    return VectorRetriever(TokenHashEmbedder(), name="token-hash")


def _alias_vector() -> Retriever:
    from evalkit.systems.vectors import AliasEmbedder, VectorRetriever

    return VectorRetriever(AliasEmbedder(), name="alias-vector")


_HYBRID_WEIGHTS = (1.0, 1.0)  # lexical, alias-vector
_HYBRID_RRF_K = 60
_HYBRID_DEPTH = 50
_RERANK_DEPTH = 30


def _hybrid_stage(name: str = "hybrid") -> HybridRetriever:
    from evalkit.systems.fusion import HybridRetriever
    from evalkit.systems.vectors import AliasEmbedder, VectorRetriever

    return HybridRetriever(
        [LexicalRetriever(name="lexical"), VectorRetriever(AliasEmbedder(), name="alias-vector")],
        name=name,
        weights=_HYBRID_WEIGHTS,
        rrf_k=_HYBRID_RRF_K,
        depth=_HYBRID_DEPTH,
    )


def _hybrid() -> Retriever:
    return _hybrid_stage()


def _hybrid_rerank() -> Retriever:
    from evalkit.systems.rerank import HeuristicReranker
    from evalkit.systems.vectors import AliasEmbedder

    return HeuristicReranker(
        _hybrid_stage(), AliasEmbedder(), name="hybrid-rerank", depth=_RERANK_DEPTH
    )


SYSTEMS.register("lexical", _lexical)
SYSTEMS.register("token-hash", _token_hash)
SYSTEMS.register("alias-vector", _alias_vector)
SYSTEMS.register("hybrid", _hybrid)
SYSTEMS.register("hybrid-rerank", _hybrid_rerank)

REFERENCE_SYSTEMS: tuple[str, ...] = tuple(SYSTEMS.names())
#: The reference systems that use the fixture's ``aliases.yaml``.
ALIAS_SYSTEMS: frozenset[str] = frozenset({"alias-vector", "hybrid", "hybrid-rerank"})


def no_aliases_notice(aliases: object, systems: Sequence[str] | None) -> str | None:
    """The one-line notice for a run of alias systems on a fixture without ``aliases.yaml``.

    ``systems`` are the names to run (``None``: all reference systems); ``None`` is returned when
    the fixture has a table or no alias system runs.
    """
    if aliases is not None or not ALIAS_SYSTEMS.intersection(systems or REFERENCE_SYSTEMS):
        return None
    return (
        "notice: the fixture has no aliases.yaml, so alias-vector returns no results and hybrid "
        "and hybrid-rerank rank with their lexical components alone"
    )


def resolve_system(spec: str | Retriever, *, where: str = "system spec") -> Retriever:
    """A fresh system from a registered name, a ``run:PATH`` or ``http:NAME`` spec (see
    :mod:`evalkit.systems.external`), a ``package.module:factory`` spec, or an instance.

    ``where`` (e.g. ``system #2``) names the spec in errors, which never quote an unsafe spec.
    """
    if not isinstance(spec, str):
        return spec
    if ":" in spec and spec not in SYSTEMS:
        # imported here: run: and http: systems bring httpx, which named systems never need
        from evalkit.systems.external import external_system, is_external_spec

        if is_external_spec(spec):
            return external_system(spec)
        return load_factory(spec, where=where)
    return SYSTEMS.get(spec)()
