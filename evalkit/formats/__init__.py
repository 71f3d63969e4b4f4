"""Readers and writers of the file formats runs and judgments come in: TREC qrels and runs, JSON
Lines runs, BEIR dataset folders, subtopic qrels and Parquet runs; and the rules every run
follows, whatever its format (:mod:`evalkit.formats.rules`).

The names are resolved on first use (PEP 562): ``evalkit trec-eval`` reads its files with
:mod:`evalkit.formats.trec_arrays` (numpy only) without loading the pandas readers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:
    from evalkit.formats.beir import BeirDataset as BeirDataset, read_beir as read_beir
    from evalkit.formats.runs import read_run_file as read_run_file
    from evalkit.formats.subtopics import read_subtopic_qrels as read_subtopic_qrels
    from evalkit.formats.trec import (
        last_run_id as last_run_id,
        read_qrels as read_qrels,
        read_run as read_run,
        write_qrels as write_qrels,
        write_run as write_run,
    )


__getattr__, __dir__ = lazy_attributes(__name__, globals(), __file__)
