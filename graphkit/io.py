"""Reading and writing graphs and solutions.

Formats: DIMACS (``p edge``/``p col``, ``e u v``), PACE ``.gr`` (``p td``/``p tw``;
1-based, or 0-based when vertex 0 occurs), PACE ``.td`` tree decompositions, PACE
vertex-cover solutions (``s vc n k``), METIS, plain edge lists (``u v [w]``, 0-based),
and Matrix Market. ``.gz``, ``.bz2`` and ``.xz`` files are decompressed transparently;
a file is read once, so pipes (``/dev/stdin``) work too.

Malformed input raises ``ValueError`` naming the file and line, and so does a header that
declares more vertices than the machine's memory holds (checked before allocating); a
missing file or a directory raises ``OSError``. A graph read from a file remembers how the
file numbers its vertices (:attr:`Graph.index_base`: 1 for DIMACS, METIS, Matrix Market and
1-based PACE files, 0 for edge lists and 0-based PACE files), so that the command line
answers in the file's numbering.
"""
from __future__ import annotations

import contextlib
import io
import operator
import os
import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernels.memory import check_host_memory
from matrices.mmio import first_non_finite_line, open_maybe_compressed, read_file_bytes

from .graph import Graph, graph_from_object

__all__ = [
    "FORMATS",
    "TreeDecomposition",
    "Bags",
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


class Bags(Sequence):
    """The bags of a tree decomposition as one vertex array with offsets (CSR).

    Reads as a sequence of arrays (``bags[i]`` is a view of ``vertices``) without one
    Python object per bag, so that a decomposition of millions of bags (an input with
    millions of isolated vertices) stays proportional in memory.

    Parameters
    ----------
    ptr : ndarray of int64
        ``len(bags) + 1`` offsets; bag ``i`` is ``vertices[ptr[i]:ptr[i + 1]]``.
    vertices : ndarray
        The bags' vertices, concatenated (ids, or names on a labelled graph).

    Examples
    --------
    >>> import numpy as np
    >>> bags = Bags(np.array([0, 2, 3]), np.array([4, 5, 6]))
    >>> len(bags), bags[0].tolist(), bags.sizes().tolist()
    (2, [4, 5], [2, 1])
    """

    __slots__ = ("ptr", "vertices")

    def __init__(self, ptr, vertices):
        self.ptr = np.asarray(ptr, dtype=np.int64)
        self.vertices = np.asarray(vertices)
        if self.ptr.ndim != 1 or self.ptr.size < 1 or self.ptr[0] != 0 or self.ptr[-1] != self.vertices.size:
            raise ValueError("ptr must run from 0 to len(vertices)")

    def __len__(self):
        return self.ptr.size - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = operator.index(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("bag index out of range")
        return self.vertices[self.ptr[i]: self.ptr[i + 1]]

    def __iter__(self):
        v, p = self.vertices, self.ptr.tolist()
        return (v[a:b] for a, b in zip(p[:-1], p[1:]))

    @classmethod
    def from_list(cls, bags) -> "Bags":
        """The bags of a sequence of vertex arrays."""
        arrays = [np.asarray(b).ravel() for b in bags]
        ptr = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum([a.size for a in arrays], out=ptr[1:])
        return cls(ptr, np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64))

    def sizes(self) -> np.ndarray:
        """Number of vertices of each bag."""
        return np.diff(self.ptr)

    def __repr__(self):
        return f"Bags({len(self)} bags, {self.vertices.size} entries)"


@dataclass
class TreeDecomposition:
    """Bags (0-based vertex arrays) and tree edges (``k x 2`` bag indices).

    Examples
    --------
    >>> import numpy as np
    >>> td = TreeDecomposition([np.array([0, 1, 2]), np.array([2, 3])], np.array([[0, 1]]))
    >>> td.width
    2
    """

    bags: Sequence = field(default_factory=list)
    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))

    @property
    def width(self) -> int:
        """Largest bag size minus one (-1 for no bags)."""
        if isinstance(self.bags, Bags):
            return int(self.bags.sizes().max()) - 1 if len(self.bags) else -1
        return max((len(b) for b in self.bags), default=0) - 1


# ------------------------------------------------------------------ helpers
def _plain_suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in _COMPRESSED:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


#: Bytes the tokenizer holds per byte of text (its per-byte masks, line numbers and
#: token spans), for the memory check before a file is read.
_TOKENIZER_BYTES_PER_BYTE = 12
#: Bytes a Graph needs per vertex while it is built (CSR row pointers and the conversion's
#: temporaries), for the check of a header's vertex count.
_BYTES_PER_VERTEX = 16


def _read_bytes(path: Path) -> bytes:
    return read_file_bytes(path, per_byte=_TOKENIZER_BYTES_PER_BYTE)


def _check_vertices(path: Path, line: int, n: int, what: str = "the header declares") -> None:
    """A graph of ``n`` vertices must fit in memory (``line``: 0-based, for the message)."""
    check_host_memory(_BYTES_PER_VERTEX * (n + 1), f"{path}:{line + 1}: {what} {n} vertices")


_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True
_CHUNK = 1 << 22  # tokens parsed per vectorized batch (bounds temporary memory)


class Tokens:
    """Vectorized tokenizer of a text file (no Python loop per line or token).

    Holds the whitespace-separated tokens (byte spans) with their physical line numbers;
    lines whose first token starts with one of ``comments`` are dropped. The remaining
    non-blank lines are the *content lines*: ``line[i]`` (0-based physical line),
    ``first[i]`` (index of its first token) and ``count[i]`` (number of tokens).
    Errors name the file and the 1-based physical line.
    """

    def __init__(self, path: Path, comments: bytes = b"", data: bytes | None = None):
        self.path = path
        self.data = _read_bytes(path) if data is None else data
        a = self.a = np.frombuffer(self.data, dtype=np.uint8)
        ws = _WHITESPACE[a]
        self.newlines = np.flatnonzero(a == 10)
        self.n_lines = len(self.newlines) + 1
        if a.size == 0 or ws.all():
            raise ValueError(f"{path}:1: empty file")
        edge = np.empty(a.size + 1, dtype=bool)  # token boundaries: whitespace changes
        edge[0] = True
        edge[-1] = True
        np.not_equal(ws[1:], ws[:-1], out=edge[1:-1])
        cuts = np.flatnonzero(edge)
        if ws[0]:
            cuts = cuts[1:]
        # cuts alternate start, end, start, end, ... (a trailing whitespace run adds one cut)
        starts, ends = cuts[0::2], cuts[1::2]
        starts = starts[: len(ends)]
        tline = np.cumsum(a == 10, dtype=np.int32 if a.size < 2**31 else np.int64)[starts]  # line of each token
        self.all_line_of_token = tline
        if comments:
            newline = np.empty(len(tline), dtype=bool)
            newline[:1] = True
            np.not_equal(tline[1:], tline[:-1], out=newline[1:])
            heads = np.flatnonzero(newline)
            is_comment = np.isin(a[starts[heads]], np.frombuffer(comments, dtype=np.uint8))
            self.comment_lines = tline[heads[is_comment]]
            if len(self.comment_lines):
                drop = np.zeros(self.n_lines, dtype=bool)
                drop[self.comment_lines] = True
                keep = ~drop[tline]
                starts, ends, tline = starts[keep], ends[keep], tline[keep]
        else:
            self.comment_lines = np.zeros(0, dtype=np.int64)
        self.starts, self.ends, self.tline = starts, ends, tline
        newline = np.empty(len(tline), dtype=bool)
        newline[:1] = True
        np.not_equal(tline[1:], tline[:-1], out=newline[1:])
        self.first = np.flatnonzero(newline)
        self.line = tline[self.first]
        self.count = np.diff(np.append(self.first, len(tline)))

    def __len__(self) -> int:
        return len(self.line)

    # -- messages
    def text(self, line: int) -> str:
        """Physical line ``line`` (0-based), stripped, for messages."""
        lo = self.newlines[line - 1] + 1 if line > 0 else 0
        hi = self.newlines[line] if line < len(self.newlines) else len(self.data)
        text = self.data[lo:hi].decode("utf-8", errors="replace").strip()
        return text if len(text) <= 80 else text[:77] + "..."

    def error(self, line: int, message: str) -> ValueError:
        return ValueError(f"{self.path}:{int(line) + 1}: {message}")

    def empty(self) -> ValueError:
        return ValueError(f"{self.path}:1: empty file")

    def tokens(self, i: int) -> list[str]:
        """Tokens of content line ``i`` as strings (for headers)."""
        lo, hi = self.first[i], self.first[i] + self.count[i]
        return [self.data[s:e].decode("utf-8", errors="replace") for s, e in zip(self.starts[lo:hi], self.ends[lo:hi])]

    # -- vectorized checks and conversions
    def expect_counts(self, rows, expected: int, what: str):
        """All content lines ``rows`` have ``expected`` tokens, else an error at the first."""
        bad = np.flatnonzero(self.count[rows] != expected)
        if len(bad):
            i = np.arange(len(self.line))[rows][bad[0]]
            raise self.error(self.line[i], f"expected {expected} fields in {what} line, got {self.count[i]}: "
                                           f"{self.text(self.line[i])!r}")

    def table(self, rows, ncols: int, skip: int = 0, what: str = "edge") -> np.ndarray:
        """Content lines ``rows`` as a ``(k, ncols)`` int64 table of the tokens after ``skip``."""
        rows = np.arange(len(self.line))[rows]
        self.expect_counts(rows, skip + ncols, what)
        tok = (self.first[rows][:, None] + np.arange(skip, skip + ncols)).ravel()
        return self.ints(tok, what).reshape(len(rows), ncols)

    def ints(self, tok, what: str = "edge") -> np.ndarray:
        """Parse tokens ``tok`` (indices) as int64, vectorized; errors name the line."""
        tok = np.asarray(tok, dtype=np.int64)
        out = np.empty(len(tok), dtype=np.int64)
        for lo in range(0, len(tok), _CHUNK):
            out[lo:lo + _CHUNK] = self._ints(tok[lo:lo + _CHUNK], what)
        return out

    def _ints(self, tok, what):
        if not len(tok):
            return np.zeros(0, dtype=np.int64)
        a = self.a
        s = self.starts[tok]
        length = self.ends[tok] - s
        neg = a[s] == 45  # '-'
        sign = neg | (a[s] == 43)  # '+'
        ndigits = length - sign
        bad = (ndigits < 1) | (ndigits > 18)
        width = int(min(length.max(), 19))
        itype = np.int32 if width <= 9 else np.int64  # int32 is faster and cannot overflow here
        value = np.zeros(len(tok), dtype=itype)
        last = len(a) - 1
        for j in range(width):  # Horner over digit positions
            live = j < length
            digit = a[np.minimum(s + j, last)].astype(itype) - 48
            if j == 0:
                digit[sign] = 0
            bad |= live & ((digit < 0) | (digit > 9))
            np.copyto(value, value * 10 + digit, where=live)
        if bad.any():
            line = self.tline[tok[np.flatnonzero(bad)[0]]]
            raise self.error(line, f"non-numeric token in {what} line: {self.text(line)!r}")
        value = value.astype(np.int64, copy=False)
        value[neg] *= -1
        return value

    def floats(self, tok, what: str = "edge") -> np.ndarray:
        """Parse tokens ``tok`` as float64 (C parser on the selected spans)."""
        tok = np.asarray(tok, dtype=np.int64)
        if not len(tok):
            return np.zeros(0, dtype=np.float64)
        s, e = self.starts[tok], self.ends[tok]
        mark = np.zeros(len(self.a) + 1, dtype=np.int8)  # +1 at token starts, -1 at ends
        mark[s] = 1
        mark[e] -= 1
        inside = np.cumsum(mark[:-1], dtype=np.int8).view(bool)
        buf = np.where(inside, self.a, np.uint8(32))  # everything else becomes blanks
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                out = np.fromstring(buf.tobytes(), dtype=np.float64, sep=" ")
            if len(out) == len(tok):
                return out
        except (ValueError, DeprecationWarning):
            pass
        for k in range(len(tok)):  # error path only: find the offending token
            try:
                float(self.data[s[k]:e[k]])
            except ValueError:
                line = self.tline[tok[k]]
                raise self.error(line, f"non-numeric token in {what} line: {self.text(line)!r}") from None
        raise ValueError(f"{self.path}: could not parse numbers")  # pragma: no cover

    def check_finite(self, values: np.ndarray, tok, what: str = "weight"):
        """Raise at the first NaN or infinite value (``tok``: its token indices)."""
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            line = self.tline[np.asarray(tok).ravel()[bad[0]]]
            raise self.error(line, f"{what} is NaN or infinite (a graph's weights must be finite): "
                                   f"{self.text(line)!r}")

    def check_range(self, values: np.ndarray, tok, lo: int, hi: int, what="vertex id"):
        """Raise at the first value outside ``lo..hi`` (``tok``: its token indices)."""
        bad = np.flatnonzero((values < lo) | (values > hi))
        if len(bad):
            line = self.tline[np.asarray(tok).ravel()[bad[0]]]
            raise self.error(line, f"{what} out of range {lo}..{hi}: {self.text(line)!r}")


def _header(t: Tokens, expected: tuple[str, ...], fmt: str):
    if not len(t):
        raise t.empty()
    line, parts = t.line[0], t.tokens(0)
    if len(parts) < 4 or parts[0] != "p" or parts[1] not in expected:
        raise t.error(line, f"bad {fmt} header {t.text(line)!r}, expected 'p {'|'.join(expected)} n m'")
    if len(parts) > 4:
        raise t.error(line, f"bad {fmt} header {t.text(line)!r}: trailing fields")
    try:
        n, m = int(parts[2]), int(parts[3])
    except ValueError:
        raise t.error(line, f"non-numeric size in header {t.text(line)!r}") from None
    if n < 0 or m < 0:
        raise t.error(line, "negative size in header")
    return line, n, m


def _check_count(t: Tokens, hdr_line: int, stated: int, found: int, what="edges"):
    if stated != found:
        raise t.error(hdr_line, f"header states {stated} {what} but the file has {found}")


def _pair_tokens(t: Tokens, rows, skip: int):
    return t.first[rows][:, None] + np.arange(skip, skip + 2)


# ------------------------------------------------------------------ readers
def _read_dimacs(path: Path, data: bytes | None = None) -> Graph:
    t = Tokens(path, b"c", data)
    hdr, n, m = _header(t, ("edge", "col", "edges"), "DIMACS")
    _check_vertices(path, hdr, n)
    rows = slice(1, None)
    heads = t.first[rows]
    is_e = (t.ends[heads] - t.starts[heads] == 1) & (t.a[t.starts[heads]] == ord("e"))
    if not is_e.all():
        line = t.line[1 + np.flatnonzero(~is_e)[0]]
        raise t.error(line, f"expected an edge line 'e u v', got {t.text(line)!r}")
    edges = t.table(rows, 2, skip=1)
    _check_count(t, hdr, m, len(edges))
    t.check_range(edges, _pair_tokens(t, rows, 1), 1, n)
    return _numbered(Graph.from_edges(n, edges[:, 0] - 1, edges[:, 1] - 1), 1)


def _read_pace(path: Path, data: bytes | None = None) -> Graph:
    t = Tokens(path, b"c", data)
    hdr, n, m = _header(t, ("td", "tw", "vc"), "PACE")
    _check_vertices(path, hdr, n)
    rows = slice(1, None)
    edges = t.table(rows, 2)
    _check_count(t, hdr, m, len(edges))
    base = 0 if (edges.size and edges.min() == 0) else 1  # 0-based files exist (DESIGN.md)
    t.check_range(edges, _pair_tokens(t, rows, 0), base, n - 1 + base)
    return _numbered(Graph.from_edges(n, edges[:, 0] - base, edges[:, 1] - base), base)


def _read_metis(path: Path, data: bytes | None = None) -> Graph:
    t = Tokens(path, b"%", data)
    if not len(t):
        raise t.empty()
    hdr_line, head = t.line[0], t.tokens(0)
    try:
        if not 2 <= len(head) <= 4:
            raise ValueError
        n, m = int(head[0]), int(head[1])
        fmt = head[2] if len(head) > 2 else "0"
        if len(fmt) > 3 or set(fmt) - {"0", "1"}:
            raise ValueError
        fmt = fmt.zfill(3)
        ncon = int(head[3]) if len(head) > 3 else (1 if fmt[1] == "1" else 0)
        if n < 0 or m < 0 or ncon < 0:
            raise ValueError
    except ValueError:
        raise t.error(hdr_line, f"bad METIS header {t.text(hdr_line)!r}, expected 'n m [fmt [ncon]]'") from None
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    skip = int(has_size) + (ncon if has_vw else 0)
    step = 2 if has_ew else 1
    # METIS keeps a (possibly empty) line per vertex: body = physical lines after the
    # header that are not comments; trailing blank lines beyond n are ignored
    n_real = t.n_lines - (1 if t.data.endswith(b"\n") else 0)  # no line after a final newline
    is_body = np.zeros(t.n_lines, dtype=bool)
    is_body[hdr_line + 1:n_real] = True
    is_body[t.comment_lines] = False
    body = np.flatnonzero(is_body)
    per_line = np.bincount(t.tline, minlength=t.n_lines)
    filled = np.flatnonzero(per_line[body])
    keep = max(n, int(filled[-1]) + 1 if len(filled) else 0)
    body = body[:keep]
    if len(body) != n:
        raise t.error(hdr_line, f"header states {n} vertices but the file has {len(body)} adjacency lines")
    vertex_of_line = np.full(t.n_lines, -1, dtype=np.int64)
    vertex_of_line[body] = np.arange(n)
    tok = np.arange(t.first[0] + t.count[0], len(t.tline))
    vert = vertex_of_line[t.tline[tok]]
    line_first = np.full(t.n_lines, 0, dtype=np.int64)
    line_first[t.line] = t.first
    pos = tok - line_first[t.tline[tok]]
    short = (per_line[body] < skip) | ((per_line[body] - skip) % step != 0)
    if short.any():
        line = body[np.flatnonzero(short)[0]]
        raise t.error(line, f"expected {skip} vertex weight(s) then {'(neighbour, weight) pairs' if has_ew else 'neighbours'}: "
                            f"{t.text(line)!r}")
    if skip:
        t.floats(tok[pos < skip], "adjacency")  # vertex sizes/weights: numeric, otherwise unused
    nb_tok = tok[(pos >= skip) & ((pos - skip) % step == 0)]
    nbrs = t.ints(nb_tok, "adjacency")
    t.check_range(nbrs, nb_tok, 1, n)
    u, v = vert[(pos >= skip) & ((pos - skip) % step == 0)], nbrs - 1
    w = None
    if has_ew:
        w_tok = tok[(pos >= skip) & ((pos - skip) % step == 1)]
        w = t.floats(w_tok, "adjacency")
        t.check_finite(w, w_tok, "edge weight")
    loops = u == v
    if loops.any():
        line = t.tline[nb_tok[np.flatnonzero(loops)[0]]]
        raise t.error(line, f"vertex lists itself as a neighbour: {t.text(line)!r}")
    # every edge must be listed from both ends
    fwd, bwd = u < v, u > v
    key_f = u[fwd] * n + v[fwd]
    key_b = v[bwd] * n + u[bwd]
    if len(key_f) != len(key_b) or not np.array_equal(np.sort(key_f), np.sort(key_b)):
        one_sided = np.setxor1d(key_f, key_b)
        if len(one_sided):
            a, b = divmod(int(one_sided[0]), n)
            hit = np.flatnonzero(((u == a) & (v == b)) | ((u == b) & (v == a)))[0]
            line = t.tline[nb_tok[hit]]
            raise t.error(line, f"edge {a + 1}-{b + 1} is listed at only one of its endpoints")
        line = body[0] if len(body) else hdr_line
        raise t.error(line, "an edge is listed more than once")
    if len(key_f) != m:
        raise t.error(hdr_line, f"header states {m} edges but the adjacency lists hold {len(key_f)}")
    if w is not None:  # the two ends of an edge must state the same weight
        of, ob = np.argsort(key_f, kind="stable"), np.argsort(key_b, kind="stable")
        differ = np.flatnonzero(w[fwd][of] != w[bwd][ob])
        if len(differ):
            a, b = divmod(int(key_f[of][differ[0]]), n)
            line = t.tline[nb_tok[np.flatnonzero(bwd)[ob][differ[0]]]]
            raise t.error(line, f"edge {a + 1}-{b + 1} has weight {w[fwd][of][differ[0]]!r} at vertex {a + 1} but "
                                f"{w[bwd][ob][differ[0]]!r} here, at vertex {b + 1}")
    return _numbered(Graph.from_edges(n, u[fwd], v[fwd], None if w is None else w[fwd]), 1)


def _read_edgelist(path: Path, data: bytes | None = None) -> Graph:
    t = Tokens(path, b"#%", data)
    # optional size comment on the first line, as written by write_graph: '# n=5 m=3'
    stated = re.match(rb"\s*[#%][^\n]*?\bn\s*=\s*(\d+)", t.data[: t.newlines[0] if len(t.newlines) else None])
    n_stated = int(stated.group(1)) if stated else None
    if n_stated is not None:
        _check_vertices(path, 0, n_stated, "the size comment declares")
    if not len(t):
        if n_stated is not None:
            return _numbered(Graph.from_edges(n_stated, np.zeros(0, np.int64), np.zeros(0, np.int64)), 0)
        raise t.empty()
    ncols = int(t.count[0])
    if ncols not in (2, 3):
        raise t.error(t.line[0], f"expected 'u v' or 'u v w', got {t.text(t.line[0])!r}")
    t.expect_counts(slice(None), ncols, "edge")
    tok = t.first[:, None] + np.arange(2)
    edges = t.ints(tok.ravel()).reshape(-1, 2)
    w = t.floats(t.first + 2) if ncols == 3 else None
    if w is not None:
        t.check_finite(w, t.first + 2)
    if edges.size and edges.min() < 0:
        line = t.tline[tok.ravel()[np.flatnonzero(edges.ravel() < 0)[0]]]
        raise t.error(line, f"negative vertex id: {t.text(line)!r}")
    n = int(edges.max()) + 1 if edges.size else 0
    if n_stated is not None:
        t.check_range(edges, tok, 0, n_stated - 1)
        n = n_stated
    elif edges.size:
        _check_vertices(path, t.tline[tok.ravel()[int(np.argmax(edges))]], n, "vertex ids up to")
    return _numbered(Graph.from_edges(n, edges[:, 0], edges[:, 1], w), 0)


def _read_mtx(path: Path, data: bytes | None = None) -> Graph:
    """Graph of a Matrix Market file: edges from the off-diagonal pattern.

    ``pattern`` files give an unweighted graph; otherwise the weights are those of the
    matrix graph used everywhere in the project (:meth:`Graph.from_scipy`): ``|a_ij|`` for
    a symmetric matrix, ``|a_ij| + |a_ji|`` for an unsymmetric one."""
    from matrices.mmio import mm_header, read_matrix

    field = mm_header(path, data=data)[2]
    A = read_matrix(path, data=data)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{path}:2: a graph needs a square matrix, got shape {A.shape}")
    if A.nnz and not np.isfinite(A.data).all():
        line = first_non_finite_line(path, data=data)
        raise ValueError(f"{path}:{line or 2}: NaN or infinite entry: a graph's weights must be finite")
    return _numbered(Graph.from_scipy(A, weighted=field != "pattern"), 1)


def _numbered(G: Graph, base: int) -> Graph:
    G.index_base = base
    return G


_READERS = {"dimacs": _read_dimacs, "pace": _read_pace, "metis": _read_metis, "edgelist": _read_edgelist, "mtx": _read_mtx}


def _looks_like_metis(lines: list[str]) -> bool:
    """A METIS header ``n m [fmt [ncon]]`` followed by exactly ``n`` adjacency lines (and,
    without edge weights, ``2 m`` neighbours)."""
    body = [s for s in (line.strip() for line in lines) if not s.startswith("%")]
    while body and not body[0]:
        body.pop(0)
    if not body:
        return False
    head = body[0].split()
    if not 2 <= len(head) <= 4 or not all(h.isdigit() for h in head) or int(head[0]) < 1:
        return False
    if len(head) > 2 and (len(head[2]) > 3 or set(head[2]) - {"0", "1"}):
        return False
    rest = body[1:]
    while len(rest) > int(head[0]) and not rest[-1]:
        rest.pop()
    if len(rest) != int(head[0]):
        return False
    if len(head) == 2 or int(head[2]) == 0:  # plain adjacency lists: every edge is listed twice
        return sum(len(s.split()) for s in rest) == 2 * int(head[1])
    return True


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _looks_like_edgelist(lines: list[str]) -> bool:
    """Every line (comments ``#``/``%`` and blank lines aside) is ``u v`` or ``u v w``."""
    for line in lines:
        parts = line.split()
        if not parts or parts[0][0] in "#%":
            continue
        if len(parts) not in (2, 3) or not (parts[0].isdigit() and parts[1].isdigit()):
            return False
        if len(parts) == 3 and not _NUMBER.match(parts[2]):
            return False
    return True


def _sniff(path: Path, data: bytes | None = None) -> str:
    if data is None:
        from matrices.mmio import DECOMPRESSION_ERRORS

        if path.is_dir():
            raise IsADirectoryError(f"{path}: is a directory, not a file")
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        try:
            with open_maybe_compressed(path, "rb") as fh:
                data = fh.read(1 << 16)
        except DECOMPRESSION_ERRORS as exc:
            raise ValueError(f"{path}: cannot decompress ({exc})") from exc
    head = data[: 1 << 16].decode("utf-8", errors="replace").splitlines()[:200]
    for line in head:
        s = line.strip()
        if not s:
            continue
        if s.startswith("%%MatrixMarket"):
            return "mtx"
        if s.startswith(("c ", "#", "%")) or s == "c":
            continue
        parts = s.split()
        if parts[0] == "p" and len(parts) > 1:
            return "dimacs" if parts[1] in ("edge", "col", "edges") else "pace"
        if 2 <= len(parts) <= 4 and all(p.isdigit() for p in parts):
            if len(data) >= 1 << 16:  # the whole file decides
                data = _read_bytes(path)
            lines = data.decode("utf-8", errors="replace").splitlines()
            if _looks_like_metis(lines):
                if _looks_like_edgelist(lines):
                    raise ValueError(f"{path}: the file reads both as METIS and as an edge list; say which with "
                                     "format='metis' or format='edgelist' (--format on the command line)")
                return "metis"
        break
    return "edgelist"


def guess_format(path) -> str:
    """Format of a graph file from its extension, else from its header.

    Files without a known extension are sniffed: ``%%MatrixMarket`` banner, ``p edge|col``
    (DIMACS), ``p td|tw`` (PACE), a METIS header followed by exactly ``n`` adjacency lines,
    else an edge list.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "graph")
    >>> _ = open(path, "w").write("c no extension\\np edge 2 1\\ne 1 2\\n")
    >>> guess_format(path), guess_format("x.gr.xz"), guess_format("x.graph")
    ('dimacs', 'pace', 'metis')
    """
    return _guess_format(Path(path))


def _guess_format(path: Path, data: bytes | None = None) -> str:
    suffix = _plain_suffix(path)
    if suffix == ".txt" and (data is not None or path.exists()):  # generic extension: trust the header first
        return _sniff(path, data)
    return _EXTENSIONS.get(suffix) or _sniff(path, data)


def read_graph(path, format: str | None = None) -> Graph:  # noqa: A002 - networkx-style name
    """Read a graph file; the format is guessed from the extension and header.

    Parameters
    ----------
    path : str or Path
        ``.clq/.dimacs/.col`` (DIMACS), ``.gr`` (PACE), ``.graph/.metis`` (METIS),
        ``.mtx`` (Matrix Market), anything else is sniffed; ``.gz/.bz2/.xz`` allowed.
    format : {"dimacs", "pace", "metis", "edgelist", "mtx"}, optional
        Needed when a file without a telling extension reads both as METIS and as an edge
        list (``ValueError`` otherwise).

    Returns
    -------
    Graph
        With :attr:`Graph.index_base` set to the file's numbering of vertex 0 (0 or 1).

    Raises
    ------
    ValueError
        Malformed content (naming the file and line), sizes beyond the machine's memory.
    OSError
        A missing file or a directory.

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
    if format is not None and format.lower() not in _READERS:
        raise ValueError(f"unknown graph format {format!r}; choose one of {FORMATS}")
    # a pipe or device can be read once only: its bytes serve the guess and the reader
    data = None if path.is_file() or path.is_dir() else _read_bytes(path)
    fmt = (format or _guess_format(path, data)).lower()
    return _READERS[fmt](path, data)


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


def _write_pairs(fh, prefix: str, u, v, base: int, w=None):
    """Write rows ``prefix u+base v+base [w]`` (``w`` with round-trip ``repr``)."""
    if not len(u):
        return
    u = (np.asarray(u, dtype=np.int64) + base).tolist()
    v = (np.asarray(v, dtype=np.int64) + base).tolist()
    if w is None:
        rows = (f"{prefix}{a} {b}" for a, b in zip(u, v))
    else:
        rows = (f"{prefix}{a} {b} {c!r}" for a, b, c in zip(u, v, np.asarray(w, dtype=np.float64).tolist()))
    fh.write("\n".join(rows) + "\n")


def write_graph(G, path, format: str | None = None) -> None:  # noqa: A002
    """Write a graph in DIMACS, PACE ``.gr``, METIS, edge-list or Matrix Market format.

    Parameters
    ----------
    G : Graph, networkx or igraph graph, or sparse matrix (anything but a file path that
        :func:`graphkit.as_graph` accepts)
    path : str, Path, ``"-"`` (stdout) or an open text file
        ``.gz/.bz2/.xz`` suffixes compress.
    format : {"dimacs", "pace", "metis", "edgelist", "mtx"}, optional
        Guessed from the extension (default edge list).

    Notes
    -----
    Vertex ids are written 1-based except in edge lists (0-based ``u v [w]`` lines after a
    ``# n=<vertices> m=<edges>`` comment, which the reader uses to keep isolated vertices). Weights are written by edge lists
    (third column), METIS (``fmt 001``; float weights are an extension of METIS) and
    Matrix Market (``real``; an unweighted graph becomes a ``pattern`` file); DIMACS and
    PACE files carry no weights.

    Examples
    --------
    >>> import graphkit
    >>> G = graphkit.Graph.from_edges(3, [0, 1], [1, 2])
    >>> graphkit.write_graph(G, "-", format="pace")
    p td 3 2
    1 2
    2 3
    >>> graphkit.write_graph(G, "-", format="metis")
    3 2
    2
    1 3
    2
    """
    G = graph_from_object(G)
    suffix = _plain_suffix(Path(path)) if isinstance(path, (str, os.PathLike)) else ""
    fmt = (format or _EXTENSIONS.get(suffix, "edgelist")).lower()
    if fmt == "mtx":
        import scipy.io

        with _open_for_write(path) as fh:
            buf = io.BytesIO()
            A = G.to_scipy()
            scipy.io.mmwrite(buf, A, symmetry="symmetric", field=None if G.weighted else "pattern")
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
            fh.write(f"# n={G.n} m={G.m}\n")  # keeps trailing isolated vertices
            _write_pairs(fh, "", u, v, 0, e[2] if G.weighted else None)
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
    """Tokens of a PACE solution file and the integers of its ``s <kind> ...`` line."""
    t = Tokens(Path(path), b"c")
    if not len(t):
        raise t.empty()
    lineno, parts = t.line[0], t.tokens(0)
    if len(parts) != len(expected.split()) or parts[:2] != ["s", kind]:
        raise t.error(lineno, f"bad header {t.text(lineno)!r}, expected {expected!r}")
    try:
        values = tuple(int(p) for p in parts[2:])
    except ValueError:
        raise t.error(lineno, f"non-numeric header {t.text(lineno)!r}") from None
    if min(values) < 0:
        raise t.error(lineno, "negative number in header")
    return t, lineno, values


def read_tree_decomposition(path, *, base: int = 1) -> tuple[TreeDecomposition, int]:
    """Read a PACE ``.td`` file (``s td bags width+1 n``, ``b i v...``, tree edges ``i j``).

    ``base``: the file's id of vertex 0 (1 in PACE files; 0 for a decomposition of a
    0-based graph, as ``graphkit tw`` writes it); bag ids are always 1-based.

    Returns
    -------
    td : TreeDecomposition
        Bags as 0-based vertex arrays (bag ``i`` of the file is ``td.bags[i - 1]``), tree
        edges as 0-based bag indices.
    n : int
        Number of vertices of the decomposed graph.

    Raises
    ------
    ValueError
        Bad header, bag or vertex id out of range, a bag missing or listed twice, a width
        that differs from the header, tree edges that do not form a tree on the bags (a
        number other than ``bags - 1``, a self-loop, a repeated edge, a cycle) (the message
        names the file and line).

    Examples
    --------
    >>> import graphkit, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "path.td")
    >>> _ = open(path, "w").write("s td 2 2 3\\nb 1 1 2\\nb 2 2 3\\n1 2\\n")
    >>> td, n = graphkit.read_tree_decomposition(path)
    >>> n, td.width, [b.tolist() for b in td.bags], td.edges.tolist()
    (3, 1, [[0, 1], [1, 2]], [[0, 1]])
    """
    if base not in (0, 1):
        raise ValueError(f"base must be 0 or 1, got {base!r}")
    t, lineno, (n_bags, size, n) = _solution_header(path, "td", "s td bags width+1 n")
    rows = np.arange(1, len(t))
    heads = t.first[rows]
    is_bag = (t.ends[heads] - t.starts[heads] == 1) & (t.a[t.starts[heads]] == ord("b"))
    brows, erows = rows[is_bag], rows[~is_bag]
    if np.any(t.count[brows] < 2):
        line = t.line[brows[np.flatnonzero(t.count[brows] < 2)[0]]]
        raise t.error(line, f"bag line without a bag id: {t.text(line)!r}")
    id_tok = t.first[brows] + 1
    ids = t.ints(id_tok, "bag")
    t.check_range(ids, id_tok, 1, n_bags, "bag id")
    order = np.argsort(ids, kind="stable")
    again = np.flatnonzero(np.diff(ids[order]) == 0)
    if len(again):
        line = t.line[brows[order[again[0] + 1]]]
        raise t.error(line, f"bag {ids[order[again[0]]]} is listed twice")
    if len(ids) != n_bags:  # ids are distinct and in 1..n_bags: the first gap is missing
        listed = ids[order]
        gaps = np.flatnonzero(listed != np.arange(1, len(listed) + 1))
        missing = int(gaps[0]) + 1 if len(gaps) else len(listed) + 1
        raise t.error(lineno, f"bag {missing} is not listed (the header states {n_bags} bags, the file has "
                              f"{len(ids)})")
    sizes = t.count[brows] - 2
    vtok = np.repeat(t.first[brows] + 2 - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
    verts = t.ints(vtok, "bag")
    t.check_range(verts, vtok, base, n - 1 + base)
    per_line = np.split(verts - base, np.cumsum(sizes)[:-1]) if len(sizes) else []
    bags = [per_line[k] for k in order]
    edges = t.table(erows, 2, what="tree edge")
    t.check_range(edges, t.first[erows][:, None] + np.arange(2), 1, n_bags, "bag id")
    td = TreeDecomposition(bags, edges - 1)
    if n_bags and td.width + 1 != size:
        raise t.error(lineno, f"header states largest bag {size} but the largest has {td.width + 1}")
    if n_bags and len(edges) != n_bags - 1:
        raise t.error(lineno, f"a tree on {n_bags} bags has {n_bags - 1} edges, the file has {len(edges)}")
    _check_tree(t, erows, edges - 1, n_bags)
    return td, n


def _check_tree(t: Tokens, erows, edges: np.ndarray, n_bags: int) -> None:
    """``n_bags - 1`` tree edges form a tree: no self-loop, no repeated edge, no cycle."""
    if not len(edges):
        return
    loops = np.flatnonzero(edges[:, 0] == edges[:, 1])
    if len(loops):
        line = t.line[erows[loops[0]]]
        raise t.error(line, f"tree edge joins bag {edges[loops[0], 0] + 1} to itself")
    lo, hi = edges.min(axis=1), edges.max(axis=1)
    order = np.lexsort((hi, lo))
    again = np.flatnonzero((lo[order][1:] == lo[order][:-1]) & (hi[order][1:] == hi[order][:-1]))
    if len(again):
        k = order[again[0] + 1]
        raise t.error(t.line[erows[k]], f"tree edge {lo[k] + 1}-{hi[k] + 1} is listed twice")
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    T = sp.coo_matrix((np.ones(len(edges)), (lo, hi)), shape=(n_bags, n_bags))
    if connected_components(T, directed=False)[0] != 1:  # n - 1 edges, not connected: a cycle
        raise t.error(t.line[erows[0]], "the tree edges contain a cycle (they do not connect every bag)")


def write_tree_decomposition(td: TreeDecomposition, path, n: int, *, base: int = 1) -> None:
    """Write ``td`` (0-based) as a PACE ``.td`` file; ``path="-"`` for stdout.

    ``base``: the id vertex 0 gets in the file (PACE: 1; 0 for a 0-based input graph).
    Bag ids are 1-based, as in PACE.

    Examples
    --------
    >>> import numpy as np, graphkit
    >>> td = graphkit.TreeDecomposition([np.array([0, 1]), np.array([1, 2])], np.array([[0, 1]]))
    >>> graphkit.write_tree_decomposition(td, "-", n=3)
    s td 2 2 3
    b 1 1 2
    b 2 2 3
    1 2
    """
    n = int(n)
    bags = td.bags if isinstance(td.bags, Bags) else Bags.from_list(td.bags)
    sizes = bags.sizes()
    with _open_for_write(path) as fh:
        fh.write(f"s td {len(bags)} {td.width + 1} {n}\n")
        # runs of bags of one size are written as the rows of a matrix
        cuts = np.flatnonzero(np.diff(sizes)) + 1
        starts = np.concatenate([[0], cuts]).astype(np.int64)
        ends = np.concatenate([cuts, [sizes.size]]).astype(np.int64)
        for a, b in zip(starts.tolist(), ends.tolist()):
            if a == b:
                continue
            k = int(sizes[a])
            rows = np.empty((b - a, k + 1), dtype=np.int64)
            rows[:, 0] = np.arange(a + 1, b + 1)
            rows[:, 1:] = bags.vertices[bags.ptr[a]: bags.ptr[b]].astype(np.int64).reshape(b - a, k) + base
            _write_int_rows(fh, rows, "b ")
        edges = np.asarray(td.edges, dtype=np.int64).reshape(-1, 2)
        _write_int_rows(fh, edges + 1)


def _write_int_rows(fh, rows, prefix: str = "", chunk: int = 1 << 18) -> None:
    """Write the non-negative integer matrix ``rows`` as text lines ``prefix a b c``.

    Digits are computed with array operations (no Python object per number), so that
    decompositions of millions of bags are written in seconds.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 2 or (rows.size and rows.min() < 0):
        raise ValueError("rows must be a matrix of non-negative integers")
    pre = np.frombuffer(prefix.encode("ascii"), dtype=np.uint8)
    for c in range(0, rows.shape[0], chunk):
        M = rows[c: c + chunk]
        r, k = M.shape
        top = int(M.max()) if M.size else 0
        D = len(str(top))
        power = 10 ** np.arange(D - 1, -1, -1, dtype=np.int64)
        digits = (M[:, :, None] // power) % 10  # (r, k, D), most significant first
        ndig = np.maximum(1, (M[:, :, None] >= power).sum(axis=2))
        cells = np.empty((r, k, D + 1), dtype=np.uint8)
        cells[:, :, :D] = digits + ord("0")
        cells[:, :, D] = ord(" ")
        cells[:, -1, D] = ord("\n")
        keep = np.arange(D + 1)[None, None, :] >= (D - ndig)[:, :, None]
        if pre.size:
            line = np.concatenate([np.broadcast_to(pre, (r, pre.size)), cells.reshape(r, -1)], axis=1)
            mask = np.concatenate([np.ones((r, pre.size), dtype=bool), keep.reshape(r, -1)], axis=1)
        else:
            line, mask = cells.reshape(r, -1), keep.reshape(r, -1)
        fh.write(line[mask].tobytes().decode("ascii"))


def read_vertex_cover(path, *, base: int = 1) -> tuple[np.ndarray, int]:
    """Read a PACE vertex-cover solution (``s vc n k``, then ``k`` vertex ids, 1-based;
    ``base=0`` for a cover of a 0-based graph, as ``graphkit vc`` writes it).

    Returns
    -------
    cover : ndarray of int64
        Sorted 0-based vertex ids.
    n : int
        Number of vertices stated in the header.

    Examples
    --------
    >>> import graphkit, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "g.vc")
    >>> _ = open(path, "w").write("s vc 4 2\\n3\\n1\\n")
    >>> graphkit.read_vertex_cover(path)
    (array([0, 2]), 4)
    """
    if base not in (0, 1):
        raise ValueError(f"base must be 0 or 1, got {base!r}")
    t, lineno, (n, k) = _solution_header(path, "vc", "s vc n k")
    rows = np.arange(1, len(t))
    ids = t.table(rows, 1, what="vertex").ravel()
    _check_count(t, lineno, k, len(ids), "cover vertices")
    t.check_range(ids, t.first[rows], base, n - 1 + base)
    order = np.argsort(ids, kind="stable")
    again = np.flatnonzero(np.diff(ids[order]) == 0)
    if len(again):
        line = t.line[rows[order[again[0] + 1]]]
        raise t.error(line, f"vertex {ids[order[again[0]]]} is listed twice")
    return ids[order] - base, n


def write_vertex_cover(cover, path, n: int, *, base: int = 1) -> None:
    """Write a cover (0-based ids) in the PACE solution format; ``path="-"`` for stdout;
    ``base``: the id vertex 0 gets in the file (PACE: 1).

    Examples
    --------
    >>> import graphkit
    >>> graphkit.write_vertex_cover([2, 0], "-", n=4)
    s vc 4 2
    1
    3
    """
    cover = np.sort(np.asarray(cover, dtype=np.int64).ravel())
    if cover.size and (cover[0] < 0 or cover[-1] >= n):
        raise ValueError(f"cover vertex ids must lie in 0..{n - 1}")
    if np.any(np.diff(cover) == 0):
        raise ValueError("cover lists a vertex twice")
    with _open_for_write(path) as fh:
        fh.write(f"s vc {n} {len(cover)}\n")
        if len(cover):
            fh.write("\n".join(map(str, (cover + base).tolist())) + "\n")
