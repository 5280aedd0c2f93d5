"""The graph type every graphkit solver takes: CSR, simple, undirected, optionally with
the names (labels) of its vertices.

Labels: a graph made from a networkx graph (or an igraph graph with vertex names) keeps
the input's node names in :attr:`Graph.labels`, vertex ``i`` being the ``i``-th node. The
solvers then answer in those names (:meth:`Graph.to_labels`) and the checkers take them
(:meth:`Graph.to_ids`); a graph without labels names its vertices ``0 .. n-1``.
"""
from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from kernels.backend import is_device_array, to_host

if TYPE_CHECKING:
    import networkx as nx
    import scipy.sparse as sp

__all__ = ["Graph", "graph_from_object"]

_INT32_MAX = np.iinfo(np.int32).max
_PAIR_KEY_MAX_N = 3_000_000_000  # n * n < 2**63: the edge key lo * n + hi fits in int64


def _index_dtype(n: int, nnz: int):
    return np.int32 if max(n, nnz) <= _INT32_MAX else np.int64


class Graph:
    """Simple undirected graph in CSR form with sorted neighbour lists.

    Vertices are ``0 .. n-1``; each undirected edge appears in both rows. Indices are
    int32 when ``n`` and ``2m`` fit, else int64. Optional ``weights`` are float64 and
    aligned with ``indices`` (the same value in both directions). Optional ``labels``
    name the vertices (``labels[i]`` is vertex ``i``'s name, e.g. a networkx node): the
    solvers' results then use these names (see :meth:`to_labels`, :meth:`to_ids`).

    Construct with :meth:`from_edges`, :meth:`from_scipy`, :meth:`from_networkx`,
    :meth:`from_igraph`, :func:`graphkit.as_graph` or :func:`graphkit.read_graph`, or
    from CSR arrays: ``Graph(indptr, indices)`` checks them (symmetric, sorted rows, no
    self-loops, no duplicates, indices in range, weights finite and symmetric; ``ValueError``
    otherwise, in ``O(m log m)``). ``check=False`` skips that at construction; every solver
    then runs the same check (once) before it starts, since an invalid graph could make
    it loop forever.

    Examples
    --------
    >>> import numpy as np
    >>> G = Graph.from_edges(4, np.array([0, 1, 2]), np.array([1, 2, 3]))
    >>> G
    Graph(n=4, m=3)
    >>> G.neighbors(1)
    array([0, 2], dtype=int32)
    """

    def __init__(self, indptr, indices, weights=None, labels=None, *, check: bool = True):
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        for name, a in (("indptr", indptr), ("indices", indices)):
            if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
                raise TypeError(f"{name} must be a 1-D integer array, got {a.dtype} of shape {a.shape}")
        n = len(indptr) - 1
        if n < 0:
            raise ValueError("indptr must have at least one entry")
        itype = _index_dtype(n, len(indices))
        self.indptr = indptr.astype(itype, copy=False)
        self.indices = indices.astype(itype, copy=False)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        if self.weights is not None and len(self.weights) != len(self.indices):
            raise ValueError("weights must be aligned with indices")
        if labels is not None and len(labels) != n:
            raise ValueError(f"labels must name every vertex: {len(labels)} labels for {n} vertices")
        self.labels = labels
        self._device = None
        self._label_index = None  # label -> vertex id, built when first needed
        self._valid = False
        #: How the file the graph was read from numbers vertex 0 (0 or 1; 0 for graphs not
        #: read from a file): the command line prints vertex ``v`` as ``v + index_base``.
        self.index_base = 0
        if check:
            self.validate()

    @classmethod
    def _trusted(cls, indptr, indices, weights=None, labels=None) -> Graph:
        """A graph from CSR arrays that are valid by construction (no check)."""
        G = cls(indptr, indices, weights, labels, check=False)
        G._valid = True
        return G

    def validate(self) -> Graph:
        """Check the CSR invariants once (later calls return at once); returns ``self``.

        Raises
        ------
        ValueError
            ``indptr`` not starting at 0, decreasing or not ending at ``len(indices)``; a
            neighbour index out of range; a row not strictly increasing (unsorted or a
            duplicate); a self-loop; an edge stored in one direction only; weights not
            finite or different in the two directions.

        Examples
        --------
        >>> import numpy as np
        >>> Graph(np.array([0, 1, 1]), np.array([1]))
        Traceback (most recent call last):
        ...
        ValueError: not symmetric: edge 0 -> 1 is stored, 1 -> 0 is not
        """
        if self._valid:
            return self
        indptr, indices, n = self.indptr, self.indices, self.n
        if indptr[0] != 0 or indptr[-1] != len(indices):
            raise ValueError(f"indptr must run from 0 to len(indices) = {len(indices)}, got {int(indptr[0])} .. "
                             f"{int(indptr[-1])}")
        deg = np.diff(indptr)
        if deg.size and deg.min() < 0:
            raise ValueError(f"indptr decreases at row {int(np.flatnonzero(deg < 0)[0])}")
        if len(indices) and (indices.min() < 0 or indices.max() >= n):
            bad = int(np.flatnonzero((indices < 0) | (indices >= n))[0])
            raise ValueError(f"neighbour index {int(indices[bad])} out of range 0..{n - 1}")
        rows = np.repeat(np.arange(n, dtype=indices.dtype), deg)
        loops = np.flatnonzero(rows == indices)
        if len(loops):
            raise ValueError(f"self-loop at vertex {int(rows[loops[0]])}")
        unsorted = np.flatnonzero((rows[1:] == rows[:-1]) & (indices[1:] <= indices[:-1]))
        if len(unsorted):
            v = int(rows[unsorted[0]])
            raise ValueError(f"row {v} is not strictly increasing (unsorted or a duplicate neighbour)")
        # the transpose, sorted by (column, row), must be the matrix itself
        order = np.lexsort((rows, indices))
        t_rows, t_cols = indices[order], rows[order]
        differ = np.flatnonzero((t_rows != rows) | (t_cols != indices))
        if len(differ):
            # both lists are sorted: the smaller pair at the first difference is missing from the other
            k = differ[0]
            if (rows[k], indices[k]) < (t_rows[k], t_cols[k]):
                a, b = int(rows[k]), int(indices[k])
            else:
                a, b = int(t_cols[k]), int(t_rows[k])
            raise ValueError(f"not symmetric: edge {a} -> {b} is stored, {b} -> {a} is not")
        if self.weights is not None:
            if not np.all(np.isfinite(self.weights)):
                raise ValueError("edge weights must be finite")
            asym = np.flatnonzero(self.weights[order] != self.weights)
            if len(asym):
                k = asym[0]
                raise ValueError(f"weights not symmetric: edge {int(rows[k])}-{int(indices[k])}")
        self._valid = True
        return self

    # ----------------------------------------------------------------- labels
    @property
    def labelled(self) -> bool:
        """Whether the vertices have names other than ``0 .. n-1``."""
        return self.labels is not None

    def to_labels(self, ids) -> np.ndarray:
        """The names of the vertices ``ids`` (an array of vertex ids): ``labels`` taken at
        ``ids``, or ``ids`` themselves (int64) for a graph without labels. Numeric and
        string labels come back as an array of their type, others (tuples, objects) as an
        object array.

        Examples
        --------
        >>> import networkx as nx
        >>> G = Graph.from_networkx(nx.path_graph([10, 20, 30, 40]))
        >>> G.to_labels([0, 3]).tolist()
        [10, 40]
        """
        ids = np.asarray(ids, dtype=np.int64)
        if self.labels is None:
            return ids
        return self._label_array()[ids]

    def to_ids(self, vertices) -> np.ndarray:
        """Vertex ids (int64) of ``vertices`` given as this graph's labels; for a graph
        without labels, the ids themselves (checked to be integers).

        Raises
        ------
        KeyError
            A name that is not a vertex of the graph.
        """
        if self.labels is None:
            return np.asarray(vertices)
        if self._label_index is None:
            self._label_index = {label: i for i, label in enumerate(self.labels)}
        index = self._label_index
        try:
            return np.fromiter((index[v] for v in _as_sequence(vertices)), dtype=np.int64)
        except KeyError as exc:
            raise KeyError(f"{exc.args[0]!r} is not a vertex of the graph") from None
        except TypeError as exc:  # an unhashable name
            raise KeyError(f"not a vertex of the graph: {exc}") from None

    def _label_array(self) -> np.ndarray:
        labels = self.labels
        arr = np.asarray(labels) if not isinstance(labels, np.ndarray) else labels
        if arr.ndim != 1 or arr.dtype.kind not in "iufUSb":  # tuples, mixed or other objects
            arr = np.empty(len(labels), dtype=object)
            for i, label in enumerate(labels):
                arr[i] = label
        return arr

    # ----------------------------------------------------------------- basics
    @property
    def n(self) -> int:
        """Number of vertices."""
        return len(self.indptr) - 1

    @property
    def m(self) -> int:
        """Number of undirected edges."""
        return len(self.indices) // 2

    @property
    def degrees(self) -> np.ndarray:
        """Vertex degrees."""
        return np.diff(self.indptr)

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def neighbors(self, v: int) -> np.ndarray:
        """Sorted neighbours of vertex ``v``."""
        return self.indices[self.indptr[v]:self.indptr[v + 1]]

    def __repr__(self) -> str:
        w = ", weighted" if self.weighted else ""
        return f"Graph(n={self.n}, m={self.m}{w})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        return (
            np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.indices, other.indices)
            and (self.weights is None) == (other.weights is None)
            and (self.weights is None or np.array_equal(self.weights, other.weights))
        )

    __hash__ = None

    def edges(self) -> tuple[np.ndarray, ...]:
        """Edge list ``(u, v)`` with ``u < v``, sorted; plus weights if weighted."""
        rows = np.repeat(np.arange(self.n, dtype=self.indices.dtype), self.degrees)
        upper = rows < self.indices
        if self.weighted:
            return rows[upper], self.indices[upper], self.weights[upper]
        return rows[upper], self.indices[upper]

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_edges(cls, n: int, u, v, weights=None, *, warn: bool = True, labels: Sequence | None = None) -> Graph:
        """Build from edge endpoint arrays (0-based). Symmetrizes.

        Self-loops and duplicate edges are dropped (with a warning when ``warn``);
        of duplicate weighted edges the one of largest absolute weight is kept.
        """
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"number of vertices must be an integer, got {n!r}")
        n = int(n)
        if n < 0:
            raise ValueError(f"number of vertices must be >= 0, got {n}")
        u = np.asarray(u).ravel()
        v = np.asarray(v).ravel()
        if u.shape != v.shape:
            raise ValueError("edge endpoint arrays must have the same length")
        if u.size and (not np.issubdtype(u.dtype, np.integer) or not np.issubdtype(v.dtype, np.integer)):
            raise TypeError("edge endpoints must be integers")
        u = u.astype(np.int64, copy=False)
        v = v.astype(np.int64, copy=False)
        if u.size and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n):
            raise ValueError(f"edge endpoint out of range 0..{n - 1}")
        w = None
        if weights is not None:
            w = np.asarray(weights, dtype=np.float64).ravel()
            if w.shape != u.shape:
                raise ValueError("weights must have one entry per edge")
            if not np.all(np.isfinite(w)):
                raise ValueError("edge weights must be finite")
        loops = u == v
        if loops.any():
            if warn:
                warnings.warn(f"dropped {int(loops.sum())} self-loop(s)", stacklevel=2)
            keep = ~loops
            u, v = u[keep], v[keep]
            w = None if w is None else w[keep]
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        if n > _PAIR_KEY_MAX_N:  # lo * n + hi would overflow int64: sort the pairs themselves
            return cls._from_pairs_lexsorted(n, lo, hi, w, labels, warn)
        key = lo * n + hi
        if w is None:
            key = np.sort(key)
            uniq = key[np.concatenate([[True], key[1:] != key[:-1]])] if len(key) else key
        else:
            # sort by key, then by decreasing |w|: the first of each key has largest |w|
            order = np.lexsort((-np.abs(w), key))
            key_sorted = key[order]
            first = np.ones(len(key_sorted), dtype=bool)
            first[1:] = key_sorted[1:] != key_sorted[:-1]
            uniq = key_sorted[first]
            w = w[order][first]
        if warn and len(uniq) < len(key):
            warnings.warn(f"dropped {len(key) - len(uniq)} duplicate edge(s)", stacklevel=2)
        lo, hi = np.divmod(uniq, max(n, 1))
        return cls._from_unique_pairs(n, lo, hi, w, labels)

    @classmethod
    def _from_pairs_lexsorted(cls, n, lo, hi, w, labels, warn):
        """:meth:`from_edges`'s deduplication for ``n`` so large that a pair key overflows."""
        order = np.lexsort((hi, lo) if w is None else (-np.abs(w), hi, lo))
        lo, hi = lo[order], hi[order]
        first = np.ones(len(lo), dtype=bool)
        first[1:] = (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])
        if warn and not first.all():
            warnings.warn(f"dropped {int((~first).sum())} duplicate edge(s)", stacklevel=3)
        return cls._from_unique_pairs(n, lo[first], hi[first], None if w is None else w[order][first], labels)

    @classmethod
    def _from_unique_pairs(cls, n, lo, hi, w, labels=None):
        """CSR from unique undirected pairs ``lo < hi`` (both directions emitted)."""
        import scipy.sparse as sp

        rows = np.concatenate([lo, hi])
        cols = np.concatenate([hi, lo])
        data = np.concatenate([w, w]) if w is not None else np.ones(len(rows), dtype=np.int8)
        A = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
        A.sort_indices()
        return cls._trusted(A.indptr, A.indices, A.data if w is not None else None, labels)

    @classmethod
    def from_scipy(cls, A, *, weighted: bool = True) -> Graph:
        """Graph of a square sparse matrix (SciPy or cupyx): edge {i,j} when a_ij or a_ji != 0.

        The diagonal is ignored (a matrix's graph has no self-loops). With ``weighted``,
        weights are those of :func:`kernels.graph.abs_graph` (``|a_ij|`` for a symmetric
        matrix, ``|a_ij| + |a_ji|`` otherwise).
        """
        import scipy.sparse as sp

        from kernels.graph import abs_graph

        A = to_host(A) if is_device_array(A) else A
        if not sp.issparse(A):
            A = sp.csr_matrix(np.asarray(A))
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"adjacency matrix must be square, got shape {A.shape}")
        W = abs_graph(sp.csr_matrix(A))
        W.sort_indices()
        return cls._trusted(W.indptr, W.indices, W.data.astype(np.float64) if weighted else None)

    @classmethod
    def from_networkx(cls, G, weight: str | None = "weight") -> Graph:
        """Graph of a networkx graph; nodes are numbered in ``G.nodes`` order.

        Directed graphs are symmetrized; the original node names are kept in ``labels``
        (None when they are ``0 .. n-1`` in order). Edge attribute ``weight`` (if every edge
        has it) becomes the weights.

        Examples
        --------
        >>> import networkx as nx
        >>> G = Graph.from_networkx(nx.path_graph(["a", "b", "c"]))
        >>> G, G.labels
        (Graph(n=3, m=2), ['a', 'b', 'c'])
        """
        nodes = list(G.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        edges = list(G.edges(data=True))
        u = np.fromiter((index[a] for a, _, _ in edges), dtype=np.int64, count=len(edges))
        v = np.fromiter((index[b] for _, b, _ in edges), dtype=np.int64, count=len(edges))
        w = None
        if weight is not None and edges and all(weight in d for _, _, d in edges):
            w = np.array([d[weight] for _, _, d in edges], dtype=np.float64)
        labels = None if nodes == list(range(len(nodes))) else nodes
        directed = G.is_directed()
        return cls.from_edges(len(nodes), u, v, w, warn=not directed, labels=labels)

    @classmethod
    def from_igraph(cls, g, weight: str | None = "weight") -> Graph:
        """Graph of an igraph graph (``igraph.Graph``); vertex ``i`` is igraph's vertex ``i``.

        Directed graphs are symmetrized, self-loops and multi-edges dropped. The vertex
        attribute ``name``, when set, becomes ``labels``; the edge attribute ``weight``,
        when set, the weights. igraph is an optional dependency (``pip install igraph``).

        Examples
        --------
        >>> import igraph
        >>> Graph.from_igraph(igraph.Graph.Ring(5))
        Graph(n=5, m=5)
        """
        n = g.vcount()
        edges = np.asarray(g.get_edgelist(), dtype=np.int64).reshape(-1, 2)
        attrs = g.es.attributes()
        w = np.asarray(g.es[weight], dtype=np.float64) if weight is not None and weight in attrs and len(edges) else None
        names = g.vs["name"] if "name" in g.vs.attributes() else None
        labels = None if names is None or list(names) == list(range(n)) else list(names)
        return cls.from_edges(n, edges[:, 0], edges[:, 1], w, warn=not g.is_directed(), labels=labels)

    # ------------------------------------------------------------ conversions
    def to_scipy(self, dtype=np.float64) -> sp.csr_matrix:
        """Symmetric adjacency matrix as ``scipy.sparse.csr_matrix`` (weights or ones)."""
        import scipy.sparse as sp

        data = self.weights if self.weighted else np.ones(len(self.indices))
        return sp.csr_matrix((data.astype(dtype), self.indices, self.indptr), shape=(self.n, self.n))

    def to_networkx(self) -> nx.Graph:
        """A ``networkx.Graph`` with nodes ``0..n-1`` (or ``labels``) and edge weights."""
        import networkx as nx

        G = nx.Graph()
        names = self.labels if self.labels is not None else range(self.n)
        G.add_nodes_from(names)
        e = self.edges()
        if self.labels is not None:
            lab = list(self.labels)
            pairs = ((lab[a], lab[b]) for a, b in zip(e[0].tolist(), e[1].tolist()))
        else:
            pairs = zip(e[0].tolist(), e[1].tolist())
        if self.weighted:
            G.add_weighted_edges_from((a, b, w) for (a, b), w in zip(pairs, e[2].tolist()))
        else:
            G.add_edges_from(pairs)
        return G

    def device_arrays(self) -> tuple:
        """Cached CuPy copies ``(indptr, indices, weights)`` (weights may be None)."""
        if self._device is None:
            import cupy

            w = None if self.weights is None else cupy.asarray(self.weights)
            self._device = (cupy.asarray(self.indptr), cupy.asarray(self.indices), w)
        return self._device

    # ------------------------------------------------------------- derived graphs
    def subgraph(self, vertices) -> Graph:
        """Induced subgraph on ``vertices`` (distinct vertex ids, renumbered in the given
        order); ``TypeError`` for ids that are not integers, ``ValueError`` for ids out of
        range or listed twice (a negative id is out of range, not counted from the end)."""
        vertices = np.asarray(vertices)
        if vertices.size == 0:
            vertices = vertices.astype(np.int64).reshape(0)
        if vertices.ndim != 1 or vertices.dtype.kind not in "iu":
            raise TypeError(f"vertices must be a 1-D sequence of integer ids, got {vertices.dtype} of shape "
                            f"{vertices.shape}")
        vertices = vertices.astype(np.int64, copy=False)
        if len(vertices) and (vertices.min() < 0 or vertices.max() >= self.n):
            bad = int(vertices[(vertices < 0) | (vertices >= self.n)][0])
            raise ValueError(f"vertex {bad} out of range 0..{self.n - 1}")
        if len(vertices) > 1 and len(np.unique(vertices)) != len(vertices):
            raise ValueError("a vertex is listed twice")
        increasing = len(vertices) < 2 or bool(np.all(vertices[1:] > vertices[:-1]))
        spans_all = len(vertices) == 0 or (vertices[0] == 0 and vertices[-1] == self.n - 1)
        if increasing and spans_all and len(vertices) == self.n:
            return self  # every vertex, in order: the graph itself
        new_id = np.full(self.n, -1, dtype=np.int64)
        new_id[vertices] = np.arange(len(vertices))
        rows = np.repeat(np.arange(self.n), self.degrees)
        keep = (new_id[rows] >= 0) & (new_id[self.indices] >= 0)
        if increasing:
            # increasing ids: the renumbering keeps every row's order, so the CSR is a filter
            counts = np.bincount(new_id[rows[keep]], minlength=len(vertices))
            indptr = np.zeros(len(vertices) + 1, dtype=np.int64)
            np.cumsum(counts, out=indptr[1:])
            w = None if self.weights is None else self.weights[keep]
            return Graph._trusted(indptr, new_id[self.indices[keep]], w)
        a, b = new_id[rows[keep]], new_id[self.indices[keep]]
        upper = a < b
        w = None if self.weights is None else self.weights[keep][upper]
        return Graph.from_edges(len(vertices), a[upper], b[upper], w, warn=False)

    def complement(self) -> Graph:
        """Complement graph (unweighted); uses a dense n x n mask, so n must be moderate."""
        if self.n > 40000:
            raise ValueError(f"complement of a graph with {self.n} vertices would be too dense")
        dense = np.ones((self.n, self.n), dtype=bool)
        rows = np.repeat(np.arange(self.n), self.degrees)
        dense[rows, self.indices] = False
        np.fill_diagonal(dense, False)
        lo, hi = np.nonzero(np.triu(dense, 1))
        C = Graph._from_unique_pairs(self.n, lo, hi, None, self.labels)
        C.index_base = self.index_base
        return C


def _as_sequence(vertices) -> Sequence[Any]:
    """``vertices`` as a sequence of names (a NumPy array's items as Python scalars)."""
    if isinstance(vertices, np.ndarray):
        return vertices.tolist() if vertices.dtype != object else list(vertices)
    return list(vertices)


def graph_from_object(obj) -> Graph:
    """A :class:`Graph` of an in-memory graph-like object: a Graph (returned as is), a
    networkx or igraph graph, a sparse matrix (SciPy/cupyx) or a dense array. Files are
    read by :func:`graphkit.as_graph` and :func:`graphkit.read_graph`."""
    if isinstance(obj, Graph):
        return obj.validate()  # at once when it was checked, or built valid, before
    mod = type(obj).__module__
    if mod.startswith("networkx"):
        return Graph.from_networkx(obj)
    if mod.startswith("igraph"):
        return Graph.from_igraph(obj)
    if mod.startswith(("scipy.sparse", "cupyx")) or is_device_array(obj) or isinstance(obj, np.ndarray):
        return Graph.from_scipy(obj, weighted=False)
    raise TypeError(f"cannot make a graph from {type(obj).__name__}")
