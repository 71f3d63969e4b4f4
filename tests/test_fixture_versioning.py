"""Version rules: each rule refuses an under-bumped change and accepts a correctly bumped one.

The changes are edits of the committed fixture (``fixture_edits``); the required bump of each
comes from the table in ``fixtures/CONTRIBUTING.md``, which is checked to be the table the code
implements.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from fixture_edits import (
    COMMITTED,
    REPO,
    Edit,
    add_judgment,
    add_query,
    add_span,
    committed,
    edited,
    fix_text_after_spans,
    fix_text_before_spans,
    move_span,
    regrade_judgment,
    remove_judgment,
    remove_query,
    remove_span,
    set_version,
    write_copy,
)

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.fixtures import Fixture
from evalkit.fixtures.diff import fixture_outline
from evalkit.fixtures.versioning import (
    RULES,
    add_release,
    bump_of,
    check_releases,
    check_version,
    read_releases,
    releases_json,
    rule_table,
)


@pytest.fixture(scope="module")
def base() -> Fixture:
    # The rules below are written from version 1.0.0, whatever the committed fixture's is now.
    return edited(committed(), set_version("1.0.0"))


# (rule, edit, versions the rule refuses, versions it accepts); the base version is 1.0.0.
RULE_CASES: list[tuple[str, Edit, tuple[str, ...], tuple[str, ...]]] = [
    ("query removed: major", remove_query, ("1.0.0", "1.0.1", "1.1.0"), ("2.0.0",)),
    ("judgment removed: major", remove_judgment, ("1.0.0", "1.1.0", "1.9.9"), ("2.0.0", "3.1.0")),
    ("judgment regraded: major", regrade_judgment, ("1.0.0", "1.1.0"), ("2.0.0",)),
    ("query added: minor", add_query, ("1.0.0", "1.0.1"), ("1.1.0", "2.0.0")),
    ("judgment added: minor", add_judgment, ("1.0.0", "1.0.5"), ("1.1.0",)),
    ("span moved: minor", move_span, ("1.0.0", "1.0.1"), ("1.1.0",)),
    ("span added: minor", add_span, ("1.0.0", "1.0.1"), ("1.1.0",)),
    ("span removed: minor", remove_span, ("1.0.0", "1.0.1"), ("1.1.0",)),
    ("text fix moving no span: patch", fix_text_after_spans, ("1.0.0",), ("1.0.1", "1.1.0")),
    ("text fix moving a span: minor", fix_text_before_spans, ("1.0.0", "1.0.1"), ("1.1.0",)),
]


@pytest.mark.parametrize(
    ("edit", "refused", "accepted"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES]
)
def test_each_rule_refuses_an_under_bump_and_accepts_the_bump(
    base: Fixture, edit: Edit, refused: tuple[str, ...], accepted: tuple[str, ...]
) -> None:
    old = fixture_outline(base)
    for version in refused:
        check = check_version(old, fixture_outline(edited(base, edit, set_version(version))))
        assert not check.ok, version
        assert check.problems()
        assert f"set version: {_suggested(check.required)}" in check.problems()[0]
    for version in accepted:
        check = check_version(old, fixture_outline(edited(base, edit, set_version(version))))
        assert check.ok, (version, check.problems())
        assert check.problems() == []


def _suggested(bump: str) -> str:
    return {"major": "2.0.0", "minor": "1.1.0", "patch": "1.0.1"}[bump]


def test_unchanged_content_needs_no_bump_but_may_not_go_down(base: Fixture) -> None:
    old = fixture_outline(base)
    assert check_version(old, old).ok
    assert check_version(old, old).required == "none"
    assert check_version(old, fixture_outline(edited(base, set_version("1.0.1")))).ok
    down = check_version(fixture_outline(edited(base, set_version("1.2.0"))), old)
    assert not down.ok
    assert "goes down" in down.problems()[0]


def test_the_largest_change_sets_the_requirement(base: Fixture) -> None:
    new = edited(base, add_query, fix_text_after_spans, regrade_judgment, set_version("1.1.0"))
    check = check_version(fixture_outline(base), fixture_outline(new))
    assert check.required == "major"
    assert not check.ok
    # only the change the minor bump misses is listed
    listed = [line for line in check.problems() if line.startswith("  needs")]
    assert listed == ["  needs major: judgment q-en-030/chunk-clinic-03-03 grade regraded (2 -> 1)"]


@pytest.mark.parametrize(
    ("old", "new", "bump"),
    [
        ("1.0.0", "1.0.0", "none"),
        ("1.0.0", "1.0.1", "patch"),
        ("1.0.9", "1.1.0", "minor"),
        ("1.4.2", "2.0.0", "major"),
        ("1.4.2", "1.5.7", "minor"),
        ("1.0.0", "1.0.0-rc.1", "none"),  # pre-release parts do not count
        ("2.0.0", "1.9.9", "downgrade"),
        ("1.10.0", "1.9.0", "downgrade"),  # numeric, not text, comparison
    ],
)
def test_bump_of(old: str, new: str, bump: str) -> None:
    assert bump_of(old, new) == bump


def test_contributing_table_is_the_implemented_rule() -> None:
    """The rule table in fixtures/CONTRIBUTING.md lists exactly RULES, row for row."""
    text = (REPO / "fixtures" / "CONTRIBUTING.md").read_text(encoding="utf-8")
    table = text.split("<!-- version-rules:start -->")[1].split("<!-- version-rules:end -->")[0]
    documented = {}
    for line in table.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        kind, change, field = (re.sub(r"`", "", cell) for cell in cells[1:4])
        documented[(kind, change, field)] = cells[4]
    assert documented == RULES
    assert len(rule_table()) == len(RULES)


# --- the CLI: validate --since DIR and --since RECORD, fixture release -------------------------


def test_validate_since_directory(
    tmp_path: Path, base: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    under = write_copy(edited(base, remove_query, set_version("1.1.0")), tmp_path / "under")
    assert main(["validate", str(under), "--since", str(COMMITTED)]) == 1
    out = capsys.readouterr().out
    assert "valid" in out
    assert "needs major: query q-en-045 removed" in out
    assert "set version: 2.0.0" in out
    bumped = write_copy(edited(base, remove_query, set_version("2.0.0")), tmp_path / "bumped")
    assert main(["validate", str(bumped), "--since", str(COMMITTED)]) == 0
    assert "needs major: ok" in capsys.readouterr().out


def test_validate_since_the_committed_release_record(capsys: pytest.CaptureFixture[str]) -> None:
    """What `make test` runs: the committed fixture is its recorded release."""
    assert (
        main(["validate", str(COMMITTED), "--since", str(REPO / "fixtures" / "releases.json")]) == 0
    )
    assert ": ok" in capsys.readouterr().out


def test_release_records_and_guards_versions(
    tmp_path: Path,
    base: Fixture,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "fixtures" / "synthetic-bilingual-v1"
    write_copy(base, work)
    record = "fixtures/releases.json"
    assert main(["fixture", "release", "fixtures/synthetic-bilingual-v1"]) == 0
    assert main(["validate", str(work), "--since", record]) == 0
    assert main(["fixture", "release", str(work.relative_to(tmp_path))]) == 0  # a no-op
    assert "already recorded" in capsys.readouterr().out

    # content changed, version kept: refused by validate and by release
    shutil.rmtree(work)
    write_copy(edited(base, add_query), work)
    assert main(["validate", str(work), "--since", record]) == 1
    assert "the content changed" in capsys.readouterr().out
    assert main(["fixture", "release", "fixtures/synthetic-bilingual-v1"]) == 1
    # bumped correctly but not recorded: validate asks for the record, release records it
    shutil.rmtree(work)
    write_copy(edited(base, add_query, set_version("1.1.0")), work)
    assert main(["validate", str(work), "--since", record]) == 1
    assert "is not recorded" in capsys.readouterr().out
    assert main(["fixture", "release", "fixtures/synthetic-bilingual-v1"]) == 0
    assert main(["validate", str(work), "--since", record]) == 0
    releases = read_releases(tmp_path / record)
    assert [(r["fixture"], r["version"]) for r in releases] == [
        ("synthetic-bilingual-v1", "1.0.0"),
        ("synthetic-bilingual-v1", "1.1.0"),
    ]
    # a major change with a minor bump: release refuses and the record is unchanged
    before = (tmp_path / record).read_text(encoding="utf-8")
    shutil.rmtree(work)
    write_copy(edited(base, add_query, remove_query, set_version("1.2.0")), work)
    assert main(["fixture", "release", "fixtures/synthetic-bilingual-v1"]) == 1
    assert "needs major: query q-en-045 removed" in capsys.readouterr().out
    assert (tmp_path / record).read_text(encoding="utf-8") == before


def test_release_record_problems(
    tmp_path: Path, base: Fixture, capsys: pytest.CaptureFixture[str]
) -> None:
    outline = fixture_outline(base)
    path = tmp_path / "releases.json"
    path.write_text(releases_json(add_release([], outline)), encoding="utf-8")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["releases"][0]["outline"]["queries"]["q-en-001"]["judgments"]["chunk-ferry-01-01"][
        "grade"
    ] = 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match=r"releases\[0\]: contentHash does not match"):
        read_releases(path)
    assert main(["validate", str(COMMITTED), "--since", str(path)]) == 2
    assert "Traceback" not in capsys.readouterr().err
    # no release of this fixture recorded
    other = fixture_outline(edited(base, lambda d: d["meta"].update(id="another-v1")))
    summary, problems = check_releases(add_release([], other), outline)
    assert "no release" in summary
    assert problems
    # a record whose own history breaks the rule is reported
    regraded = fixture_outline(edited(base, regrade_judgment, set_version("1.1.0")))
    history = add_release(add_release([], outline), regraded)
    _, problems = check_releases(history, regraded)
    assert problems[0] == "the record's releases 1.0.0 -> 1.1.0:"


def test_a_removed_id_may_not_come_back(base: Fixture) -> None:
    v1 = fixture_outline(base)
    v2 = fixture_outline(edited(base, remove_query, set_version("2.0.0")))
    back = fixture_outline(edited(base, set_version("2.1.0")))  # q-en-045 re-added: minor
    assert check_version(v2, back).ok  # the pairwise rule alone would accept it
    summary, problems = check_releases(add_release(add_release([], v1), v2), back)
    assert problems[0] == (
        "query q-en-045 was removed in version 2.0.0 and is back in 2.1.0; a removed ID is "
        "never reused — give it a new ID"
    )
    assert "last release 2.0.0" in summary
