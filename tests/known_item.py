"""A simulated known-item English test collection, written as a BEIR folder.

Documents are the paragraphs (40+ words) of Python's own help topics (``pydoc_data.topics``),
real English prose that ships with every CPython. Each query is drawn from one document, as in
simulated known-item topics (Azzopardi, de Rijke & Balog, SIGIR 2007): a few of the document's
discriminative words (sampled by tf-idf) plus one common collection word as noise; the
document is the single relevant answer (grade 1). Deterministic for a seed.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np

from evalkit.fixtures import find_sensitive
from evalkit.systems.text import STOPWORDS

# Stand-alone alphabetic words only (not parts of identifiers such as __init__), so that any
# reasonable tokenizer sees query words the same way.
WORD = re.compile(r"(?<![\w.])[A-Za-z]{4,}(?![\w])")


def paragraphs() -> list[str]:
    """Paragraphs of 40+ words of the help topics, in topic-name order; paragraphs holding a
    URL or path are left out (a fixture may not contain them)."""
    found = []
    for name in sorted(topics):
        for paragraph in re.split(r"\n\s*\n", topics[name]):
            text = " ".join(paragraph.split())
            if len(text.split()) >= 40 and not find_sensitive(text):
                found.append(text)
    return found


def write_known_item_beir(folder: Path, *, queries: int = 200, seed: int = 7) -> Path:
    """Write ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/test.tsv`` into ``folder``."""
    docs = paragraphs()
    words = [[w.lower() for w in WORD.findall(d) if w.lower() not in STOPWORDS] for d in docs]
    df = Counter(w for ws in words for w in set(ws))
    common = sorted(df, key=lambda w: (-df[w], w))[:200]
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for i, text in enumerate(docs):
            out.write(json.dumps({"_id": f"d{i:04d}", "title": "", "text": text}) + "\n")
    chosen = sorted(
        int(c) for c in rng.choice(len(docs), size=min(queries, len(docs)), replace=False)
    )
    query_lines, qrels_lines = [], ["query-id\tcorpus-id\tscore"]
    for n, doc in enumerate(chosen):
        tf = Counter(words[doc])
        vocab = sorted(tf)
        weight = np.array([tf[w] * math.log(len(docs) / df[w]) for w in vocab])
        picked = rng.choice(
            len(vocab), size=min(3, len(vocab)), replace=False, p=weight / weight.sum()
        )
        terms = [vocab[i] for i in picked] + [common[int(rng.integers(len(common)))]]
        query_lines.append(json.dumps({"_id": f"q{n:03d}", "text": " ".join(terms)}))
        qrels_lines.append(f"q{n:03d}\td{doc:04d}\t1")
    (folder / "queries.jsonl").write_text("\n".join(query_lines) + "\n", encoding="utf-8")
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    return folder
