"""What the report's kernel and the command line load: slow imports stay out of their way.

(Module sets, not timings: the start-up times are ``benchmarks/bench_startup.py``'s.)

``scipy.stats`` takes over a second to import and the report needs none of it (its intervals
and tests are numpy resampling); the command line builds its parser without pandas or the
fixture machinery, so ``evalkit report`` can start the kernel first. Each check runs in a fresh
interpreter, so modules an earlier test imported do not hide a regression.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from importtime_probe import imported_by_command

import evalkit.cli._main as cli_main


def _loaded_after(code: str, modules: list[str]) -> list[str]:
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import sys
        print(",".join(m for m in {modules!r} if m in sys.modules))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return [m for m in result.stdout.strip().split(",") if m]


def test_the_report_path_does_not_load_scipy_stats() -> None:
    code = """
    from evalkit.run._evaluate import evaluate
    from evalkit.fixtures import generate_fixture
    from evalkit.report.tables import ablation_table, paired_comparisons, all_pairs_table
    from evalkit.report.verdict import build_verdict
    from evalkit.report import plots  # noqa: F401
    from evalkit.gates import check_gates  # noqa: F401
    from evalkit import probes  # noqa: F401

    evaluation = evaluate(generate_fixture(3, documents=20, queries=12), ["lexical", "token-hash"])
    measures = list(evaluation.measures)
    systems = list(evaluation.systems)
    ablation_table(evaluation.per_query, systems=systems, measures=measures, n_resamples=50)
    paired_comparisons(
        evaluation.per_query, "lexical", systems=systems, measures=measures, n_resamples=50
    )
    all_pairs_table(evaluation.per_query, systems=systems, measures=measures, n_resamples=50)
    verdict = build_verdict(evaluation, None, base="lexical", n_resamples=50, seed=0)
    from evalkit.report import verdict_view

    verdict_view.verdict_badge(verdict)
    verdict_view.detection_note(
        evaluation.per_query, base="lexical", systems=systems, measure=measures[0], alpha=0.05
    )
    """
    assert _loaded_after(code, ["scipy.stats", "scipy.optimize"]) == []


def test_the_command_line_parser_loads_no_pandas() -> None:
    code = """
    from evalkit.cli import build_parser

    build_parser()
    """
    assert _loaded_after(code, ["pandas", "evalkit.fixtures", "pyarrow"]) == []


def test_evalkit_report_starts_its_kernel_before_loading_pandas() -> None:
    """Up to the kernel's start, ``evalkit report`` (with probes, as ``make report`` runs it)
    loads no pandas, numpy or pyarrow: the kernel imports them meanwhile, on the other core."""
    code = """
    import evalkit.report._notebook as notebook

    class Started(Exception):
        pass

    def start_kernel(*args, **kwargs):
        raise Started

    notebook.start_kernel = start_kernel
    from evalkit.cli import main

    try:
        main(["report", "fixtures/synthetic-bilingual-v1", "-p", "probes", "fixtures/probes",
              "--output", "reports/import-cost.html"])
    except Started:
        pass
    else:
        raise SystemExit("the kernel was not started")
    """
    assert _loaded_after(code, ["pandas", "numpy", "pyarrow"]) == []


def test_the_report_kernel_preload_loads_no_scipy_stats_and_no_system() -> None:
    from evalkit.report._kernel import REPORT_KERNEL_PRELOAD, REPORT_KERNEL_WARM_UP

    # the kernel's own start-up, as its exec_lines run it (evalkit.report._kernel is not loaded)
    code = f"""
    import importlib

    for module in {REPORT_KERNEL_PRELOAD!r}:
        importlib.import_module(module)
    for module, function, arguments in {REPORT_KERNEL_WARM_UP!r}:
        getattr(importlib.import_module(module), function)(*arguments)
    from evalkit.probes.targets import warm_up_target

    warm_up_target("stdlib")
    from evalkit.safety.inputs import find_input  # the setup cell's path lookup
    """
    slow = ["scipy.stats", "evalkit.systems.reference", "evalkit.systems.rerank", "bm25s"]
    # nbformat (with jsonschema) is the command's business, not the kernel's
    slow += ["nbformat", "evalkit.report._notebook", "evalkit.report._kernel"]
    slow += ["evalkit.report._parameters", "evalkit.report._export"]
    assert _loaded_after(code, slow) == []


def test_the_report_notebook_imports_nothing_of_the_command_side() -> None:
    import json

    from evalkit.report import DEFAULT_REPORT_NOTEBOOK as notebook

    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "from evalkit.safety.inputs import find_input" in code
    for module in ("notebook", "kernel", "parameters", "export"):
        # it would load nbformat and jsonschema in the kernel
        assert f"evalkit.report.{module}" not in code


def _imported_by_command(args: list[str]) -> set[str]:
    """Every module ``evalkit ARGS`` imports, read from ``python -X importtime``."""
    done, modules = imported_by_command(args)
    assert done.returncode == 0, done.stderr[-2000:]
    return modules


def _trec_files(folder: Path) -> list[str]:
    (folder / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    (folder / "run").write_text("q1 Q0 d1 1 2.5 sys\nq1 Q0 d9 2 1.5 sys\nq2 Q0 d3 1 1.0 sys\n")
    return [str(folder / "qrels"), str(folder / "run")]


def test_trec_eval_imports_no_scipy_matplotlib_or_pydantic(tmp_path: Path) -> None:
    loaded = _imported_by_command(["trec-eval", "-q", "-m", "all_trec", *_trec_files(tmp_path)])
    assert "evalkit.measures.trec_eval" in loaded  # the probe saw the command's imports
    heavy = {"scipy", "matplotlib", "pydantic", "yaml", "evalkit.fixtures", "evalkit.run"}
    assert loaded & heavy == set()


def test_trec_eval_imports_no_pandas(tmp_path: Path) -> None:
    loaded = _imported_by_command(["trec-eval", *_trec_files(tmp_path)])
    assert "pandas" not in loaded


HEAVY = {"numpy", "pandas", "pyarrow", "scipy", "matplotlib", "pydantic", "yaml", "nbformat"}


@pytest.mark.parametrize("args", [["--help"], ["validate", "--help"], ["scan", "--help"]])
def test_help_imports_no_heavy_library(args: list[str]) -> None:
    loaded = _imported_by_command(args)
    assert "evalkit.cli._main" in loaded  # the probe saw the command's imports
    assert loaded & HEAVY == set()
    assert not {name for name in loaded if name.startswith("evalkit.fixtures.")}


def test_scan_of_a_page_reads_the_report_notebook_without_nbformat(tmp_path: Path) -> None:
    # the cells of evalkit's report notebook are the page's own text; the page export (and
    # nbformat, nbconvert) is needed only when a file holds fixture text by the cells alone
    page = tmp_path / "report.html"
    page.write_text("<html><body><p>nDCG@10 0.512</p></body></html>", encoding="utf-8")
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-v1"
    loaded = _imported_by_command(["scan", str(fixture), str(page)])
    assert "evalkit.safety.privacy" in loaded
    assert loaded & {"nbformat", "nbconvert", "pandas", "scipy", "matplotlib"} == set()
    # nor numpy: the notebook's JSON depth check is bytes.translate and accumulate
    assert loaded & {"numpy", "pyarrow"} == set()


def test_validate_of_a_yaml_fixture_imports_no_numpy_pandas_or_pyarrow() -> None:
    # checking a YAML fixture's strings for sensitive shapes needs no numpy: `evalkit validate`
    # is Python, PyYAML and pydantic (its time: benchmarks/bench_startup.py)
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-v1"
    loaded = _imported_by_command(["validate", str(fixture)])
    assert "evalkit.fixtures.schema" in loaded  # the probe saw the fixture being checked
    assert loaded & {"numpy", "pandas", "pyarrow", "scipy", "matplotlib"} == set()


#: The modules of the command line's groups, from its table of subcommands.
CLI_GROUPS = {f"evalkit.cli.{group}" for group, _ in cli_main._SUBCOMMANDS.values()}


def test_validate_and_scan_load_their_own_group_of_the_command_line_alone(tmp_path: Path) -> None:
    # a command line that names one subcommand builds its parser alone and loads its group's
    # module alone: the other groups' modules (and getopt, for trec-eval) are not start-up
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "synthetic-bilingual-v1"
    page = tmp_path / "page.txt"
    page.write_text("nDCG@10 0.512\n", encoding="utf-8")
    validate = _imported_by_command(["validate", str(fixture)])
    scan = _imported_by_command(["scan", str(fixture), str(page)])
    assert "evalkit.fixtures.schema" in validate & scan  # the probe saw the commands' work
    assert validate & CLI_GROUPS == {"evalkit.cli._fixtures"}
    assert scan & CLI_GROUPS == {"evalkit.cli._scan"}
