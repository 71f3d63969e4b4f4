"""Helpers shared by several command groups: the evaluation options and the evaluation they ask
for (``run``, ``baseline``, ``gate``), the ``--junit``/``--markdown`` outputs (``gate``,
``probes``), the early ``--output`` check, and how paths and errors are printed.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

    from evalkit.run import Evaluation
    from evalkit.safety.privacy import PrivateText

__all__ = [
    "DEFAULT_K",
    "DEFAULT_REPEATS",
    "Handler",
    "add_ci_options",
    "add_evaluation_options",
    "check_ci_outputs",
    "checked_output",
    "evaluate_fixture",
    "freeze_start_up",
    "gc_paused",
    "print_error",
    "quoted",
    "shown",
    "split_systems",
    "write_ci_outputs",
]

Handler = Callable[["argparse.Namespace"], int]


#: Whether :func:`gc_paused` freezes what the block made (set by :func:`freeze_start_up`).
_FREEZE_START_UP = [False]


def freeze_start_up() -> None:
    """Let :func:`gc_paused` move everything alive at its end to the collector's permanent
    generation (``gc.freeze``): for the console script, whose process ends after one command
    (:func:`evalkit.cli.main_then_exit`). In-process callers (tests) keep the default."""
    _FREEZE_START_UP[0] = True


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused inside the block (as it was after it): for a
    command's start-up, importing its modules and loading its inputs (``validate``, ``scan``),
    or a short command's whole run (``trec-eval``). Almost every object made there lives on
    (modules, classes, a fixture's models), so each collection would traverse the growing
    heap and free close to nothing: 60-80 collections and 10-20 ms of a ``validate`` of the
    committed fixture. In the console script (:func:`freeze_start_up`) those objects are then
    frozen, so later collections skip them too; the few reference cycles that became garbage
    in the block (a few hundred objects there) stay until the process exits. Elsewhere the
    next collection frees them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _FREEZE_START_UP[0]:
            gc.freeze()
        if enabled:
            gc.enable()


def print_error(error: BaseException) -> None:
    print(f"evalkit: error: {error}", file=sys.stderr)


def shown(path: object) -> str:
    """A path for a printed line: as given, or a note when it must not be shown."""
    from evalkit.safety.output import unshown_reason

    text = str(path)
    reason = unshown_reason(text)
    return text if reason is None else f"(path not shown: {reason})"


def quoted(path: object) -> str:
    """A path for an error message: quoted, or a note when it must not be shown."""
    from evalkit.safety.output import shown_path

    return shown_path(str(path))


def checked_output(cli_value: str | None) -> str | None:
    """``--output`` or ``$EVALKIT_OUTPUT`` (None: write nothing), refused early if unsafe."""
    from evalkit.safety.artifacts import check_output
    from evalkit.safety.output import output_path_from_env

    output = output_path_from_env(cli_value)
    if output is not None:
        check_output(output)  # refuse an unsafe path before any work; creates nothing
    return output


# --- evaluation options ---------------------------------------------------------------------


DEFAULT_K: Final = 10
DEFAULT_REPEATS: Final = 2


def add_evaluation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("fixture", help="fixture directory")
    p.add_argument(
        "--systems",
        default=None,
        help="comma-separated system names, package.module:factory specs, run:PATH (a TREC or "
        "JSONL run file; run:PATH?ids=documents for a run of document IDs, each scored by its "
        "best chunk) or http:NAME (a service at $EVALKIT_HTTP_<NAME>_URL) (default: all "
        "five reference systems)",
    )
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"ranking cutoff (default {DEFAULT_K})")
    p.add_argument(
        "--measures",
        default=None,
        help="comma-separated ranking measures, ir_measures names (AP, P@5, nDCG@10) or "
        "trec_eval names (map, P.5, ndcg_cut.10, recip_rank, bpref), cutoffs at most --k "
        "(default R@5,R@10,RR@10,nDCG(dcg='exp-log2')@10); the span and no-answer measures "
        "are always added",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"determinism repeats (default {DEFAULT_REPEATS})",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="most search calls in flight at once for systems that allow it, e.g. http:NAME "
        "(default 1); latency is still measured per call and results stay in query order",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="run the systems and repeats in up to this many processes of this machine "
        "(default 1); the same results, but latency is measured beside the other workers",
    )


def split_systems(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [part.strip() for part in value.split(",") if part.strip()]
    return names or None


def evaluate_fixture(args: argparse.Namespace, *, progress: bool = False) -> Evaluation:
    """Load ``args.fixture`` and evaluate it with ``args.systems``, ``args.k``, ``args.repeats``."""
    from evalkit.fixtures import load_fixture
    from evalkit.measures.aliases import measure_list
    from evalkit.run import evaluate

    measures = measure_list(args.measures) if getattr(args, "measures", None) else None
    fixture = load_fixture(args.fixture)
    systems = split_systems(args.systems)
    from evalkit.systems.reference import no_aliases_notice

    notice = no_aliases_notice(fixture.aliases, systems)
    if notice:
        print(notice, file=sys.stderr)
    scheduler = getattr(args, "scheduler", None)
    with contextlib.ExitStack() as stack:
        client = None
        if scheduler is not None:
            from evalkit.measures.cluster import connect

            client = stack.enter_context(connect(scheduler))
        return evaluate(
            fixture,
            systems,
            k=args.k,
            repeats=args.repeats,
            measures=measures,
            progress=progress,
            concurrency=args.concurrency,
            client=client,
            workers=args.workers,
        )


# --- CI outputs (--junit, --markdown) -------------------------------------------------------


def add_ci_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--junit",
        default=None,
        metavar="PATH",
        help=f"workspace-relative path of a JUnit XML report (one test case per {what})",
    )
    p.add_argument(
        "--markdown",
        default=None,
        metavar="PATH",
        help="workspace-relative path of an ID-only Markdown summary (at most 60 lines), e.g. "
        "for a pull-request comment or $GITHUB_STEP_SUMMARY",
    )


def check_ci_outputs(args: argparse.Namespace, output: str | None) -> None:
    """Refuse unsafe --junit/--markdown paths, and any two of the JSON ``output`` (--output
    or $EVALKIT_OUTPUT), --junit and --markdown on one file, before any work (creates
    nothing)."""
    from evalkit.safety.artifacts import check_distinct, check_output

    for path in (args.junit, args.markdown):
        if path is not None:
            check_output(path)
    check_distinct([("--output", output), ("--junit", args.junit), ("--markdown", args.markdown)])


def write_ci_outputs(
    args: argparse.Namespace,
    junit: Callable[[], str],
    markdown: Callable[[], str],
    private: Iterable[PrivateText],
) -> None:
    """Write --junit and --markdown together through the artifact writer (leak-scanned)."""
    from evalkit.safety.artifacts import Artifact, write_artifacts

    artifacts = [
        Artifact(path, make(), "text")
        for path, make in ((args.junit, junit), (args.markdown, markdown))
        if path is not None
    ]
    if artifacts:
        write_artifacts(artifacts, private=private)
        for artifact in artifacts:
            print(
                f"{'junit' if artifact.path == args.junit else 'markdown'}: {shown(artifact.path)}"
            )
