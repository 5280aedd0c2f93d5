"""Algebraic multigrid with algebraic line smoothing: :func:`amg`, and the same smoothers
for pyamg's own solvers (:func:`change_smoothers`).

Point smoothers (Jacobi, Gauss-Seidel) are what makes AMG weak on anisotropic and
high-contrast problems: the smoother must relax whole strong lines at once. The linear
forest of a matrix finds such lines algebraically, so the AlgTriScal preconditioner of
each level's operator, used in damped Richardson iteration, is an algebraic line
smoother on any matrix, on the CPU and the GPU alike.
"""
from __future__ import annotations

import numbers
import warnings
from typing import NamedTuple

import numpy as np

from kernels.amg.cycle import (CYCLES, Cycle, CycleGraph, DenseCoarseSolver, JacobiSmoother, LevelOperator,
                               RelaxationCoarseSolver, RichardsonSmoother, cycle_work, damping, krylov_factor,
                               krylov_work, least_work_choice, measured_cycle_work, richardson_damping, ritz_values,
                               spectral_radius, stream_is_capturing)
from kernels.amg.hierarchy import from_pyamg, inverse_diagonal, pairwise_hierarchy, pyamg_hierarchy
from kernels.amg.line_gs import GaussSeidelSmoother, LineGaussSeidel
from kernels.backend import get_array_module, sparse_module, to_host, zero_pool
from kernels.graph import is_symmetric
from kernels.timing import PhaseClock
from kernels.tridiag import TridiagonalSolver, extract_tridiagonal, partner_entries

from kernels.validation import validate_matrix

from .krylov import bicgstab
from .preconditioners import Preconditioner, algebraic_block_tridiagonal, algebraic_tridiagonal

__all__ = ["AMGPrecond", "AMGLevel", "amg", "change_smoothers", "SMOOTHERS", "COARSENINGS"]

#: Smoothers of :func:`amg` and :func:`change_smoothers`.
SMOOTHERS = ("algebraic_tridiagonal", "algebraic_block_tridiagonal", "jacobi")
#: Hierarchies of :func:`amg` (or a pyamg ``MultilevelSolver`` to reuse).
COARSENINGS = ("smoothed_aggregation", "ruge_stuben", "pairwise")

#: Defaults of the smoother options (see :func:`amg`).
SMOOTHER_DEFAULTS = {"sweep": "symmetric", "omega": None, "omega_factor": 1.5, "eig_iterations": None, "l1": None,
                     "relaxation": "richardson"}
#: The relaxations of the line and point smoothers: additive (damped Richardson with the
#: smoother's solve) or multiplicative (multicolour Gauss-Seidel over its lines or points).
#: "auto": the set-up measures both and keeps the one whose cycle needs less work per digit.
RELAXATIONS = ("richardson", "gauss_seidel", "auto")
_FOREST_OPTIONS = ("iterations", "m", "k_m", "p", "seed")
#: Defaults of the pairwise hierarchy's options. Its coarsest level may have up to 1000
#: rows: a level of a few hundred rows costs a GPU set-up the latency of a whole level
#: (tens of kernel launches and host reads for a matching, a smoothing and products), while
#: the dense inverse of 1000 rows costs a millisecond once and a few microseconds per cycle.
PAIRWISE_DEFAULTS = {"max_levels": 20, "max_coarse": 1000, "rounds": 3, "theta": 0.25, "smooth": "jacobi",
                     "matching": None}
#: ``max_coarse`` of the hierarchies pyamg builds (pyamg's own default is 10).
PYAMG_MAX_COARSE = 500
#: The largest coarsest level solved by a dense inverse; a larger one (pairwise coarsening
#: that stalls, or ``max_levels`` reached) is smoothed ``COARSE_SWEEPS`` times instead.
MAX_DENSE = 8192
COARSE_SWEEPS = 8
#: The smoothing-step counts the set-up chooses from for ``presmooth="auto"`` (see :func:`amg`).
AUTO_STEPS = (1, 2)
#: The BiCGStab iterations with each cycle by which ``presmooth="auto"`` and
#: ``relaxation="auto"`` choose.
AUTO_KRYLOV = 4


#: A level's largest ``|a_ij - a_ji|``, in units of its dtype's machine epsilon times its
#: largest entry, below which it counts as symmetric (see :func:`_symmetric_level`).
SYMMETRY_EPSILONS = 1024


def _symmetric_level(A) -> bool:
    """Whether a level operator is symmetric up to rounding: the Galerkin products of a
    symmetric matrix are symmetric in exact arithmetic but differ from their transposes
    by a few units of the last bit (at most 4 epsilons of the largest entry measured on
    the benchmark matrices, against 10^5 and more for unsymmetric ones). Counted as
    unsymmetric, such a level lost the l1 diagonal that keeps Richardson with an
    indefinite tridiagonal part convergent (random_diffusion2d at 300 x 300: 100
    iterations with smoothed aggregation and the line smoother instead of 17)."""
    xp = get_array_module(A)
    if A.nnz == 0:
        return True
    T = A.T.tocsr()  # a CSR-to-CSC conversion: the indices of every row sorted, explicit zeros kept
    eps = float(np.finfo(A.dtype).eps)
    if T.nnz == A.nnz:  # the same pattern (Galerkin levels): the values compared in place, one read
        other, largest, mismatch = (float(v) for v in to_host(xp.stack([
            xp.abs(A.data - T.data).max().astype(np.float64), xp.abs(A.data).max().astype(np.float64),
            ((T.indptr != A.indptr).any() | (T.indices != A.indices).any()).astype(np.float64)])))
        if not mismatch:
            return other <= SYMMETRY_EPSILONS * eps * largest
    difference = (A - T).tocsr()
    if difference.nnz == 0:
        return True
    return float(xp.abs(difference.data).max()) <= SYMMETRY_EPSILONS * eps * float(xp.abs(A.data).max())


def _cycle_dtype(dtype):
    """``cycle_dtype`` checked: float32 or float64."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.float32, np.float64):
        raise ValueError(f"cycle_dtype must be None, float32 or float64, got {dtype!r}")
    return dt


def _cast_hierarchy(hierarchy, dtype):
    """A :class:`kernels.amg.hierarchy.Hierarchy` with the operators and transfers of
    ``hierarchy`` cast to ``dtype`` (aggregates and the damping estimates kept)."""
    levels = []
    for level in hierarchy.levels:
        cast = LevelOperator(_cast_matrix(level.A, dtype),
                             P=None if level.P is None else _cast_matrix(level.P, dtype),
                             R=None if level.R is None else _cast_matrix(level.R, dtype),
                             aggregates=level.aggregates, members=level.members)
        cast.jacobi_rho = level.jacobi_rho
        levels.append(cast)
    return type(hierarchy)(levels, _cast_matrix(hierarchy.coarse, dtype))


def _cast_matrix(M, dtype):
    """A canonical CSR ``M`` in ``dtype`` (canonical still)."""
    out = M.astype(dtype)
    out.has_canonical_format = True
    return out


def _symmetric_levels(hierarchy, galerkin):
    """Whether each level's operator is symmetric (:func:`_symmetric_level`). ``galerkin``:
    every coarse operator is ``P^T A P`` of the level above (the pairwise hierarchy's),
    symmetric wherever the finest is (up to the rounding that test allows): only the
    finest is tested then, saving a transpose and a host read per level on the GPU."""
    levels = hierarchy.levels
    if not levels:
        return []
    first = _symmetric_level(levels[0].A)
    if galerkin and first:
        return [True] * len(levels)
    return [first] + [_symmetric_level(level.A) for level in levels[1:]]


class AMGLevel(NamedTuple):
    """One level of an :class:`AMGPrecond`: its rows, nonzeros and smoother."""

    rows: int
    nnz: int
    smoother: str


def _smoother_spec(smoother):
    """``(name, options)`` from a name or a ``(name, {options})`` pair, options checked."""
    if isinstance(smoother, str):
        name, given = smoother, {}
    elif isinstance(smoother, tuple) and len(smoother) == 2 and isinstance(smoother[0], str) \
            and isinstance(smoother[1], dict):
        name, given = smoother
    else:
        raise TypeError(f"smoother must be a name or a (name, options) pair, got {smoother!r}")
    if name not in SMOOTHERS:
        raise ValueError(f"unknown smoother {name!r}; choose from {SMOOTHERS}")
    allowed = set(SMOOTHER_DEFAULTS) | (set(_FOREST_OPTIONS) if name != "jacobi" else set())
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} of smoother {name!r}; allowed: {sorted(allowed)}")
    options = {**SMOOTHER_DEFAULTS, **given}
    if options["sweep"] not in ("forward", "symmetric"):
        raise ValueError(f"sweep must be 'forward' or 'symmetric', got {options['sweep']!r}")
    omega = options["omega"]
    if omega is not None and (not isinstance(omega, numbers.Real) or not 0 < omega < 2):
        raise ValueError(f"omega must be None or a number in (0, 2), got {omega!r}")
    factor = options["omega_factor"]
    if not isinstance(factor, numbers.Real) or not 0 < factor < 2:
        raise ValueError(f"omega_factor must be in (0, 2), got {factor!r}")
    its = options["eig_iterations"]
    if its is not None and (not isinstance(its, numbers.Integral) or isinstance(its, bool) or its < 1):
        raise ValueError(f"eig_iterations must be a positive integer, got {options['eig_iterations']!r}")
    if options["l1"] not in (None, True, False):
        raise ValueError(f"l1 must be None, True or False, got {options['l1']!r}")
    if options["relaxation"] not in RELAXATIONS:
        raise ValueError(f"relaxation must be one of {RELAXATIONS}, got {options['relaxation']!r}")
    if options["relaxation"] != "richardson" and name == "algebraic_block_tridiagonal":
        raise ValueError(f"relaxation={options['relaxation']!r} (Gauss-Seidel) needs the scalar line smoother ('algebraic_tridiagonal') or "
                         "'jacobi' (point Gauss-Seidel)")
    return name, options


def _omega(A, solve, options, symmetric):
    """The damping factor (a 1-element array on A's backend): ``omega`` as given, else,
    for a symmetric ``A``, ``omega_factor`` over the spectral radius of ``S^{-1} A``
    (power method, ``eig_iterations`` steps, default 10; no host read). An unsymmetric
    ``A`` may have complex eigenvalues ``theta`` for which ``omega_factor / rho`` leaves
    ``|1 - omega theta|`` near 1 (no smoothing at all); there Ritz values of ``eig_iterations``
    Arnoldi steps (default 10) choose it (:func:`kernels.amg.cycle.richardson_damping`; one
    host read per level)."""
    xp = get_array_module(A)
    if options["omega"] is not None:
        return xp.full(1, options["omega"], dtype=A.dtype)
    if symmetric:
        steps = options["eig_iterations"] or 10
        return damping(spectral_radius(A, solve, steps), options["omega_factor"], A.dtype)
    omega = richardson_damping(ritz_values(A, solve, options["eig_iterations"] or 10), options["omega_factor"])
    return xp.full(1, options["omega_factor"] if omega is None else omega, dtype=A.dtype)


def _transpose_tridiagonal(dl, d, du):
    """The coefficients of ``T^T`` for a tridiagonal ``T`` given by ``(dl, d, du)``: row k of
    ``T^T`` couples k - 1 by ``du[k - 1]`` and k + 1 by ``dl[k + 1]``."""
    xp = get_array_module(d)
    zero = xp.zeros(1, dtype=d.dtype)
    return xp.concatenate([zero, du[:-1]]), d, xp.concatenate([dl[1:], zero])


def _line_solvers(A, M, l1, adjoint):
    """The solve (and the adjoint solve, or None) of the algebraic line smoother of ``A``
    from its AlgTriScal ``M``. With ``l1`` the tridiagonal system's diagonal gains, row by
    row, the absolute off-diagonal entries of ``A`` that the linear forest leaves out (the
    l1 smoother of Baker, Falgout, Kolev and Yang): for a symmetric positive definite ``A``
    the system is then definite and dominates ``A``, so that Richardson converges. Without
    changes, AlgTriScal's own solver is used."""
    if not l1 and not adjoint:
        return M.matvec, None
    xp = get_array_module(A)
    perm, partners = M.forest.permutation, M.forest.neighbors
    dl, d, du = extract_tridiagonal(A, perm, partners)
    if l1:
        entries = partner_entries(A, partners)
        absolute = sparse_module(xp).csr_matrix((xp.abs(A.data), A.indices, A.indptr), shape=A.shape)
        outside = absolute @ xp.ones(A.shape[0], dtype=A.dtype) - xp.abs(entries[:, 0]) - xp.abs(entries[:, 1]) \
            - xp.abs(entries[:, 2])
        d = d + xp.maximum(outside, 0)[perm]
    solver = TridiagonalSolver(dl, d, du, perm) if l1 else M.solver
    transposed = TridiagonalSolver(*_transpose_tridiagonal(dl, d, du), perm).solve if adjoint else None
    return solver.solve, transposed


def _build_smoother(A, name, options, symmetric_matrix, adjoint=False, jacobi_rho=None, cast=False):
    """The :class:`kernels.amg.cycle.Smoother` ``name`` of the level operator ``A``
    (``symmetric_matrix``: whether ``A`` is symmetric; ``adjoint``: build the line
    smoother's adjoint solve, for a symmetric cycle of an unsymmetric ``A``;
    ``jacobi_rho``: the hierarchy's estimate of the spectral radius of ``D^{-1} A``, which
    a float64 Jacobi smoother with the default estimate takes instead of making the same
    one again; ``cast``: ``A`` is a float64 level cast to ``cycle_dtype``, whose estimate
    in float64 a Jacobi smoother also takes)."""
    if options["relaxation"] == "gauss_seidel":
        return _gauss_seidel_smoother(A, name, options, symmetric_matrix, adjoint)
    if name == "jacobi":
        dinv = inverse_diagonal(A, A.dtype)  # 1 where a_ii = 0 (jacobi's rule), no host read
        same_estimate = (jacobi_rho is not None and symmetric_matrix and options["omega"] is None
                         and (np.dtype(A.dtype) == np.float64 or cast) and (options["eig_iterations"] or 10) == 10)
        omega = (damping(jacobi_rho, options["omega_factor"], A.dtype) if same_estimate
                 else _omega(A, lambda r: dinv * r, options, symmetric_matrix))
        return JacobiSmoother(dinv, omega, sweep=options["sweep"])
    forest = {k: options[k] for k in _FOREST_OPTIONS if k in options}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an indefinite tridiagonal part is handled below (l1)
        if name == "algebraic_block_tridiagonal":
            M = algebraic_block_tridiagonal(A, **forest)
            solve, adjoint, label = M.matvec, None, "AlgTriBlock"  # no adjoint solve: the same after
        else:
            M = algebraic_tridiagonal(A, **forest)
            # the l1 diagonal makes Richardson convergent for symmetric positive definite
            # levels; pivot signs say nothing of an unsymmetric level's spectrum
            l1 = (symmetric_matrix and M.indefinite) if options["l1"] is None else options["l1"]
            solve, adjoint = _line_solvers(A, M, l1, adjoint=adjoint)
            label = "AlgTriScal" + (" l1" if l1 else "")
    omega = _omega(A, solve, options, symmetric_matrix)
    return RichardsonSmoother(solve, omega, adjoint=adjoint, sweep=options["sweep"], name=label)


def _gauss_seidel_smoother(A, name, options, symmetric_matrix, adjoint):
    """Multicolour Gauss-Seidel over the lines of ``A``'s linear forest (the one AlgTriScal
    finds, ``name`` "algebraic_tridiagonal") or over its points ("jacobi"). ``l1`` None
    or True: the lines' chords (the couplings inside a line that the forest leaves out)
    go onto their diagonal, which keeps the sweep convergent for symmetric positive
    definite levels; False: the plain tridiagonal part."""
    if adjoint:
        raise ValueError("relaxation='gauss_seidel' has no adjoint sweep for an unsymmetric level: use "
                         "symmetric=None or False, or the Richardson relaxation")
    omega = 1.0 if options["omega"] is None else float(options["omega"])
    exact_symmetric = is_symmetric(A)
    if name == "jacobi":
        gs = LineGaussSeidel(A, None, None, None, omega=omega, symmetric_pattern=exact_symmetric)
        return GaussSeidelSmoother(gs, sweep=options["sweep"], name="Gauss-Seidel")
    forest = {k: options[k] for k in _FOREST_OPTIONS if k in options}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an indefinite tridiagonal part: l1 below
        M = algebraic_tridiagonal(A, **forest)
    l1 = options["l1"] is not False
    f = M.forest
    gs = LineGaussSeidel(A, f.permutation, f.path_start, f.neighbors, omega=omega, l1=l1,
                         symmetric_pattern=exact_symmetric)
    return GaussSeidelSmoother(gs, sweep=options["sweep"], name="line Gauss-Seidel" + (" l1" if l1 else ""))


def _check_count(name, value):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _hierarchy(A, coarsening, options):
    """``(Hierarchy, pyamg solver or None)`` of ``A`` on its backend."""
    if hasattr(coarsening, "levels") and not isinstance(coarsening, str):  # a pyamg MultilevelSolver
        if options:
            raise TypeError(f"hierarchy options {sorted(options)} do not apply to a given pyamg solver")
        if coarsening.levels[0].A.shape != A.shape:
            raise ValueError(f"the pyamg solver's finest level has shape {coarsening.levels[0].A.shape}, "
                             f"the matrix {A.shape}")
        return from_pyamg(coarsening, A), coarsening
    if coarsening not in COARSENINGS:
        raise ValueError(f"unknown coarsening {coarsening!r}; choose from {COARSENINGS} or pass a pyamg solver")
    if coarsening == "pairwise":
        unknown = sorted(set(options) - set(PAIRWISE_DEFAULTS))
        if unknown:
            raise TypeError(f"unknown pairwise option(s) {unknown}; allowed: {sorted(PAIRWISE_DEFAULTS)}")
        opts = {**PAIRWISE_DEFAULTS, **options}
        return pairwise_hierarchy(A, max_levels=opts["max_levels"], coarse_size=opts["max_coarse"],
                                  rounds=opts["rounds"], theta=opts["theta"], matching=opts["matching"],
                                  smooth=opts["smooth"]), None
    return pyamg_hierarchy(A, coarsening, {"max_coarse": PYAMG_MAX_COARSE, **options})


class AMGPrecond(Preconditioner):
    """Algebraic multigrid preconditioner: one cycle from a zero initial guess per apply.

    See :func:`amg` for the parameters. Attributes: ``hierarchy``
    (:class:`kernels.amg.hierarchy.Hierarchy`), ``levels`` (an :class:`AMGLevel` per level,
    finest first, the coarsest last), ``operator_complexity``, ``grid_complexity``,
    ``symmetric`` (whether the cycle is a symmetric operator for a symmetric matrix),
    ``ml`` (the pyamg solver the hierarchy came from, or None), ``presmooth`` and
    ``postsmooth`` (as chosen), ``relaxation`` (as chosen), ``cycle_measurements``
    (``(relaxation, steps, BiCGStab residual factor per iteration, work per iteration)``
    of each cycle the set-up tried), ``relaxation_measurements`` (``(relaxation, factor,
    work)`` of those with the chosen steps, empty unless ``relaxation="auto"``),
    ``step_measurements`` (``(steps, factor, work)`` of those with the chosen relaxation,
    empty when the steps were given),
    ``setup_time`` by phase ("hierarchy", "smoothers", "coarse solver", "smoothing
    steps" and "relaxation" when chosen).
    """

    def __init__(self, A, *, smoother="algebraic_tridiagonal", coarsening="smoothed_aggregation", presmooth=1,
                 postsmooth=None, cycle="V", symmetric=None, cuda_graph=None, cycle_dtype=None, **hierarchy_options):
        A = validate_matrix(A, what="amg")
        if np.dtype(A.dtype) not in (np.float32, np.float64):
            raise TypeError(f"amg supports float32 and float64 matrices, got {A.dtype}")
        name, options = _smoother_spec(smoother)
        if presmooth == "auto":  # chosen by the set-up (below)
            if postsmooth not in (None, "auto"):
                raise ValueError(f"presmooth='auto' chooses postsmooth too, got postsmooth={postsmooth!r}")
            self.presmooth = self.postsmooth = None
        else:
            self.presmooth = _check_count("presmooth", presmooth)
            self.postsmooth = self.presmooth if postsmooth is None else _check_count("postsmooth", postsmooth)
        if cycle not in CYCLES:
            raise ValueError(f"cycle must be one of {CYCLES}, got {cycle!r}")
        if symmetric not in (None, True, False):
            raise ValueError(f"symmetric must be None, True or False, got {symmetric!r}")
        if symmetric and self.presmooth is not None and self.presmooth != self.postsmooth:
            raise ValueError(f"a symmetric cycle needs presmooth == postsmooth, got {presmooth} and {postsmooth}")
        if cuda_graph not in (None, True, False):
            raise ValueError(f"cuda_graph must be None, True or False, got {cuda_graph!r}")
        cycle_dtype = np.dtype(A.dtype) if cycle_dtype is None else _cycle_dtype(cycle_dtype)
        super().__init__(A)
        #: The dtype the cycle runs in (its levels, smoothers and vectors); the apply takes
        #: and returns vectors of ``dtype``.
        self.cycle_dtype = cycle_dtype
        cast = cycle_dtype != self.dtype
        if cuda_graph and not self.on_gpu:
            raise ValueError("cuda_graph needs a GPU matrix")
        clock = self._clock
        self.smoother_name, self.coarsening = name, coarsening if isinstance(coarsening, str) else "pyamg solver"
        self.cycle_kind = cycle
        with zero_pool(self.on_gpu):
            self.hierarchy, self.ml = _hierarchy(A, coarsening, hierarchy_options)
            clock.mark("hierarchy")
            symmetric_levels = _symmetric_levels(self.hierarchy, self.coarsening == "pairwise")
            coarse_exact = self.hierarchy.coarse  # the dense inverse is computed from A's own dtype
            if cast:
                self.hierarchy = _cast_hierarchy(self.hierarchy, cycle_dtype)
            adjoints = [bool(symmetric) and not s for s in symmetric_levels]
            candidates = [options["relaxation"]]
            if candidates == ["auto"]:  # Gauss-Seidel has no adjoint sweep of an unsymmetric level
                candidates = ["richardson"] + ([] if any(adjoints) else ["gauss_seidel"])
            trials = {relaxation: [_build_smoother(level.A, name, {**options, "relaxation": relaxation}, sym, adjoint,
                                                   jacobi_rho=level.jacobi_rho, cast=cast)
                                   for level, sym, adjoint in zip(self.hierarchy.levels, symmetric_levels, adjoints)]
                      for relaxation in candidates}
            clock.mark("smoothers")
            options = {**options, "relaxation": candidates[0]}  # (the coarse level's, if smoothed)
            coarse = self.hierarchy.coarse
            if coarse.shape[0] <= MAX_DENSE:
                self.coarse_solver = DenseCoarseSolver(coarse_exact, dtype=cycle_dtype)
            else:
                warnings.warn(f"amg: the coarsest level has {coarse.shape[0]} rows (more than {MAX_DENSE}): it is "
                              f"smoothed {COARSE_SWEEPS} times instead of solved; coarsen further (max_levels, "
                              "max_coarse) for a better cycle", RuntimeWarning, stacklevel=3)
                level = LevelOperator(coarse, coarsest=True)
                self.coarse_solver = RelaxationCoarseSolver(
                    level, _build_smoother(level.A, name, options, _symmetric_level(level.A)), COARSE_SWEEPS)
            clock.mark("coarse solver")
            #: (relaxation, steps, BiCGStab factor, work) of each cycle the set-up measured
            self.cycle_measurements = []
            self.relaxation = candidates[0]
            auto_steps = self.presmooth is None
            if len(candidates) > 1 or auto_steps:
                self.relaxation, steps = self._least_work_cycle(A, cycle, trials, auto_steps)
                if auto_steps:
                    self.presmooth = self.postsmooth = steps
                clock.mark(" and ".join(phase for phase, chosen in (("relaxation", len(candidates) > 1),
                                                                     ("smoothing steps", auto_steps)) if chosen))
            self.smoothers = smoothers = trials[self.relaxation]
            #: (relaxation, factor, work) of the measured cycles with the chosen steps
            self.relaxation_measurements = [(r, f, w) for r, k, f, w in self.cycle_measurements
                                            if len(candidates) > 1 and k == self.presmooth]
            #: (steps, factor, work) of the measured cycles with the chosen relaxation
            self.step_measurements = [(k, f, w) for r, k, f, w in self.cycle_measurements
                                      if auto_steps and r == self.relaxation]
        self.symmetric = self.presmooth == self.postsmooth if symmetric is None else symmetric
        self._cycle = Cycle(self.hierarchy.levels, smoothers, self.coarse_solver, presmooth=self.presmooth,
                            postsmooth=self.postsmooth, kind=cycle)
        self._graph_wanted = self.on_gpu and cuda_graph is not False
        self._graph_requested = bool(cuda_graph)
        self._graph, self._warm = None, False

    def _in_dtype(self, run):
        """``run`` (a cycle in :attr:`cycle_dtype`) as a map of vectors of :attr:`dtype`."""
        if self.cycle_dtype == self.dtype:
            return run
        return lambda b: run(b.astype(self.cycle_dtype)).astype(self.dtype)

    def _least_work_cycle(self, A, kind, trials, auto_steps):
        """``(relaxation, steps)`` of the cycle (the relaxations are the keys of ``trials``,
        each with its smoothers, the first preferred; the step counts :data:`AUTO_STEPS`
        where ``auto_steps``, else the given ones) with which BiCGStab reaches a tolerance
        with the least work (:func:`kernels.amg.cycle.least_work_choice`: the least work per
        digit, near ties within 10% going to the cycle with the fewer iterations). Each
        cycle preconditions :data:`AUTO_KRYLOV` BiCGStab iterations from a fixed
        right-hand side (:func:`kernels.amg.cycle.krylov_factor`: the Krylov method's own
        reduction, not the cycle's as a stationary iteration: a symmetric Gauss-Seidel
        cycle's spectrum lies in (0, 1] and clusters, which Krylov methods exploit and a
        stationary factor does not show: bcsstk25, stationary factors 0.44 against
        Richardson's 0.24, but 39 BiCGStab iterations against 64). The work of an
        iteration is two cycles and BiCGStab's own SpMVs and vector updates
        (:func:`kernels.amg.cycle.krylov_work`); a cycle's work is its memory traffic (a
        model, :func:`kernels.amg.cycle.cycle_work`), and on the GPU, where relaxations are
        compared, its measured time (:func:`kernels.amg.cycle.measured_cycle_work`: the
        launches of a Gauss-Seidel sweep's colours count there); step counts alone are
        compared by the model on both backends, so that the CPU and the GPU choose alike.
        A hierarchy without levels (the matrix solved directly) needs no smoothing."""
        if not self.hierarchy.levels:
            return next(iter(trials)), AUTO_STEPS[0] if auto_steps else self.presmooth
        counts = [(k, k) for k in AUTO_STEPS] if auto_steps else [(self.presmooth, self.postsmooth)]
        measured = self.on_gpu and len(trials) > 1
        overhead = krylov_work(A)
        for relaxation, smoothers in trials.items():
            for pre, post in counts:
                trial = Cycle(self.hierarchy.levels, smoothers, self.coarse_solver, presmooth=pre, postsmooth=post,
                              kind=kind)
                factor = krylov_factor(A, self._in_dtype(trial), bicgstab, AUTO_KRYLOV)
                work = measured_cycle_work(A, self._in_dtype(trial)) if measured else cycle_work(trial)
                self.cycle_measurements.append((relaxation, pre, factor, 2 * work + overhead))
        return least_work_choice([((r, k), f, w) for r, k, f, w in self.cycle_measurements])

    # ------------------------------------------------------------------ apply
    def cycle(self, b, x=None):
        """One cycle for ``A x = b`` from ``x`` (None: zero); returns the new iterate as a
        new array (``x`` is left as it was)."""
        self._check_vector(b)
        b = self.xp.ascontiguousarray(b, dtype=self.cycle_dtype)
        if x is not None:
            self._check_vector(x)
            x = self.xp.array(x, dtype=self.cycle_dtype, copy=True)
        return self._cycle(b, x).astype(self.dtype, copy=False)

    def matvec(self, x):
        """One cycle from a zero initial guess for the right-hand side ``x``: the
        preconditioner's apply (a new array; on the GPU no host synchronization, and,
        after a first eager cycle, one CUDA graph launch)."""
        self._check_vector(x)
        if x.ndim == 2:
            return self.xp.stack([self.matvec(x[:, k]) for k in range(x.shape[1])], axis=1)
        x = self.xp.ascontiguousarray(x, dtype=self.cycle_dtype)
        if not self._graph_wanted or stream_is_capturing():
            # inside a caller's capture, its graph takes the kernels
            return self._cycle(x).astype(self.dtype, copy=False)
        if self._graph is None:
            if not self._warm:  # compiles the kernels and makes the launch arguments
                self._warm = True
                return self._cycle(x).astype(self.dtype, copy=False)
            try:
                self._graph = CycleGraph(self._cycle, self.shape[0], self.cycle_dtype)
            except Exception as exc:  # noqa: BLE001 - something in the cycle cannot be captured
                self._graph_wanted = False
                if self._graph_requested:
                    warnings.warn(f"amg: CUDA graph capture failed ({type(exc).__name__}: {exc}); launching the "
                                  "kernels one by one", RuntimeWarning, stacklevel=2)
                return self._cycle(x).astype(self.dtype, copy=False)
        return self._graph(x).astype(self.dtype, copy=False)

    # -------------------------------------------------------------- describe
    @property
    def levels(self) -> list[AMGLevel]:
        names = [s.describe() for s in self.smoothers]
        coarse = "dense inverse" if isinstance(self.coarse_solver, DenseCoarseSolver) else \
            f"{COARSE_SWEEPS} smoothing steps"
        if isinstance(self.coarse_solver, DenseCoarseSolver) and self.coarse_solver.pseudo:
            coarse = "dense pseudo-inverse"
        return [AMGLevel(rows, nnz, label) for rows, nnz, label in
                zip(self.hierarchy.sizes, self.hierarchy.nonzeros, names + [coarse])]

    @property
    def operator_complexity(self) -> float:
        return self.hierarchy.operator_complexity

    @property
    def grid_complexity(self) -> float:
        return self.hierarchy.grid_complexity

    def _describe(self):
        sizes = " -> ".join(str(s) for s in self.hierarchy.sizes)
        return (f"{self.coarsening}, {len(self.hierarchy.sizes)} levels ({sizes}), operator complexity "
                f"{self.operator_complexity:.2f}, {self.cycle_kind}({self.presmooth},{self.postsmooth}) "
                f"{self.smoother_name}{' (Gauss-Seidel)' if self.relaxation == 'gauss_seidel' else ''}"
                f"{'' if self.cycle_dtype == self.dtype else f', cycle in {self.cycle_dtype}'}")


def amg(A, *, smoother="algebraic_tridiagonal", coarsening="smoothed_aggregation", presmooth=1, postsmooth=None,
        cycle="V", symmetric=None, cuda_graph=None, cycle_dtype=None, **hierarchy_options) -> AMGPrecond:
    """Algebraic multigrid preconditioner with algebraic line smoothing (SciPy in: the CPU;
    cupyx in: the GPU).

    Each apply runs one multigrid cycle from a zero initial guess: on every level but the
    coarsest, ``presmooth`` smoothing steps, the restricted residual, the cycle of the
    next level, its prolongation, ``postsmooth`` smoothing steps; the coarsest level is
    solved by a dense inverse. Usable as ``M=`` in SciPy's and cupyx's Krylov solvers
    (``M.aslinearoperator()``) and in :func:`precond.bicgstab`; with as many pre- as
    post-smoothing steps and a symmetric ``A`` the cycle is a symmetric operator (for CG).

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx), square, float32 or float64
    smoother : str or (str, dict)
        ``"algebraic_tridiagonal"``: damped Richardson with the AlgTriScal preconditioner
        of each level's operator (algebraic line relaxation along the paths of its linear
        forest); ``"algebraic_block_tridiagonal"``: the same with AlgTriBlock;
        ``"jacobi"``: damped Jacobi. Options, as ``(name, {option: value})``:

        - ``sweep``: ``"symmetric"`` (default: a smoothing step is an update with the
          smoother followed by one with its adjoint, the forward-backward sweep of
          symmetric Gauss-Seidel) or ``"forward"`` (one update per step; the
          post-smoother uses the adjoint);
        - ``omega``: a fixed damping factor in (0, 2); default None: ``omega_factor``
          (default 1.5) over the spectral radius of ``S^{-1} A``, estimated by
          ``eig_iterations`` power steps on the device (default 10) on symmetric
          levels; on others (whose eigenvalues may be complex) from the Ritz values of
          ``eig_iterations`` Arnoldi steps: at most ``omega_factor / rho``, less where
          that minimizes the largest ``|1 - omega theta|`` over the outer quarter of the
          spectrum;
        - ``l1`` (line smoothers): add to the tridiagonal system's diagonal the absolute
          entries the forest leaves out; None (default) on symmetric levels whose
          tridiagonal part is indefinite (coarse operators of smoothed aggregation often
          are), which makes Richardson convergent for symmetric positive definite levels;
        - ``relaxation`` (line and point smoothers): ``"richardson"`` (default: the
          additive update above), ``"gauss_seidel"``: multicolour Gauss-Seidel, the
          multiplicative update (:mod:`kernels.amg.line_gs`): the lines (or, with
          ``"jacobi"``, the points) coloured so that no two of a colour are coupled, each
          colour's residual taken with the latest iterate and its lines solved (``omega``
          default 1; ``l1`` default on: the couplings inside a line that the forest leaves
          out go onto its diagonal); a symmetric sweep visits the colours forward, then
          backward. The same cycle work; fewer iterations on some matrices (bcsstk21,
          pde2961, swang1, ANISO), more on others (rotated anisotropy). ``"auto"``: the
          set-up builds both and keeps the one with which BiCGStab reaches a tolerance
          with less work (four iterations with each from a fixed right-hand side: the
          least work per digit, where the two are within 10% of each other the one
          with fewer iterations; with ``presmooth="auto"`` the step counts are chosen
          with it), in ``relaxation_measurements``. The work of an iteration is two
          cycles and BiCGStab's own SpMVs and vector updates; that of a cycle its
          memory traffic (a model) on the CPU, and its measured time on the GPU (CUDA
          events, the cycle captured into a CUDA graph, in SpMVs of the finest matrix),
          where a Gauss-Seidel cycle's three kernel launches per colour and level cost
          more than its traffic says;
        - ``iterations``, ``m``, ``k_m``, ``p``, ``seed``: of the [0,2]-factor
          (:func:`precond.algebraic_tridiagonal`).
    coarsening : str or pyamg.multilevel.MultilevelSolver
        ``"smoothed_aggregation"`` or ``"ruge_stuben"``: built by pyamg on the host
        (``hierarchy_options`` go to ``pyamg.smoothed_aggregation_solver`` /
        ``ruge_stuben_solver``: strength measures, ``smooth=("energy", ...)``,
        ``max_levels``, ... ; ``max_coarse`` defaults to 500 here) and moved to the
        device of ``A`` (pyamg's random draws seeded: one matrix, one hierarchy).
        ``"pairwise"``: aggregation by rounds of matching of the strong-connection graph
        (the project's [0,1]-factor), every step on the backend of ``A`` (options
        ``rounds`` 3: aggregates of up to eight rows; ``smooth`` "jacobi": the
        prolongator smoothed by one damped Jacobi step, None: plain aggregates;
        ``theta`` 0.25, ``max_levels`` 20, ``max_coarse`` 1000, ``matching``: a dict of
        the factor's parameters). A pyamg solver: its hierarchy, reused.
    presmooth : int or "auto"
        Smoothing steps before the coarse-grid correction (default 1). ``"auto"``: the
        set-up chooses one or two steps, before and after alike, as ``relaxation="auto"``
        chooses the relaxation (and with it, where both are "auto"): four BiCGStab
        iterations preconditioned by either cycle from a fixed right-hand side, the
        work of an iteration by the cycle's memory-traffic model (in nonzeros of the
        finest matrix, on either backend, so that both choose alike; with
        ``relaxation="auto"`` on the GPU its measured time) plus BiCGStab's own; the
        least work per digit, and where two counts are within 10% of each other, the one
        with fewer iterations (the measurements are in ``step_measurements``). Where the
        coarse solve and the transfers are a large share of a cycle (small matrices: a
        dense coarse inverse of a few hundred rows) a second step costs little and the
        choice is often two (bcsstk21, cage9, pde2961, swang1); on most larger problems
        one (ANISO1/2, random diffusion, rotated anisotropy, elasticity). The trials are
        eight preconditioned BiCGStab iterations (sixteen with ``relaxation="auto"``).
    postsmooth : int, optional
        Smoothing steps after it; default: as ``presmooth``.
    cycle : {"V", "W", "F"}
    symmetric : bool, optional
        True: make the cycle symmetric also for an unsymmetric ``A`` (the post-smoother
        the adjoint of the pre-smoother, with ``T^T`` solves; needs presmooth ==
        postsmooth); False: the same smoother after as before. None: symmetric where
        ``A`` is.
    cuda_graph : bool, optional
        GPU only: capture the cycle into a CUDA graph after its first apply and replay it
        (default yes). Inside a caller's capture (:func:`precond.bicgstab`'s) the cycle's
        kernels join that graph instead.
    cycle_dtype : {None, "float32", "float64"}
        The precision of the cycle (default: ``A``'s). ``"float32"`` for a float64 ``A``:
        the hierarchy is built in float64 as always (the same levels), then its operators
        and transfers are cast to float32, the smoothers are built from the cast levels
        and the coarsest level's dense inverse is computed in float64 and stored in
        float32; the apply takes and returns float64 vectors. A cycle reads the levels'
        matrices, which dominate its time, in two thirds of the bytes (values of 4 bytes
        and 4-byte indices instead of 8 + 4) and its vectors in half. The Krylov method
        around it keeps float64: :func:`precond.bicgstab` with right preconditioning
        multiplies ``A`` by the very vector it adds to ``x``, so the rounding of a float32
        cycle (a relative 1e-7) costs no accuracy in ``x``, only the preconditioner's
        quality at that level (mixed-precision AMG as in AmgX's "dDFI" mode): the same
        iteration counts on ANISO, more on some ill-conditioned matrices (smoothed
        aggregation, line smoother: bcsstk25 76 against 64, memplus 55 against 37). The
        cycle is then a linear operator up to float32 rounding (symmetric up to it).
    **hierarchy_options
        See ``coarsening``.

    Returns
    -------
    AMGPrecond

    References
    ----------
    .. [1] P. Vanek, J. Mandel and M. Brezina, "Algebraic multigrid by smoothed aggregation
       for second and fourth order elliptic problems", Computing 56, 1996.
    .. [2] Y. Notay, "An aggregation-based algebraic multigrid method", Electronic
       Transactions on Numerical Analysis 37, 2010.
    .. [3] A. H. Baker, R. D. Falgout, T. V. Kolev and U. M. Yang, "Multigrid smoothers for
       ultraparallel computing", SIAM Journal on Scientific Computing 33(5), 2011.
    .. [4] Y. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., SIAM, 2003
       (multicolour and block Gauss-Seidel, Section 12.4).

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.aniso2(64)
    >>> M = precond.amg(A)
    >>> res = precond.solve(A, A @ np.ones(A.shape[0]), M, rtol=1e-8)
    >>> res.converged, res.iterations < 15
    (True, True)
    >>> P = precond.amg(A, coarsening="pairwise", smoother="jacobi")
    >>> P.levels[0].rows, P.operator_complexity < 2
    (4096, True)
    """
    return AMGPrecond(A, smoother=smoother, coarsening=coarsening, presmooth=presmooth, postsmooth=postsmooth,
                      cycle=cycle, symmetric=symmetric, cuda_graph=cuda_graph, cycle_dtype=cycle_dtype,
                      **hierarchy_options)


def change_smoothers(ml, smoother="algebraic_tridiagonal", *, presmooth=1, postsmooth=1):
    """Give every level of a pyamg solver our smoother (on the host), in place.

    pyamg calls each level's ``presmoother(A, x, b)`` and ``postsmoother(A, x, b)``,
    updating ``x`` in place; this sets them to ``presmooth`` (``postsmooth``) steps of the
    smoother ``smoother`` (as in :func:`amg`) of that level's operator, the post-smoother
    the adjoint one. Returns ``ml``.

    Examples
    --------
    >>> import pyamg, matrices, precond
    >>> A = matrices.rotated_anisotropic2d(64)
    >>> ml = precond.change_smoothers(pyamg.smoothed_aggregation_solver(A))
    >>> res = precond.solve(A, A @ np.ones(A.shape[0]), ml.aspreconditioner(), rtol=1e-8)
    >>> res.converged
    True
    """
    if not hasattr(ml, "levels"):
        raise TypeError(f"expected a pyamg MultilevelSolver, got {type(ml).__name__}")
    name, options = _smoother_spec(smoother)
    presmooth, postsmooth = _check_count("presmooth", presmooth), _check_count("postsmooth", postsmooth)
    for lvl in ml.levels[:-1]:
        A = validate_matrix(lvl.A, what="a pyamg level")
        if np.dtype(A.dtype) not in (np.float32, np.float64):
            raise TypeError(f"our smoothers support float32 and float64 levels, got {A.dtype}")
        op = LevelOperator(A, coarsest=True)
        sm = _build_smoother(op.A, name, options, _symmetric_level(op.A))
        lvl.presmoother = _pyamg_smoother(op, sm, presmooth, post=False)
        lvl.postsmoother = _pyamg_smoother(op, sm, postsmooth, post=True)
    return ml


def _pyamg_smoother(level, smoother, steps, post):
    """pyamg's smoother signature ``f(A, x, b)``, updating ``x`` in place."""
    def relax(A, x, b):
        y = smoother.relax(level, x, np.ascontiguousarray(b, dtype=level.dtype), steps, post=post)
        if y is not x:
            x[...] = y
    return relax

