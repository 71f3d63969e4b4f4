"""Cranfield end to end, as a new user takes it: import, redacted report, gate with JUnit and
Markdown. Real English prose nobody here wrote (../shared/data/cranfield, see its README).

Counts are the collection's own (README and the files): 1,400 records in cran.all.1400, of
which two have an empty abstract (.W); 225 queries; 1,837 qrels lines. The grade map is the one
issue 33 gives for QRelsCorrectedforTRECeval (4 most relevant .. 1, and 5 for the original -1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_cli
from oracles import assert_per_query_values, ir_measures_values

from evalkit.fixtures import load_fixture
from evalkit.run import evaluate

CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"
GRADE_MAP = "4:3,3:2,2:1,1:1,5:0"
GATES = """schema: evalkit.gates/1
relative:
  - id: hybrid-not-below-lexical
    system: hybrid
    reference: lexical
    measure: nDCG(dcg='exp-log2')@10
    max_drop: 0.05
"""

pytestmark = pytest.mark.skipif(
    not (CRANFIELD / "cran.all.1400").is_file(), reason="the Cranfield development collection"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cranfield")
    argv = [
        "import", "smart", "--documents", str(CRANFIELD / "cran.all.1400"),
        "--queries", str(CRANFIELD / "cran.qry"),
        "--qrels", str(CRANFIELD / "QRelsCorrectedforTRECeval"),
        "--query-ids", "order", "--output", "cran", "--grade-map", GRADE_MAP,
    ]  # fmt: skip
    code, out, err = run_cli(argv, root)
    assert code == 0, out + err
    (root / "gates.yaml").write_text(GATES, encoding="utf-8")
    return root


def test_the_import_keeps_every_document_with_text(workspace: Path) -> None:
    fixture = load_fixture(workspace / "cran")
    assert len(fixture.documents) == 1398
    assert len(fixture.queries) == 225
    dropped = (workspace / "cran.dropped.tsv").read_text("utf-8").splitlines()
    # only the two records whose abstract is empty, and the judgment of one of them
    assert dropped == [
        "reason\tid",
        "document text is empty\t471",
        "document text is empty\t995",
        "judgment of a document not imported\t125 995",
    ]
    assert fixture.meta.grade_map == GRADE_MAP
    # prose with words between slashes is kept, and declared
    assert fixture.meta.prose_may_hold == ("posix_path",)


@pytest.mark.slow
def test_the_redacted_report_is_written(workspace: Path) -> None:
    code, out, err = run_cli(["report", "cran", "--output", "reports/cran.html"], workspace)
    assert code == 0, out + err
    assert (workspace / "reports" / "cran.html").stat().st_size > 0
    code, out, _ = run_cli(["scan", "cran", "reports/cran.html", "reports/cran.ipynb"], workspace)
    assert code == 0, out


def test_an_unredacted_report_is_still_refused(workspace: Path) -> None:
    argv = ["report", "cran", "--output", "reports/open.html", "-p", "redact", "false"]
    code, _, err = run_cli(argv, workspace)
    assert code == 2
    assert "--allow-unredacted" in err
    assert not (workspace / "reports" / "open.html").exists()


def test_the_gate_writes_junit_and_markdown(workspace: Path) -> None:
    argv = [
        "gate", "cran", "--gates", "gates.yaml", "--systems", "lexical,hybrid",
        "--junit", "ci/junit.xml", "--markdown", "ci/gate.md",
    ]  # fmt: skip
    code, out, err = run_cli(argv, workspace)
    assert code == 0, out + err
    assert "PASS: all 1 evaluated check(s) passed; 1 of 1 checks evaluated" in out
    assert 'failures="0"' in (workspace / "ci" / "junit.xml").read_text("utf-8")
    markdown = (workspace / "ci" / "gate.md").read_text("utf-8")
    assert "PASS" in markdown
    # no spans in Cranfield's judgments: the span measures are n/a, never 0.000 (Build 5)
    header, _, *rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    columns = [c.strip().strip("`") for c in header.strip("|").split("|")]  # names in code spans
    assert len(rows) == 2
    for row in rows:
        cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|")), strict=True))
        assert [cells["ContextPrecision@10"], cells["ContextRecall@10"]] == ["n/a", "n/a"]


def test_a_document_run_on_finer_chunks_is_scored_as_trec_eval_scores_documents(
    tmp_path: Path,
) -> None:
    """Cranfield cut into ~300-character chunks (every chunk of a judged document carries its
    grade), a document-level run through ``run:PATH?ids=documents``: each ranking measure
    equals ir_measures (trec_eval's code) on the collection's own document qrels, grade-mapped
    as the import maps them. Build 4's last bullet."""
    argv = [
        "import", "smart", "--documents", str(CRANFIELD / "cran.all.1400"),
        "--queries", str(CRANFIELD / "cran.qry"),
        "--qrels", str(CRANFIELD / "QRelsCorrectedforTRECeval"),
        "--query-ids", "order", "--output", "cran", "--grade-map", GRADE_MAP,
        "--chunking", "characters", "--size", "300",
    ]  # fmt: skip
    code, out, err = run_cli(argv, tmp_path)
    assert code == 0, out + err
    fixture = load_fixture(tmp_path / "cran")
    assert len(fixture.chunks) > 2 * len(fixture.documents)  # really chunked
    mapped = dict(pair.split(":") for pair in GRADE_MAP.split(","))
    qrels: dict[str, dict[str, int]] = {}
    for line in (CRANFIELD / "QRelsCorrectedforTRECeval").read_text("utf-8").splitlines():
        query, _, document, grade = line.split()
        if document not in {"471", "995"}:  # the two empty abstracts, not imported
            qrels.setdefault(query, {})[document] = int(mapped[grade])
    # a seeded document run: half judged documents, half others, distinct scores
    rng = np.random.default_rng(33)
    documents = sorted(d.id for d in fixture.documents)
    run: dict[str, dict[str, float]] = {}
    lines = []
    for query in sorted(qrels, key=int):
        judged = sorted(qrels[query])
        chosen = list(rng.choice(judged, size=min(5, len(judged)), replace=False))
        chosen += [d for d in rng.choice(documents, size=10, replace=False) if d not in chosen][:5]
        order = rng.permutation(len(chosen))
        for rank, index in enumerate(order, start=1):
            run.setdefault(query, {})[str(chosen[index])] = 100.0 - rank
            lines.append(f"{query} Q0 {chosen[index]} {rank} {100.0 - rank} docs\n")
    (tmp_path / "docs.trec").write_text("".join(lines), "utf-8")
    measures = ["R@10", "RR@10", "nDCG@10", "P@5", "AP"]
    system = f"run:{tmp_path / 'docs.trec'}?ids=documents"
    evaluation = evaluate(fixture, [system], measures=measures, repeats=1)
    judged = {q: grades for q, grades in qrels.items() if any(grades.values())}
    expected = ir_measures_values(measures, judged, run)
    values = evaluation.per_query[evaluation.per_query["measure"].isin(measures)]
    assert len(values) == len(expected)
    assert_per_query_values(values, expected, tol=1e-12)


def test_a_baseline_alone_gates_a_collection_just_imported(workspace: Path) -> None:
    """No gates file beside the imported fixture: ``gate --baseline`` compares with the
    default baseline gate (as ``report --baseline`` does) instead of asking for a gates.yaml."""
    systems = ["--systems", "lexical", "--k", "10"]
    code, out, err = run_cli(["baseline", "cran", *systems, "--output", "main.json"], workspace)
    assert code == 0, out + err
    code, out, err = run_cli(["gate", "cran", *systems, "--baseline", "main.json"], workspace)
    assert code == 0, out + err
    assert "default baseline gate" in out
    assert "PASS" in out
    code, _, err = run_cli(["gate", "cran", *systems], workspace)  # neither: still an error
    assert code == 2
    assert "gates.yaml" in err
