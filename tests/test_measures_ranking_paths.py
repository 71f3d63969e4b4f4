"""The ranking builder's internal fast paths against trec_eval 9.0.8 (pytrec-eval-terrier).

Document fingerprints are only candidates: every match and duplicate is confirmed on the ID
strings. Here a weak fingerprint (the ID's length) makes almost every document of a query
collide, so the confirmation paths (several candidates per judged pair, candidate duplicates
that are not duplicates) decide every result. Runs mix query-grouped blocks, a run-only query
between two blocks of one query, and many score ties.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st
from oracles import assert_trec_eval_values, pytrec_eval_values, quiet_score

from evalkit.errors import InputError, RunOnlyQueriesWarning
from evalkit.formats.strings import Strings
from evalkit.measures import _ids, _join, _order, _sorting, ranking, score

MEASURES = ["nDCG@10", "AP", "RR", "P@5", "R@20", "NumRet", "NumRelRet"]
PYTREC_MEASURES = {"ndcg_cut.10", "map", "recip_rank", "P.5", "recall.20", "num_ret", "num_rel_ret"}


def _length_fingerprint(strings: Strings, out: np.ndarray | None = None) -> np.ndarray:
    """Colliding fingerprints: the same value for every ID of the same length."""
    lengths = strings.lengths(np.arange(len(strings), dtype=np.int64)).astype(np.uint64)
    if out is None:
        out = np.empty(len(strings), dtype=np.uint64)
    out[:] = lengths << np.uint64(40)
    return out


def _use_threads(monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    """Rank on ``threads`` threads: ``threads`` in every module of the ranking builder that
    asks for it."""
    for module in (ranking, _sorting):
        monkeypatch.setattr(module, "threads", lambda: threads)


def _data(
    layout: str, name: Callable[[int], str] = "d{}".format
) -> tuple[pd.DataFrame, pd.DataFrame, dict, dict]:
    rng = np.random.default_rng(11)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    rows: list[tuple[str, str, float]] = []
    for q in range(40):
        qid = f"q{q}"
        n_docs = int(rng.integers(5, 60))
        # IDs of one or two lengths: d0..d9 and d10..d99 collide among themselves
        docs = [name(int(d)) for d in rng.choice(100, n_docs, replace=False)]
        scores = np.round(rng.random(n_docs) * 6) / 2  # heavy ties
        order = np.argsort(-scores, kind="stable")
        run[qid] = {docs[i]: float(scores[i]) for i in order}
        rows += [(qid, docs[i], float(scores[i])) for i in order]
        judged = [*rng.choice(docs, min(8, n_docs), replace=False).tolist(), name(100), "zz"]
        qrels[qid] = {d: int(rng.integers(-1, 4)) for d in judged}
        qrels[qid][judged[0]] = max(qrels[qid][judged[0]], 0)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    if layout == "split":
        # q0's rows in two blocks with a run-only query between them
        q0 = frame[frame["query_id"] == "q0"]
        rest = frame[frame["query_id"] != "q0"]
        extra = pd.DataFrame({"query_id": ["unjudged"] * 2, "doc_id": ["d1", "d2"], "score": 1.0})
        half = len(q0) // 2
        frame = pd.concat([q0.iloc[:half], extra, rest, q0.iloc[half:]], ignore_index=True)
    elif layout == "shuffled":
        frame = frame.sample(frac=1, random_state=3).reset_index(drop=True)
    qrels_frame = pd.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    return qrels_frame, frame.astype({"query_id": "str", "doc_id": "str"}), qrels, run


@pytest.mark.parametrize("layout", ["grouped", "split", "shuffled"])
@pytest.mark.parametrize("cores", [1, 3])
def test_colliding_fingerprints_give_trec_eval_values(
    layout: str, cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels_frame, run_frame, qrels, run = _data(layout)
    monkeypatch.setattr(_join, "fingerprint", _length_fingerprint)
    # on several cores: fingerprints in slices, and (listed query by query) the run in parts
    monkeypatch.setattr(ranking, "_PARALLEL_MIN_ROWS", 0)
    _use_threads(monkeypatch, cores)
    frame = quiet_score(qrels_frame, run_frame, MEASURES, trec_version="9")
    ours = {(q, m): v for q, m, v in frame.itertuples(index=False)}
    expected = pytrec_eval_values(qrels, run, PYTREC_MEASURES)
    assert set(frame["query_id"]) == set(qrels)
    assert_trec_eval_values(ours, expected, qrels, MEASURES)


def test_colliding_fingerprints_still_find_only_real_duplicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_join, "fingerprint", _length_fingerprint)
    qrels = pd.DataFrame({"query_id": ["a", "a"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    run = pd.DataFrame(
        {"query_id": ["a", "a", "a", "b"], "doc_id": ["d1", "d2", "d3", "d1"], "score": 1.0}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunOnlyQueriesWarning)
        # d1, d2, d3 share a fingerprint but are distinct: no duplicate
        frame = score(qrels, run, ["NumRet"])
        assert frame["value"].tolist() == [3.0]
        with pytest.raises(InputError, match="more than once for query 'a'"):
            score(qrels, pd.concat([run, run.iloc[[1]]], ignore_index=True), ["NumRet"])


@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(-(2**62), 2**62)), max_size=40),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_combined_key_sort_equals_numpy_lexsort(pairs: list[tuple[int, int]], small: bool) -> None:
    major = np.array([p[0] for p in pairs], dtype=np.int64)
    minor = np.array([p[1] % 5 - 2 if small else p[1] for p in pairs], dtype=np.int64)
    assert _sorting.lexsort(major, minor).tolist() == np.lexsort((minor, major)).tolist()


# --- ties among documents, and large runs ranked in parts ------------------------------------

# Tied documents are ordered by ID descending, in byte order (trec_eval's strcmp). Most pairs
# are decided by the IDs' first 8 bytes and lengths; these styles also reach the string
# comparison (IDs of 8 bytes or more with equal first 8 bytes) and IDs that are prefixes of
# others.
ID_STYLES: dict[str, Callable[[int], str]] = {
    "short": "d{}".format,
    "shared 17-byte prefix": lambda d: f"clueweb09-en0000-{d:0{1 + d % 3}d}",
    "8-byte prefix, longer": lambda d: "abcdefgh" + "1" * (d % 4) + chr(ord("a") + d // 4),
    "prefixes of each other": lambda d: "abcdefg"[: d % 8] + str(d),
    "multi-byte UTF-8": "文档{}".format,
}


def _assert_trec_eval_values(
    qrels_frame: pd.DataFrame, run_frame: pd.DataFrame, qrels: dict, run: dict
) -> None:
    frame = score(qrels_frame, run_frame, MEASURES, trec_version="9")
    ours = {(q, m): v for q, m, v in frame.itertuples(index=False)}
    assert_trec_eval_values(ours, pytrec_eval_values(qrels, run, PYTREC_MEASURES), qrels, MEASURES)


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
@pytest.mark.parametrize("style", list(ID_STYLES))
@pytest.mark.parametrize("ties", ["pairwise", "sorted"])
@pytest.mark.parametrize("parts", [1, 4])
def test_tied_documents_ranked_as_trec_eval(
    layout: str, style: str, ties: str, parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if ties == "pairwise":
        monkeypatch.setattr(_order, "_PAIRWISE_MIN", 1 << 40)
    else:
        monkeypatch.setattr(_order, "_rank_among_ties_pairwise", _order._rank_among_ties_sorted)
    if parts > 1:  # only a run listed query by query is cut into parts
        monkeypatch.setattr(ranking, "_PARALLEL_MIN_ROWS", 0)
        _use_threads(monkeypatch, parts)
    qrels_frame, run_frame, qrels, run = _data(layout, ID_STYLES[style])
    _assert_trec_eval_values(qrels_frame, run_frame, qrels, run)


@pytest.mark.parametrize("parts", [1, 3])
def test_duplicates_are_found_in_every_part(parts: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "_PARALLEL_MIN_ROWS", 0)
    _use_threads(monkeypatch, parts)
    qrels_frame, run_frame, _, _ = _data("grouped")
    last = run_frame[run_frame["query_id"] == "q39"]
    # the last query lists its top doc again, at the bottom of its ranking (last part)
    again = last.iloc[[0]].assign(score=last["score"].min() - 1)
    doubled = pd.concat([run_frame, again], ignore_index=True)
    doc = again["doc_id"].iloc[0]
    with pytest.raises(InputError, match=f"lists doc '{doc}' more than once for query 'q39'"):
        score(qrels_frame, doubled, MEASURES)
    # keep-first drops the lower-ranked copy: the values of the run without it
    kept = score(qrels_frame, doubled, MEASURES, duplicates="keep-first")
    pd.testing.assert_frame_equal(kept, score(qrels_frame, run_frame, MEASURES))


@pytest.mark.parametrize("layout", ["grouped", "split"])
@pytest.mark.parametrize("cores", [1, 2])
def test_many_small_parts_give_the_one_part_values(
    layout: str, cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels_frame, run_frame, _, _ = _data(layout)
    expected = quiet_score(qrels_frame, run_frame, MEASURES)
    # parts of about 50 rows (whole queries), each fingerprinting its own rows; with
    # colliding fingerprints too, which every part must confirm on the ID strings
    monkeypatch.setattr(ranking, "_PARALLEL_MIN_ROWS", 0)
    monkeypatch.setattr(ranking, "_PART_ROWS", 50)
    _use_threads(monkeypatch, cores)
    pd.testing.assert_frame_equal(
        quiet_score(qrels_frame, run_frame, MEASURES), expected, check_exact=True
    )
    monkeypatch.setattr(_join, "fingerprint", _length_fingerprint)
    pd.testing.assert_frame_equal(
        quiet_score(qrels_frame, run_frame, MEASURES), expected, check_exact=True
    )


@given(
    st.lists(st.text(st.sampled_from("ab\x00z文"), max_size=12), min_size=1, max_size=30),
    st.integers(0, 30),
    st.booleans(),
    st.data(),
)
@settings(max_examples=200, deadline=None)
def test_leading_words_are_the_first_8_bytes_big_endian(
    strings: list[str], cut: int, large: bool, data: st.DataObject
) -> None:
    kind = pa.large_string() if large else pa.string()
    cut = min(cut, len(strings))
    # two chunks, the first a slice (its offsets do not start at 0)
    first = pa.array(["x" * 9, *strings[:cut]], kind).slice(1)
    chunked = pa.chunked_array([first, pa.array(strings[cut:], kind)], kind)
    at = np.array(data.draw(st.lists(st.integers(0, len(strings) - 1))), dtype=np.int64)
    words, lengths = _ids.as_strings(chunked).words(at)
    encoded = [strings[i].encode() for i in at]
    assert lengths.tolist() == [len(b) for b in encoded]
    assert [int(w) for w in words] == [int.from_bytes((b + bytes(8))[:8], "big") for b in encoded]


@pytest.mark.parametrize("ties", ["pairwise", "sorted"])
def test_tied_ids_that_differ_only_by_trailing_nul_bytes(
    ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Equal first 8 bytes once zero-padded: only the lengths tell these IDs apart. Byte order
    # puts a string after its own prefixes, so by ID descending the ranking is
    # "a\0\0", "a\0", "a" and the one relevant doc "a" is third: RR = 1/3.
    if ties == "sorted":
        monkeypatch.setattr(_order, "_rank_among_ties_pairwise", _order._rank_among_ties_sorted)
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "a\0", "a\0\0"], "score": 1.0})
    assert score(qrels, run, ["RR"])["value"].tolist() == pytest.approx([1 / 3])


# --- runs not listed query by query, and the sorts behind them ---------------------------------


def test_duplicates_of_a_run_sorted_across_queries_name_their_own_rows() -> None:
    # rows sorted by score over all queries: each query's rows are in several places
    qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
    run = pd.DataFrame(
        {
            "query_id": ["a", "b", "a", "b", "a"],
            "doc_id": ["d1", "d2", "d3", "d1", "d3"],
            "score": [5.0, 4.0, 3.0, 2.0, 1.0],
        }
    )
    with pytest.raises(InputError, match=r"doc 'd3' more than once for query 'a' .*first at row 2"):
        score(qrels, run, ["RR"])
    kept = score(qrels, run, ["RR", "NumRet"], duplicates="keep-first")
    assert kept["value"].tolist() == [1.0, 2.0, 0.5, 2.0]


@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=30),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.integers(0, 2**31),
)
@settings(max_examples=150, deadline=None)
def test_sort_within_queries_is_the_stable_argsort(
    sizes: list[int], seed: int, few_values: bool, long_query: int
) -> None:
    rng = np.random.default_rng(seed)
    query_sizes = np.array(sizes, dtype=np.int64)
    if long_query % 3 == 0:
        query_sizes[0] = 20_000  # longer than a matrix row: the argsort fallback
    qidx = np.repeat(np.arange(query_sizes.size, dtype=np.int64), query_sizes)
    low = rng.integers(0, 4 if few_values else 2**32, qidx.size, dtype=np.uint64)
    key = (qidx.astype(np.uint64) << np.uint64(32)) | low
    start = np.cumsum(query_sizes) - query_sizes
    expected = np.argsort(key, kind="stable")
    sorted_key = key.copy()
    sort_order = _order._sort_within_queries(sorted_key, qidx, start, query_sizes, workers=2)
    assert sort_order.tolist() == expected.tolist()
    assert sorted_key.tolist() == key[expected].tolist()


@given(st.lists(st.integers(0, 2**40), max_size=60), st.sampled_from([2**8, 2**20, 2**40]))
@settings(max_examples=150, deadline=None)
def test_stable_order_is_the_stable_argsort(values: list[int], bound: int) -> None:
    array = np.array([v % bound for v in values], dtype=np.int64)
    assert _sorting.stable_order(array).tolist() == np.argsort(array, kind="stable").tolist()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_threads_follow_the_cpu_affinity_not_the_machine() -> None:
    # a process pinned to one core (taskset, a cpuset) ranks on one thread, not os.cpu_count()
    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
        "from evalkit.measures import _sorting; print(_sorting.threads(), os.cpu_count())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    threads, machine = map(int, result.stdout.split())
    assert threads == 1
    assert _sorting.threads() == min(len(os.sched_getaffinity(0)), _sorting.MAX_THREADS)
    assert machine >= threads


@pytest.mark.parametrize(
    "sizes",
    [
        [200_000],  # one query wider than a matrix row
        [3, 70_000, 5, 80_000],  # the last query longer than 2**16
        [17, 1 << 15, 90_000, 2, 150_000],
    ],
)
def test_parallel_sort_of_a_query_wider_than_a_part(sizes: list[int]) -> None:
    """Regression (issue #49): a query past the last 64k cut gave an IndexError."""
    rng = np.random.default_rng(49)
    keys = np.concatenate(
        [
            (np.uint64(q) << np.uint64(40)) + rng.integers(0, 1 << 30, n, dtype=np.uint64)
            for q, n in enumerate(sizes)
        ]
    )
    rng.shuffle(keys)  # the sort needs grouped queries: regroup them by query below
    keys = keys[np.argsort(keys >> np.uint64(40), kind="stable")]
    expected = np.sort(keys)
    for workers in (1, 2):
        got = keys.copy()
        _sorting.parallel_sort(got, np.array(sizes, dtype=np.int64), workers)
        assert np.array_equal(got, expected)


def test_random_query_sizes_sort_like_numpy() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        sizes = rng.integers(1, 60_000, rng.integers(1, 8))
        keys = np.concatenate(
            [
                (np.uint64(q) << np.uint64(40)) + rng.integers(0, 1 << 30, n, dtype=np.uint64)
                for q, n in enumerate(sizes)
            ]
        )
        got = keys.copy()
        _sorting.parallel_sort(got, sizes.astype(np.int64), 2)
        assert np.array_equal(got, np.sort(keys))
