"""Where the benchmarks find ../shared/data, its known optimal answers, and matrices that
may be missing (a SuiteSparse matrix neither on this machine nor downloadable)."""
from __future__ import annotations

import csv
import sys

from matrices.suitesparse import shared_data_dir

SHARED = shared_data_dir()


def load_answers() -> dict:
    """``{(set, name): answer}`` from ``graphs/answers.csv``; empty when the data is absent."""
    path = SHARED / "graphs" / "answers.csv"
    if not path.exists():
        return {}
    with open(path) as fh:
        return {(r["set"], r["name"]): int(r["answer"]) for r in csv.DictReader(fh)}


def load_matrix(spec: str, n: int | None = None, *, script: str):
    """``matrices.get(spec, n=n)``, or None after one line on stderr saying why (a
    collection matrix that is not on this machine and cannot be downloaded, a missing
    file): the scripts then skip that matrix instead of stopping with a traceback."""
    import matrices

    try:
        return matrices.get(spec, n=n)
    except (OSError, ValueError) as exc:  # ConnectionError, FileNotFoundError: offline or absent
        print(f"{script}: {spec} skipped: {exc}", file=sys.stderr)
        return None
