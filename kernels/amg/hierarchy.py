"""Multigrid hierarchies: built by pyamg on the host and moved to the backend of the
matrix (smoothed aggregation, Ruge-Stuben, or a pyamg solver the caller built), or built
by pairwise aggregation on the backend itself (:mod:`kernels.amg.aggregation`)."""
from __future__ import annotations

import inspect
import math

import numpy as np

from ..backend import get_array_module, is_device_array, sparse_module, to_device, to_host
from .aggregation import pairwise_level
from .cycle import LevelOperator
from .product import ordered_product

__all__ = ["Hierarchy", "pyamg_hierarchy", "pairwise_hierarchy", "smoothed_prolongator", "from_pyamg", "inverse_diagonal",
           "PYAMG_SMOOTHER_OPTIONS", "PYAMG_SEED"]

#: pyamg options that configure pyamg's own cycle, not the hierarchy: refused, since the
#: cycle and its smoothers are ours (``smoother=`` chooses them).
PYAMG_SMOOTHER_OPTIONS = ("presmoother", "postsmoother", "coarse_solver", "keep")

#: The seed of NumPy's global generator while pyamg builds a hierarchy (see
#: :func:`pyamg_hierarchy`).
PYAMG_SEED = 0


class Hierarchy:
    """The levels of a multigrid hierarchy, finest first: ``levels`` (a
    :class:`kernels.amg.cycle.LevelOperator` each, with the transfer to the next level)
    and ``coarse``, the operator of the coarsest level (CSR), all on one backend."""

    def __init__(self, levels, coarse):
        self.levels = list(levels)
        self.coarse = coarse

    @property
    def operators(self):
        """The operator of every level, finest first, the coarsest last."""
        return [lvl.A for lvl in self.levels] + [self.coarse]

    @property
    def sizes(self) -> list[int]:
        return [int(A.shape[0]) for A in self.operators]

    @property
    def nonzeros(self) -> list[int]:
        return [int(A.nnz) for A in self.operators]

    @property
    def operator_complexity(self) -> float:
        """Nonzeros of all levels' operators over those of the finest."""
        nnz = self.nonzeros
        return sum(nnz) / max(nnz[0], 1)

    @property
    def grid_complexity(self) -> float:
        """Rows of all levels over those of the finest."""
        sizes = self.sizes
        return sum(sizes) / sizes[0]


def _csr(M, dtype):
    """A host matrix of pyamg's (CSR, BSR, or the sparse array classes) as canonical
    CSR of ``dtype`` with int32 indices where they fit."""
    import scipy.sparse as sp

    M = sp.csr_matrix(M, dtype=dtype)
    M.sum_duplicates()
    if M.shape[0] < np.iinfo(np.int32).max and M.nnz < np.iinfo(np.int32).max:
        M = sp.csr_matrix((M.data, M.indices.astype(np.int32), M.indptr.astype(np.int32)), shape=M.shape)
        M.has_canonical_format = True
    return M


def from_pyamg(ml, like):
    """The :class:`Hierarchy` of a pyamg ``MultilevelSolver`` ``ml`` on the backend and in
    the dtype of the matrix ``like``: each level's ``A``, ``P`` and ``R`` as CSR."""
    dtype = np.dtype(like.dtype)
    move = to_device if is_device_array(like) else (lambda M: M)
    levels = [LevelOperator(move(_csr(lvl.A, dtype)), P=move(_csr(lvl.P, dtype)), R=move(_csr(lvl.R, dtype)))
              for lvl in ml.levels[:-1]]
    return Hierarchy(levels, move(_csr(ml.levels[-1].A, dtype)))


def pyamg_hierarchy(A, coarsening, options):
    """A hierarchy built by pyamg on the host (``coarsening`` "smoothed_aggregation" or
    "ruge_stuben", ``options`` passed through to pyamg's solver), then moved to the
    backend of ``A``. Returns ``(hierarchy, ml)``.

    pyamg draws from NumPy's global generator while it builds: the start vectors of its
    spectral radius estimates (the damping of smoothed aggregation's prolongator
    smoother, which changes the coarse operators in their fifth digit from one build to
    the next), the random weights of the CLJP and PMIS splittings and of MIS
    aggregation. The build runs with that generator seeded with :data:`PYAMG_SEED`, and
    its state restored afterwards, so that one matrix always gives the same hierarchy, on
    the CPU and the GPU alike (the caller's random stream is left as it was; another
    thread drawing from the global generator during the build would interleave with it)."""
    import pyamg

    build = {"smoothed_aggregation": pyamg.smoothed_aggregation_solver,
             "ruge_stuben": pyamg.ruge_stuben_solver}[coarsening]
    refused = [k for k in PYAMG_SMOOTHER_OPTIONS if k in options]
    if refused:
        raise TypeError(f"{', '.join(refused)}: pyamg's cycle options do not apply (the cycle is precond.amg's; "
                        "choose its smoother with smoother=, presmooth=, postsmooth=)")
    accepted = inspect.signature(build).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in accepted.values()):
        unknown = [k for k in options if k not in accepted]
        if unknown:
            raise TypeError(f"unknown {coarsening} option(s) {unknown}")
    host = to_host(A).tocsr().astype(np.float64)  # pyamg builds in float64; the levels take A's dtype
    state = np.random.get_state()
    np.random.seed(PYAMG_SEED)
    try:
        ml = build(host, **options)
    finally:
        np.random.set_state(state)
    return from_pyamg(ml, A), ml


#: Mantissa bits kept of the prolongator smoother's damping factor (see
#: :func:`smoothed_prolongator`).
DAMPING_BITS = 20


def inverse_diagonal(A, dtype):
    """``1 / a_ii`` in ``dtype`` (1 where ``a_ii`` is 0: :func:`precond.jacobi`'s rule for a
    finite matrix), on the backend of ``A``, with no host read."""
    xp = get_array_module(A)
    diag = A.diagonal().astype(dtype, copy=False)
    return xp.where(diag != 0, 1 / xp.where(diag != 0, diag, 1), 1).astype(dtype, copy=False)


def _truncated(value: float, bits: int) -> float:
    """``value`` with its mantissa cut to ``bits`` bits (toward zero)."""
    mantissa, exponent = math.frexp(value)
    return math.ldexp(math.trunc(mantissa * 2.0**bits) / 2.0**bits, exponent)


def smoothed_prolongator(A, aggregates, n_coarse, omega_factor=4.0 / 3.0, iterations=10, with_rho=False):
    """The smoothed aggregation prolongator ``(I - omega D^{-1} A) P`` of the piecewise
    constant ``P`` of ``aggregates``, as canonical CSR on the backend of ``A``, the same
    bits on the CPU and the GPU.

    ``omega = omega_factor / rho(D^{-1} A)``, ``rho`` by the power method in float64 (one
    read of the estimate), its mantissa cut to :data:`DAMPING_BITS` bits: the two
    backends' estimates differ in their last bits, the cut ones (almost always) not.
    ``D^{-1} A P`` is :func:`kernels.amg.product.ordered_product`'s, the rest
    elementwise (:func:`kernels.amg.product.piecewise_constant_minus`). ``with_rho``:
    returns ``(P, rho)``, the estimate as a 0-d float64 array (a damped Jacobi smoother of
    the level reuses it)."""
    from .aggregation import prolongator, row_indices
    from .cycle import damping, spectral_radius
    from .product import ordered_product, piecewise_constant_minus

    xp = get_array_module(A)
    sps = sparse_module(xp)
    dtype = np.dtype(A.dtype)
    A64 = A if dtype == np.float64 else A.astype(np.float64)
    dinv64 = inverse_diagonal(A64, np.float64)
    rho = spectral_radius(A64, lambda r: dinv64 * r, iterations)
    omega = _truncated(float(damping(rho, omega_factor, np.float64)[0]), DAMPING_BITS)
    dinv = inverse_diagonal(A, dtype)
    scaled = sps.csr_matrix((A.data * dinv[row_indices(A)], A.indices, A.indptr), shape=A.shape)
    X = ordered_product(scaled, prolongator(aggregates, n_coarse, dtype))
    Y = sps.csr_matrix((X.data * dtype.type(omega), X.indices, X.indptr), shape=X.shape)  # exact: omega has 20 bits
    Y.has_canonical_format = True
    P = piecewise_constant_minus(aggregates, n_coarse, Y)
    return (P, rho) if with_rho else P


def pairwise_hierarchy(A, *, max_levels=20, coarse_size=1000, rounds=3, theta=0.25, matching=None, smooth="jacobi",
                       min_coarsening=1.2, max_density=0.5):
    """The pairwise aggregation hierarchy of ``A`` on its own backend: levels of
    :func:`kernels.amg.aggregation.pairwise_level` until the coarsest has at most
    ``coarse_size`` rows, ``max_levels`` levels exist, or a level's rows shrink by less
    than ``min_coarsening`` (its couplings too weak to aggregate; that level is then the
    coarsest). ``smooth="jacobi"``: the prolongator is smoothed by one damped Jacobi step
    (:func:`smoothed_prolongator`) and the coarse operator is ``P^T A P`` of it
    (:func:`kernels.amg.product.ordered_product`: the same bits on the CPU and the GPU),
    except on a level where that operator would have more than ``max_density`` times the
    nonzeros of the level's own (matrices of irregular graphs, such as circuits): there,
    and everywhere with ``smooth=None``, the piecewise constant prolongator and its
    Galerkin operator from the matching rounds (plain aggregation, as Notay's AGMG).
    Every step gives the same bits on the CPU and the GPU."""
    if max_levels < 1:
        raise ValueError(f"max_levels must be >= 1, got {max_levels}")
    if smooth not in (None, "jacobi"):
        raise ValueError(f"smooth must be None or 'jacobi', got {smooth!r}")
    if rounds not in (1, 2, 3):  # checked here too: a matrix below coarse_size builds no level
        raise ValueError(f"rounds must be 1, 2 or 3, got {rounds!r}")
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must be in [0, 1], got {theta}")
    levels = []
    current = A
    while len(levels) + 1 < max_levels and current.shape[0] > coarse_size:
        lvl = pairwise_level(current, rounds=rounds, theta=theta, matching=matching, coarse=smooth is None)
        if lvl.n_coarse * min_coarsening > current.shape[0]:
            break
        if smooth is None:
            levels.append(LevelOperator(current, aggregates=lvl.aggregates, members=lvl.members))
            current = lvl.coarse
            continue
        P, rho = smoothed_prolongator(current, lvl.aggregates, lvl.n_coarse, with_rho=True)
        level = LevelOperator(current, P=P)
        level.jacobi_rho = rho
        AP = ordered_product(level.A, level.P)  # the same bits on the CPU and the GPU
        # every row of A P lands in the row of its aggregate, so Ac has at least nnz(A P) / (the
        # largest aggregate) entries: too dense already, it is not formed (on memplus R (A P)
        # made 77M products for a level that was then dropped)
        too_dense = AP.nnz > max_density * level.A.nnz * lvl.members.shape[1]
        Ac = None if too_dense else ordered_product(level.R, AP)
        if too_dense or Ac.nnz > max_density * level.A.nnz:
            levels.append(LevelOperator(current, aggregates=lvl.aggregates, members=lvl.members))
            current = lvl.coarse
            continue
        levels.append(level)
        current = Ac
    return Hierarchy(levels, current)
