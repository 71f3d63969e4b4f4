"""Readers and writers of the file formats runs and judgments come in: TREC qrels and runs, JSON
Lines runs, BEIR dataset folders, subtopic qrels and Parquet runs; and the rules every run
follows, whatever its format (:mod:`evalkit.formats.rules`)."""

from evalkit.formats.beir import BeirDataset, read_beir
from evalkit.formats.runs import read_run_file
from evalkit.formats.subtopics import read_subtopic_qrels
from evalkit.formats.trec import last_run_id, read_qrels, read_run, write_qrels, write_run

__all__ = [
    "BeirDataset",
    "last_run_id",
    "read_beir",
    "read_qrels",
    "read_run",
    "read_run_file",
    "read_subtopic_qrels",
    "write_qrels",
    "write_run",
]
