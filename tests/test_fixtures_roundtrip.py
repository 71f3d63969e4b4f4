"""Round trips (hypothesis), the random generator, and the committed JSON Schema files."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from evalkit.errors import InputError
from evalkit.fixtures import (
    Chunk,
    Document,
    Fixture,
    FixtureMeta,
    Judgment,
    Query,
    Span,
    dump_fixture,
    find_sensitive,
    fixture_json_schema,
    generate_fixture,
    load_fixture,
    validate_fixture,
)
from evalkit.fixtures.schema import ID_PATTERN, QueryTag

REPO = Path(__file__).resolve().parents[1]
SCHEMA_DIR = REPO / "evalkit" / "schema"
COMMITTED = REPO / "fixtures" / "synthetic-bilingual-v1"

# --- a strategy for small valid fixtures -----------------------------------------------------

# Characters YAML treats specially, line breaks YAML normalises (CR, LS, PS; NEL is a C1
# control character, refused in text), CJK and emoji.
_TRICKY = "\n\r\t :#-?&*!|>'\"%@`{}[],\u2028\u2029\ufeff\u00a0中文，。😀"
_chars = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from(_TRICKY)
ANSWERABLE_TAGS: list[QueryTag] = ["cross-language", "paraphrase", "hard-negative"]
_YAML_WORDS = ["yes", "no", "null", "~", "1.0", "0x1F", "2024-01-01", "- x", "a: b", "#c", "'q'"]


def _clean(text: str) -> bool:
    return not find_sensitive(text)


texts = (st.text(_chars, min_size=1, max_size=40) | st.sampled_from(_YAML_WORDS)).filter(_clean)
ids = st.from_regex(ID_PATTERN, fullmatch=True).map(lambda s: s[:100]).filter(_clean)
languages = st.lists(
    st.sampled_from(["en", "zh", "fr", "de-CH", "zh-Hans", "yue"]), min_size=1, max_size=3,
    unique=True,
)  # fmt: skip


@st.composite
def valid_fixtures(draw: st.DrawFn) -> Fixture:
    """A small fixture that satisfies every rule (each language answerable and no-answer)."""
    langs = tuple(draw(languages))
    requires_spans = draw(st.booleans())
    doc_ids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    documents = tuple(
        Document(id=d, language=draw(st.sampled_from(langs)), title=draw(texts)) for d in doc_ids
    )
    chunk_ids = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    chunks = []
    for n, chunk_id in enumerate(chunk_ids):
        near = draw(st.sampled_from(chunk_ids[:n])) if n and draw(st.booleans()) else None
        chunks.append(
            Chunk(
                id=chunk_id,
                document_id=draw(st.sampled_from(doc_ids)),
                language=draw(st.sampled_from(langs)),
                title=draw(texts),
                text=draw(texts),
                near_duplicate_of=near,
            )
        )

    def judgment(chunk: Chunk, first: bool) -> Judgment:
        """The first judgment of a query is relevant; later ones may be grade 0 (imports)."""
        lowest = 0 if (not first and not requires_spans) else 1
        grade = draw(st.integers(lowest, 3))
        if grade == 0 or (not requires_spans and draw(st.booleans())):
            return Judgment(chunk_id=chunk.id, grade=grade)
        start = draw(st.integers(0, len(chunk.text) - 1))
        end = draw(st.integers(start + 1, len(chunk.text)))
        piece = chunk.text[start:end]
        span = Span(text=piece, start=start, end=end) if draw(st.booleans()) else Span(text=piece)
        return Judgment(chunk_id=chunk.id, grade=grade, spans=(span,))

    queries: list[Query] = []
    for lang in langs:
        for answerable in (True, False):
            judged = (
                draw(st.lists(st.sampled_from(chunks), min_size=1, max_size=2,
                              unique_by=lambda c: c.id))
                if answerable
                else []
            )  # fmt: skip
            if answerable:
                tags = tuple(draw(st.lists(st.sampled_from(ANSWERABLE_TAGS), unique=True)))
            else:
                tags = ("no-answer",) if draw(st.booleans()) else ()
            queries.append(
                Query(
                    id=f"{draw(ids)[:20]}-{len(queries)}",
                    language=lang,
                    text=draw(texts),
                    tags=tags,
                    judgments=tuple(judgment(c, k == 0) for k, c in enumerate(judged)),
                )
            )
    meta = FixtureMeta(
        id=draw(ids),
        version=draw(st.sampled_from(["1.0.0", "0.1.0-rc.1", "2.3.4+build.5"])),
        license=draw(st.sampled_from(["CC0-1.0", "CC-BY-4.0", "MIT OR Apache-2.0"])),
        description=draw(texts),
        languages=langs,
        requires_spans=requires_spans,
    )
    return Fixture(meta=meta, documents=documents, chunks=tuple(chunks), queries=tuple(queries))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_fixtures())
def test_valid_fixtures_round_trip_through_yaml(fixture: Fixture) -> None:
    assert validate_fixture(fixture) == []
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp, "a"), Path(tmp, "b")
        dump_fixture(fixture, first)
        loaded = load_fixture(first)
        assert loaded == fixture
        assert loaded.model_dump(exclude={"path"}) == fixture.model_dump(exclude={"path"})
        dump_fixture(loaded, second)
        for name in ("fixture.yaml", "documents.yaml", "chunks.yaml", "queries.yaml"):
            assert (first / name).read_bytes() == (second / name).read_bytes()


def test_dump_writes_bare_spans_and_flow_lists(tiny_dir: Path, tmp_path: Path) -> None:
    dump_fixture(load_fixture(tiny_dir), tmp_path / "out")
    assert "languages: [en, zh]\n" in (tmp_path / "out" / "fixture.yaml").read_text()
    queries = (tmp_path / "out" / "queries.yaml").read_text(encoding="utf-8")
    assert "    - leaves at 06:40\n" in queries
    assert "    - text: every ninety minutes\n      start: 35\n      end: 55\n" in queries
    assert "tags: [no-answer]" in queries
    assert "单程票多少钱？" in queries  # allow_unicode: no \u escapes


def test_committed_fixture_round_trips(tmp_path: Path) -> None:
    if not COMMITTED.is_dir():
        pytest.skip("fixtures/synthetic-bilingual-v1 is not committed yet")
    fixture = load_fixture(COMMITTED)
    dump_fixture(fixture, tmp_path / "copy")
    assert load_fixture(tmp_path / "copy") == fixture


def test_dump_keeps_prose_may_hold_and_grade_map(tiny_dir: Path, tmp_path: Path) -> None:
    fixture = load_fixture(tiny_dir)
    update = {"prose_may_hold": ("url", "email"), "grade_map": "4:3,5:0"}
    fixture = fixture.model_copy(update={"meta": fixture.meta.model_copy(update=update)})
    dump_fixture(fixture, tmp_path / "out")
    loaded = load_fixture(tmp_path / "out")
    assert (loaded.meta.prose_may_hold, loaded.meta.grade_map) == (("url", "email"), "4:3,5:0")
    assert loaded == fixture


# --- the generator ---------------------------------------------------------------------------


def test_generator_is_deterministic_and_valid() -> None:
    first = generate_fixture(7)
    assert generate_fixture(7) == first
    assert generate_fixture(8) != first
    assert validate_fixture(first) == []
    # defaults: 20 documents x 4 chunks, 40 queries alternating zh/en
    assert (len(first.documents), len(first.chunks), len(first.queries)) == (20, 80, 40)
    assert first.languages == ("zh", "en")
    for lang in ("zh", "en"):
        queries = first.queries_by_language[lang]
        # 20 queries per language x 0.25 = 5 no-answer queries each
        assert sum(not q.answerable for q in queries) == 5
        assert all(q.tags == ("no-answer",) for q in queries if not q.answerable)


def test_generated_queries_overlap_their_first_relevant_span() -> None:
    fixture = generate_fixture(3, documents=6, queries=30, near_duplicate_fraction=0.3)
    assert any(c.near_duplicate_of for c in fixture.chunks)
    for query in fixture.queries:
        if not query.answerable:
            continue
        span = query.judgments[0].spans[0].text
        if query.language == "en":
            assert query.text.split()[0] in span.lower()
        else:
            assert query.text[:2] in span.replace("，", "").replace("。", "")
        assert [j.grade for j in query.judgments] == [3, 2, 1][: len(query.judgments)]
        assert ("multi-relevant" in query.tags) == (len(query.judgments) >= 2)


def test_generated_fixture_round_trips(tmp_path: Path) -> None:
    fixture = generate_fixture(11, documents=10, chunks_per_document=3, queries=16)
    dump_fixture(fixture, tmp_path / "g")
    assert load_fixture(tmp_path / "g") == fixture


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seed": -1},
        {"seed": 0, "languages": ("en", "fr")},
        {"seed": 0, "languages": ("en", "en")},
        {"seed": 0, "queries": 3},
        {"seed": 0, "documents": 1},
        {"seed": 0, "no_answer_fraction": 0.0},
        {"seed": 0, "no_answer_fraction": 1.0},
        {"seed": 0, "near_duplicate_fraction": 1.0},
    ],
)
def test_generator_rejects_bad_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InputError, match="generate_fixture"):
        generate_fixture(**kwargs)


@pytest.mark.slow
def test_generator_scale_20000_chunks_2000_queries() -> None:
    started = time.perf_counter()
    fixture = generate_fixture(1, documents=5_000, chunks_per_document=4, queries=2_000)
    elapsed = time.perf_counter() - started
    assert (len(fixture.chunks), len(fixture.queries)) == (20_000, 2_000)
    assert validate_fixture(fixture) == []
    assert elapsed < 30, f"generation took {elapsed:.1f}s"  # ~1 s measured on the dev machine


# --- JSON Schema -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fixture", "documents", "chunks", "queries"])
def test_committed_json_schema_is_current(kind: str) -> None:
    committed = json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
    assert committed == fixture_json_schema(kind), (
        f"regenerate with: evalkit schema {kind} > evalkit/schema/{kind}.schema.json"
    )
    jsonschema.Draft202012Validator.check_schema(committed)


def _yaml_files(root: Path, kind: str) -> list[Path]:
    single = root / f"{kind}.yaml"
    return [single] if single.exists() else sorted((root / kind).glob("*.yaml"))


def test_json_schema_accepts_valid_files_and_rejects_unknown_fields(tiny_dir: Path) -> None:
    roots = [tiny_dir] + ([COMMITTED] if COMMITTED.is_dir() else [])
    for root in roots:
        for kind in ("fixture", "documents", "chunks", "queries"):
            validator = jsonschema.Draft202012Validator(fixture_json_schema(kind))
            for path in _yaml_files(root, kind):
                validator.validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    queries = yaml.safe_load((tiny_dir / "queries.yaml").read_text(encoding="utf-8"))
    queries[0]["judgments"][0]["spans"][1]["why"] = "x"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(queries, fixture_json_schema("queries"))


def test_json_schema_rejects_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown fixture file kind"):
        fixture_json_schema("probes")
