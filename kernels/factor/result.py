"""The result of a [0,n]-factor: :class:`Factor`."""
from __future__ import annotations

from ..graph import abs_graph
from .rounds import is_maximal

__all__ = ["Factor", "check_factor_of"]


def check_factor_of(A, f, what: str = "factor") -> None:
    """``ValueError`` unless ``f`` (a Factor or LinearForest) can be one of the matrix
    ``A``: one row of partners per row of ``A``, partners in ``-1 .. N-1``, on ``A``'s
    device (``TypeError`` otherwise).

    Examples
    --------
    >>> import matrices, kernels.factor as kf
    >>> f = kf.factor(matrices.poisson2d(8), n=2)
    >>> check_factor_of(matrices.poisson2d(10), f)
    Traceback (most recent call last):
    ...
    ValueError: factor has 64 rows of partners but the matrix has 100 rows: it is a factor of another matrix
    """
    from ..backend import get_array_module, is_device_array

    nb = f.neighbors
    if is_device_array(nb) != is_device_array(A):
        raise TypeError(f"{what} and matrix live on different devices")
    n = A.shape[0]
    if nb.ndim != 2 or nb.shape[0] != n:
        rows = nb.shape[0] if nb.ndim else 0
        raise ValueError(f"{what} has {rows} rows of partners but the matrix has {n} rows: it is a {what} of "
                         "another matrix")
    if nb.size:
        xp = get_array_module(nb)
        lo, hi = int(xp.min(nb)), int(xp.max(nb))
        if lo < -1 or hi >= n:
            raise ValueError(f"{what} names partner {lo if lo < -1 else hi}, outside 0..{n - 1}")


class Factor:
    """A [0,n]-factor: ``neighbors`` (N x n, -1 for empty), edge ``weights`` (N x n),
    ``iterations`` used (M_max), whether it is ``maximal``, and setup ``time`` (s, from a
    :class:`kernels.timing.PhaseClock`: read once the device has finished).

    ``iterations`` is read from the device on first access (the set-up does not wait for
    it). ``maximal`` is known without work when the iterations stopped early (an uncharged
    round proposed nothing); otherwise it is checked on first access.

    ``matrix_entries``: None, or ``(diagonal, signs)`` of the matrix the factor is of,
    which the GPU's rounds recorded while they read it (``signs``: a byte per row, bit
    ``3 + s`` set where the entry to partner ``s`` is negative): with ``weights`` they
    give its entries to the partners (see :func:`kernels.factor.factor_rounds`).

    ``labels``: None, or the names of the vertices (a graph's node labels, set by
    :func:`graphkit.factor`): :meth:`edge_list` names the factor's edges with them.
    """

    def __init__(self, neighbors, weights, n, iterations, maximal=None, clock=None, source=None, max_iterations=None,
                 matrix_entries=None, labels=None):
        # iterations: an int, or a callable reading M_max from the round flags;
        # source: weight_source's pair, or a callable building it
        self.neighbors = neighbors
        self.weights = weights
        self.n = n
        self._iterations = iterations
        self._max_iterations = max_iterations
        self._clock = clock
        self._maximal = maximal
        self._source = source
        self.matrix_entries = matrix_entries
        self.labels = labels

    def weight_source(self):
        """``(matrix, from_matrix)``: the CSR matrix the proposals read, whose entries are
        the factor's edge weights, or with ``from_matrix`` their absolute values off the
        diagonal (zeros are no edges): the matrix itself when ``|A| - diag(A)`` is
        symmetric, else the weight graph ``A' + A'^T`` (built at the first call where the
        GPU looked its weights up)."""
        if callable(self._source):
            self._source = self._source()
        return self._source

    @property
    def iterations(self) -> int:
        """M_max, the proposal rounds used."""
        if callable(self._iterations):
            self._iterations = self._iterations()
        return self._iterations

    @property
    def time(self) -> float:
        """Set-up time in seconds (0 when the caller timed its own phases)."""
        return self._clock.total if self._clock is not None else 0.0

    @property
    def maximal(self) -> bool:
        """Whether no edge joins two unsaturated vertices that are not partners."""
        if self._maximal is None and self._max_iterations is not None and self.iterations < self._max_iterations:
            self._maximal = True  # stopped early: an uncharged round proposed nothing
        if self._maximal is None:
            M, from_matrix = self.weight_source()
            self._maximal = is_maximal(abs_graph(M, symmetric=True) if from_matrix else M, self.neighbors)
        return self._maximal

    @property
    def n_edges(self) -> int:
        """Edges of the factor."""
        return int((self.neighbors >= 0).sum()) // 2

    def edge_list(self) -> list[tuple]:
        """The factor's edges ``(u, v)`` with ``u`` before ``v`` in the vertex order, in that
        order, named by ``labels`` when the factor has them (on the host).

        Examples
        --------
        >>> import numpy as np
        >>> Factor(np.array([[1], [0], [-1]]), np.ones((3, 1)), 1, 1).edge_list()
        [(0, 1)]
        """
        from ..backend import to_host

        nb = to_host(self.neighbors)
        pairs = [(u, int(v)) for u in range(nb.shape[0]) for v in nb[u] if v > u]
        if self.labels is None:
            return pairs
        names = self.labels
        return [(names[u], names[v]) for u, v in pairs]

    def __repr__(self) -> str:
        return f"Factor(n={self.n}, edges={self.n_edges}, iterations={self.iterations})"
