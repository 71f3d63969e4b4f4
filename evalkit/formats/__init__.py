"""Readers and writers for TREC qrels/run files and BEIR dataset folders."""

from evalkit.formats.beir import BeirDataset, read_beir
from evalkit.formats.subtopics import read_subtopic_qrels
from evalkit.formats.trec import last_run_id, read_qrels, read_run, write_qrels, write_run

__all__ = [
    "BeirDataset",
    "last_run_id",
    "read_beir",
    "read_qrels",
    "read_run",
    "read_subtopic_qrels",
    "write_qrels",
    "write_run",
]
