"""Where the benchmarks find ../shared/data, and its known optimal answers."""
from __future__ import annotations

import csv

from matrices.suitesparse import shared_data_dir

SHARED = shared_data_dir()


def load_answers() -> dict:
    """``{(set, name): answer}`` from ``graphs/answers.csv``; empty when the data is absent."""
    path = SHARED / "graphs" / "answers.csv"
    if not path.exists():
        return {}
    with open(path) as fh:
        return {(r["set"], r["name"]): int(r["answer"]) for r in csv.DictReader(fh)}
