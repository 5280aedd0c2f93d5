"""The multigrid cycle: level operators (residual, restriction, prolongation), smoothers,
the dense coarse solve, and the cycle itself, on the CPU (NumPy, SciPy, Numba) and on the
GPU (CUDA kernels of ``kernels/cuda/amg.cu`` and CuPy elementwise kernels).

On the GPU nothing in a cycle reads from the device: every scalar (the smoothers' damping
factors among them) stays in device memory, so that the cycle can be captured once into a
CUDA graph (:class:`CycleGraph`) and replayed as one launch, and so that it can run inside
the graph that :func:`precond.bicgstab` captures around its iterations.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..backend import get_array_module, is_device_array, sparse_module
from ..spmv import spmv, spmv_lanes

__all__ = ["LevelOperator", "Smoother", "RichardsonSmoother", "JacobiSmoother", "DenseCoarseSolver",
           "RelaxationCoarseSolver", "Cycle", "stream_is_capturing",
           "CycleGraph", "spectral_radius", "ritz_values", "richardson_damping", "damping", "CYCLES",
           "krylov_factor", "cycle_work", "measured_cycle_work", "krylov_work",
           "least_work_choice", "KRYLOV_VECTOR_PASSES"]

CYCLES = ("V", "W", "F")
_THREADS = 256


@functools.lru_cache(maxsize=None)
def _elementwise():
    """The CuPy elementwise kernels of the cycle (compiled at their first use)."""
    import cupy

    ek = cupy.ElementwiseKernel
    return {
        "axpy": ek("T z, raw T w", "T x", "x += w[0] * z", "amg_axpy"),
        "scale": ek("T z, raw T w", "T x", "x = w[0] * z", "amg_scale"),
        "jacobi_zero": ek("T b, T dinv, raw T w", "T x", "x = w[0] * dinv * b", "amg_jacobi_zero"),
        "prolong_add": ek("raw T e, I agg", "T x", "x += e[agg]", "amg_prolong_add"),
        "prolong": ek("raw T e, I agg", "T x", "x = e[agg]", "amg_prolong"),
    }


def _kernel(name, vt, it=None):
    from ..nvrtc import get_kernel

    return get_kernel("amg", name, vt) if it is None else get_kernel("amg", name, vt, it)


def _grid(rows, lanes=1):
    return (max(1, (rows * lanes + _THREADS - 1) // _THREADS),)


def _canonical_csr(A):
    """``A`` as CSR with sorted indices and index arrays of one dtype."""
    A = A.tocsr()
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    if A.indptr.dtype != A.indices.dtype:
        A = sparse_module(get_array_module(A)).csr_matrix((A.data, A.indices, A.indptr.astype(A.indices.dtype)),
                                                          shape=A.shape)
        A.has_canonical_format = True
    return A


def _of_dtype(M, dtype):
    """``M`` in ``dtype`` (itself when it is; a cast keeps its canonical format)."""
    if M.dtype == dtype:
        return M
    out = M.astype(dtype)
    out.has_canonical_format = True
    return out


def _transpose(M):
    """The transpose of a canonical CSR matrix as canonical CSR (a CSR-to-CSC conversion
    leaves the indices of every row sorted: no sort)."""
    T = M.T.tocsr()
    T.has_canonical_format = True
    return T


class LevelOperator:
    """The operators of one level: ``A`` and the transfer to the next coarser level,
    either by ``aggregates`` (``aggregates[i]``: the coarse vertex of ``i``; ``members``:
    the fine vertices of each coarse one, -1 padded) or by CSR matrices ``P`` and ``R``.
    All on the backend of ``A``. ``jacobi_rho``: the spectral radius estimate of
    ``D^{-1} A`` (float64, 10 power steps) where the hierarchy made one, else None."""

    def __init__(self, A, *, P=None, R=None, aggregates=None, members=None, coarsest=False):
        self.A = _canonical_csr(A)
        self.xp = get_array_module(self.A)
        self.gpu = is_device_array(self.A)
        self.dtype = np.dtype(self.A.dtype)
        self.n = self.A.shape[0]
        if not coarsest and (aggregates is None) == (P is None):
            raise ValueError("a level needs either aggregates and members, or P (and R)")
        self.aggregates, self.members = aggregates, members
        self.jacobi_rho = None
        if P is not None:
            P = _of_dtype(_canonical_csr(P), self.dtype)
            R = _transpose(P) if R is None else _of_dtype(_canonical_csr(R), self.dtype)
            if P.shape[0] != self.n or R.shape != (P.shape[1], self.n):
                raise ValueError(f"P of shape {P.shape} and R of shape {R.shape} do not fit A of size {self.n}")
        self.P, self.R = P, R
        self.n_coarse = int(P.shape[1]) if P is not None else int(members.shape[0]) if members is not None else 0
        if self.gpu:
            self._itype = self.A.indices.dtype.type
            self._lanes = spmv_lanes(self.A.nnz, self.n, self.dtype.itemsize)
            if P is not None:
                self._p_lanes = spmv_lanes(P.nnz, self.n, self.dtype.itemsize)

    # ---------------------------------------------------------------- residual
    def residual(self, x, b):
        """``b - A x`` as a new vector (``x`` None: zero)."""
        if x is None:
            return b.copy()
        if not self.gpu:
            return b - self.A @ x
        r = self.xp.empty_like(b)
        A = self.A
        _kernel("residual", self.dtype, A.indices.dtype)(
            _grid(self.n, self._lanes), (_THREADS,),
            (self._itype(self.n), np.int32(self._lanes), A.indptr, A.indices, A.data, x, b, r))
        return r

    def restrict_residual(self, x, b):
        """The coarse right-hand side ``R (b - A x)`` (``x`` None: zero)."""
        if self.members is None:
            r = self.residual(x, b)
            return self.R @ r if not self.gpu else spmv(self.R, r)
        if not self.gpu:
            from ._cpu import residual_restrict

            return residual_restrict(self.members, self.A, x, b)
        A, members = self.A, self.members
        bc = self.xp.empty(self.n_coarse, dtype=self.dtype)
        _kernel("residual_restrict", self.dtype, A.indices.dtype)(
            _grid(self.n_coarse, self._lanes), (_THREADS,),
            (self._itype(self.n_coarse), np.int32(members.shape[1]), np.int32(self._lanes), members, A.indptr,
             A.indices, A.data, x, b, bc))
        return bc

    def prolong(self, x, e):
        """``x + P e`` (``x`` None: ``P e``); ``x`` is updated in place."""
        if self.aggregates is not None:
            if not self.gpu:
                y = e[self.aggregates]
                if x is None:
                    return y
                x += y
                return x
            k = _elementwise()
            if x is None:
                return k["prolong"](e, self.aggregates)
            k["prolong_add"](e, self.aggregates, x)
            return x
        if not self.gpu:
            y = self.P @ e
            if x is None:
                return y
            x += y
            return x
        if x is None:
            return spmv(self.P, e)
        P = self.P
        _kernel("csr_spmv_add", self.dtype, P.indices.dtype)(
            _grid(self.n, self._p_lanes), (_THREADS,),
            (P.indices.dtype.type(self.n), np.int32(self._p_lanes), P.indptr, P.indices, P.data, e, x))
        return x

    def prolongator(self):
        """``P`` as a CSR matrix (built from the aggregates where the level has them)."""
        if self.P is not None:
            return self.P
        from .aggregation import prolongator

        return prolongator(self.aggregates, self.n_coarse, self.dtype)


def _start_vector(n, dtype, xp):
    """The fixed start vector of the set-up's estimates: the centred fractional parts of
    ``i`` times the golden ratio, normalized (components along every eigenvector in
    practice, the same on every backend)."""
    x = (xp.arange(n, dtype=np.float64) * 0.6180339887498949) % 1.0 - 0.5
    return (x / xp.linalg.norm(x)).astype(dtype)


def spectral_radius(A, solve, iterations=10):
    """An estimate of the spectral radius of ``S^{-1} A`` (``solve(r)`` = ``S^{-1} r``) by
    ``iterations`` steps of the power method from a fixed vector, as a 0-d array on the
    backend of ``A`` (on the GPU it is never read: no host synchronization)."""
    xp = get_array_module(A)
    n = A.shape[0]
    dtype = np.dtype(A.dtype)
    x = _start_vector(n, dtype, xp)
    rho = xp.zeros((), dtype=dtype)
    for _ in range(max(int(iterations), 1)):
        y = solve(spmv(A, x))  # on the GPU the project's kernel: a cheap launch on small levels
        rho = xp.linalg.norm(y)
        x = y / xp.where(rho > 0, rho, 1)
    return rho


def ritz_values(A, solve, steps=10):
    """Ritz values of ``S^{-1} A`` (``solve(r)`` = ``S^{-1} r``) from ``steps`` Arnoldi
    steps (modified Gram-Schmidt, from the start vector of :func:`spectral_radius`), as a
    complex host array. Arnoldi finds the outer part of the spectrum, complex
    eigenvalues among it, where the power method only sees the largest modulus (and
    converges slowly next to a complex pair). One read of the small Hessenberg matrix
    from the device."""
    xp = get_array_module(A)
    n = A.shape[0]
    m = max(1, min(int(steps), n))
    dtype = np.dtype(A.dtype)
    V = xp.empty((m + 1, n), dtype=dtype)
    V[0] = _start_vector(n, dtype, xp)
    H = xp.zeros((m + 1, m), dtype=np.float64)
    for j in range(m):
        w = solve(spmv(A, V[j]))
        for i in range(j + 1):
            h = xp.dot(V[i], w)
            H[i, j] = h
            w = w - h * V[i]
        norm = xp.linalg.norm(w)
        H[j + 1, j] = norm
        V[j + 1] = w / xp.where(norm > 0, norm, 1)
    H = np.asarray(H.get() if hasattr(H, "get") else H)
    if not np.isfinite(H).all():
        return np.zeros(0, dtype=complex)
    # an invariant subspace found early: the Ritz values of the steps before it
    scale = max(np.abs(H).max(), np.finfo(np.float64).tiny)
    small = np.flatnonzero(np.abs(np.diag(H, -1)) <= 1e3 * np.finfo(dtype).eps * scale)
    k = int(small[0]) + 1 if small.size else m
    return np.linalg.eigvals(H[:k, :k])


def richardson_damping(ritz, factor, *, high=0.25):
    """The damping factor ``omega`` of Richardson smoothing ``I - omega S^{-1} A`` from
    Ritz values of ``S^{-1} A`` (:func:`ritz_values`): ``factor / rho`` (``rho`` their
    largest modulus), or less where complex eigenvalues demand it: the ``omega`` that
    minimizes ``max |1 - omega theta|`` over the Ritz values ``theta`` of modulus at least
    ``high * rho`` and ``theta = high * rho`` (the oscillatory part the smoother must
    damp, taken to reach down to ``high * rho``: a few Ritz values do not show the
    interior; each ``|1 - omega theta|`` is convex in ``omega``, so a golden-section
    search finds the minimum). A real spectrum gives ``2 / ((1 + high) rho)``, above
    ``factor / rho`` for ``factor < 1.6``: there ``factor / rho`` stays. None when no Ritz
    value is usable."""
    ritz = np.asarray(ritz)
    ritz = ritz[np.isfinite(ritz)]
    if ritz.size == 0:
        return None
    rho = float(np.abs(ritz).max())
    if not rho > 0:
        return None
    outer = np.append(ritz[np.abs(ritz) >= high * rho], high * rho)

    def worst(omega):
        return float(np.abs(1 - omega * outer).max())

    lo, hi = 0.0, 2.0 / rho
    golden = (np.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if worst(a) <= worst(b):
            hi = b
        else:
            lo = a
    return min(factor / rho, (lo + hi) / 2)


def damping(rho, factor, dtype):
    """``factor / rho`` as a 1-element array of ``dtype`` (``factor`` where ``rho`` is not a
    positive finite number), on the backend of ``rho``: the damping factor of a smoother
    whose ``S^{-1} A`` has spectral radius about ``rho``."""
    xp = get_array_module(rho)
    rho = xp.asarray(rho, dtype=np.float64)
    good = xp.isfinite(rho) & (rho > 0)
    return xp.where(good, factor / xp.where(good, rho, 1.0), factor).astype(dtype).reshape(1)


def krylov_factor(A, apply, krylov, iterations=4):
    """The mean residual reduction per iteration of the Krylov solver ``krylov`` (with
    :func:`precond.bicgstab`'s signature; passed in, as this layer does not import
    ``precond``) preconditioned by ``apply`` (one cycle from zero) over ``iterations``
    iterations for ``b = A s`` (``s`` the fixed start vector), stopping early below a
    relative residual of 1e-10: ``(r_k / r_0)^(1 / k)``, a host float. 1.0 where the
    residual did not fall or is not finite (no convergence), 0.0 where it vanished."""
    xp = get_array_module(A)
    b = A @ _start_vector(A.shape[0], np.dtype(A.dtype), xp)
    history = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        krylov(A, b, M=apply, rtol=1e-10, maxiter=max(int(iterations), 1), residuals=history, cuda_graph=False)
    history = np.asarray([float(h) for h in history])
    k = len(history) - 1
    if k < 1 or not np.isfinite(history).all() or not 0 < history[-1] < history[0]:
        return 0.0 if k >= 1 and history[-1] == 0 else 1.0
    return float((history[-1] / history[0]) ** (1.0 / k))


def _visits(n_levels, kind):
    """How often a cycle of ``kind`` visits each level (finest first) and the coarsest
    solve (last entry), as :class:`Cycle` recurses."""
    counts = [0] * (n_levels + 1)

    def visit(k, kind):
        if k == n_levels:
            counts[k] += 1
            return
        counts[k] += 1
        if kind == "V":
            visit(k + 1, "V")
        elif kind == "W":
            visit(k + 1, "W")
            visit(k + 1, "W")
        else:
            visit(k + 1, "F")
            visit(k + 1, "V")

    visit(0, kind)
    return counts


def cycle_work(cycle):
    """The work of one :class:`Cycle`, in nonzeros of its finest matrix: per visit of a
    level, its smoothing steps (each update a residual, ``nnz`` of the level, plus the
    smoother's ``row_cost`` per row), the restricted residual and the prolongation (the
    nonzeros of ``P`` and ``R``, or a row each with aggregates); per visit of the coarsest
    level its solver's ``work``. A model of the memory traffic, the cost that dominates
    sparse kernels on either backend, for comparing cycles of one hierarchy."""
    counts = _visits(len(cycle.levels), cycle.kind)
    total = 0.0
    for count, level, smoother in zip(counts, cycle.levels, cycle.smoothers):
        nnz = float(level.A.nnz)
        update = nnz + smoother.row_cost * level.n
        smoothing = (cycle.presmooth + cycle.postsmooth) * smoother.updates * update
        transfer = nnz + (float(level.P.nnz + level.R.nnz) if level.P is not None else 2.0 * level.n)
        total += count * (smoothing + transfer)
    total += counts[-1] * cycle.coarse.work
    finest = cycle.levels[0].A.nnz if cycle.levels else cycle.coarse.A.nnz
    return total / max(float(finest), 1.0)


def measured_cycle_work(A, cycle, repeat=5):
    """The time of one cycle on the GPU in SpMVs of its finest matrix ``A``
    (:func:`kernels.spmv.spmv`): the cycle captured into a CUDA graph (as the
    preconditioner applies it; launched one kernel at a time where it cannot be captured)
    and replayed ``repeat`` times after a warm-up, against as many SpMVs, medians of CUDA
    event timings. What :func:`cycle_work`'s memory-traffic model leaves out: the kernel
    launches (a multicolour Gauss-Seidel sweep makes three per colour and level) and the
    latency of the small coarse levels. The cycle must have run once (compiled kernels)."""
    import cupy

    from ..timing import gpu_time

    dtype = np.dtype(A.dtype)
    b = _start_vector(A.shape[0], dtype, cupy)
    try:
        graph = CycleGraph(cycle, A.shape[0], dtype)
        graph.b[...] = b
        seconds = gpu_time(graph.launch, repeat=repeat, warmup=1)
        del graph
    except Exception:  # noqa: BLE001 - a cycle that cannot be captured: kernel by kernel
        seconds = gpu_time(lambda: cycle(b), repeat=repeat, warmup=1)
    return seconds / max(gpu_time(lambda: spmv(A, b), repeat=repeat, warmup=1), 1e-9)


#: Vector passes of one BiCGStab iteration outside its two SpMVs and two preconditioner
#: applications (five inner products, two reads each; four vector updates, three or four
#: passes each): the Krylov method's own work that :func:`krylov_work` adds to its cycles'.
KRYLOV_VECTOR_PASSES = 24


def krylov_work(A):
    """The work of one BiCGStab iteration besides its two preconditioner applications, in
    nonzeros of ``A`` (the unit of :func:`cycle_work`, about one SpMV of ``A``, also that of
    :func:`measured_cycle_work`): two SpMVs and :data:`KRYLOV_VECTOR_PASSES` passes over a
    vector. A stronger cycle saves these with every iteration it saves."""
    n, nnz = A.shape[0], max(int(A.nnz), 1)
    return 2.0 + KRYLOV_VECTOR_PASSES * n / nnz


def least_work_choice(candidates, margin=0.1):
    """The cycle, among ``candidates`` (``(key, factor, work)`` triples: the residual
    reduction per iteration, :func:`krylov_factor`, and the work of an iteration), that
    reaches a tolerance with about the least work: the least work per digit, ``work /
    -log10(factor)``, or, among the candidates within ``margin`` of the least, the one
    with the smallest factor (the fewest iterations; the first of equal ones). A near tie
    in work is decided by the iterations: each costs inner products (global
    synchronizations on the GPU and across processes) that the work leaves out, and the
    choice of the CPU and the GPU, which measure factors up to rounding, stays the same.
    A factor of 1 or more (no convergence) counts as infinite work. Returns the key.

    Examples
    --------
    >>> least_work_choice([(1, 0.5, 10.0), (2, 0.2, 18.0)])   # 33 against 26 per digit
    2
    >>> least_work_choice([(1, 0.1, 10.0), (2, 0.05, 18.0)])  # 10 against 14
    1
    >>> least_work_choice([(1, 0.1, 10.0), (2, 0.02, 18.0)])  # 10 against 10.6: fewer iterations
    2
    """
    def per_digit(factor, work):
        if not factor < 1.0:
            return float("inf")
        return work / -np.log10(max(factor, 1e-16))

    costs = [per_digit(factor, work) for _, factor, work in candidates]
    least = min(costs)
    if least == float("inf"):
        return candidates[0][0]
    near = [k for k, cost in enumerate(costs) if cost <= (1.0 + margin) * least]
    return candidates[min(near, key=lambda k: (candidates[k][1], k))][0]


class Smoother:
    """A smoother of one level: :meth:`relax` runs ``steps`` smoothing steps on ``x``
    (None: a zero initial guess) for the right-hand side ``b``; ``post=True`` runs the
    adjoint steps (the post-smoother of a symmetric cycle)."""

    name = "smoother"
    #: Work of one smoothing step on a level, in nonzeros of its matrix per residual
    #: (``updates``) plus ``row_cost`` per row and update (the smoother's own solve).
    row_cost = 1.0

    def relax(self, level, x, b, steps, post=False):
        raise NotImplementedError

    @property
    def updates(self) -> int:
        """Updates (each a residual and a solve) per smoothing step."""
        return 2 if getattr(self, "sweep", "forward") == "symmetric" else 1

    def describe(self) -> str:
        return self.name


class RichardsonSmoother(Smoother):
    """Damped Richardson with a preconditioner ``S``: ``x += omega S^{-1} (b - A x)``.

    ``solve(r)`` returns ``S^{-1} r`` as a new array (AlgTriScal's or AlgTriBlock's apply:
    algebraic line relaxation), ``adjoint(r)`` returns ``S^{-T} r`` (None: ``S`` is
    symmetric, or no adjoint is known). ``omega``: a 1-element array on the backend (see
    :func:`damping`). ``sweep="forward"``: a step is one update, with ``S`` before the
    coarse correction and ``S^T`` after it; ``"symmetric"``: a step is an update with
    ``S`` followed by one with ``S^T`` (the forward-backward sweep of symmetric
    Gauss-Seidel), before and after. Either way the cycle is symmetric for symmetric ``A``
    when it has as many pre- as post-smoothing steps."""

    #: A tridiagonal solve in the forest's order: a gather, the forward and backward
    #: substitutions and a scatter (about six memory passes over a vector).
    row_cost = 6.0

    def __init__(self, solve, omega, *, adjoint=None, sweep="forward", name="richardson"):
        if sweep not in ("forward", "symmetric"):
            raise ValueError(f"sweep must be 'forward' or 'symmetric', got {sweep!r}")
        self.solve, self.omega, self.adjoint, self.sweep, self.name = solve, omega, adjoint, sweep, name

    def _halves(self, post):
        backward = self.adjoint or self.solve
        if self.sweep == "symmetric":
            return (self.solve, backward)
        return (backward,) if post else (self.solve,)

    def relax(self, level, x, b, steps, post=False):
        gpu = level.gpu
        omega = self.omega if gpu else self.omega[0]
        for _ in range(steps):
            for solve in self._halves(post):
                if x is None:
                    z = solve(b)
                    if gpu:
                        x = _elementwise()["scale"](z, omega)
                    else:
                        z *= omega
                        x = z
                    continue
                z = solve(level.residual(x, b))
                if gpu:
                    _elementwise()["axpy"](z, omega, x)
                else:
                    z *= omega
                    x += z
        return x

    def describe(self):
        return f"{self.name}{' (symmetric sweep)' if self.sweep == 'symmetric' else ''}"


class JacobiSmoother(Smoother):
    """Damped Jacobi, ``x += omega D^{-1} (b - A x)``: one fused kernel per sweep on the GPU
    (``jacobi_sweep``). ``sweep="symmetric"`` makes a step two sweeps."""

    name = "jacobi"

    def __init__(self, inverse_diagonal, omega, *, sweep="forward"):
        if sweep not in ("forward", "symmetric"):
            raise ValueError(f"sweep must be 'forward' or 'symmetric', got {sweep!r}")
        self.dinv, self.omega, self.sweep = inverse_diagonal, omega, sweep

    def relax(self, level, x, b, steps, post=False):
        sweeps = steps * (2 if self.sweep == "symmetric" else 1)
        A = level.A
        for _ in range(sweeps):
            if level.gpu:
                if x is None:
                    x = _elementwise()["jacobi_zero"](b, self.dinv, self.omega)
                    continue
                out = level.xp.empty_like(b)
                _kernel("jacobi_sweep", level.dtype, A.indices.dtype)(
                    _grid(level.n, level._lanes), (_THREADS,),
                    (level._itype(level.n), np.int32(level._lanes), A.indptr, A.indices, A.data, self.dinv,
                     self.omega, x, b, out))
                x = out
            elif x is None:
                x = self.omega[0] * self.dinv * b
            else:
                r = b - A @ x
                r *= self.dinv
                r *= self.omega[0]
                x = x + r
        return x

    def describe(self):
        return f"jacobi{' (symmetric sweep)' if self.sweep == 'symmetric' else ''}"


class DenseCoarseSolver:
    """The coarsest level solved exactly by a dense inverse, computed once on the backend
    of ``A`` (in float64, from an LU factorization; the pseudo-inverse when ``A`` is
    singular, as pyamg's default coarse solver) and applied as one matrix-vector product
    (on the GPU the ``dense_gemv`` kernel, which a CUDA graph can capture). ``dtype``: of
    the stored inverse and the solves (default ``A``'s)."""

    def __init__(self, A, dtype=None):
        xp = get_array_module(A)
        self.xp, self.gpu = xp, is_device_array(A)
        self.n = A.shape[0]
        self.dtype = np.dtype(A.dtype if dtype is None else dtype)
        self.A = A if self.dtype == A.dtype else A.astype(self.dtype)
        dense = A.toarray().astype(np.float64)
        self.pseudo = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                inverse = xp.linalg.inv(dense)
                check = xp.abs(dense @ inverse - xp.eye(self.n)).max()
                ok = bool(xp.isfinite(check)) and float(check) < 1e-8 * max(1.0, float(xp.abs(dense).max()) * self.n)
            except np.linalg.LinAlgError:
                ok = False
            if not ok:
                inverse = xp.linalg.pinv(dense)
                self.pseudo = True
        self.inverse = xp.ascontiguousarray(inverse.astype(self.dtype))

    @property
    def work(self) -> float:
        """Work of a solve in nonzeros (one dense matrix-vector product)."""
        return float(self.n) ** 2

    def solve(self, b):
        """``A^{-1} b`` (or ``A^+ b``) as a new vector."""
        if not self.gpu:
            return self.inverse @ b
        x = self.xp.empty(self.n, dtype=self.dtype)
        _kernel("dense_gemv", self.dtype)(_grid(self.n, 32), (_THREADS,), (np.int32(self.n), self.inverse, b, x))
        return x


class RelaxationCoarseSolver:
    """A coarsest level too large for a dense inverse, solved approximately by ``steps``
    smoothing steps of its ``smoother`` from zero (``level``: its
    :class:`LevelOperator`, built with ``coarsest=True``)."""

    def __init__(self, level, smoother, steps):
        self.level, self.smoother, self.steps = level, smoother, int(steps)
        self.A, self.n, self.pseudo = level.A, level.n, False

    @property
    def work(self) -> float:
        """Work of a solve in nonzeros (its smoothing steps)."""
        return self.steps * self.smoother.updates * (float(self.A.nnz) + self.smoother.row_cost * self.n)

    def solve(self, b):
        return self.smoother.relax(self.level, None, b, self.steps)


class Cycle:
    """A multigrid cycle over ``levels`` (:class:`LevelOperator`, finest first) with their
    ``smoothers`` and the ``coarse`` solver of the level below the last; ``kind`` "V",
    "W" or "F" (pyamg's definitions). :meth:`__call__` runs one cycle for ``b`` from ``x``
    (None: zero) and returns the new iterate; the input ``x`` may be overwritten."""

    def __init__(self, levels, smoothers, coarse, *, presmooth=1, postsmooth=1, kind="V"):
        if kind not in CYCLES:
            raise ValueError(f"cycle must be one of {CYCLES}, got {kind!r}")
        if len(smoothers) != len(levels):
            raise ValueError("one smoother per level is needed")
        self.levels, self.smoothers, self.coarse = list(levels), list(smoothers), coarse
        self.presmooth, self.postsmooth, self.kind = int(presmooth), int(postsmooth), kind

    def __call__(self, b, x=None):
        if not self.levels:  # a matrix no larger than the coarse level: solved directly
            return self.coarse.solve(b) if x is None else x + self.coarse.solve(b - self.coarse.A @ x)
        return self._cycle(0, b, x, self.kind)

    def _cycle(self, k, b, x, kind):
        level, smoother = self.levels[k], self.smoothers[k]
        x = smoother.relax(level, x, b, self.presmooth)
        bc = level.restrict_residual(x, b)
        if k + 1 == len(self.levels):
            e = self.coarse.solve(bc)
        elif kind == "V":
            e = self._cycle(k + 1, bc, None, "V")
        elif kind == "W":
            e = self._cycle(k + 1, bc, None, "W")
            e = self._cycle(k + 1, bc, e, "W")
        else:  # F: an F-cycle below, then a V-cycle from its result
            e = self._cycle(k + 1, bc, None, "F")
            e = self._cycle(k + 1, bc, e, "V")
        x = level.prolong(x, e)
        return smoother.relax(level, x, b, self.postsmooth, post=True)


class CycleGraph:
    """One cycle ``run(b) -> x`` captured into a CUDA graph for vectors of length ``n``:
    :meth:`__call__` copies its argument into the graph's input, launches the graph on the
    current stream and returns a copy of its output (no host synchronization). The
    temporaries of the captured cycle come from a private memory pool that lives as long
    as the graph, so that nothing else takes their memory while a replay may write it.
    (The cycle must have run once before capture, so that every kernel is compiled and
    every lazily made launch argument exists.)"""

    def __init__(self, run, n, dtype):
        import cupy

        self.pool = cupy.cuda.MemoryPool()
        stream = cupy.cuda.Stream(non_blocking=True)
        self.b = cupy.zeros(n, dtype=dtype)
        cupy.cuda.get_current_stream().synchronize()  # the input exists before the side stream reads it
        with cupy.cuda.using_allocator(self.pool.malloc), stream:
            stream.begin_capture()
            try:
                self.x = run(self.b)
            finally:
                self.graph = stream.end_capture()

    def launch(self):
        """Replays the captured cycle on the current stream (input :attr:`b`, output :attr:`x`)."""
        import cupy

        self.graph.launch(cupy.cuda.get_current_stream())

    def __call__(self, b):
        self.b[...] = b
        self.launch()
        return self.x.copy()


def stream_is_capturing() -> bool:
    """Whether the current CUDA stream is being captured (by a caller's graph, such as
    :func:`precond.bicgstab`'s): kernels launched now become part of that graph."""
    import cupy

    try:
        return bool(cupy.cuda.get_current_stream().is_capturing())
    except Exception:  # noqa: BLE001 - a query the driver refuses: treat as not capturing
        return False
