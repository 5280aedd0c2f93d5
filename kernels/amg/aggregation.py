"""Pairwise aggregation by repeated matching (the ``"pairwise"`` hierarchy of
:func:`precond.amg`), on the backend of the matrix: SciPy in, the CPU; cupyx in, every
step on the GPU.

One round: the strong couplings of ``A`` (:func:`strength_graph`) -> a [0,1]-factor of
that graph (a matching, :func:`kernels.factor.factor_rounds` with ``n=1``, the project's
own parallel factor) -> matched pairs and unmatched vertices contracted to one coarse
vertex each, with the Galerkin operator ``P^T A P`` of the piecewise constant ``P``
(:func:`pair_galerkin`). Two rounds give aggregates of up to four vertices, as in
Notay's AGMG and in AmgX's size-4 aggregation. Every step is deterministic and the CPU
and GPU twins sum in the same order, so both give the same aggregates and the same coarse
matrices.
"""
from __future__ import annotations

import numpy as np

from ..backend import get_array_module, sparse_module, to_host
from ..factor import factor_rounds
from ..graph import abs_graph, contract_pairs, offdiag_abs
from ..validation import validate_matrix

__all__ = ["row_indices", "strength_graph", "pair_matching", "pair_galerkin", "pair_numbering", "PairwiseLevel",
           "pairwise_level", "prolongator"]


def _canonical(A):
    """``A`` as a canonical CSR matrix (sorted, no duplicates, index arrays of one dtype:
    the kernels' precondition), without a pass over its values."""
    return validate_matrix(A, dtypes=(np.float32, np.float64), finite=False, canonical="make", what="pairwise level")


def row_indices(A):
    """The row of every stored entry of the CSR matrix ``A``, in ``A.indices``' dtype (on
    the GPU through cuSPARSE's CSR-to-COO conversion: CuPy's ``repeat`` takes no device
    array of counts)."""
    xp = get_array_module(A)
    itype = A.indices.dtype
    if xp is np:
        return np.repeat(np.arange(A.shape[0], dtype=itype), np.diff(A.indptr))
    return A.tocoo().row.astype(itype, copy=False)


def strength_graph(A, theta=0.25):
    """The symmetric weight graph of the strong couplings of ``A``.

    Entry ``(i, j)`` is strong when its scaled coupling ``s_ij = |a_ij| / sqrt(|a_ii
    a_jj|)`` is at least ``theta`` times the largest of row ``i``. The strong entries ``W``
    are made symmetric as the factor's weight graph is (:func:`kernels.graph.abs_graph`):
    ``W`` itself when it is symmetric, else ``W + W^T`` (an entry strong in both
    directions weighs twice). CSR, no diagonal, canonical, on the backend of ``A``.

    Parameters
    ----------
    A : scipy.sparse or cupyx.scipy.sparse matrix, square, float32 or float64
    theta : float in [0, 1]

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[4., -2., -0.1], [-2., 4., -1.], [-0.1, -1., 4.]]))
    >>> strength_graph(A, theta=0.25).toarray()
    array([[0.  , 0.5 , 0.  ],
           [0.5 , 0.  , 0.25],
           [0.  , 0.25, 0.  ]])
    """
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must be in [0, 1], got {theta}")
    A = _canonical(A)
    xp = get_array_module(A)
    vt = np.dtype(A.dtype)
    n, threads = A.shape[0], 256
    diag = A.diagonal().astype(vt, copy=False)
    if xp is np:
        from ._cpu import strength_weights

        w = strength_weights(A.indptr, A.indices, A.data, diag, theta)
    else:
        from ..nvrtc import get_kernel

        w = xp.empty_like(A.data)
        get_kernel("amg", "strength_weights", vt, A.indices.dtype)(
            ((n + threads - 1) // threads,), (threads,),
            (A.indices.dtype.type(n), A.indptr, A.indices, A.data, xp.ascontiguousarray(diag), vt.type(theta), w))
    # the weights keep 20 bits of mantissa (truncated): coarse operators computed in a
    # different order (cuSPARSE's and SciPy's sparse products) differ in their last bits,
    # which would break ties between equal weights differently on the CPU and the GPU
    dropped = 32 if vt == np.float64 else 3
    bits = w.view(np.uint64 if vt == np.float64 else np.uint32)
    bits &= bits.dtype.type(~((1 << dropped) - 1) & (2 ** (8 * vt.itemsize) - 1))
    # W + W^T on A's own pattern where it is symmetric (the strong entries are not: a
    # coupling strong for one row may be weak for the other): one pass that looks each
    # entry's mirror up, the same graph as abs_graph's W' + W'^T without a transpose
    if xp is np:
        from ._cpu import strength_mirror

        mirrored, flags = strength_mirror(A.indptr, A.indices, w)
    else:
        from ..nvrtc import get_kernel

        mirrored, flags = xp.empty_like(w), xp.zeros(2, dtype=np.uint32)
        get_kernel("amg", "strength_mirror", vt, A.indices.dtype)(
            ((n + threads - 1) // threads,), (threads,), (A.indices.dtype.type(n), A.indptr, A.indices, w, mirrored,
                                                          flags))
    unmirrored, unsymmetric = (int(f) for f in to_host(flags))  # the host waits (a set-up step)
    if unmirrored:  # the pattern is not symmetric
        W = sparse_module(xp).csr_matrix((w, A.indices, A.indptr), shape=A.shape)
        W.has_canonical_format = True
        return abs_graph(W)
    # a symmetric W is its own graph (abs_graph's); else each entry sums its two weights
    S = sparse_module(xp).csr_matrix((mirrored if unsymmetric else w, A.indices, A.indptr), shape=A.shape)
    S.has_canonical_format = True
    return offdiag_abs(S)


def pair_matching(S, *, iterations=8, m=5, k_m=0, p=0.5, seed=0):
    """The partner of each vertex in a [0,1]-factor (a matching) of the weight graph
    ``S`` (-1: unmatched), by Klein and Strzodka's parallel factor (Algorithm 2 with ``n=1``:
    heavy edges first; see :func:`kernels.factor.factor_rounds` for the parameters). On the
    GPU nothing is read back."""
    partners, _, _ = factor_rounds(S, n=1, iterations=iterations, m=m, k_m=k_m, p=p, seed=seed)
    return partners[:, 0]


def pair_galerkin(A, mate):
    """The Galerkin operator ``P^T A P`` of the matching ``mate``, whose piecewise constant
    ``P`` maps each coarse vertex (a pair, or an unmatched vertex) to its members.

    The off-diagonal entries are :func:`kernels.graph.contract_pairs` of ``A``'s signed
    entries; the diagonal entry of a pair is the sum, over its members in order, of each
    member's entries inside the pair (its diagonal and the entry to its partner: two
    terms, so their order does not matter). Returns ``(Ac, coarse, members)``: ``Ac``
    canonical CSR with its explicit zeros kept, ``coarse[i]`` the coarse vertex of ``i``,
    ``members`` (Nc x 2, -1 for none); the same on the CPU and the GPU.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[2., -1., 0.], [-1., 2., -1.], [0., -1., 2.]]))
    >>> Ac, coarse, members = pair_galerkin(A, np.array([1, 0, -1]))
    >>> Ac.toarray(), coarse.tolist()
    (array([[ 2., -1.],
           [-1.,  2.]]), [0, 0, 1])
    """
    A = _canonical(A)
    xp = get_array_module(A)
    n = A.shape[0]
    off, coarse, members = contract_pairs(A, mate, check=False)
    itype = A.indices.dtype
    coarse = coarse.astype(itype, copy=False)
    members = xp.ascontiguousarray(members, dtype=itype)
    if xp is not np:  # one kernel: the diagonal entries and the rows with them
        from ..nvrtc import get_kernel

        nc = members.shape[0]
        indptr = off.indptr.astype(itype, copy=False) + xp.arange(nc + 1, dtype=itype)
        indices, data = xp.empty(off.nnz + nc, dtype=itype), xp.empty(off.nnz + nc, dtype=A.dtype)
        threads = 256
        get_kernel("amg", "pair_coarse_rows", np.dtype(A.dtype), itype)(
            ((nc + threads - 1) // threads,), (threads,),
            (itype.type(nc), members, coarse, A.indptr, A.indices, A.data, off.indptr.astype(itype, copy=False),
             off.indices.astype(itype, copy=False), off.data, indices, data))
        Ac = sparse_module(xp).csr_matrix((data, indices, indptr), shape=off.shape)
        Ac.has_canonical_format = True
        return Ac, coarse, members
    rows = row_indices(A)
    inside = coarse[A.indices] == coarse[rows]
    # each row's entries inside its pair: its diagonal and the entry to its partner (two
    # terms at most, so the order of the additions does not matter)
    own = xp.bincount(rows, weights=xp.where(inside, A.data, 0), minlength=n)
    second = members[:, 1]
    diag = (own[members[:, 0]] + xp.where(second >= 0, own[xp.maximum(second, 0)], 0)).astype(A.dtype)
    Ac = _with_diagonal(off, diag, itype)
    return Ac, coarse, members


def _with_diagonal(off, diag, itype):
    """The canonical CSR matrix ``off + diag(diag)`` of a canonical CSR ``off`` without
    diagonal entries: each row's entries shifted past its new diagonal entry, no sort."""
    xp = get_array_module(off)
    nc = off.shape[0]
    indptr = off.indptr.astype(itype, copy=False)
    off = sparse_module(xp).csr_matrix((off.data, off.indices.astype(itype, copy=False), indptr), shape=off.shape)
    rows = row_indices(off)
    after = off.indices > rows  # the entries right of the diagonal
    before = xp.concatenate([xp.zeros(1, dtype=itype), xp.cumsum(~after, dtype=itype)])
    left = before[indptr[1:]] - before[indptr[:-1]]  # entries left of the diagonal, per row
    base = xp.arange(nc + 1, dtype=itype)
    dest = xp.arange(off.nnz, dtype=itype) + rows + after.astype(itype)
    place = indptr[:-1] + base[:-1] + left
    indices = xp.empty(off.nnz + nc, dtype=itype)
    data = xp.empty(off.nnz + nc, dtype=off.data.dtype)
    indices[dest], data[dest] = off.indices, off.data
    indices[place], data[place] = base[:-1], diag
    Ac = sparse_module(xp).csr_matrix((data, indices, indptr + base), shape=off.shape)
    Ac.has_canonical_format = True
    return Ac


def pair_numbering(mate):
    """The coarse vertices of the matching ``mate`` as :func:`kernels.graph.contract_pairs`
    numbers them, without contracting a matrix: ``(coarse, members)``, ``coarse[v]`` the
    coarse vertex of ``v``, ``members`` (Nc x 2) its vertices, the smaller first (-1: an
    unmatched vertex), numbered in the order of the smaller one; in ``mate``'s dtype.

    Examples
    --------
    >>> coarse, members = pair_numbering(np.array([2, -1, 0, 4, 3]))
    >>> coarse.tolist(), members.tolist()
    ([0, 1, 0, 2, 2], [[0, 2], [1, -1], [3, 4]])
    """
    xp = get_array_module(mate)
    itype = mate.dtype
    index = xp.arange(mate.shape[0], dtype=itype)
    leader = (mate < 0) | (mate > index)  # the smaller vertex of a pair, or an unmatched one
    rank = xp.cumsum(leader, dtype=itype) - 1
    coarse = rank[xp.where(leader, index, mate)]
    leaders = xp.flatnonzero(leader).astype(itype, copy=False)
    partner = mate[leaders]
    members = xp.stack([leaders, xp.where(partner >= 0, partner, -1).astype(itype, copy=False)], axis=1)
    return coarse, members


class PairwiseLevel:
    """One level of a pairwise hierarchy: ``aggregates[i]`` is the coarse vertex of fine
    vertex ``i``, ``members`` (Nc x 2**rounds, -1 padded) the fine vertices of each coarse
    one, ``coarse`` the Galerkin operator of the next level (the piecewise constant
    prolongator's; formed when first read where the level was built without it)."""

    def __init__(self, aggregates, members, coarse=None, pending=None):
        self.aggregates, self.members = aggregates, members
        self._coarse, self._pending = coarse, pending

    @property
    def coarse(self):
        if self._coarse is None:
            self._coarse = pair_galerkin(*self._pending)[0]
            self._pending = None
        return self._coarse

    @property
    def n_coarse(self) -> int:
        return int(self.members.shape[0])


def pairwise_level(A, *, rounds=2, theta=0.25, matching=None, coarse=True):
    """Aggregates of up to ``2**rounds`` vertices by ``rounds`` rounds of pairwise matching
    of the strong couplings, and the coarse operator (``coarse=False``: the last round's
    pair contraction is left until :attr:`PairwiseLevel.coarse` is read, for a caller that
    forms its own coarse operator).

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx), square, float32 or float64
    rounds : int, 1..3
    theta : float
        Strength threshold of :func:`strength_graph`.
    matching : dict, optional
        Parameters of :func:`pair_matching` (iterations, m, k_m, p, seed).
    coarse : bool
        Form the coarse operator now.

    Returns
    -------
    PairwiseLevel

    Examples
    --------
    >>> import matrices
    >>> lvl = pairwise_level(matrices.aniso1(16))
    >>> lvl.n_coarse <= 256 // 3, int(lvl.members.max()) < 256
    (True, True)
    """
    if rounds not in (1, 2, 3):
        raise ValueError(f"rounds must be 1, 2 or 3, got {rounds!r}")
    matching = dict(matching or {})
    A = _canonical(A)
    xp = get_array_module(A)
    itype = A.indices.dtype
    n = A.shape[0]
    aggregates = xp.arange(n, dtype=itype)
    members = aggregates[:, None]
    current, pending = A, None
    for k in range(rounds):
        mate = pair_matching(strength_graph(current, theta), **matching)
        if k + 1 < rounds or coarse:
            Ac, numbering, pairs = pair_galerkin(current, mate)
        else:  # the last round: the numbering only, the contraction when asked for
            numbering, pairs = pair_numbering(mate.astype(itype, copy=False))
            Ac, pending = None, (current, mate)
        if pairs.shape[0] == current.shape[0]:  # nothing matched: this round changes nothing
            pending = None
            break
        aggregates = numbering[aggregates]
        # the fine members of each new coarse vertex: those of its first member, then of its second
        grouped = members[xp.maximum(pairs, 0)]  # (Nc, 2, width)
        grouped = xp.where((pairs >= 0)[:, :, None], grouped, -1).astype(itype, copy=False)
        members = grouped.reshape(pairs.shape[0], -1)
        current = Ac
    return PairwiseLevel(aggregates, xp.ascontiguousarray(members), current, pending)


def prolongator(aggregates, n_coarse, dtype):
    """The piecewise constant prolongator (N x Nc CSR, ones) of ``aggregates``."""
    xp = get_array_module(aggregates)
    n = aggregates.shape[0]
    itype = aggregates.dtype
    return sparse_module(xp).csr_matrix((xp.ones(n, dtype=dtype), aggregates, xp.arange(n + 1, dtype=itype)),
                                        shape=(n, n_coarse))

