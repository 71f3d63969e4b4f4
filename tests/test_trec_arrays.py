"""The numpy TREC reader of ``evalkit trec-eval`` and the string columns the ranking works on.

:mod:`evalkit.formats.trec_arrays` either declines a file (None: the pandas readers read it,
with their rules and errors) or reads exactly the columns ``read_qrels``/``read_run`` read.
:class:`~evalkit.formats.strings.Strings` compares as Python compares the strings' UTF-8 bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalkit.formats import read_qrels, read_run
from evalkit.formats.strings import StringChunk, Strings
from evalkit.formats.trec_arrays import read_qrels_columns, read_run_columns
from evalkit.measures import score

QRELS_TEXTS = {
    "plain": "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n",
    "no final newline": "q1 0 d1 1\nq2 0 d3 -2",
    "crlf and tabs": "q1\t0\td1\t1\r\nq1 0  d2 +3\r\n",
    "blank lines": "\n\nq1 0 d1 1\n\n\nq2 0 d2 007\n\n",
    "leading spaces": "   q1 0 d1 1\n\t q2 0 d2 2   \n",
    "comment": "# a comment\nq1 0 d1 1\n",
    "indented comment": "q1 0 d1 1\n  # comment\n",
    "three fields": "q1 0 d1\n",
    "five fields": "q1 0 d1 1 x\n",
    "fractional grade": "q1 0 d1 1.0\n",
    "huge grade": "q1 0 d1 99999999999999999999\n",
    "non-ascii id": "q1 0 d\u00e9 1\n",
    "no-break space": "q1 0 d\u00a01 1\n",
    "empty": "",
    "only blank": "\n \n",
    "control char": "q1 0 d\x011 1\n",
    "grade with sign only": "q1 0 d1 -\n",
    "tabs between fields": "q1\t0\td1\t1\nq2\t0\td2\t0\n",
    "vertical tab and form feed": "q1\x0b0\x0cd1 1\nq2 0 d2 3\n",
    "trailing space": "q1 0 d1 1 \nq2 0 d2 3\n",
    "fields across lines": "q1 0 d1\n1 q2 0 d2 2\n",
    "line of five, line of three": "q1 0 d1 1 5\nq2 0 d2\n",
}

RUN_TEXTS = {
    "plain": "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 -0.0 sys\n",
    "exponents": "q1 Q0 d1 1 1e-3 s\nq1 Q0 d2 2 2.5E+2 s\nq1 Q0 d3 3 -.5 s\nq1 Q0 d4 4 5. s\n",
    "long decimals": "q1 Q0 d1 1 0.12345678901234567890 s\nq1 Q0 d2 2 123456789012345678 s\n",
    "plus sign": "q1 Q0 d1 1 +0.25 s\n",
    "nan": "q1 Q0 d1 1 nan s\n",
    "inf": "q1 Q0 d1 1 inf s\n",
    "hex": "q1 Q0 d1 1 0x1p-3 s\n",
    "underscore": "q1 Q0 d1 1 1_0 s\n",
    "bad number": "q1 Q0 d1 1 1.2.3 s\n",
    "extra fields": "q1 Q0 d1 1 2.5 sys extra\n",
    "five fields": "q1 Q0 d1 1 2.5\n",
    "columns swapped": "q1 d1 Q0 1 2.5 s\nq1 d2 Q0 2 1.5 s\n",
    "comment": "q1 Q0 d1 1 2.5 s\n# c\n",
    "crlf": "q1 Q0 d1 1 2.5 s\r\nq1 Q0 d2 2 1.5 s\r\n",
    "unicode id": "q1 Q0 d\u00e9 1 2.5 s\n",
    "tabs between fields": "q1\tQ0\td1\t1\t2.5\ts\n",
    "trailing space": "q1 Q0 d1 1 2.5 s \n",
    "fields across lines": "q1 Q0 d1 1 2.5\ns q1 Q0 d2 2 1.5 s\n",
}


def _frames_or_error(reader, path: Path):  # type: ignore[no-untyped-def]
    try:
        return reader(path)
    except Exception as error:  # the type is what is compared
        return type(error)


@pytest.mark.parametrize("name", sorted(QRELS_TEXTS))
def test_qrels_columns_are_read_qrels_or_declined(tmp_path: Path, name: str) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(QRELS_TEXTS[name].encode("utf-8"))
    columns = read_qrels_columns(path)
    expected = _frames_or_error(read_qrels, path)
    if columns is None:
        return  # the pandas reader reads it (or raises): nothing else to compare
    assert not isinstance(expected, type), f"read_qrels raises {expected} where this reads"
    assert columns.query.to_list() == expected["query_id"].tolist()
    assert columns.doc.to_list() == expected["doc_id"].tolist()
    assert columns.grade.tolist() == expected["relevance"].tolist()


@pytest.mark.parametrize("name", sorted(RUN_TEXTS))
def test_run_columns_are_read_run_or_declined(tmp_path: Path, name: str) -> None:
    path = tmp_path / "run"
    path.write_bytes(RUN_TEXTS[name].encode("utf-8"))
    columns = read_run_columns(path)
    expected = _frames_or_error(lambda p: read_run(p, rank=False), path)
    if columns is None:
        return
    assert not isinstance(expected, type), f"read_run raises {expected} where this reads"
    assert columns.query.to_list() == expected["query_id"].tolist()
    assert columns.doc.to_list() == expected["doc_id"].tolist()
    # bit for bit, the sign of zero included
    assert columns.score.tobytes() == expected["score"].to_numpy().tobytes()


def test_plain_files_are_taken(tmp_path: Path) -> None:
    """The common case takes the numpy path (else the command would load pandas)."""
    for name in ("plain", "crlf and tabs", "blank lines", "no final newline", "trailing space"):
        path = tmp_path / "qrels"
        path.write_text(QRELS_TEXTS[name])
        assert read_qrels_columns(path) is not None, name
    for name in ("plain", "exponents", "long decimals", "crlf", "tabs between fields"):
        path = tmp_path / "run"
        path.write_text(RUN_TEXTS[name])
        assert read_run_columns(path) is not None, name


def test_random_scores_convert_as_float_does(tmp_path: Path) -> None:
    rng = random.Random(5)
    texts = []
    for _ in range(3000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 17)))
        cut = rng.randint(0, len(digits))
        text = rng.choice(["", "-", "+"]) + digits[:cut] + "." * (cut < len(digits)) + digits[cut:]
        if rng.random() < 0.2:
            text += f"e{rng.randint(-30, 30)}"
        texts.append(text)
    path = tmp_path / "run"
    path.write_text("".join(f"q1 Q0 d{i} {i} {t} s\n" for i, t in enumerate(texts)))
    columns = read_run_columns(path)
    assert columns is not None
    assert columns.score.tobytes() == np.array([float(t) for t in texts]).tobytes()


def _random_ids(rng: random.Random, n: int) -> list[str]:
    alphabet = ["a", "b", "\u00e9", "0", "z", "\x00"]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))) for _ in range(n)]


def _chunked(values: list[str], cut: int) -> Strings:
    """``values`` in two chunks whose strings are not back to back (a gap byte between)."""
    chunks = []
    for part in (values[:cut], values[cut:]):
        encoded = [v.encode("utf-8") for v in part]
        data = b"".join(b + b" " for b in encoded)
        lengths = np.array([len(b) for b in encoded], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        chunks.append(StringChunk(np.frombuffer(data, dtype=np.uint8), starts, starts + lengths))
    return Strings(chunks)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_strings_compare_as_python_compares_bytes(seed: int) -> None:
    rng = random.Random(seed)
    values = _random_ids(rng, 400)
    values += values[:100]  # equal strings too
    strings = _chunked(values, 137)
    a = np.array([rng.randrange(len(values)) for _ in range(2000)], dtype=np.int64)
    b = np.array([rng.randrange(len(values)) for _ in range(2000)], dtype=np.int64)
    encoded = [v.encode("utf-8") for v in values]
    assert strings.to_list() == values
    assert strings.equal(a, strings, b).tolist() == [
        encoded[i] == encoded[j] for i, j in zip(a, b, strict=True)
    ]
    assert strings.greater(a, strings, b).tolist() == [
        encoded[i] > encoded[j] for i, j in zip(a, b, strict=True)
    ]
    assert strings.differs_from_next().tolist() == [
        encoded[i] != encoded[i + 1] for i in range(len(values) - 1)
    ]
    assert strings.take(a[::-1].copy()).to_list() == [values[i] for i in a[::-1]]
    assert strings.slice(100, 200).to_list() == values[100:300]


def _in_chunks(values: list[str], size: int) -> pd.Series:
    """``values`` as a pandas string column of arrow chunks of ``size`` rows each."""
    parts = [pa.array(values[i : i + size], pa.large_string()) for i in range(0, len(values), size)]
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(parts, pa.large_string())))


@pytest.mark.parametrize("size", [1, 7, 64])
def test_a_frame_in_many_arrow_chunks_scores_as_in_one(size: int) -> None:
    """The ranking views each arrow chunk in place: chunk bounds change no value (query
    blocks across a bound, tied documents in several chunks, duplicates kept first)."""
    rng = random.Random(size)
    rows = []
    for q in range(12):
        docs = rng.sample(range(40), rng.randint(1, 25))
        rows += [(f"q{q % 9}", f"doc{d}", float(rng.randint(0, 4))) for d in docs]
    rows.append(rows[3])  # a duplicate, for keep-first
    qrels_rows = [
        (f"q{q}", f"doc{d}", rng.randint(-1, 3)) for q in range(9) for d in range(0, 40, 3)
    ]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = run.astype({"query_id": "str", "doc_id": "str"})
    qrels = qrels.astype({"query_id": "str", "doc_id": "str"})
    chunked_run = run.assign(
        query_id=_in_chunks(run["query_id"].tolist(), size),
        doc_id=_in_chunks(run["doc_id"].tolist(), size),
    )
    chunked_qrels = qrels.assign(
        query_id=_in_chunks(qrels["query_id"].tolist(), size),
        doc_id=_in_chunks(qrels["doc_id"].tolist(), size),
    )
    measures = ["nDCG@10", "AP", "RR", "P@5", "IPrec@0.5", "Bpref", "NumRet"]
    for trec_version in ("10", "9"):
        expected = score(qrels, run, measures, duplicates="keep-first", trec_version=trec_version)
        got = score(
            chunked_qrels,
            chunked_run,
            measures,
            duplicates="keep-first",
            trec_version=trec_version,
        )
        pd.testing.assert_frame_equal(got, expected)
