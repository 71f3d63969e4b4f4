"""Both development collections of the SMART family end to end, as a new user takes them:
import, validate, ``run`` with lexical, the redacted report with two systems, the gate with
JUnit and Markdown, and ``evalkit scan`` on every file written (issue 43, Build 4).

Real English prose nobody here wrote (``../shared/data/cranfield`` and ``../shared/data/cisi``,
see their READMEs); a collection whose folder is missing is skipped, saying so. CISI is
imported with the defaults (its judgment layout detected); Cranfield with the options its
README asks for (judgments by file order, its 1-5 scale mapped onto 0-3). Expected counts come
from the files, never from evalkit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run_cli
from oracles import ir_measures_values

from evalkit.fixtures import load_fixture

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
COLLECTIONS = {
    "cranfield": (
        ("cran.all.1400", "cran.qry", "QRelsCorrectedforTRECeval"),
        ("--query-ids", "order", "--grade-map", "4:3,3:2,2:1,1:1,5:0"),
    ),
    "cisi": (("CISI.ALL", "CISI.QRY", "CISI.REL"), ()),
}
GATES = """schema: evalkit.gates/1
absolute:
  - id: lexical-finds-relevant-documents
    system: lexical
    measure: RR@10
    min: 0.1
"""
_FIELD = r"(?ms)^\.([A-Z])[ \t]*\n(.*?)(?=^\.[A-Z][ \t]*$|\Z)"
WRITTEN = (
    "out/run.json",
    "out/run.trec",
    "reports/two.html",
    "reports/two.ipynb",
    "ci/junit.xml",
    "ci/gate.md",
)


@pytest.fixture(scope="module", params=sorted(COLLECTIONS))
def workspace(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    name = str(request.param)
    (documents, queries, qrels), options = COLLECTIONS[name]
    folder = DATA / name
    if not (folder / documents).is_file():
        pytest.skip(f"the {name} development collection is not in {DATA} (see its README)")
    root = tmp_path_factory.mktemp(name)
    argv = [
        "import", "smart", "--documents", str(folder / documents),
        "--queries", str(folder / queries), "--qrels", str(folder / qrels),
        "--output", "collection", *options,
    ]  # fmt: skip
    code, out, err = run_cli(argv, root)
    assert code == 0, out + err
    (root / "import.txt").write_text(out, "utf-8")
    (root / "gates.yaml").write_text(GATES, encoding="utf-8")
    return root


def _records(path: Path) -> Iterator[dict[str, str]]:
    """The fields of each SMART record, by letter (an independent reading of the format)."""
    for record in re.split(r"(?m)^\.I[ \t]", path.read_text("utf-8"))[1:]:
        fields: dict[str, str] = {}
        for letter, text in re.findall(
            r"(?ms)^\.([A-Z])[ \t]*\n(.*?)(?=^\.[A-Z][ \t]*$|\Z)", record
        ):
            fields[letter] = fields.get(letter, "") + text
        yield fields


def _judgment_lines(workspace: Path) -> int:
    name = workspace.name.rstrip("0123456789")
    qrels = DATA / name / COLLECTIONS[name][0][2]
    return sum(1 for line in qrels.read_text("utf-8").splitlines() if line.strip())


def test_the_import_keeps_every_document_with_a_title_or_text_and_accounts_for_judgments(
    workspace: Path,
) -> None:
    name = workspace.name.rstrip("0123456789")
    fixture = load_fixture(workspace / "collection")
    records = list(_records(DATA / name / COLLECTIONS[name][0][0]))
    with_text = [r for r in records if r.get("T", "").strip() or r.get("W", "").strip()]
    assert len(fixture.documents) == len(with_text)
    # every judgment line is imported (one document judged per line) or listed as dropped
    pairs = {
        (query.id, chunk.document_id)
        for query in fixture.queries
        for judgment in query.judgments
        for chunk in [fixture.chunk(judgment.chunk_id)]
    }
    dropped_file = workspace / "collection.dropped.tsv"
    rows = dropped_file.read_text("utf-8").splitlines()[1:] if dropped_file.exists() else []
    dropped = [row for row in rows if row.startswith("judgment")]
    assert len(pairs) + len(dropped) == _judgment_lines(workspace)
    summary = (workspace / "import.txt").read_text("utf-8")
    assert summary.startswith("judgments: query ")  # the layout decision comes first
    assert "judged queries: " in summary
    assert "fields not imported: " in summary or name == "cranfield"


def test_validate(workspace: Path) -> None:
    code, out, err = run_cli(["validate", "collection"], workspace)
    assert code == 0, out + err


@pytest.fixture(scope="module")
def ran(workspace: Path) -> tuple[int, str, str]:
    argv = [
        "run", "collection", "--systems", "lexical", "--k", "100", "--measures", "AP,nDCG@10",
        "--repeats", "1", "--output", "out/run.json", "--rankings", "out/run.trec",
    ]  # fmt: skip
    return run_cli(argv, workspace)


@pytest.fixture(scope="module")
def reported(workspace: Path) -> tuple[int, str, str]:
    argv = [
        "report", "collection", "--output", "reports/two.html",
        "-p", "systems", "lexical,hybrid", "-p", "n_resamples", "200",
    ]  # fmt: skip
    return run_cli(argv, workspace)


@pytest.fixture(scope="module")
def gated(workspace: Path) -> tuple[int, str, str]:
    argv = [
        "gate", "collection", "--gates", "gates.yaml", "--systems", "lexical",
        "--junit", "ci/junit.xml", "--markdown", "ci/gate.md",
    ]  # fmt: skip
    return run_cli(argv, workspace)


def test_run_with_lexical_scores_its_rankings_as_ir_measures_does(
    workspace: Path, ran: tuple[int, str, str]
) -> None:
    code, out, err = ran
    assert code == 0, out + err
    per_query = json.loads((workspace / "out" / "run.json").read_text("utf-8"))["perQuery"]
    fixture = load_fixture(workspace / "collection")
    qrels = {q.id: {j.chunk_id: j.grade for j in q.judgments} for q in fixture.queries}
    run: dict[str, dict[str, float]] = {}
    for line in (workspace / "out" / "run.trec").read_text("utf-8").splitlines():
        query, _, chunk, rank, _, _ = line.split()
        run.setdefault(query, {})[chunk] = -float(rank)  # rank order, ties impossible
    expected = ir_measures_values(["AP", "nDCG@10"], qrels, run)
    for (query, measure), value in expected.items():
        assert per_query["lexical"][query][measure] == pytest.approx(value, abs=1e-9)


@pytest.mark.slow
def test_the_redacted_report_with_two_systems(
    workspace: Path, reported: tuple[int, str, str]
) -> None:
    code, out, err = reported
    assert code == 0, out + err
    assert (workspace / "reports" / "two.html").stat().st_size > 0


def test_the_gate_writes_junit_and_markdown(workspace: Path, gated: tuple[int, str, str]) -> None:
    code, out, err = gated
    assert code == 0, out + err
    assert 'failures="0"' in (workspace / "ci" / "junit.xml").read_text("utf-8")
    assert "PASS" in (workspace / "ci" / "gate.md").read_text("utf-8")


@pytest.mark.slow
@pytest.mark.usefixtures("ran", "reported", "gated")
def test_every_file_written_is_scanned_clean(workspace: Path) -> None:
    missing = [name for name in WRITTEN if not (workspace / name).is_file()]
    assert not missing
    code, out, err = run_cli(["scan", "collection", *WRITTEN], workspace)
    assert code == 0, out + err
    assert out.count("clean: ") == len(WRITTEN)
