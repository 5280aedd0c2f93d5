"""Matrix Market reading (also gzip/bzip2/xz compressed) into CSR.

The sizes a file declares are checked against the file and the memory of the machine
before anything is allocated: a size line of 10^12 entries in a 50-byte file is a
``ValueError`` naming the file and line, never an allocation (SciPy's reader runs C++
threads on the open file, and an exception under them aborts the interpreter).
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import IO

import numpy as np
import scipy.io
import scipy.sparse as sp
from numpy.typing import DTypeLike

from kernels.memory import check_host_memory, host_memory_budget

__all__ = ["mm_header", "open_maybe_compressed", "read_file_bytes", "read_matrix", "first_non_finite_line",
           "check_declared_sizes"]

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: What a broken compressed stream raises (zlib.error and lzma.LZMAError are no OSError).
DECOMPRESSION_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)
_CHUNK = 1 << 20


def _check_file(path: Path) -> None:
    """``FileNotFoundError`` / ``IsADirectoryError`` (both ``OSError``) naming ``path``."""
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory, not a file")
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")


def read_file_bytes(path: str | os.PathLike, *, per_byte: float = 1.0) -> bytes:
    """The (decompressed) contents of ``path``, refused up front when they would not fit.

    ``per_byte``: bytes the caller will need per byte read (its parse buffers), checked
    against :func:`kernels.memory.host_memory_budget`: the file size for a plain file, the
    bytes decompressed so far for a compressed one (read in chunks, so that a small archive
    that inflates beyond memory stops early).

    Raises
    ------
    OSError
        Missing file or a directory.
    ValueError
        A corrupt compressed stream, or contents too large for the memory (naming the file).

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt.gz")
    >>> with gzip.open(path, "wb") as fh:
    ...     _ = fh.write(b"0 1\\n")
    >>> read_file_bytes(path)
    b'0 1\\n'
    """
    path = Path(path)
    _check_file(path)
    opener = _OPENERS.get(path.suffix.lower())
    if opener is None:
        check_host_memory(path.stat().st_size * per_byte, f"{path}: a file of {path.stat().st_size} bytes")
        with open(path, "rb") as fh:
            return fh.read()
    budget = host_memory_budget() / max(per_byte, 1.0)
    parts, total = [], 0
    try:
        with opener(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                parts.append(chunk)
                total += len(chunk)
                if total > budget:
                    raise ValueError(f"{path}: decompresses to more than the {total} bytes this process can hold")
    except DECOMPRESSION_ERRORS as exc:
        raise ValueError(f"{path}: cannot decompress ({exc})") from exc
    return b"".join(parts)


def open_maybe_compressed(path: str | os.PathLike, mode: str = "rb") -> IO:
    """Open ``path``, decompressing ``.gz``, ``.bz2`` and ``.xz`` transparently."""
    path = Path(path)
    opener = _OPENERS.get(path.suffix.lower(), open)
    return opener(path, mode)


_FIELDS = ("real", "double", "complex", "integer", "pattern")
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


def _text_source(path: Path, data: bytes | None):
    """A binary file object over the (decompressed) text: ``data`` when given, else the file."""
    return io.BytesIO(data) if data is not None else open_maybe_compressed(path)


def mm_header(path: str | os.PathLike, *, data: bytes | None = None) -> tuple[str, str, str, str]:
    """The banner of a Matrix Market file as ``(object, format, field, symmetry)``.

    Raises ``ValueError`` naming the file and line 1 when the banner is malformed.
    ``data``: the file's (decompressed) contents when already read (a pipe); ``path`` then
    only names it in messages.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.mtx")
    >>> _ = open(path, "w").write("%%MatrixMarket matrix coordinate pattern symmetric\\n2 2 1\\n2 1\\n")
    >>> mm_header(path)
    ('matrix', 'coordinate', 'pattern', 'symmetric')
    """
    path = Path(path)
    if data is None:
        _check_file(path)
    try:
        with _text_source(path, data) as fh:
            first = fh.readline(1024).decode("latin-1").split()
    except DECOMPRESSION_ERRORS as exc:
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


def _locate_error(path, fmt, field, data=None):
    """Line-by-line check of a coordinate file that the fast reader rejected (error path
    only): returns ``"file:line: message"`` for the first malformed line, or None."""
    if fmt != "coordinate":
        return None
    width = {"pattern": 2, "complex": 4}.get(field, 3)
    size = None
    count = 0
    with _text_source(path, data) as fh:
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


def read_matrix(path: str | os.PathLike, dtype: DTypeLike | None = None, *,
                data: bytes | None = None) -> sp.csr_matrix:
    """Read a Matrix Market file (``.mtx``, ``.mtx.gz``, ...) as a CSR matrix.

    Symmetric, skew-symmetric and Hermitian storage is expanded; pattern and integer
    matrices become float64 (pattern entries are 1). Indices are sorted.

    Parameters
    ----------
    path : str or Path
    dtype : numpy dtype, optional
        Convert the values (e.g. ``np.float32``).
    data : bytes, optional
        The file's (decompressed) contents when already read (a pipe); ``path`` then only
        names it in messages.

    Raises
    ------
    ValueError
        Malformed content, or sizes that the bytes after the size line cannot hold or the
        memory cannot (the message names the file and line).
    OSError
        A missing file or a directory.

    Examples
    --------
    >>> import io, scipy.sparse as sp, scipy.io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "eye.mtx")
    >>> scipy.io.mmwrite(path, sp.eye(3))
    >>> read_matrix(path).shape
    (3, 3)
    """
    path = Path(path)
    if data is None and not path.is_file() and not path.is_dir() and path.exists():
        data = read_file_bytes(path)  # a pipe or device: read it once
    _, fmt, field, symmetry = mm_header(path, data=data)
    if data is None and path.suffix.lower() in _OPENERS:
        data = read_file_bytes(path)
    lineno, sizes = check_declared_sizes(path, data=data)
    data = _safe_text(path, data)
    if fmt == "array" and 0 in sizes[:2]:  # SciPy's reader crashes on an empty dense array
        return _empty_array(path, data, lineno, sizes, dtype)
    try:
        # a path (C++ reads the file itself) or an in-memory copy: never a file object that
        # an exception could close under SciPy's reader threads
        A = scipy.io.mmread(str(path) if data is None else io.BytesIO(data))
        if fmt == "coordinate" and not sp.issparse(A):
            raise ValueError("coordinate file read as a dense array")
    except MemoryError as exc:
        raise ValueError(f"{path}: not enough memory to read this matrix ({exc})") from exc
    except (ValueError, IndexError, OverflowError, TypeError, RuntimeError, UnicodeError) + DECOMPRESSION_ERRORS as exc:
        located = _locate_error(path, fmt, field, data)
        raise ValueError(located or f"{path}: not a valid Matrix Market file ({exc})") from exc
    A = sp.csr_matrix(A)
    if A.dtype.kind in "biu":
        A = A.astype(np.float64)
    if dtype is not None:
        A = A.astype(dtype)
    A.sum_duplicates()
    A.sort_indices()
    return A


def _empty_array(path: Path, data: bytes | None, size_line: int, sizes, dtype) -> sp.csr_matrix:
    """A dense file of ``0 x k`` or ``k x 0``: nothing may follow its size line."""
    with _text_source(path, data) as fh:
        for lineno, raw in enumerate(iter(fh.readline, b""), 1):
            text = raw.decode("latin-1").strip()
            if lineno > size_line and text and not text.startswith("%"):
                raise ValueError(f"{path}:{lineno}: a {sizes[0]} x {sizes[1]} array holds no values, the file has "
                                 f"{text[:80]!r}")
    return sp.csr_matrix(tuple(sizes[:2]), dtype=np.float64 if dtype is None else dtype)


def _safe_text(path: Path, data: bytes | None) -> bytes | None:
    """What SciPy's C++ reader may be given: text without NUL bytes that ends with a newline.

    That reader crashes the interpreter (a segmentation fault) on a NUL byte and on a file
    whose last token is a cut-off exponent (``5.0E-`` at the very end). A NUL byte is a
    ``ValueError`` naming its line; a missing final newline is added (``data`` then holds
    the file's bytes). Returns ``data``, or None when the file can be read as it is.
    """
    def nul_error(text: bytes, at: int, line0: int = 1) -> ValueError:
        line = line0 + text.count(b"\n", 0, at)
        return ValueError(f"{path}:{line}: NUL byte in a text file")

    if data is not None:
        at = data.find(b"\0")
        if at >= 0:
            raise nul_error(data, at)
        return data if data.endswith(b"\n") else data + b"\n"
    lines, last = 1, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            at = chunk.find(b"\0")
            if at >= 0:
                raise nul_error(chunk, at, lines)
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    if last == b"\n":
        return None
    return read_file_bytes(path) + b"\n"


def _size_line(path: Path, data: bytes | None):
    """``(line number, tokens, bytes after the line)`` of the size line: the first line
    after the banner that is neither blank nor a comment. A compressed file is streamed
    (counted, not held) to learn how many bytes follow."""
    compressed = data is None and path.suffix.lower() in _OPENERS
    try:
        with _text_source(path, data) as fh:
            offset = 0
            for lineno, raw in enumerate(iter(fh.readline, b""), 1):
                offset += len(raw)
                if lineno == 1:
                    continue  # the banner
                text = raw.decode("latin-1").strip()
                if text and not text.startswith("%"):
                    if compressed:
                        rest = 0
                        while chunk := fh.read(_CHUNK):
                            rest += len(chunk)
                    else:
                        rest = (path.stat().st_size if data is None else len(data)) - offset
                    return lineno, text.split(), rest
    except DECOMPRESSION_ERRORS as exc:
        raise ValueError(f"{path}: cannot decompress ({exc})") from exc
    raise ValueError(f"{path}:2: missing size line")


def check_declared_sizes(path: str | os.PathLike, *, data: bytes | None = None,
                         share: float = 1.0) -> tuple[int, list[int]]:
    """The size line of a Matrix Market file checked against the bytes that follow it and
    the host's memory, before anything is allocated; returns ``(line number, sizes)``.

    ``share``: the fraction of the matrix this process will hold (a distributed reader's
    rank). ``data`` as in :func:`read_matrix`.

    Raises
    ------
    ValueError
        A malformed size line, more entries than the rest of the file can hold, or a
        matrix beyond the memory (the message names the file and line).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "big.mtx")
    >>> _ = open(path, "w").write("%%MatrixMarket matrix coordinate real general\\n3 3 1000000\\n1 1 1\\n")
    >>> check_declared_sizes(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...big.mtx:3: size line states 1000000 entries but the file has 1
    """
    path = Path(path)
    _, fmt, field, symmetry = mm_header(path, data=data)
    lineno, tokens, body = _size_line(path, data)
    expected = 3 if fmt == "coordinate" else 2
    where = f"{path}:{lineno}"
    try:
        sizes = [int(t) for t in tokens]
    except ValueError:
        raise ValueError(f"{where}: non-numeric size line {' '.join(tokens)[:80]!r}") from None
    if len(sizes) != expected or min(sizes) < 0:
        raise ValueError(f"{where}: bad size line {' '.join(tokens)[:80]!r}, expected "
                         f"{'rows cols entries' if expected == 3 else 'rows cols'} (non-negative)")
    rows, cols = sizes[:2]
    item = 16 if field == "complex" else 8
    per_value = {"pattern": 0, "complex": 2}.get(field, 1)  # tokens of a value
    if symmetry != "general" and rows != cols:
        raise ValueError(f"{where}: a {symmetry} matrix must be square, got {rows} x {cols}")
    if fmt == "coordinate":
        entries = sizes[2]
        what = f"{entries} entries"
        stored = entries * (1 if symmetry == "general" else 2)  # the mirror of each off-diagonal entry
        # COO read (two int64 indices and the value per entry), then the CSR copy
        need = 2 * stored * (16 + item) + 16 * (rows + 1)
        tokens_per_entry = 2 + per_value
    else:
        n = rows
        entries = {"general": rows * cols, "symmetric": n * (n + 1) // 2, "hermitian": n * (n + 1) // 2,
                   "skew-symmetric": n * (n - 1) // 2}[symmetry]
        what = f"a dense {rows} x {cols} matrix ({entries} values)"
        need = 3 * rows * cols * item + 16 * (rows + 1)  # the dense array, then the CSR copy
        tokens_per_entry = per_value
    # every entry takes at least one character and one separator per token (the last
    # newline may be missing)
    room = (body + 1) // (2 * tokens_per_entry) if tokens_per_entry else entries
    if entries > room:
        # a short file (a few entries missing) gets the line-by-line message; a huge count does not
        located = _locate_error(path, fmt, field, data) if body < _CHUNK * 64 else None
        raise ValueError(located or f"{where}: the size line declares {what}, but the {body} bytes after it hold "
                                    f"at most {room}")
    check_host_memory(need * share, f"{where}: the size line declares a {rows} x {cols} matrix with {what}")
    return lineno, sizes


def first_non_finite_line(path: str | os.PathLike, *, data: bytes | None = None) -> int | None:
    """Line number of the first NaN or infinite value of a Matrix Market file, or None
    (an error-path helper: one pass over the text; ``data`` as in :func:`read_matrix`)."""
    path = Path(path)
    _, fmt, field, _ = mm_header(path, data=data)
    skip = 0 if fmt == "array" else 2
    seen_size = False
    with io.BytesIO(read_file_bytes(path) if data is None else data) as fh:
        for lineno, raw in enumerate(fh, 1):
            text = raw.decode("latin-1").strip()
            if lineno == 1 or not text or text.startswith("%"):
                continue
            if not seen_size:
                seen_size = True
                continue
            try:
                if not all(np.isfinite(float(v)) for v in text.split()[skip:]):
                    return lineno
            except ValueError:
                continue
    return None
