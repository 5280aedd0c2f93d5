"""The results of the linear forest: the arrays of its kernels (:class:`ForestArrays`)
and the object the preconditioners and graph solvers return (:class:`LinearForest`)."""
from __future__ import annotations

from typing import Callable, NamedTuple

from ..backend import inverse_permutation, to_host

__all__ = ["ForestArrays", "LazyForestArrays", "LinearForest"]


class ForestArrays(NamedTuple):
    """The linear forest of a [0,2]-factor as arrays (on the backend of the factor)."""

    neighbors: object  #: N x 2 forest partners (-1: none): the factor's without the removed edges
    path_id: object  #: per vertex, its path's smaller end
    position: object  #: per vertex, its distance from that end
    permutation: object  #: new -> old: the forest is tridiagonal in this order
    path_start: object  #: offsets of the paths in the new order (n_paths + 1)
    removed_edges: object  #: k x 2 (lo, hi): the cycle edges dropped


class LazyForestArrays(NamedTuple):
    """:class:`ForestArrays` whose ``neighbors`` and ``(path_start, removed_edges)`` are
    computed when called (``paths_later=True``: their sizes are counts on the device)."""

    neighbors: Callable
    path_id: object
    position: object
    permutation: object
    paths: Callable  #: returns (path_start, removed_edges)


class LinearForest:
    """Vertex-disjoint paths: ``path_id`` (smaller end id), ``position`` (0 at that end),
    ``permutation`` (new -> old; the forest is tridiagonal in this order) and
    ``inverse_permutation`` (old -> new), ``path_start`` (offsets of the paths in the new
    order, length ``n_paths + 1``), ``removed_edges`` (``k x 2``, the cycle edges
    dropped), ``neighbors`` (N x 2 forest partners) and setup ``time`` (s, read once the
    device has finished).

    ``path_start``, ``removed_edges`` and ``n_paths`` are computed on first access on the
    GPU (their sizes are counts on the device), ``neighbors`` and ``inverse_permutation`` on
    first access on either backend: the preconditioners need only the permutation and the
    factor's partners, and their set-up neither waits for the device nor writes arrays it
    does not read.

    ``labels``: None, or the names of the vertices (a graph's node labels, set by
    :func:`graphkit.linear_forest`): :meth:`paths` names the vertices with them.
    """

    def __init__(self, path_id, position, permutation, neighbors, paths, clock=None, labels=None):
        # paths: (path_start, removed_edges), or a function returning them
        self.path_id = path_id
        self.position = position
        self.permutation = permutation
        self._inverse = None
        self._neighbors = neighbors  # the array, or a function returning it
        self._paths = paths
        self._clock = clock
        self.labels = labels

    def _path_arrays(self):
        if callable(self._paths):
            self._paths = tuple(self._paths())
        return self._paths

    @property
    def neighbors(self):
        """N x 2 forest partners (-1: none), computed on first access."""
        if callable(self._neighbors):
            self._neighbors = self._neighbors()
        return self._neighbors

    @property
    def inverse_permutation(self):
        """Old -> new, computed on first access (the set-up does not need it)."""
        if self._inverse is None:
            self._inverse = inverse_permutation(self.permutation)
        return self._inverse

    @property
    def path_start(self):
        """Offsets of the paths in the new order (``n_paths + 1``)."""
        return self._path_arrays()[0]

    @property
    def removed_edges(self):
        """``k x 2`` (lo, hi): the cycle edges dropped."""
        return self._path_arrays()[1]

    @property
    def n_paths(self) -> int:
        """Number of paths (isolated vertices count as paths of one vertex)."""
        return len(self.path_start) - 1

    @property
    def time(self) -> float:
        """Set-up time in seconds."""
        return self._clock.total if self._clock is not None else 0.0

    def paths(self) -> list[list]:
        """Every path as the list of its vertices from its smaller end, the paths in the
        forest's order, named by ``labels`` when the forest has them (on the host).

        Examples
        --------
        >>> import scipy.sparse as sp, kernels.forest as kfo
        >>> A = sp.diags([[-1.0, -1.0], [2.0, 2.0, 2.0], [-1.0, -1.0]], [-1, 0, 1], format="csr")
        >>> kfo.linear_forest(A).paths()
        [[0, 1, 2]]
        """
        perm = to_host(self.permutation).tolist()
        starts = to_host(self.path_start).tolist()
        names = self.labels
        return [[names[v] for v in perm[a:b]] if names is not None else perm[a:b] for a, b in zip(starts, starts[1:])]

    def __repr__(self) -> str:
        return f"LinearForest(n_paths={self.n_paths})"
