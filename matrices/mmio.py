"""Matrix Market reading (also gzip/bzip2/xz compressed) into CSR."""
from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

__all__ = ["open_maybe_compressed", "read_matrix"]

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def open_maybe_compressed(path, mode="rb"):
    """Open ``path``, decompressing ``.gz``, ``.bz2`` and ``.xz`` transparently."""
    path = Path(path)
    opener = _OPENERS.get(path.suffix.lower(), open)
    return opener(path, mode)


def read_matrix(path, dtype=None):
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
    if not path.exists():
        raise FileNotFoundError(f"no such matrix file: {path}")
    try:
        with open_maybe_compressed(path) as fh:
            A = scipy.io.mmread(fh)
    except (ValueError, IndexError, OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a valid Matrix Market file ({exc})") from exc
    A = sp.csr_matrix(A)
    if A.dtype.kind in "biu":
        A = A.astype(np.float64)
    if dtype is not None:
        A = A.astype(dtype)
    A.sum_duplicates()
    A.sort_indices()
    return A
