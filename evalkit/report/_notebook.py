"""Report notebooks: :func:`render_report`, the whole pipeline, and writing its result.

The pipeline of :func:`render_report` (nothing is written by it)::

    notebook + parameters --papermill--> executed notebook --scrub--> scrubbed notebook
        --nbconvert--> HTML (no code, no external resources) --leak scan--> RenderedReport

Its parts: the notebook's parameters (``_parameters``), the kernel and the
notebook's execution on it (``_kernel``), scrubbing and the HTML export
(``_export``).

Rules:

- **Order.** :func:`render_report` starts the kernel first, importing
  :data:`REPORT_KERNEL_PRELOAD` (``_kernel``) and making the
  :data:`REPORT_KERNEL_WARM_UP` calls (this module imports numpy and nbconvert only once it
  has started: 0.15-0.2 s sooner), and meanwhile checks the fixture
  and the systems, evaluates and computes the verdict section for the notebook
  (``evaluation_dir``, :mod:`evalkit.report.evaluation_files`); the notebook then runs on that
  kernel (papermill, every cell as usual). The nbconvert template and the leak-scan index are
  prepared once the first cell runs, while this process would otherwise wait, in a thread of
  low priority.
- **Leak scan.** With ``redact`` true, :func:`render_report` refuses with
  :class:`~evalkit.errors.LeakError` (naming object IDs only) when the HTML or the scrubbed
  notebook contains fixture text or a private value of a system definition
  (:mod:`evalkit.safety.privacy` rule). With ``redact`` false it refuses to run at all unless
  ``allow_unredacted=True``; the notebook then shows a "contains private text" banner.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import nbformat

from evalkit.errors import InputError, NotebookError
from evalkit.forking import usable_cores
from evalkit.report._kernel import (
    DEFAULT_TIMEOUT_S,
    REPORT_KERNEL_PRELOAD,
    REPORT_KERNEL_WARM_UP,
    InterpreterKernelManager,
    execute_notebook,
    start_kernel,
    stop_kernel,
)
from evalkit.report._nbformat import NBFORMAT
from evalkit.report._parameters import (
    DEFAULT_REPORT_NOTEBOOK,
    check_report_parameters,
    notebook_label,
    notebook_parameters,
    unknown_parameter_error,
)
from evalkit.report.handover import (
    VERDICT_PENDING,
    Helper,
    claim,
    clear_pending,
    figure_key,
    figure_pending,
    helper_available,
    result_pending,
    save_figure,
    save_result,
    save_warnings,
    start_helper,
    taken,
)
from evalkit.safety.artifacts import Artifact, artifact_label, check_output, write_artifacts
from evalkit.safety.inputs import find_input
from evalkit.safety.interrupts import deferred
from evalkit.safety.output import shown_path
from evalkit.safety.privacy import NO_OWN_TEXT, OwnText, PrivateText
from evalkit.safety.scratch import process_folder

if TYPE_CHECKING:
    from evalkit.fixtures import Fixture
    from evalkit.run import Evaluation

__all__ = [
    "DEFAULT_REPORT_NOTEBOOK",
    "EVALUATION_DIR_PARAMETER",
    "REPORT_HELPER_FIGURES",
    "REPORT_HELPER_STEPS",
    "RenderedReport",
    "check_report_output",
    "notebook_parameters",
    "render_report",
    "write_rendered_report",
]

EVALUATION_DIR_PARAMETER: Final = "evaluation_dir"
"""The report notebook's parameter for a saved evaluation (:mod:`evalkit.report.evaluation_files`):
:func:`render_report` evaluates in its own process while the kernel starts and passes the
folder; empty (the default, as in JupyterLab), the notebook evaluates by itself."""
REPORT_REPEATS: Final = 2
"""Runs per system of the report's evaluation (the notebook's setup cell: ``repeats=2``)."""


def _evaluate_for_notebook(fixture: Fixture, parameters: Mapping[str, Any]) -> Evaluation:
    """The evaluation the report notebook's setup cell would run, with its parameters."""
    from evalkit.measures.aliases import measure_list
    from evalkit.run import evaluate

    names = [s.strip() for s in str(parameters["systems"]).split(",") if s.strip()]
    measures = str(parameters.get("measures") or "")
    return evaluate(
        fixture,
        names or None,
        k=int(parameters["k"]),
        measures=measure_list(measures) if measures else None,
        repeats=REPORT_REPEATS,
        concurrency=int(parameters.get("concurrency", 1)),
        workers=_report_workers(),
    )


def _report_workers() -> int:
    """Processes for the report's evaluation (``evaluate(workers=...)``): this machine's cores
    but one, which the kernel needs while it imports, at most 4. On 2 cores that is 1: two
    workers beside the importing kernel measured slower than one (2.1-2.2 s against 2.0 s)."""
    return max(1, min(4, usable_cores() - 1))


VERDICT_PARAMETERS: Final = ("base_system", "n_resamples", "seed", "baseline", "gates")
"""The report notebook's parameters its verdict cell depends on (besides the evaluation)."""


@dataclass(frozen=True)
class _ReportParts:
    """What the command computes parts of the report notebook from (the evaluation, its
    report dict, the fixture's folder and the notebook's parameters) and the evaluation
    ``folder`` they go to (:mod:`evalkit.report.handover`)."""

    evaluation: Evaluation
    report: Mapping[str, Any]
    fixture_path: Path
    parameters: Mapping[str, Any]
    folder: Path


def _save_verdict_for_notebook(parts: _ReportParts) -> None:
    """Compute the notebook's verdict section (:func:`evalkit.report.verdict.gate_and_judge`, its
    settings from the parameters) into the evaluation folder, as the notebook's verdict cell
    would. A notebook without those parameters gets nothing; a failure leaves nothing behind,
    and the cell then computes the section itself and reports the problem as it always does."""
    from evalkit.gates import load_report
    from evalkit.report.evaluation_files import save_verdict
    from evalkit.report.verdict import gate_and_judge

    if not set(VERDICT_PARAMETERS) <= set(parts.parameters):
        return
    base, n_resamples, seed, baseline, gates = (parts.parameters[n] for n in VERDICT_PARAMETERS)
    try:
        given = load_report(find_input(str(baseline))) if baseline else None
        gated = gate_and_judge(
            parts.evaluation,
            parts.report,
            parts.fixture_path,
            baseline=given,
            baseline_path=str(baseline),
            gates_path=str(gates),
            base=str(base),
            n_resamples=int(n_resamples),
            seed=int(seed),
        )
    except Exception:  # an optimization only: the notebook then computes it itself
        return
    settings = {
        "base": base,
        "n_resamples": n_resamples,
        "seed": seed,
        "baseline": baseline,
        "gates": gates,
    }
    save_verdict(gated, parts.folder, settings)


REPORT_HELPER_FIGURES: Final = ("paired_difference_figure", "latency_figure")
"""The :mod:`evalkit.report.plots` functions whose figures ``evalkit report``'s helper draws for the
report notebook (its difference and latency cells), with the arguments those cells pass, in
this order: the later and larger figure first. The kernel usually reaches the latency cell
while the helper still draws the differences, claims the latency figure and draws it itself
(0.2 s) instead of waiting; the other order left the difference cell waiting. Interleaved
runs of ``evalkit report``, 10 each: median 7.4 s against 7.8 s."""
REPORT_HELPER_STEPS: Final = (
    "ablation_table",
    *REPORT_HELPER_FIGURES,
    "all_pairs_table",
    "run_target_probes",
)
"""What ``evalkit report``'s helper makes for the notebook after its verdict section, in this
order (the order of the cells that show them, but for the figures: see
:data:`REPORT_HELPER_FIGURES`): the two ablation tables
(:mod:`evalkit.report.tables`, before the figures: their cells come first), the figures of
:data:`REPORT_HELPER_FIGURES`, the all-pairs table and the probe section
(:func:`evalkit.probes.run_target_probes`), each for the very call its cell makes
(:meth:`~evalkit.report.handover.ReportHandover.compute`). The helper computes them while the
kernel computes the first screen's change against the baseline."""

_Call = tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]]
"""A call the helper makes for the notebook: its :func:`~evalkit.report.handover.figure_key`,
the function and its arguments."""


def _table_calls(evaluation: Evaluation, parameters: Mapping[str, Any]) -> list[_Call]:
    """The ablation and all-pairs cells' calls (:data:`REPORT_HELPER_STEPS`), keyed;
    none when the parameters they take are missing (a notebook of the user's own)."""
    from evalkit.report import tables

    if not {"n_resamples", "seed"} <= set(parameters):
        return []
    systems, measures = list(evaluation.systems), list(evaluation.measures)
    common = {"systems": systems, "measures": measures}
    common |= {"n_resamples": parameters["n_resamples"], "seed": parameters["seed"]}
    calls: list[tuple[Callable[..., Any], dict[str, Any]]] = [
        (tables.ablation_table, common),
        (tables.ablation_table, {**common, "by": ["language"]}),
    ]
    if len(systems) > 2:  # the all-pairs cell's condition
        calls.append((tables.all_pairs_table, common))
    keyed = [(figure_key(f, (evaluation.per_query,), kw), f, kw) for f, kw in calls]
    return [(key, f, (evaluation.per_query,), kw) for key, f, kw in keyed if key is not None]


def _probe_arguments(parameters: Mapping[str, Any], workdir: Path) -> tuple[str, str] | None:
    """The probe cell's arguments (``probe_target`` and the ``probes`` folder as the cell finds
    it from ``workdir``), or None without probes. Imports nothing: it decides, before the
    kernel starts, whether the helper runs the probes (importing :mod:`evalkit.probes` loads
    pandas, 0.5-0.7 s, which would delay the kernel's start)."""
    target, probes = parameters.get("probe_target"), parameters.get("probes")
    if not probes or not isinstance(target, str):
        return None
    try:
        return target, str(find_input(str(probes), base=workdir))
    except InputError:  # the cell says so itself
        return None


def _probe_call(arguments: tuple[str, str] | None) -> list[_Call]:
    """The probe cell's call (:func:`evalkit.probes.run_target_probes` of
    :func:`_probe_arguments`), keyed; none without probes."""
    if arguments is None:
        return []
    from evalkit.probes import run_target_probes

    key = figure_key(run_target_probes, arguments, {})
    return [(key, run_target_probes, arguments, {})] if key is not None else []


def _start_report_helper(
    parts: _ReportParts, workdir: Path, probes: tuple[str, str] | None
) -> Helper | None:
    """Fork the helper (:mod:`evalkit.report.handover`) that computes the notebook's verdict
    section and the steps of :data:`REPORT_HELPER_STEPS` (``probes``: :func:`_probe_arguments`) into
    the evaluation folder while the kernel runs the first cells, in the notebook's working
    directory ``workdir`` (a baseline path is relative to it); None without one (no ``fork``),
    and the verdict is then computed here, before the notebook starts."""
    helper = None
    if helper_available():  # else the calls are not keyed (a hash of the per-query frame)
        # keyed here: pending before the fork
        calls = [*_table_calls(parts.evaluation, parts.parameters), *_probe_call(probes)]

        def work() -> None:  # in the helper: its own process, so changing directory is safe
            os.chdir(workdir)
            _draw_report_parts(parts, calls)

        pending = [VERDICT_PENDING, *(result_pending(key) for key, *_ in calls)]
        pending += [figure_pending(name) for name in REPORT_HELPER_FIGURES]
        helper = start_helper(work, parts.folder, pending)
    if helper is None:
        with contextlib.chdir(workdir):
            _save_verdict_for_notebook(parts)
    return helper


def _draw_report_parts(parts: _ReportParts, calls: Sequence[_Call]) -> None:
    """In the helper: the verdict section, then the steps of :data:`REPORT_HELPER_STEPS`: the
    figures of :data:`REPORT_HELPER_FIGURES` and the keyed ``calls`` (:func:`_table_calls`,
    :func:`_probe_call`), as the notebook's cells make them; each pending name is cleared once
    done (or failed)."""
    evaluation, parameters, folder = parts.evaluation, parts.parameters, parts.folder
    try:
        _save_verdict_for_notebook(parts)
    finally:
        clear_pending(folder, [VERDICT_PENDING])
    from evalkit.report import plots

    systems = list(evaluation.systems)
    figure_calls: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
        "latency_figure": ((evaluation.latency,), {"systems": systems}),
        "paired_difference_figure": (
            (evaluation.per_query,),
            {
                "base": parameters.get("base_system"),
                "systems": systems,
                "measures": plots.difference_measures(list(evaluation.measures)),
            },
        ),
    }
    made: list[tuple[str, Callable[[Path, str, Any], None], _Call]] = [
        (result_pending(call[0]), save_result, call) for call in calls
    ]
    for name, (args, kwargs) in figure_calls.items():
        function = getattr(plots, name)
        key = figure_key(function, args, kwargs)
        if key is None:  # a call it cannot key: the cell draws the figure itself
            clear_pending(folder, [figure_pending(name)])
        else:
            made.append((figure_pending(name), save_figure, (key, function, args, kwargs)))
    for step in REPORT_HELPER_STEPS:
        for pending, save, call in made:
            if call[1].__name__ == step:
                make = functools.partial(_save_made, save, folder, call)
                _make_for_notebook(folder, pending, make)


def _save_made(save: Callable[[Path, str, Any], None], folder: Path, call: _Call) -> None:
    """``save`` (:func:`~evalkit.report.handover.save_figure` or
    :func:`~evalkit.report.handover.save_result`) what ``call`` makes into ``folder``, under
    its key, with the warnings it issued (:func:`~evalkit.report.handover.save_warnings`)."""
    key, function, args, kwargs = call
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("default")  # each once; the kernel's filters judge them again
        made = function(*args, **kwargs)
    save_warnings(folder, key, warned)
    save(folder, key, made)


def _make_for_notebook(folder: Path, name: str, make: Callable[[], None]) -> None:
    """In the helper: ``make()`` the work pending as ``name`` (it writes its result into
    ``folder``), unless the notebook claimed it first; the name is cleared either way."""
    if not claim(folder, name):  # the notebook got there first
        return
    try:
        make()
    except Exception:  # an optimization only: the notebook then makes it itself
        pass
    finally:
        clear_pending(folder, [name])


def _warm_up_beside(helper: Helper | None, private: Sequence[PrivateText]) -> None:
    """In a thread of its own while the notebook runs: warm the export up (nbconvert's
    templates, the leak scan's index of ``private``), then wait for the report's helper (if
    any) to exit. On Linux the thread first lowers its own priority (nice 10, this thread
    only): it runs on whatever core the kernel and the helper leave idle, not in their way.
    It used to wait for the helper before it began, which put the whole warm-up after the
    notebook whenever the helper ran to the end (the committed fixture's report: 0.5 s of
    index and templates after 3 s of helper; at 10,000 chunks 1.2 s)."""
    from evalkit.report._export import warm_up_export

    if sys.platform == "linux":  # there a thread's ID names that thread alone
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _WARM_UP_NICENESS)
    try:
        warm_up_export(private)
    finally:
        if helper is not None:
            helper.wait()


_WARM_UP_NICENESS: Final = 10
"""How much :func:`_warm_up_beside` lowers its thread's priority: at 10 the scheduler gives
it about a tenth of a core that a process of normal priority wants as well."""


# --- the whole pipeline -------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedReport:
    """An executed, scrubbed report: ``html`` and ``notebook`` (``.ipynb`` JSON text);
    ``private`` is what :func:`write_rendered_report` scans both for again before writing."""

    html: str
    notebook: str
    redacted: bool
    parameters: dict[str, Any]
    private: tuple[PrivateText, ...] = field(default=(), repr=False)
    handed_over: tuple[str, ...] = ()
    """What the notebook took from the command's helper process instead of computing it, what
    it drew itself because the helper had not begun it, and what it made because the helper had
    no such work (:func:`evalkit.report.handover.taken`: ``verdict``, ``figure-<plotting
    function>``, ``figure-<plotting function>:notebook``, ``result-<function>:unplanned``)."""
    own: OwnText = field(default=NO_OWN_TEXT, repr=False)
    """Text the scans read as the report's own, not the fixture's (:func:`report_own_text`)."""


def render_report(
    parameters: Mapping[str, Any],
    *,
    notebook: str | os.PathLike[str] = DEFAULT_REPORT_NOTEBOOK,
    cwd: str | os.PathLike[str] | None = None,
    allow_unredacted: bool = False,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    output: str | os.PathLike[str] | None = None,
) -> RenderedReport:
    """Execute, scrub and export the report notebook; scan it for leaks. Writes nothing.

    ``parameters`` override the notebook's defaults (unknown names are refused). The notebook
    must declare ``fixture`` (a fixture directory), ``systems`` (comma-separated names, empty
    for all reference systems) and ``redact`` (bool). Raises :class:`InputError` when
    ``redact`` is false and ``allow_unredacted`` is not set, :class:`NotebookError` when the
    notebook fails or the HTML would load external resources, and
    :class:`~evalkit.errors.LeakError` (object IDs only) when a redacted report contains
    fixture text.
    """
    from evalkit.safety.privacy import private_texts

    defaults = notebook_parameters(notebook)
    unknown = sorted(set(parameters) - set(defaults))
    if unknown:
        raise unknown_parameter_error(unknown[0], sorted(defaults))
    for required in ("fixture", "systems", "redact"):
        if required not in defaults:
            raise InputError(
                f"notebook {notebook_label(notebook)!r} declares no {required!r} parameter; a "
                "report notebook needs fixture, systems and redact"
            )
    merged = {**defaults, **parameters}
    redact = merged["redact"]
    if not isinstance(redact, bool):
        raise InputError(f"notebook parameter 'redact' must be a bool, found {redact!r}")
    if not redact and not allow_unredacted:
        raise InputError(
            "redact=false puts query and chunk text into the report; refusing. Pass "
            "allow_unredacted=True (CLI: --allow-unredacted) to write a private, unscanned "
            "report that must not be published"
        )
    workdir = Path(cwd) if cwd is not None else Path.cwd()
    fixture_path = find_input(str(merged["fixture"]), base=workdir)
    if parameters.get(EVALUATION_DIR_PARAMETER):
        raise InputError(
            f"notebook parameter {EVALUATION_DIR_PARAMETER!r} is set by evalkit report itself "
            "(it evaluates while the kernel starts); leave it out"
        )
    # The kernel starts (and imports what the notebook needs) while this process loads the
    # fixture and, when the notebook takes a saved evaluation, evaluates; see
    # REPORT_KERNEL_PRELOAD and evalkit.report.evaluation_files.
    preload: tuple[str, ...] = REPORT_KERNEL_PRELOAD
    kernel_calls = REPORT_KERNEL_WARM_UP
    if EVALUATION_DIR_PARAMETER not in defaults:
        preload = (*preload, "evalkit.systems.reference")
    else:  # the kernel loads the fixture while it would wait for the evaluation
        fixture_call = ("evalkit.report.evaluation_files", "preload_fixture")
        kernel_calls = (*kernel_calls, (*fixture_call, (os.fspath(fixture_path),)))
    # where the command forks its helper, the helper runs the probes; else the kernel builds
    # the probe target's code index while it would wait for the evaluation
    helped = helper_available() and EVALUATION_DIR_PARAMETER in defaults
    probes = _probe_arguments(merged, workdir) if helped else None
    if merged.get("probes") and isinstance(merged.get("probe_target"), str) and probes is None:
        target = merged["probe_target"]
        kernel_calls = (*kernel_calls, ("evalkit.probes.targets", "warm_up_target", (target,)))
    kernel: InterpreterKernelManager | None = None
    try:
        with deferred():  # a signal waits until the kernel is known to the finally below
            kernel = start_kernel(workdir, preload, kernel_calls)
        # in this process's temporary folder, which the next run sweeps if this one is killed
        with tempfile.TemporaryDirectory(prefix="report-", dir=process_folder()) as private_dir:
            try:
                # imported once the kernel is starting: pandas and the fixture models take a while
                # (as are numpy and nbconvert, by the imports below and in the functions called)
                from evalkit.fixtures import load_fixture
                from evalkit.report._export import (
                    export_html,
                    external_references,
                    machine_paths,
                    scrub_notebook,
                )
                from evalkit.report.evaluation_files import save_evaluation

                fixture = load_fixture(fixture_path)
                # a run:PATH system is relative to the notebook's working directory
                with contextlib.chdir(workdir):
                    definitions = _system_definitions(str(merged["systems"]))
                parameters = check_report_parameters(
                    merged,
                    parameters,
                    list(definitions),
                    query_ids=fixture.queries_by_id,
                    workdir=workdir,
                )
                merged = {**merged, **parameters}
                private = tuple(private_texts(fixture, definitions))
                helper: Helper | None = None
                saved: Path | None = None
                if EVALUATION_DIR_PARAMETER in defaults:
                    with contextlib.chdir(workdir):
                        evaluation = _evaluate_for_notebook(fixture, merged)
                    report = evaluation.to_report()
                    saved = save_evaluation(
                        evaluation, Path(private_dir) / "evaluation", report=report
                    )
                    parts = _ReportParts(evaluation, report, fixture_path, merged, saved)
                    helper = _start_report_helper(parts, workdir, probes)
                    parameters = {**parameters, EVALUATION_DIR_PARAMETER: os.fspath(saved)}
            except BaseException:
                stop_kernel(kernel)
                raise
            # nbconvert loads its templates and the leak scan indexes the private texts while the
            # notebook runs: from the first cell on (before, the warm-up would compete for this
            # process, one interpreter lock, with papermill's start, which the kernel waits on),
            # at a low priority beside the kernel and the helper.
            warm_up = threading.Thread(target=_warm_up_beside, args=(helper, private), daemon=True)
            try:
                executed = execute_notebook(
                    notebook,
                    parameters,
                    cwd=workdir,
                    timeout_s=timeout_s,
                    kernel=kernel,
                    on_first_cell=warm_up.start,
                )
            finally:
                if warm_up.ident is None:  # no cell ran: the helper is waited for all the same
                    warm_up.start()
                warm_up.join()
            handed_over = taken(saved) if saved is not None else ()
            extra = [
                Path(private_dir),
                workdir,
                fixture_path.resolve(),
                Path(notebook).resolve().parent,
            ]
            scrubbed = scrub_notebook(executed, paths=machine_paths(extra))
        title = f"evalkit report: {fixture.meta.id}"
        html = export_html(scrubbed, title=title)
        notebook_text = str(NBFORMAT.writes(scrubbed))
        external = external_references(html)
        if external:
            raise NotebookError(
                f"the exported HTML would load {len(external)} external resource(s); a report must "
                "open offline: remove links and remote images from the notebook's outputs"
            )
        own = NO_OWN_TEXT
        if redact:
            # named by kind and, when given, the ``output`` they are rendered for
            notebook_path = Path(output).with_suffix(".ipynb") if output is not None else None
            named = {
                artifact_label("html", output): html,
                artifact_label("notebook", notebook_path): notebook_text,
            }
            own = _scanned_with_own_text(named, private, scrubbed, title=title)
        return RenderedReport(
            html=html,
            notebook=notebook_text,
            redacted=redact,
            parameters=dict(merged),
            private=private,
            handed_over=handed_over,
            own=own,
        )
    finally:
        if kernel is not None:  # idempotent: the notebook's run stopped it already
            stop_kernel(kernel)


def _scanned_with_own_text(
    named: Mapping[str, str],
    private: Sequence[PrivateText],
    scrubbed: nbformat.NotebookNode,
    *,
    title: str,
) -> OwnText:
    """Leak-scan the rendered ``named`` texts with the notebook's own text
    (:func:`report_own_text`); the own text they passed with. The cells and skeleton come
    first; the page export of the bare notebook (about 0.2 s) only when they do not suffice."""
    from evalkit.errors import LeakError
    from evalkit.report._export import report_own_text
    from evalkit.safety.privacy import assert_no_leaks

    own = report_own_text(scrubbed, title=title, pages=False)
    try:
        assert_no_leaks(named, private, own=own)
    except LeakError:
        own = report_own_text(scrubbed, title=title)
        assert_no_leaks(named, private, own=own)
    return own


def check_report_output(
    output: str | os.PathLike[str], *, workspace: str | os.PathLike[str] | None = None
) -> tuple[Path, Path]:
    """Check ``output`` (must end in ``.html``/``.htm``) and the ``.ipynb`` beside it with THE
    output-path check (:func:`evalkit.safety.artifacts.check_output`, creates nothing); both
    absolute paths. The CLI calls it before executing the notebook."""
    html_path = Path(output)
    if html_path.suffix.lower() not in (".html", ".htm"):
        raise InputError(
            f"report output {shown_path(output)} should end in .html; the executed notebook is "
            "written beside it with the .ipynb suffix"
        )
    return (
        check_output(html_path, workspace=workspace),
        check_output(html_path.with_suffix(".ipynb"), workspace=workspace),
    )


def write_rendered_report(
    report: RenderedReport,
    output: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.html`` to ``output`` (must end in ``.html``) and the notebook beside it
    (same name, ``.ipynb``) through :func:`evalkit.safety.artifacts.write_artifacts`: both paths are
    checked and both texts leak-scanned against ``report.private`` (unless the report is
    unredacted by permission) before either is written; (html, ipynb) paths."""
    check_report_output(output, workspace=workspace)
    html_path = Path(output)
    written = write_artifacts(
        [
            Artifact(html_path, report.html, "html"),
            Artifact(html_path.with_suffix(".ipynb"), report.notebook, "notebook"),
        ],
        private=report.private,
        workspace=workspace,
        allow_private_text=not report.redacted,
        own=report.own,
    )
    return written[0], written[1]


def _system_definitions(systems: str) -> dict[str, dict[str, Any]]:
    """``definition()`` of each named system (built, not indexed), for the leak scan."""
    from evalkit.systems.reference import REFERENCE_SYSTEMS, resolve_system

    names = [s.strip() for s in systems.split(",") if s.strip()] or list(REFERENCE_SYSTEMS)
    definitions: dict[str, dict[str, Any]] = {}
    for name in names:
        system = resolve_system(name)
        try:
            definitions[str(system.name)] = system.definition()
        finally:
            close = getattr(system, "close", None)
            if callable(close):
                close()
    return definitions
