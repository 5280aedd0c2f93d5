"""Where the benchmarks find ../shared/data, and its known optimal answers."""
from __future__ import annotations

import csv
import os
from pathlib import Path

SHARED = Path(os.environ.get("GPUFOREST_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def load_answers() -> dict:
    """``{(set, name): answer}`` from ``graphs/answers.csv``; empty when the data is absent."""
    path = SHARED / "graphs" / "answers.csv"
    if not path.exists():
        return {}
    with open(path) as fh:
        return {(r["set"], r["name"]): int(r["answer"]) for r in csv.DictReader(fh)}
