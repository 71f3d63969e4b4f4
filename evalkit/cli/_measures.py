"""Measure commands: ``trec-eval``, a drop-in for trec_eval 10.0's command line.

``evalkit trec-eval [trec_eval's options] QRELS RUN`` reads trec_eval's own arguments as its
``getopt_long`` does (``-q``, ``-c``, ``-l N``/``-lN``, ``-M N``, ``-J``, ``-N N``, ``-n``,
``-D 0``, ``-m name[.params]``, long forms such as ``--level_for_rel``, options after the
files), prints the same lines (:mod:`evalkit.measures.trec_eval`) and exits with trec_eval's
codes: 0 done, 1 an illegal option or measure, 2 an unreadable file or a measure it cannot
initialize, 4 (10.0 without ``-c``) a qrels query the run lacks. evalkit's extensions:
``--trec-version 9|10``, ir_measures-style names (``-m nDCG@10``), ``--trec-names``,
``--duplicates keep-first`` and ``--subtopic-qrels`` (diversity measures).
"""

from __future__ import annotations

import getopt
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from evalkit.cli._common import Handler, gc_paused, print_error

if TYPE_CHECKING:
    import argparse

_SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
_LONG = {
    "help": "-h",
    "version": "-v",
    "query_eval_wanted": "-q",
    "measure=": "-m",
    "complete_rel_info_wanted": "-c",
    "level_for_rel=": "-l",
    "nosummary": "-n",
    "Debug_level=": "-D",
    "Judged_docs_only": "-J",
    "Number_docs_in_coll=": "-N",
    "Max_retrieved_per_topic=": "-M",
    "Rel_info_format=": "-R",
    "Results_format=": "-T",
    "Output_old_results_format=": "-o",
    "Zscore=": "-Z",
    "trec-version=": "--trec-version",
    "trec-names": "--trec-names",
    "duplicates=": "--duplicates",
    "subtopic-qrels=": "--subtopic-qrels",
}
_USAGE = (
    "Usage: evalkit trec-eval [-h] [-q] {-m measure}* [-c] [-n] [-l N] [-M N] [-J] [-N N]\n"
    "       [--trec-version 9|10] [--trec-names] [--duplicates error|keep-first]\n"
    "       [--subtopic-qrels PATH] trec_rel_file trec_top_file\n"
)
_HELP = (
    _USAGE
    + """
trec_eval 10.0's command line, printing the same bytes (see docs/trec_eval.md).
  -q        also print each query's values
  -m M      measure, parameters after '.' (P.5,10 ndcg_cut.10 relstring.20), a nickname
            (official, all_trec, set), or an ir_measures-style name (nDCG@10, 'R(rel=2)@100');
            repeatable; trec_eval's 'official' set without -m
  -c        average over every qrels query (a query the run lacks ranks nothing); without it
            trec_eval 10.0 stops (exit 4) at a qrels query the run lacks
  -l N      minimum grade of a relevant document (default 1)
  -M N      use each query's first N ranked documents
  -J        judged documents only
  -N N      documents in the collection (utility)
  -n        no 'all' lines
  --trec-version 10|9   the release reproduced (9: 9.0.8, float32 scores; without -c it
            averages over the queries of both files)
  --trec-names          an ir_measures-style -m prints under its trec_eval name
  --duplicates error|keep-first   a document listed twice for one query
  --subtopic-qrels PATH subtopic qrels for alpha_nDCG@k, ERR_IA@k, NRBP, ... (ndeval)
"""
)


def add_trec_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    import argparse

    p = sub.add_parser(
        "trec-eval",
        help="score a TREC run against TREC qrels: trec_eval 10.0's command line and output",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        prefix_chars=NO_OPTIONS,  # every argument is trec_eval's, read by getopt as trec_eval does
    )
    # REMAINDER keeps a "--" that argparse would drop: getopt reads it, as trec_eval's does
    p.add_argument("argv", nargs=argparse.REMAINDER, help="trec_eval's arguments")
    return _run_trec_eval


NO_OPTIONS: Final = "\x01"
"""The ``trec-eval`` subcommand's prefix characters: its parser takes no option of its own and
hands every word after ``trec-eval`` to :func:`run_trec_eval` (a word that starts with this
character is the only one it would read as an option)."""


def _run_trec_eval(args: argparse.Namespace) -> int:
    return run_trec_eval(args.argv)


def run_trec_eval(argv: Sequence[str]) -> int:
    """``evalkit trec-eval ARGV``: :func:`trec_eval_command`, with numpy's OpenBLAS on one
    thread and no garbage collection (below)."""
    import os

    # trec-eval does no linear algebra: numpy's OpenBLAS need not start a thread per core at
    # import (a third of numpy's import time here); a value the user set is kept
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # The command is short and bounded: its data are numpy arrays, the objects it makes in
    # Python do not form cycles worth collecting, and the collector's passes over what the
    # imports made (numpy's modules) are about 5% of its CPU time at 100,000 lines.
    with gc_paused():  # an in-process caller (a test) gets its collector back
        return trec_eval_command(argv)


def trec_eval_command(argv: Sequence[str]) -> int:
    """Run ``trec_eval argv``: print its lines on stdout, return its exit code."""
    from evalkit.errors import InputError

    try:
        pairs, files = getopt.gnu_getopt(list(argv), _SHORT, list(_LONG))
    except getopt.GetoptError as error:
        print(f"evalkit trec-eval: {error}\n{_USAGE}", end="", file=sys.stderr)
        return 1
    options = [(_LONG.get(key[2:], _LONG.get(key[2:] + "=", key)), value) for key, value in pairs]
    if any(key == "-h" for key, _ in options):
        print(_HELP, end="")
        return 0
    if any(key == "-v" for key, _ in options):
        print("trec_eval version 10.0 (evalkit trec-eval)", file=sys.stderr)
        return 0
    if len(files) != 2:
        print(_USAGE, end="", file=sys.stderr)
        return 1
    try:
        settings = _settings(options)
    except InputError as error:  # an option trec_eval reads that evalkit does not reproduce
        print_error(error)
        return 2
    if files[1] == "-":  # trec_eval reads the run from stdin (its qrels never)
        return _score_stdin_run(files[0], settings)
    return _score(files[0], files[1], settings)


def _score_stdin_run(qrels_path: str, settings: dict[str, Any]) -> int:
    """The run read from stdin into a temporary file, named ``-`` in every message."""
    import tempfile
    from pathlib import Path

    from evalkit.errors import EvalkitError

    with tempfile.TemporaryDirectory(prefix="evalkit-trec-eval-") as folder:
        path = Path(folder) / "run"
        path.write_bytes(sys.stdin.buffer.read())
        try:
            return _score(qrels_path, str(path), settings, shown_run="-")
        except EvalkitError as error:
            print(f"evalkit: error: {str(error).replace(str(path), '-')}", file=sys.stderr)
            return 2


def _score(qrels_path: str, run_path: str, settings: dict[str, Any], shown_run: str = "") -> int:
    """Score and print; trec_eval's exit code (an input error propagates, exit 2)."""
    from evalkit.errors import TrecEvalExit, TrecMeasureError

    try:
        text = _evaluate(qrels_path, run_path, settings)
    except TrecMeasureError as error:
        print(error, file=sys.stderr)
        return error.exit_code
    except TrecEvalExit as error:
        sys.stdout.write(error.printed)
        shown = str(error).replace(run_path, shown_run or run_path)
        print(f"evalkit: error: {shown}", file=sys.stderr)
        return error.exit_code
    sys.stdout.write(text)
    return 0


# evalkit's options that take one of a few words: the setting each sets, and the words
_CHOICES = {
    "--trec-version": ("trec_version", ("9", "10")),
    "--duplicates": ("duplicates", ("error", "keep-first")),
}


def _settings(options: list[tuple[str, str]]) -> dict[str, Any]:
    from evalkit.errors import InputError
    from evalkit.measures.trec_eval import atol

    settings: dict[str, Any] = {
        "per_query": False,
        "complete": False,
        "summary": True,
        "level": 1,
        "max_docs": None,
        "judged_only": False,
        "num_docs": None,
        "measures": [],
        "trec_version": "10",
        "trec_names": False,
        "duplicates": "error",
        "subtopics": None,
    }
    for key, value in options:
        if key == "-q":
            settings["per_query"] = True
        elif key == "-c":
            settings["complete"] = True
        elif key == "-n":
            settings["summary"] = False
        elif key == "-J":
            settings["judged_only"] = True
        elif key == "-m":
            settings["measures"].append(value)
        elif key in ("-l", "-M", "-N"):
            number = atol(value)  # as trec_eval reads it: "2x" is 2, "x" is 0, "-1" is -1
            if number < 0:  # not reproduced: -M -1 crashes trec_eval, -l -1 makes unjudged
                # docs relevant, -N -5 enters utility's formula
                raise InputError(
                    f"option {key} {value!r}: expected a non-negative integer (trec_eval would "
                    f"read it as {number})"
                )
            name = {"-l": "level", "-M": "max_docs", "-N": "num_docs"}[key]
            settings[name] = number
        elif key == "-D":
            level, _, query = value.partition(".")
            if atol(level) != 0 or query:
                raise InputError(
                    "option -D: trec_eval's debug output is not reproduced; only -D 0 is accepted"
                )
        elif (key == "-R" and value != "qrels") or (key == "-T" and value != "trec_results"):
            raise InputError(
                f"option {key} {value}: evalkit reads qrels and trec_results files only "
                "(trec_eval's preference and judgment-group formats are not supported)"
            )
        elif key == "-Z":
            raise InputError("option -Z: Z-scores are not supported; run trec_eval for them")
        elif key in _CHOICES:
            name, choices = _CHOICES[key]
            if value not in choices:
                raise InputError(f"{key} must be {' or '.join(choices)}, got {value!r}")
            settings[name] = value
        elif key == "--trec-names":
            settings["trec_names"] = True
        elif key == "--subtopic-qrels":
            settings["subtopics"] = value
    return settings


def _evaluate(qrels_path: str, run_path: str, s: dict[str, Any]) -> str:
    import warnings

    from evalkit.errors import InputError
    from evalkit.formats.trec_arrays import read_qrels_columns
    from evalkit.measures.diversity import diversity_measures
    from evalkit.measures.trec_eval import select_measures, trec_measures

    columns = select_measures(
        s["measures"], level=s["level"], trec_names=s["trec_names"], trec_version=s["trec_version"]
    )
    subtopics = None
    if s["subtopics"] is not None:
        from evalkit.formats.subtopics import read_subtopic_qrels

        subtopics = read_subtopic_qrels(s["subtopics"])
    diversity_measures(trec_measures(columns), subtopics)
    # the qrels as numpy arrays when the file is plain TREC text (no pandas, no pyarrow), else
    # as read_qrels reads it (its rules, its errors)
    qrels: Any = None if subtopics is not None else read_qrels_columns(qrels_path)
    if qrels is None:
        from evalkit.formats.trec import read_qrels

        qrels = read_qrels(qrels_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return _lines(
                qrels=qrels,
                qrels_path=qrels_path,
                run_path=run_path,
                columns=columns,
                measures=trec_measures(columns),
                subtopics=subtopics,
                s=s,
            )
        except InputError as error:  # e.g. a doc judged twice: name the file it came from
            message = str(error)
            source = qrels_path if message.startswith(("qrels", "grade", "ERR")) else run_path
            message = message.replace("duplicates='keep-first'", "--duplicates keep-first")
            raise InputError(
                f"{source}: {message} (rows count the file's data lines from 0)"
            ) from None
        finally:
            said = set()
            for warning in caught:
                text = str(warning.message)
                if "RunOnlyQueries" not in type(warning.message).__name__ and text not in said:
                    said.add(text)  # once, however many blocks of the run it came up in
                    print(f"evalkit: warning: {text}", file=sys.stderr)


def _judged(
    qrels: Any, paths: tuple[str, str], options: Any, subtopics: Any, measures: Any
) -> tuple[Any, Any, int]:
    """The judged ranking of the run, the diversity measures' values (None without subtopic
    qrels) and the number of qrels rows graded above 0.

    ``qrels``: :class:`~evalkit.formats.trec_arrays.QrelsColumns`, or a frame. Columns and a
    run file :func:`~evalkit.formats.trec_arrays.read_run_columns` takes are ranked by
    :func:`~evalkit.measures.ranking.rank_columns` (numpy only); anything else takes the
    streamed path of :func:`evalkit.measures.score` (pandas and pyarrow).
    """
    from evalkit.formats.trec_arrays import QrelsColumns, read_run_columns
    from evalkit.measures.ranking import rank_columns

    qrels_path, run_path = paths
    if isinstance(qrels, QrelsColumns):
        run = read_run_columns(run_path)
        if run is not None:
            return rank_columns(qrels, run, options), None, int((qrels.grade > 0).sum())
        from evalkit.formats.trec import read_qrels

        qrels = read_qrels(qrels_path)  # the same rows, as the streamed path takes them
    from evalkit.measures.diversity import diversity_measures, diversity_values
    from evalkit.measures.engine import source_ranking
    from evalkit.measures.stream import read_source

    ranking = source_ranking(qrels, run_path, options)
    diverse = None
    if diversity_measures(measures, subtopics):
        diverse = diversity_values(
            subtopics, read_source(run_path), measures, ranking.query_ids, options
        )
    return ranking, diverse, int((qrels["relevance"] > 0).sum())


def _lines(
    *,
    qrels: Any,
    qrels_path: str,
    run_path: str,
    columns: Any,
    measures: Any,
    subtopics: Any,
    s: dict[str, Any],
) -> str:
    import numpy as np

    from evalkit.errors import TrecEvalExit
    from evalkit.measures.ranking import ScoreOptions, measure_values
    from evalkit.measures.trec_eval import (
        format_lines,
        format_value,
        relstrings,
        summary_values,
    )

    version, complete = s["trec_version"], s["complete"]
    options = ScoreOptions(
        duplicates=s["duplicates"],
        trec_version=version,
        max_docs=s["max_docs"],
        judged_only=s["judged_only"],
        num_docs=s["num_docs"],
    )
    ranking, diverse, num_rel_judged = _judged(
        qrels, (qrels_path, run_path), options, subtopics, measures
    )
    present = ranking.num_ret > 0
    n_q = ranking.n_queries
    matrix = np.empty((n_q, 0))
    if measures:
        # a writable copy: 9.0.8 mode sets the values of queries the run lacks below
        matrix = np.array(measure_values(ranking, measures, options, precomputed=diverse))
    where = {m: i for i, m in enumerate(measures)}
    # the queries trec_eval evaluates, in its order; 10.0 without -c stops at a missing one
    stop = None
    if complete or version == "10":
        evaluated = np.ones(n_q, dtype=bool)
        if not complete and not present.all():
            stop = int(np.flatnonzero(~present)[0])
            evaluated[stop:] = False
    else:
        evaluated = present.copy()
    printed = evaluated & (present | (version == "10"))  # 9.0.8 -c skips missing queries
    if version == "9" and complete:  # 9.0.8 adds nothing for a query the run lacks
        for m, i in where.items():
            if m.name in ("yaap", "utility"):
                matrix[~present, i] = 0.0
        # nor a NaN where 10.0 scores its empty placeholder ranking (-J: iprec_at_recall)
        lacking = matrix[~present]
        matrix[~present] = np.where(np.isnan(lacking), 0.0, lacking)
    strings: dict[int, list[str]] = {}
    for column in columns:
        if column.kind == "relstring" and column.length not in strings:
            restricted = ranking
            if s["max_docs"] is not None or s["judged_only"]:
                restricted = ranking.restricted(
                    max_docs=s["max_docs"], judged_only=s["judged_only"]
                )
            strings[column.length] = relstrings(restricted, column.length)
        if column.kind == "relstring" and column.name != "relstring":
            # trec_eval clears the string of a query the run lacks only under the plain name
            # "relstring": under "relstring_20" it keeps its one-doc placeholder ranking's
            bogus = "-" if column.length and s["max_docs"] != 0 and not s["judged_only"] else ""
            for q in np.flatnonzero(~present).tolist():
                strings[column.length][q] = bogus

    def value_of(column: Any, rows: Any) -> Any:
        values = matrix[rows][:, [where[m] for m in column.measures]]
        if column.mean_of:  # 11pt_avg at given recall levels: summed in order, / levels
            return np.cumsum(values, axis=1)[:, -1] / values.shape[1]
        return values[:, 0]

    rows: list[tuple[str, str, str]] = []
    if s["per_query"]:
        shown = [c for c in columns if c.per_query]
        per_column = [
            None if c.kind == "relstring" else value_of(c, np.arange(n_q)).tolist() for c in shown
        ]
        for q in np.flatnonzero(printed).tolist():
            query_id = ranking.query_ids[q]
            for column, values in zip(shown, per_column, strict=True):
                if values is None:
                    rows.append((column.name, query_id, f"'{strings[column.length][q]}'"))
                else:
                    rows.append((column.name, query_id, format_value(column.kind, values[q])))
    if stop is not None:
        raise TrecEvalExit(
            f"{qrels_path}: query '{ranking.query_ids[stop]}' of the qrels has no line in the "
            'run; trec_eval 10.0 stops here with exit code 4 (it prints "result qid not found '
            'in qrels"): pass -c to score it as a query that ranks nothing, or '
            "--trec-version 9 to average over the queries of both files",
            4,
            format_lines(rows),
        )
    if s["summary"]:
        divisor = n_q if complete else int(evaluated.sum())
        num_rel_all = num_rel_judged if complete else None
        counted = evaluated
        missing = int(divisor - counted.sum())
        for column in columns:
            if column.kind == "relstring":
                continue
            if column.kind == "runid":
                run_id = _run_id(run_path)
                rows.append(("runid", "all", run_id))
                continue
            values = value_of(column, counted) if column.measures else np.empty(0)
            value = summary_values(
                column, values, divisor=divisor, missing=missing, num_rel_all=num_rel_all
            )
            rows.append((column.name, "all", format_value(column.kind, value)))
    return format_lines(rows)


def _run_id(run_path: str) -> str:
    """trec_eval's runid: the run ID of the run file's last result line."""
    from pathlib import Path

    from evalkit.formats.trec_arrays import last_run_id

    path = Path(run_path)
    if not path.is_file() or path.suffix in (".parquet", ".pq"):
        return "(none)"
    found = last_run_id(path)
    return "(none)" if found is None else found
