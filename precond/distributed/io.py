"""Reading a Matrix Market file straight into a :class:`DistributedCSR`: no rank holds the
whole matrix.

An uncompressed coordinate file is cut into one byte range per rank (a line belongs to the
rank whose range holds its first byte); each rank parses its range and sends every entry
to the rank that owns its row (one ``Alltoallv``). A compressed file (``.gz``, ``.bz2``,
``.xz``) cannot be entered in the middle: every rank streams it and keeps the entries of
its own rows. Symmetric, skew-symmetric and Hermitian storage is expanded as the entries
are read. Dense (``array``) files are read by rank 0 and scattered.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kernels.mpi import agree, world
from .matrix import DistributedCSR, partition_rows, row_owner

__all__ = ["read_matrix_market"]

_BLOCK = 1 << 24  # bytes parsed at a time when streaming


def _header(path, share=1.0):
    """``(field, symmetry, (rows, cols, entries), offset of the first entry line)``; the
    declared sizes checked against the file and the memory (``share``: this rank's part)."""
    from matrices.mmio import check_declared_sizes, mm_header, open_maybe_compressed

    _, fmt, field, symmetry = mm_header(path)
    lineno, sizes = check_declared_sizes(path, share=share)
    if sizes[0] != sizes[1]:
        raise ValueError(f"{path}:{lineno}: matrix is {sizes[0]} x {sizes[1]}; a distributed solve needs a square "
                         "matrix")
    if fmt != "coordinate":
        return fmt, field, symmetry, None, None
    with open_maybe_compressed(path) as fh:
        offset = 0
        lineno = 0
        while True:
            line = fh.readline()
            lineno += 1
            if not line:
                raise ValueError(f"{path}:{lineno}: missing size line")
            offset += len(line)
            text = line.strip()
            if text and not text.startswith(b"%"):
                break
        try:
            rows, cols, entries = (int(t) for t in text.split())
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: bad size line {text[:80]!r}") from exc
    if rows != cols:
        raise ValueError(f"{path}: matrix is {rows} x {cols}; a distributed solve needs a square matrix")
    return fmt, field, symmetry, (rows, cols, entries), offset


def _parse(chunk, field, path):
    """Rows, columns (0-based, int64) and values of the entry lines in ``chunk`` (bytes)."""
    width = {"pattern": 2, "complex": 4}.get(field, 3)
    tokens = chunk.split()
    if len(tokens) % width:
        raise ValueError(f"{path}: an entry line does not have {width} fields")
    try:
        table = np.array(tokens, dtype=np.float64).reshape(-1, width)
    except ValueError as exc:
        raise ValueError(f"{path}: unreadable entry ({exc})") from exc
    i = table[:, 0].astype(np.int64) - 1
    j = table[:, 1].astype(np.int64) - 1
    if field == "pattern":
        v = np.ones(len(i))
    elif field == "complex":
        v = table[:, 2] + 1j * table[:, 3]
    else:
        v = table[:, 2]
    return i, j, v


def _expand(i, j, v, symmetry):
    if symmetry == "general":
        return i, j, v
    off = i != j
    mirror = {"symmetric": v[off], "skew-symmetric": -v[off], "hermitian": np.conj(v[off])}[symmetry]
    return np.concatenate([i, j[off]]), np.concatenate([j, i[off]]), np.concatenate([v, mirror])


def _byte_range(path, offset, rank, size):
    """The entry lines whose first byte lies in this rank's share of the data."""
    total = Path(path).stat().st_size - offset
    start = offset + total * rank // size
    stop = offset + total * (rank + 1) // size
    with open(path, "rb") as fh:
        fh.seek(start - 1 if start > offset else start)
        if start > offset and fh.read(1) != b"\n":
            fh.readline()  # the line that started before this range is the previous rank's
        first = fh.tell()
        if first >= stop:
            return b""
        data = fh.read(stop - first)
        if not data.endswith(b"\n"):
            data += fh.readline()  # finish the last line that starts in the range
    return data


def read_matrix_market(path, comm=None, *, row_starts=None, dtype=None, device="auto", cuda_aware_mpi=None,
                       transport=None):
    """Collective: read a square Matrix Market file as a :class:`DistributedCSR`, each rank
    reading only its share of the file.

    Parameters
    ----------
    path : str or Path
        ``.mtx`` (read by byte ranges) or ``.mtx.gz`` / ``.bz2`` / ``.xz`` (streamed).
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``.
    row_starts : sequence of int, optional
        Rows of each rank (length ``comm.size + 1``); default an equal split.
    dtype : numpy dtype, optional
        Of the values (default float64, complex128 for complex files).
    device : {"auto", "cpu", "gpu"}
    cuda_aware_mpi, transport
        As in :meth:`DistributedCSR.from_local_rows`.

    Returns
    -------
    DistributedCSR

    Examples
    --------
    Under ``mpiexec -n 4``::

        from precond.distributed import read_matrix_market
        A = read_matrix_market("bcsstk25.mtx")
    """
    comm = world() if comm is None else comm
    meta, error = None, None
    if comm.rank == 0:
        try:
            meta = _header(path, 1.0 / comm.size)
        except Exception as exc:  # noqa: BLE001 - reported collectively
            error = exc
    agree(comm, error, "matrix file")
    fmt, field, symmetry, size, offset = comm.bcast(meta, root=0)
    if fmt != "coordinate":
        A = None
        if comm.rank == 0:
            from matrices.mmio import read_matrix

            A = read_matrix(path, dtype=dtype)
        return DistributedCSR.from_global(A, comm, row_starts=row_starts, device=device, cuda_aware_mpi=cuda_aware_mpi,
                                          transport=transport)
    n = size[0]
    error = None
    starts = partition_rows(n, comm.size) if row_starts is None else np.asarray(row_starts, np.int64)
    if len(starts) != comm.size + 1 or starts[0] != 0 or starts[-1] != n or np.any(np.diff(starts) < 0):
        error = ValueError(f"row_starts must rise from 0 to {n} in {comm.size + 1} entries")
    agree(comm, error if comm.rank == 0 else None)
    lo, hi = int(starts[comm.rank]), int(starts[comm.rank + 1])
    compressed = Path(path).suffix.lower() in (".gz", ".bz2", ".xz")
    error, parts, lines = None, [], [0]  # lines: the entry lines this rank parsed
    try:
        if compressed:
            from matrices.mmio import open_maybe_compressed

            with open_maybe_compressed(path) as fh:
                fh.seek(offset) if fh.seekable() else fh.read(offset)
                rest = b""
                while True:
                    block = fh.read(_BLOCK)
                    if not block:
                        break
                    block = rest + block
                    cut = block.rfind(b"\n") + 1
                    rest = block[cut:]
                    parts.append(_keep(_count(_parse(block[:cut], field, path), lines), symmetry, lo, hi))
                if rest.strip():
                    parts.append(_keep(_count(_parse(rest, field, path), lines), symmetry, lo, hi))
        else:
            entries = _count(_parse(_byte_range(path, offset, comm.rank, comm.size), field, path), lines)
            parts.append(_expand(*entries, symmetry))
        i, j, v = (np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in range(3))
        i, j = i.astype(np.int64), j.astype(np.int64)
        if len(i) and (i.min() < 0 or j.min() < 0 or i.max() >= n or j.max() >= n):
            raise ValueError(f"{path}: an entry index lies outside the {n} x {n} matrix")
    except Exception as exc:  # noqa: BLE001 - reported collectively
        error = exc
    agree(comm, error, "matrix file")
    # every rank streams a compressed file whole; byte ranges split the lines among the ranks
    found = lines[0] if compressed else comm.allreduce(lines[0])
    agree(comm, None if found == size[2] else ValueError(f"{path}: the size line states {size[2]} entries but the "
                                                         f"file has {found}"), "matrix file")
    if not compressed:
        i, j, v = _redistribute(comm, starts, i, j, v)
    vdtype = np.dtype(dtype) if dtype is not None else (np.complex128 if field == "complex" else np.float64)
    local = sp.csr_matrix((v.astype(vdtype), (i - lo, j)), shape=(hi - lo, n))
    local.sum_duplicates()
    return DistributedCSR.from_local_rows(local, comm, row_starts=starts, device=device, cuda_aware_mpi=cuda_aware_mpi,
                                          transport=transport)


def _count(entries, lines):
    """``entries`` unchanged; their number added to ``lines[0]``."""
    lines[0] += len(entries[0])
    return entries


def _keep(entries, symmetry, lo, hi):
    i, j, v = _expand(*entries, symmetry)
    mine = (i >= lo) & (i < hi)
    return i[mine], j[mine], v[mine]


def _redistribute(comm, starts, i, j, v):
    """Every entry to the rank that owns its row (three ``Alltoallv``)."""
    owner = row_owner(starts, i)
    order = np.argsort(owner, kind="stable")
    i, j, v = i[order], j[order], v[order]
    send = np.bincount(owner, minlength=comm.size).astype(np.int64)
    recv = np.empty_like(send)
    comm.Alltoall(send, recv)
    sd = np.concatenate([[0], np.cumsum(send)[:-1]])
    rd = np.concatenate([[0], np.cumsum(recv)[:-1]])
    total = int(recv.sum())
    out = []
    for a in (i, j, np.ascontiguousarray(v)):
        b = np.empty(total, a.dtype)
        comm.Alltoallv([a, (send, sd)], [b, (recv, rd)])
        out.append(b)
    return tuple(out)
