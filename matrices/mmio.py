"""Matrix Market reading (also gzip/bzip2/xz compressed) into CSR."""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path
from typing import IO

import numpy as np
import scipy.io
import scipy.sparse as sp
from numpy.typing import DTypeLike

__all__ = ["mm_header", "open_maybe_compressed", "read_matrix"]

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def open_maybe_compressed(path: str | os.PathLike, mode: str = "rb") -> IO:
    """Open ``path``, decompressing ``.gz``, ``.bz2`` and ``.xz`` transparently."""
    path = Path(path)
    opener = _OPENERS.get(path.suffix.lower(), open)
    return opener(path, mode)


_FIELDS = ("real", "double", "complex", "integer", "pattern")
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


def mm_header(path: str | os.PathLike) -> tuple[str, str, str, str]:
    """The banner of a Matrix Market file as ``(object, format, field, symmetry)``.

    Raises ``ValueError`` naming the file and line 1 when the banner is malformed.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.mtx")
    >>> _ = open(path, "w").write("%%MatrixMarket matrix coordinate pattern symmetric\\n2 2 1\\n2 1\\n")
    >>> mm_header(path)
    ('matrix', 'coordinate', 'pattern', 'symmetric')
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such matrix file: {path}")
    try:
        with open_maybe_compressed(path) as fh:
            first = fh.readline(1024).decode("latin-1").split()
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise ValueError(f"{path}: cannot decompress ({exc})") from exc
    if not first:
        raise ValueError(f"{path}:1: empty file")
    if len(first) != 5 or first[0].lower() != "%%matrixmarket":
        raise ValueError(f"{path}:1: bad Matrix Market banner {' '.join(first)[:80]!r}, expected "
                         "'%%MatrixMarket matrix coordinate|array real|integer|complex|pattern general|symmetric|...'")
    obj, fmt, field, symmetry = (x.lower() for x in first[1:])
    if obj != "matrix" or fmt not in ("coordinate", "array") or field not in _FIELDS or symmetry not in _SYMMETRIES:
        raise ValueError(f"{path}:1: unsupported Matrix Market type {' '.join(first[1:])!r}")
    return obj, fmt, field, symmetry


def _locate_error(path, fmt, field):
    """Line-by-line check of a coordinate file that the fast reader rejected (error path
    only): returns ``"file:line: message"`` for the first malformed line, or None."""
    if fmt != "coordinate":
        return None
    width = {"pattern": 2, "complex": 4}.get(field, 3)
    size = None
    count = 0
    with open_maybe_compressed(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            text = raw.decode("latin-1").strip()
            if not text or text.startswith("%"):
                continue
            parts = text.split()
            if size is None:
                try:
                    size = [int(x) for x in parts]
                except ValueError:
                    return f"{path}:{lineno}: non-numeric size line {text[:80]!r}"
                if len(size) != 3 or min(size) < 0:
                    return f"{path}:{lineno}: bad size line {text[:80]!r}, expected 'rows cols entries'"
                continue
            count += 1
            if len(parts) != width:
                return f"{path}:{lineno}: expected {width} fields in entry line, got {len(parts)}: {text[:80]!r}"
            try:
                i, j = int(parts[0]), int(parts[1])
                [float(x) for x in parts[2:]]
            except ValueError:
                return f"{path}:{lineno}: non-numeric token in entry line: {text[:80]!r}"
            if not (1 <= i <= size[0] and 1 <= j <= size[1]):
                return f"{path}:{lineno}: index out of range 1..{size[0]} x 1..{size[1]}: {text[:80]!r}"
            if count > size[2]:
                return f"{path}:{lineno}: more entries than the {size[2]} stated on the size line"
    if size is None:
        return f"{path}:2: missing size line"
    if count != size[2]:
        return f"{path}:{lineno}: size line states {size[2]} entries but the file has {count}"
    return None


def read_matrix(path: str | os.PathLike, dtype: DTypeLike | None = None) -> sp.csr_matrix:
    """Read a Matrix Market file (``.mtx``, ``.mtx.gz``, ...) as a CSR matrix.

    Symmetric, skew-symmetric and Hermitian storage is expanded; pattern and integer
    matrices become float64 (pattern entries are 1). Indices are sorted.

    Parameters
    ----------
    path : str or Path
    dtype : numpy dtype, optional
        Convert the values (e.g. ``np.float32``).

    Examples
    --------
    >>> import io, scipy.sparse as sp, scipy.io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "eye.mtx")
    >>> scipy.io.mmwrite(path, sp.eye(3))
    >>> read_matrix(path).shape
    (3, 3)
    """
    path = Path(path)
    _, fmt, field, _ = mm_header(path)
    try:
        with open_maybe_compressed(path) as fh:
            A = scipy.io.mmread(fh)
        if fmt == "coordinate" and not sp.issparse(A):
            raise ValueError("coordinate file read as a dense array")
    except (ValueError, IndexError, OverflowError, OSError, EOFError, lzma.LZMAError) as exc:
        located = _locate_error(path, fmt, field)
        raise ValueError(located or f"{path}: not a valid Matrix Market file ({exc})") from exc
    A = sp.csr_matrix(A)
    if A.dtype.kind in "biu":
        A = A.astype(np.float64)
    if dtype is not None:
        A = A.astype(dtype)
    A.sum_duplicates()
    A.sort_indices()
    return A
