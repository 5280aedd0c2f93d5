"""Reading and writing graphs and solutions.

Formats: DIMACS (``p edge``/``p col``, ``e u v``), PACE ``.gr`` (``p td``/``p tw``;
1-based, or 0-based when vertex 0 occurs), PACE ``.td`` tree decompositions, PACE
vertex-cover solutions (``s vc n k``), METIS, plain edge lists (``u v [w]``, 0-based),
and Matrix Market. ``.gz``, ``.bz2`` and ``.xz`` files are decompressed transparently.
Malformed input raises ``ValueError`` naming the file and line.
"""
from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from matrices.mmio import open_maybe_compressed

from .graph import Graph

__all__ = [
    "FORMATS",
    "TreeDecomposition",
    "read_graph",
    "write_graph",
    "read_tree_decomposition",
    "write_tree_decomposition",
    "read_vertex_cover",
    "write_vertex_cover",
]

FORMATS = ("dimacs", "pace", "metis", "edgelist", "mtx")
_EXTENSIONS = {
    ".clq": "dimacs", ".dimacs": "dimacs", ".col": "dimacs", ".gr": "pace",
    ".graph": "metis", ".metis": "metis", ".mtx": "mtx",
    ".txt": "edgelist", ".edges": "edgelist", ".el": "edgelist", ".edgelist": "edgelist",
}
_COMPRESSED = (".gz", ".bz2", ".xz")


@dataclass
class TreeDecomposition:
    """Bags (0-based vertex arrays) and tree edges (``k x 2`` bag indices)."""

    bags: list = field(default_factory=list)
    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))

    @property
    def width(self) -> int:
        """Largest bag size minus one (-1 for no bags)."""
        return max((len(b) for b in self.bags), default=0) - 1


# ------------------------------------------------------------------ helpers
def _plain_suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in _COMPRESSED:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _read_lines(path: Path) -> list[str]:
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    with open_maybe_compressed(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file ({exc})") from exc
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise ValueError(f"{path}:1: empty file")
    return lines


class _Lines:
    """Content lines of a file with their 1-based line numbers, comments removed."""

    def __init__(self, path: Path, comment_prefixes: tuple[str, ...]):
        self.path = path
        raw = _read_lines(path)
        self.items = [
            (i + 1, s) for i, line in enumerate(raw)
            if (s := line.strip()) and not s.startswith(comment_prefixes)
        ]

    def error(self, lineno: int, message: str) -> ValueError:
        return ValueError(f"{self.path}:{lineno}: {message}")

    def ints(self, rows, ncols: int, skip: int = 0, what="edge"):
        """Parse rows ``[(lineno, text)]`` as ``ncols`` integers after ``skip`` tokens."""
        if not rows:
            return np.zeros((0, ncols), dtype=np.int64)
        try:
            tokens = " ".join(t for _, t in rows).split()
            arr = np.array(tokens, dtype=np.int64).reshape(len(rows), skip + ncols)  # fast path
            return arr[:, skip:]
        except (ValueError, OverflowError):
            pass
        out = np.empty((len(rows), ncols), dtype=np.int64)
        for k, (lineno, text) in enumerate(rows):
            parts = text.split()
            if len(parts) != skip + ncols:
                raise self.error(lineno, f"expected {skip + ncols} fields in {what} line, got {len(parts)}: {text!r}")
            try:
                out[k] = [int(p) for p in parts[skip:]]
            except ValueError:
                raise self.error(lineno, f"non-numeric token in {what} line: {text!r}") from None
        return out


def _header(lines: _Lines, expected: tuple[str, ...], fmt: str):
    if not lines.items:
        raise ValueError(f"{lines.path}:1: empty file")
    lineno, text = lines.items[0]
    parts = text.split()
    if len(parts) < 4 or parts[0] != "p" or parts[1] not in expected:
        raise lines.error(lineno, f"bad {fmt} header {text!r}, expected 'p {'|'.join(expected)} n m'")
    try:
        n, m = int(parts[2]), int(parts[3])
    except ValueError:
        raise lines.error(lineno, f"non-numeric size in header {text!r}") from None
    if n < 0 or m < 0:
        raise lines.error(lineno, "negative size in header")
    return lineno, n, m


def _check_range(lines: _Lines, rows, edges, lo: int, hi: int):
    bad = np.flatnonzero(((edges < lo) | (edges > hi)).any(axis=1))
    if len(bad):
        lineno, text = rows[bad[0]]
        raise lines.error(lineno, f"vertex id out of range {lo}..{hi}: {text!r}")


def _check_count(lines: _Lines, hdr_line: int, stated: int, found: int, what="edges"):
    if stated != found:
        raise lines.error(hdr_line, f"header states {stated} {what} but the file has {found}")


# ------------------------------------------------------------------ readers
def _read_dimacs(path: Path) -> Graph:
    lines = _Lines(path, ("c",))
    hdr, n, m = _header(lines, ("edge", "col", "edges"), "DIMACS")
    rows = lines.items[1:]
    for lineno, text in rows:
        if not text.startswith("e"):
            raise lines.error(lineno, f"expected an edge line 'e u v', got {text!r}")
    edges = lines.ints(rows, 2, skip=1)
    _check_count(lines, hdr, m, len(edges))
    _check_range(lines, rows, edges, 1, n)
    return Graph.from_edges(n, edges[:, 0] - 1, edges[:, 1] - 1)


def _read_pace(path: Path) -> Graph:
    lines = _Lines(path, ("c",))
    hdr, n, m = _header(lines, ("td", "tw", "vc"), "PACE")
    rows = lines.items[1:]
    edges = lines.ints(rows, 2)
    _check_count(lines, hdr, m, len(edges))
    base = 0 if (edges.size and edges.min() == 0) else 1  # 0-based files exist (DESIGN.md)
    _check_range(lines, rows, edges, base, n - 1 + base)
    return Graph.from_edges(n, edges[:, 0] - base, edges[:, 1] - base)


def _read_metis(path: Path) -> Graph:
    lines = _Lines(path, ("%",))
    if not lines.items:
        raise ValueError(f"{path}:1: empty file")
    hdr_line, head = lines.items[0]
    parts = head.split()
    try:
        n, m = int(parts[0]), int(parts[1])
        fmt = parts[2] if len(parts) > 2 else "0"
        ncon = int(parts[3]) if len(parts) > 3 else (1 if fmt.zfill(3)[1] == "1" else 0)
    except (ValueError, IndexError):
        raise lines.error(hdr_line, f"bad METIS header {head!r}, expected 'n m [fmt [ncon]]'") from None
    fmt = fmt.zfill(3)
    has_vw, has_ew = fmt[1] == "1", fmt[2] == "1"
    # METIS keeps empty lines for isolated vertices: re-read them without dropping blanks
    raw = _read_lines(path)
    body = [(i + 1, line.strip()) for i, line in enumerate(raw) if not line.lstrip().startswith("%")]
    start = next(k for k, (ln, _) in enumerate(body) if ln == hdr_line) + 1
    body = body[start:]
    while len(body) > n and not body[-1][1]:
        body.pop()
    if len(body) != n:
        raise lines.error(hdr_line, f"header states {n} vertices but the file has {len(body)} adjacency lines")
    us, vs, ws = [], [], []
    step = 2 if has_ew else 1
    for v, (lineno, text) in enumerate(body):
        try:
            vals = [float(t) if has_ew else int(t) for t in text.split()]
        except ValueError:
            raise lines.error(lineno, f"non-numeric token: {text!r}") from None
        vals = vals[ncon if has_vw else 0:]
        nbrs = np.asarray(vals[0::step], dtype=np.int64)
        if nbrs.size and (nbrs.min() < 1 or nbrs.max() > n):
            raise lines.error(lineno, f"vertex id out of range 1..{n}: {text!r}")
        us.append(np.full(len(nbrs), v))
        vs.append(nbrs - 1)
        if has_ew:
            ws.append(np.asarray(vals[1::step], dtype=np.float64))
    u = np.concatenate(us) if us else np.zeros(0, np.int64)
    w_all = np.concatenate(ws) if has_ew and ws else None
    vv = np.concatenate(vs) if vs else np.zeros(0, np.int64)
    keep = u < vv  # each edge is listed from both ends
    if int(keep.sum()) != m:
        raise lines.error(hdr_line, f"header states {m} edges but the adjacency lists hold {int(keep.sum())}")
    return Graph.from_edges(n, u[keep], vv[keep], None if w_all is None else w_all[keep])


def _read_edgelist(path: Path) -> Graph:
    lines = _Lines(path, ("#", "%"))
    rows = lines.items
    ncols = len(rows[0][1].split()) if rows else 2
    if ncols not in (2, 3):
        raise lines.error(rows[0][0], f"expected 'u v' or 'u v w', got {rows[0][1]!r}")
    if ncols == 2:
        edges = lines.ints(rows, 2)
        w = None
    else:
        try:
            arr = np.array(" ".join(t for _, t in rows).split(), dtype=np.float64).reshape(len(rows), 3)
        except ValueError:
            for lineno, text in rows:
                parts = text.split()
                if len(parts) != 3:
                    raise lines.error(lineno, f"expected 3 fields, got {len(parts)}: {text!r}") from None
                try:
                    [float(p) for p in parts]
                except ValueError:
                    raise lines.error(lineno, f"non-numeric token: {text!r}") from None
            raise
        edges, w = arr[:, :2], arr[:, 2]
        if np.any(edges != np.round(edges)):
            bad = int(np.flatnonzero((edges != np.round(edges)).any(axis=1))[0])
            raise lines.error(rows[bad][0], f"vertex ids must be integers: {rows[bad][1]!r}")
        edges = edges.astype(np.int64)
    if edges.size and edges.min() < 0:
        bad = int(np.flatnonzero((edges < 0).any(axis=1))[0])
        raise lines.error(rows[bad][0], f"negative vertex id: {rows[bad][1]!r}")
    n = int(edges.max()) + 1 if edges.size else 0
    return Graph.from_edges(n, edges[:, 0], edges[:, 1], w)


def _read_mtx(path: Path) -> Graph:
    from matrices.mmio import read_matrix

    A = read_matrix(path)
    return Graph.from_scipy(A, weighted=True)


_READERS = {"dimacs": _read_dimacs, "pace": _read_pace, "metis": _read_metis, "edgelist": _read_edgelist, "mtx": _read_mtx}


def _sniff(path: Path) -> str:
    for line in _read_lines(path)[:200]:
        s = line.strip()
        if not s:
            continue
        if s.startswith("%%MatrixMarket"):
            return "mtx"
        if s.startswith(("c ", "#")) or s in ("c", "%"):
            continue
        parts = s.split()
        if parts[0] == "p" and len(parts) > 1:
            return "dimacs" if parts[1] in ("edge", "col", "edges") else "pace"
        return "edgelist"
    return "edgelist"


def guess_format(path) -> str:
    """Format of a graph file from its extension, else from its first content line."""
    path = Path(path)
    return _EXTENSIONS.get(_plain_suffix(path)) or _sniff(path)


def read_graph(path, format: str | None = None) -> Graph:  # noqa: A002 - networkx-style name
    """Read a graph file; the format is guessed from the extension and header.

    Parameters
    ----------
    path : str or Path
        ``.clq/.dimacs/.col`` (DIMACS), ``.gr`` (PACE), ``.graph/.metis`` (METIS),
        ``.mtx`` (Matrix Market), anything else is sniffed; ``.gz/.bz2/.xz`` allowed.
    format : {"dimacs", "pace", "metis", "edgelist", "mtx"}, optional

    Examples
    --------
    >>> import graphkit, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "triangle.gr")
    >>> _ = open(path, "w").write("p td 3 3\\n1 2\\n2 3\\n1 3\\n")
    >>> G = graphkit.read_graph(path)
    >>> G.n, G.m
    (3, 3)
    """
    path = Path(path)
    fmt = (format or guess_format(path)).lower()
    if fmt not in _READERS:
        raise ValueError(f"unknown graph format {fmt!r}; choose one of {FORMATS}")
    return _READERS[fmt](path)


# ------------------------------------------------------------------ writers
@contextlib.contextmanager
def _open_for_write(target):
    if target in ("-", None):
        yield sys.stdout
        return
    if isinstance(target, io.TextIOBase) or hasattr(target, "write"):
        yield target
        return
    path = Path(target)
    with open_maybe_compressed(path, "wt") if path.suffix.lower() in _COMPRESSED else open(path, "w") as fh:
        yield fh


def _write_pairs(fh, prefix: str, u, v, base: int):
    if len(u):
        np.savetxt(fh, np.column_stack([u + base, v + base]), fmt=f"{prefix}%d %d")


def write_graph(G: Graph, path, format: str | None = None) -> None:  # noqa: A002
    """Write ``G`` in DIMACS, PACE, METIS, edge-list or Matrix Market format.

    The format is guessed from the extension when not given; ``.gz/.bz2/.xz`` compress.
    """
    fmt = (format or _EXTENSIONS.get(_plain_suffix(Path(path)), "edgelist")).lower()
    if fmt == "mtx":
        import scipy.io

        with _open_for_write(path) as fh:
            buf = io.BytesIO()
            scipy.io.mmwrite(buf, G.to_scipy(), symmetry="symmetric")
            fh.write(buf.getvalue().decode())
        return
    if fmt not in _READERS:
        raise ValueError(f"unknown graph format {fmt!r}; choose one of {FORMATS}")
    e = G.edges()
    u, v = e[0].astype(np.int64), e[1].astype(np.int64)
    with _open_for_write(path) as fh:
        if fmt == "dimacs":
            fh.write(f"p edge {G.n} {G.m}\n")
            _write_pairs(fh, "e ", u, v, 1)
        elif fmt == "pace":
            fh.write(f"p td {G.n} {G.m}\n")
            _write_pairs(fh, "", u, v, 1)
        elif fmt == "edgelist":
            if G.weighted:
                for a, b, w in zip(u.tolist(), v.tolist(), e[2].tolist()):
                    fh.write(f"{a} {b} {w!r}\n")
            else:
                _write_pairs(fh, "", u, v, 0)
        else:  # metis
            fh.write(f"{G.n} {G.m}{' 001' if G.weighted else ''}\n")
            for x in range(G.n):
                nb = G.indices[G.indptr[x]:G.indptr[x + 1]] + 1
                if G.weighted:
                    w = G.weights[G.indptr[x]:G.indptr[x + 1]]
                    fh.write(" ".join(f"{a} {b!r}" for a, b in zip(nb.tolist(), w.tolist())) + "\n")
                else:
                    fh.write(" ".join(map(str, nb.tolist())) + "\n")


# ---------------------------------------------------- PACE solution formats
def _solution_header(path, kind: str, expected: str):
    """Content lines of a PACE solution file and the integers of its ``s <kind> ...`` line."""
    lines = _Lines(Path(path), ("c",))
    if not lines.items:
        raise ValueError(f"{path}:1: empty file")
    lineno, head = lines.items[0]
    parts = head.split()
    if len(parts) != len(expected.split()) or parts[:2] != ["s", kind]:
        raise lines.error(lineno, f"bad header {head!r}, expected {expected!r}")
    try:
        values = tuple(int(p) for p in parts[2:])
    except ValueError:
        raise lines.error(lineno, f"non-numeric header {head!r}") from None
    return lines, lineno, values


def read_tree_decomposition(path) -> tuple[TreeDecomposition, int]:
    """Read a PACE ``.td`` file; returns the decomposition (0-based) and ``n``."""
    lines, lineno, (n_bags, size, n) = _solution_header(path, "td", "s td bags width+1 n")
    bags: list = [None] * n_bags
    edge_rows = []
    for ln, text in lines.items[1:]:
        tok = text.split()
        if tok[0] == "b":
            try:
                ids = [int(t) for t in tok[1:]]
            except ValueError:
                raise lines.error(ln, f"non-numeric token: {text!r}") from None
            if not ids or not 1 <= ids[0] <= n_bags:
                raise lines.error(ln, f"bag id out of range 1..{n_bags}: {text!r}")
            verts = np.asarray(ids[1:], dtype=np.int64)
            if verts.size and (verts.min() < 1 or verts.max() > n):
                raise lines.error(ln, f"vertex id out of range 1..{n}: {text!r}")
            bags[ids[0] - 1] = verts - 1
        else:
            edge_rows.append((ln, text))
    missing = [i + 1 for i, b in enumerate(bags) if b is None]
    if missing:
        raise lines.error(lineno, f"bag(s) {missing[:5]} not listed")
    edges = lines.ints(edge_rows, 2, what="tree edge")
    _check_range(lines, edge_rows, edges, 1, n_bags)
    td = TreeDecomposition(bags, edges - 1)
    if td.width + 1 != size and n_bags:
        raise lines.error(lineno, f"header states largest bag {size} but the largest has {td.width + 1}")
    return td, n


def write_tree_decomposition(td: TreeDecomposition, path, n: int) -> None:
    """Write ``td`` (0-based) as a PACE ``.td`` file (1-based); ``path="-"`` for stdout."""
    with _open_for_write(path) as fh:
        fh.write(f"s td {len(td.bags)} {td.width + 1} {n}\n")
        for i, bag in enumerate(td.bags):
            fh.write(" ".join(["b", str(i + 1), *map(str, (np.asarray(bag) + 1).tolist())]) + "\n")
        edges = np.asarray(td.edges, dtype=np.int64).reshape(-1, 2)
        _write_pairs(fh, "", edges[:, 0], edges[:, 1], 1)


def read_vertex_cover(path) -> tuple[np.ndarray, int]:
    """Read a PACE vertex-cover solution (``s vc n k`` + 1-based ids); returns (cover, n)."""
    lines, lineno, (n, k) = _solution_header(path, "vc", "s vc n k")
    rows = lines.items[1:]
    ids = lines.ints(rows, 1, what="vertex").ravel()
    _check_count(lines, lineno, k, len(ids), "cover vertices")
    _check_range(lines, rows, ids.reshape(-1, 1), 1, n)
    return np.sort(ids - 1), n


def write_vertex_cover(cover, path, n: int) -> None:
    """Write a cover (0-based ids) in the PACE solution format; ``path="-"`` for stdout."""
    cover = np.sort(np.asarray(cover, dtype=np.int64))
    with _open_for_write(path) as fh:
        fh.write(f"s vc {n} {len(cover)}\n")
        if len(cover):
            np.savetxt(fh, cover + 1, fmt="%d")
