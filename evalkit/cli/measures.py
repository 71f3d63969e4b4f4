"""Measure commands: ``trec-eval`` (a TREC run scored against TREC qrels, trec_eval-style)."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.common import Handler
from evalkit.errors import EvalkitError

# --- trec-eval ------------------------------------------------------------------------------


def _add_trec_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Handler:
    p = sub.add_parser(
        "trec-eval",
        help="score a TREC run against TREC qrels, printing trec_eval-style lines",
        description="Print 'measure<TAB>query_id|all<TAB>value' lines. Every qrels query counts "
        "in 'all' (trec_eval -c) unless --no-complete; counts (NumRet, NumRel, NumRelRet) are "
        "summed, others averaged.",
    )
    p.add_argument("qrels", help="TREC qrels file (.gz allowed)")
    p.add_argument(
        "run",
        help="TREC run file (.gz allowed) or Parquet file or dataset, of any size: read in "
        "blocks of whole queries, with a progress bar on a terminal",
    )
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        required=True,
        dest="measures",
        metavar="MEASURE",
        help="measure in ir_measures syntax, e.g. nDCG@10, AP, 'R(rel=2)@100' (repeatable)",
    )
    p.add_argument("-q", action="store_true", dest="per_query", help="also print per-query lines")
    p.add_argument(
        "--trec-names",
        action="store_true",
        help="print trec_eval's measure names (ndcg_cut_10, map, P_10, ...) where one exists",
    )
    p.add_argument(
        "--trec-version",
        choices=("9", "10"),
        default="10",
        help="trec_eval release to reproduce: 10 (default) ranks by float64 scores, 9 (9.0.8, "
        "pytrec-eval-terrier) by float32 scores",
    )
    p.add_argument(
        "-M",
        type=_non_negative,
        default=None,
        dest="max_docs",
        metavar="N",
        help="use at most N ranked docs per query (trec_eval -M)",
    )
    p.add_argument(
        "-J",
        action="store_true",
        dest="judged_only",
        help="drop the docs the qrels do not grade, then rank the rest (trec_eval -J)",
    )
    p.add_argument(
        "-N",
        type=_non_negative,
        default=None,
        dest="num_docs",
        metavar="N",
        help="number of docs in the collection, for Utility (trec_eval -N)",
    )
    p.add_argument(
        "--no-complete",
        action="store_true",
        help="average only over queries in both files (trec_eval without -c); by default "
        "every qrels query counts, like trec_eval -c",
    )
    p.add_argument(
        "--duplicates",
        choices=("error", "keep-first"),
        default="error",
        help="a document listed twice for one query in the run: an error (default), or keep "
        "the occurrence ranked first",
    )
    p.add_argument(
        "--subtopic-qrels",
        default=None,
        metavar="PATH",
        help="subtopic qrels ('query_id subtopic doc_id relevance' lines, as ndeval reads) for "
        "the diversity measures: alpha_nDCG@k, ERR_IA@k, NRBP, AP_IA, P_IA@k, StRecall@k, ...",
    )
    return _run_trec_eval


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _run_trec_eval(args: argparse.Namespace) -> int:
    import warnings

    from evalkit.errors import InputError
    from evalkit.formats import read_qrels, read_subtopic_qrels
    from evalkit.measures import parse_measures, score, trec_name
    from evalkit.measures.engine import trec_summary
    from evalkit.measures.stream import read_source

    measures = parse_measures(args.measures)
    qrels = read_qrels(args.qrels)
    subtopics = None if args.subtopic_qrels is None else read_subtopic_qrels(args.subtopic_qrels)
    # the diversity measures rank an in-memory run; every other measure streams the run file
    # in blocks of whole queries (trec_eval ranks by score and ignores the rank field)
    run = args.run if subtopics is None else read_source(args.run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            per_query = score(
                qrels,
                run,
                measures,
                trec_version=args.trec_version,
                max_docs=args.max_docs,
                judged_only=args.judged_only,
                complete=not args.no_complete,
                num_docs=args.num_docs,
                subtopics=subtopics,
                duplicates=args.duplicates,
            )
        except InputError as error:  # e.g. a doc judged twice: name the file it came from
            source = args.qrels if str(error).startswith("qrels") else args.run
            message = str(error).replace("duplicates='keep-first'", "--duplicates keep-first")
            raise InputError(
                f"{source}: {message} (rows count the file's data lines from 0)"
            ) from None
    for warning in caught:
        print(f"evalkit: warning: {warning.message}", file=sys.stderr)
    names = {}
    for m in measures:
        try:
            names[str(m)] = trec_name(m) if args.trec_names else str(m)
        except EvalkitError:
            names[str(m)] = str(m)
    lines = []
    for query_id, measure, text in trec_summary(per_query, per_query_lines=args.per_query):
        lines.append(f"{names[measure]}\t{query_id}\t{text}")
    print("\n".join(lines))
    return 0
