"""Cranfield end to end, as a new user takes it: import, redacted report, gate with JUnit and
Markdown. Real English prose nobody here wrote (../shared/data/cranfield, see its README).

Counts are the collection's own (README and the files): 1,400 records in cran.all.1400, of
which two have an empty abstract (.W); 225 queries; 1,837 qrels lines. The grade map is the one
issue 33 gives for QRelsCorrectedforTRECeval (4 most relevant .. 1, and 5 for the original -1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from evalkit.fixtures import load_fixture

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
    assert "PASS: all 1 evaluated check(s) passed" in out
    assert 'failures="0"' in (workspace / "ci" / "junit.xml").read_text("utf-8")
    markdown = (workspace / "ci" / "gate.md").read_text("utf-8")
    assert "PASS" in markdown
    # no spans in Cranfield's judgments: the span measures are n/a, never 0.000 (Build 5)
    header, _, *rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert len(rows) == 2
    for row in rows:
        cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|")), strict=True))
        assert [cells["ContextPrecision@10"], cells["ContextRecall@10"]] == ["n/a", "n/a"]
