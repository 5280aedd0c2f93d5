"""BiCGStab with SciPy's signature and info codes, for NumPy and CuPy alike, and a
convenience :func:`solve` that returns the residual history.

On the GPU the iteration keeps every scalar on the device and fuses its vector updates
(one elementwise kernel each for the search direction, ``s``, and ``x`` with ``r``; one for
the scalars): the residual norm, ``|rho|`` and ``|omega|`` are written into a device
buffer each iteration and read by the host only every ``check_every`` iterations, so the
loop launches kernels without waiting for them. (``cupyx.scipy.sparse.linalg.bicgstab``,
from CuPy 14.1, synchronizes several times per iteration.) The device tests the stopping
criteria itself after every iteration: from the first iteration that meets one, ``x`` and
``r`` stay as they are until the host's next check, so that the solve returns that
iteration's ``x`` and count, as with a check after every iteration. The CPU runs the same
steps with NumPy (:class:`_HostOps`).

References
----------
.. [1] H. A. van der Vorst, "Bi-CGSTAB: A Fast and Smoothly Converging Variant of Bi-CG for
   the Solution of Nonsymmetric Linear Systems", SIAM Journal on Scientific and Statistical
   Computing 13(2), 1992.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import get_array_module, sparse_linalg_module
from kernels.capture import IterationGraph

__all__ = ["bicgstab", "solve", "SolveResult"]


def _system(A, b, x0, xp):
    """``b`` and ``x0`` as vectors of length ``n`` for the square ``A`` (SciPy's
    ``make_system`` shapes: ``(n,)`` or ``(n, 1)``), else ``ValueError``."""
    shape = getattr(A, "shape", None)
    if shape is None or len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"A must be a square matrix or operator, got shape {shape}")
    n = shape[0]

    def vector(v, name):
        if not hasattr(v, "shape"):
            v = xp.asarray(v)
        if v.shape not in ((n,), (n, 1)):
            raise ValueError(f"{name} has shape {v.shape}; a matrix of shape {shape} needs ({n},) or ({n}, 1)")
        return v.reshape(n)

    return vector(b, "b"), None if x0 is None else vector(x0, "x0")


def _check_finite_start(b, bnorm, r0, x0, xp):
    """NaN or infinity in ``b`` or ``x0`` is an input error, not a converged zero solution."""
    from kernels.backend import all_finite

    if not np.isfinite(bnorm):
        if not all_finite(b):
            raise ValueError("b has NaN or infinite entries")
        raise ValueError(f"the norm of b overflows {np.dtype(b.dtype)}; scale the system")
    if not np.isfinite(r0):
        if x0 is not None and not all_finite(x0):
            raise ValueError("x0 has NaN or infinite entries")
        raise ValueError("the initial residual b - A x0 is not finite (A or x0 too large, or A has NaN or "
                         "infinite entries)")


def as_operator(M):
    """A callable ``x -> M^{-1} x`` from None, a preconditioner object, a LinearOperator or a
    matrix (None stays None); shared by the one-device and the distributed iterations."""
    if M is None:
        return None
    if hasattr(M, "matvec"):
        return M.matvec
    if callable(M):
        return M
    return lambda x: M @ x


def _halts(res, rho, omega, tol, tiny) -> bool:
    """Whether an iteration with residual norm ``res``, ``|rho|`` and ``|omega|`` ends the
    solve: converged (``res <= tol``), a residual that is not finite, or a breakdown
    (``|rho|`` or ``|omega|`` below ``tiny``). The twin of the test in the GPU's ``record``
    kernel: the same comparisons, in float64."""
    res, rho, omega, tol, tiny = float(res), float(rho), float(omega), float(tol), float(tiny)
    return res <= tol or not np.isfinite(res) or rho < tiny or omega < tiny


def _halt_code(row, tol, tiny) -> int:
    """SciPy's info code of the iteration (residual norm, ``|rho|``, ``|omega|``) that
    ended the solve: 0 converged, -10 breakdown of rho (or a residual that is not finite),
    -11 breakdown of omega."""
    res, rho, tol, tiny = float(row[0]), float(row[1]), float(tol), float(tiny)
    if res <= tol:
        return 0
    if not np.isfinite(res) or rho < tiny:
        return -10
    return -11


class _HostOps:
    """BiCGStab's vector updates and scalar bookkeeping with NumPy (scalars on the host).
    :meth:`record` tests the stopping criteria (:func:`_halts`) and sets :attr:`halted`,
    after which the caller runs no more iterations."""

    def __init__(self, dtype, tiny, tol):
        self.tiny, self.tol = tiny, float(tol)
        self.one = np.ones((), dtype=dtype)[()]
        self.pending = []
        self.halted = None  # the row of the iteration that ended the solve

    def state(self):
        return {"rho_prev": self.one, "alpha": self.one, "omega": self.one}

    def _safe(self, den):
        return self.one if abs(den) < self.tiny else den

    dot = staticmethod(np.vdot)

    def update_p(self, p, r, v, rho, st):
        beta = (rho / self._safe(st["rho_prev"])) * (st["alpha"] / self._safe(st["omega"]))
        p *= beta
        p -= (beta * st["omega"]) * v
        p += r

    def direction_s(self, r, v, rho, rv):
        return r - (rho / self._safe(rv)) * v

    def update_xr(self, x, r, s, t, phat, shat, rho, rv, ts, tt):
        alpha, omega = rho / self._safe(rv), ts / self._safe(tt)
        x += alpha * phat
        x += omega * shat
        np.subtract(s, omega * t, out=r)

    def record(self, rho, rv, ts, tt, rr, st, row):
        st["alpha"], st["omega"], st["rho_prev"] = rho / self._safe(rv), ts / self._safe(tt), rho
        values = (float(np.sqrt(abs(rr))), float(abs(rho)), float(abs(st["omega"])))
        self.pending.append(values)
        if self.halted is None and _halts(*values, self.tol, self.tiny):
            self.halted = row

    def rows(self, n):
        """(residual norm, |rho|, |omega|) of the iterations since the last call (``n`` of
        them, or fewer when one ended the solve), and the row of the one that ended it (or
        None)."""
        out = np.asarray(self.pending[-n:], dtype=np.float64).reshape(-1, 3)
        self.pending.clear()
        return out, self.halted


_GPU_KERNELS = {}
# the guarded divisor and the fused kernels are shared with precond.distributed's BiCGStab
SAFE_DIVISOR = "template <typename X> __device__ X safe(X den, double tiny) { return abs(den) < tiny ? X(1) : den; }\n"
# the stopping test of _halts, in double precision as on the host (R: float or double)
_HALTS = ("template <typename R> __device__ bool halts(R res, R rho, R omega, double tol, double tiny) {"
          " return double(res) <= tol || !isfinite(double(res)) || double(rho) < tiny || double(omega) < tiny; }\n")


def bicgstab_gpu_kernels():
    """The fused elementwise kernels of the GPU iteration (compiled once): ``update_p``,
    ``direction_s``, ``update_xr`` (with a halt flag), ``record``."""
    if not _GPU_KERNELS:
        import cupy

        ek = cupy.ElementwiseKernel
        _GPU_KERNELS.update(
            update_p=ek("T r, T v, T rho, T rho_prev, T alpha, T omega, float64 tiny", "T p",
                        "p = r + (rho / safe(rho_prev, tiny)) * (alpha / safe(omega, tiny)) * (p - omega * v)",
                        "bicgstab_update_p", preamble=SAFE_DIVISOR),
            direction_s=ek("T r, T v, T rho, T rv, float64 tiny", "T s", "s = r - (rho / safe(rv, tiny)) * v",
                           "bicgstab_direction_s", preamble=SAFE_DIVISOR),
            # x and r stay as they are once an iteration has ended the solve (halt[0] > 0)
            update_xr=ek("T s, T t, T phat, T shat, T rho, T rv, T ts, T tt, float64 tiny, raw int32 halt",
                         "T x, T r",
                         "if (halt[0] == 0) { T alpha = rho / safe(rv, tiny); T omega = ts / safe(tt, tiny);"
                         " x = x + alpha * phat + omega * shat; r = s - omega * t; }",
                         "bicgstab_update_xr_halt", preamble=SAFE_DIVISOR),
            # the scalars, the iteration's row of the history, and halt[0] = row + 1 at the
            # first iteration that meets a stopping criterion
            record=ek("T rho, T rv, T ts, T tt, T rr, float64 tiny, float64 tol, int64 row",
                      "T alpha, T omega, T rho_prev, raw R hist, raw int32 halt",
                      "alpha = rho / safe(rv, tiny); omega = ts / safe(tt, tiny); rho_prev = rho;"
                      "R res = sqrt(abs(rr)); R arho = abs(rho); R aomega = abs(omega);"
                      "hist[3 * row] = res; hist[3 * row + 1] = arho; hist[3 * row + 2] = aomega;"
                      "if (halt[0] == 0 && halts(res, arho, aomega, tol, tiny)) halt[0] = (int)row + 1;",
                      "bicgstab_record_halt", preamble=SAFE_DIVISOR + _HALTS),
        )
    return _GPU_KERNELS


class _DeviceOps:
    """The same steps on the GPU: scalars stay in device arrays of shape (1,), every update
    is one fused elementwise kernel (beta, alpha and omega recomputed inline from the dot
    products), and the per-iteration rows (residual norm, |rho|, |omega|) go to a device
    buffer of one row per iteration between checks, which the host reads at the check.
    The ``record`` kernel tests the stopping criteria and sets ``halt`` (the row of the
    iteration that ended the solve, plus one); ``update_xr`` then leaves ``x`` and ``r``
    as they are. :attr:`halted` is None: the host learns of a halt at its check."""

    halted = None

    def __init__(self, dtype, tiny, tol, block):
        import cupy

        self.xp = cupy
        self.tiny, self.tol = float(tiny), float(tol)
        self.dtype = np.dtype(dtype)
        self.k = bicgstab_gpu_kernels()
        self.hist = cupy.empty((block, 3), dtype=np.dtype(self.dtype.char.lower()) if self.dtype.kind == "c" else dtype)
        self.halt = cupy.zeros(1, dtype=np.int32)

    def state(self):
        one = self.xp.ones(1, dtype=self.dtype)
        return {"rho_prev": one, "alpha": one.copy(), "omega": one.copy()}

    def dot(self, a, b):
        return self.xp.vdot(a, b).reshape(1)

    def update_p(self, p, r, v, rho, st):
        self.k["update_p"](r, v, rho, st["rho_prev"], st["alpha"], st["omega"], self.tiny, p)

    def direction_s(self, r, v, rho, rv):
        return self.k["direction_s"](r, v, rho, rv, self.tiny)

    def update_xr(self, x, r, s, t, phat, shat, rho, rv, ts, tt):
        self.k["update_xr"](s, t, phat, shat, rho, rv, ts, tt, self.tiny, self.halt, x, r)

    def record(self, rho, rv, ts, tt, rr, st, row):
        self.k["record"](rho, rv, ts, tt, rr, self.tiny, self.tol, row, st["alpha"], st["omega"], st["rho_prev"],
                         self.hist, self.halt)

    def rows(self, n):
        """The rows of the last ``n`` iterations (as float64, for the host's comparisons
        to be the device's) and the row of the iteration that ended the solve, or None."""
        rows = self.hist[:n].get().astype(np.float64)  # the host synchronization
        halt = int(self.halt.get()[0])
        return rows, (halt - 1 if halt > 0 else None)


#: Iterations between the GPU's convergence checks (``check_every``'s default).
CHECK_EVERY = 8
#: Iterations before the GPU's first check when ``check_every`` is left to :func:`bicgstab`.
FIRST_BLOCK = 2
#: Seconds per iteration from which the GPU's default checks shorten a block to the
#: iterations that the residual's rate so far predicts are left (see :func:`bicgstab`).
SHORT_BLOCKS_FROM = 5e-4


def _adaptive_block(history, tol, check_every, done, per_iteration):
    """The iterations before the next check of the GPU's default schedule: ``FIRST_BLOCK``
    first; then ``check_every``, or fewer where an iteration costs at least
    ``SHORT_BLOCKS_FROM`` seconds and the mean residual reduction per iteration so far
    predicts convergence sooner (the iterations the device runs after the one that
    converges are wasted work: up to ``check_every - 1`` whole iterations, a third of a
    solve that converges in five; an extra check costs a host synchronization).

    Examples
    --------
    >>> _adaptive_block([1.0], 1e-8, 8, 0, 0.0)
    2
    >>> _adaptive_block([1.0, 1e-1, 1e-2], 1e-8, 8, 2, 1e-3)  # ten times per iteration: 6 more
    6
    >>> _adaptive_block([1.0, 1e-1, 1e-2], 1e-8, 8, 2, 1e-5)  # cheap iterations: a full block
    8
    """
    if done == 0:
        return min(FIRST_BLOCK, check_every)
    if per_iteration < SHORT_BLOCKS_FROM:
        return check_every
    first, last = float(history[0]), float(history[-1])
    k = len(history) - 1
    if k < 1 or not (0.0 < last < first) or not np.isfinite(first) or tol <= 0.0:
        return check_every
    rate = (last / first) ** (1.0 / k)
    if not 0.0 < rate < 1.0:
        return check_every
    left = np.log(tol / last) / np.log(rate)
    return int(min(check_every, max(1, np.ceil(left - 1e-9))))


def bicgstab(A, b, x0=None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None, M=None,
             callback=None, check_every: int | None = None, residuals: list | None = None,
             cuda_graph: bool | None = None):
    """Preconditioned BiCGStab (right preconditioning, like SciPy's).

    Parameters
    ----------
    A : sparse matrix or LinearOperator (SciPy or cupyx)
    b : array of shape (n,) or (n, 1)
    x0 : array of shape (n,) or (n, 1), optional
    rtol, atol : float
        Stop when ``||r|| <= max(rtol * ||b||, atol)``.
    maxiter : int, optional
        Default ``10 * n``.
    M : preconditioner object (with ``matvec``), LinearOperator or matrix, optional
    callback : callable, optional
        Called as ``callback(xk)`` after each iteration (``xk`` is updated in place).
    check_every : int, optional
        Iterations between the host's convergence checks (default 1 on the CPU, 8 on the
        GPU; with a callback always 1). The GPU's default checks first after two
        iterations and, where an iteration takes half a millisecond or more, shortens a
        block to the iterations the residual's mean reduction so far predicts are left
        (after the iteration that converges, the device runs the block's remaining
        iterations for nothing). Between checks the GPU never waits for the host;
        it tests the stopping criteria after every iteration itself and, once one is met,
        leaves ``x`` as it is until the check. The result does not depend on
        ``check_every``: the solve returns the first iterate that meets the criterion,
        and its iteration count.
    residuals : list, optional
        If given, receives the residual norm after each iteration (``||b - A x0||`` first).
    cuda_graph : bool, optional
        GPU only: capture the ``check_every`` iterations between two checks once into a
        CUDA graph and replay it (default: yes without a callback): the host no longer
        launches each kernel, which is most of an iteration's time below about a million
        rows. A sparse ``A`` is then multiplied by :func:`kernels.spmv.spmv` (CuPy does not
        let cuSPARSE calls be captured), so the iterates differ from ``cuda_graph=False``
        by rounding; the replays themselves are the captured kernels, in order. If ``A`` or ``M`` does something that cannot be captured (a host
        synchronization), the iteration falls back to launching the kernels one by one
        (with a ``RuntimeWarning`` when ``cuda_graph=True`` was asked for).

    Returns
    -------
    x : array of shape (n,)
    info : int
        0 converged, ``> 0`` iterations done without convergence, ``-10`` breakdown
        (rho = 0, or a residual that is no longer finite), ``-11`` breakdown (omega = 0) -
        SciPy's codes.

    Raises
    ------
    ValueError
        ``b`` or ``x0`` of another shape than ``(n,)`` / ``(n, 1)``, or with NaN or infinite
        entries (SciPy would iterate to ``maxiter`` and report ``info > 0``).

    Notes
    -----
    On the GPU an iteration is two SpMVs, two preconditioner applications, five dot
    products and four fused elementwise kernels (the search direction, ``s``, the update of
    ``x`` and ``r`` together, and the scalars), with no host synchronization between
    convergence checks. The first ``check_every`` iterations run eagerly (compiling the
    kernels); the graph is captured after them.

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.aniso1(20)
    >>> b = A @ np.ones(A.shape[0])
    >>> x, info = precond.bicgstab(A, b, rtol=1e-10, M=precond.jacobi(A))
    >>> info, bool(np.allclose(x, 1))
    (0, True)
    """
    xp = get_array_module(A, b)
    b, x0 = _system(A, b, x0, xp)
    n = b.shape[0]
    if maxiter is None:
        maxiter = 10 * n
    if maxiter < 0:
        raise ValueError("maxiter must be >= 0")
    dtype = np.result_type(A.dtype, b.dtype, np.float32)
    adaptive = check_every is None and callback is None and xp is not np
    if check_every is None or callback is not None:
        check_every = 1 if (xp is np or callback is not None) else CHECK_EVERY
    if check_every < 1:
        raise ValueError("check_every must be >= 1")
    graph_requested = bool(cuda_graph)
    if cuda_graph is None:
        cuda_graph = xp is not np and callback is None
    elif cuda_graph and (xp is np or callback is not None):
        raise ValueError("cuda_graph needs a GPU problem and no callback")
    apply_m = as_operator(M)
    product = A.matvec if hasattr(A, "matvec") and not hasattr(A, "tocsr") else (lambda v: A @ v)
    if cuda_graph and hasattr(A, "tocsr") and np.dtype(A.dtype) in (np.float32, np.float64):
        from kernels.spmv import spmv

        A_csr = A.tocsr()
        product = lambda v: spmv(A_csr, v)  # noqa: E731 - cuSPARSE through CuPy cannot be captured

    def matvec(v):  # the fused GPU kernels take one dtype: cast what A or M return
        y = product(v)
        return y if y.dtype == dtype else y.astype(dtype)

    def precondition(v):
        if apply_m is None:
            return v
        y = apply_m(v)
        return y if y.dtype == dtype else y.astype(dtype)

    tiny = np.finfo(np.dtype(dtype).char.lower() if np.dtype(dtype).kind == "c" else dtype).tiny

    x = xp.zeros(n, dtype=dtype) if x0 is None else xp.array(x0, dtype=dtype, copy=True)
    r = b.astype(dtype, copy=True) - matvec(x) if x0 is not None else b.astype(dtype, copy=True)
    bnorm = float(xp.linalg.norm(b))
    tol = max(rtol * bnorm, atol)
    ops = _HostOps(dtype, tiny, tol) if xp is np else _DeviceOps(dtype, tiny, tol, check_every)
    r0 = float(xp.linalg.norm(r))
    _check_finite_start(b, bnorm, r0, x0, xp)
    history = [0.0 if bnorm == 0.0 else r0]
    info = 0
    if bnorm == 0.0:
        x = xp.zeros(n, dtype=dtype)
    elif r0 > tol:
        rhat = r.copy()
        p = xp.zeros_like(r)
        st = ops.state()
        st["v"] = xp.zeros_like(r)  # A M^-1 p of the previous iteration

        def step(row):
            """One iteration: x, r, p and the scalars in ``st`` are updated in place, ``v``
            is rebound (a captured block copies its last ``v`` back, see IterationGraph)."""
            rho = ops.dot(rhat, r)
            ops.update_p(p, r, st["v"], rho, st)
            phat = precondition(p)
            st["v"] = v = matvec(phat)
            rv = ops.dot(rhat, v)
            s = ops.direction_s(r, v, rho, rv)
            shat = precondition(s)
            t = matvec(shat)
            tt, ts = ops.dot(t, t), ops.dot(t, s)
            ops.update_xr(x, r, s, t, phat, shat, rho, rv, ts, tt)
            ops.record(rho, rv, ts, tt, ops.dot(r, r), st, row)
            if callback is not None:
                callback(x)

        info = maxiter
        graph, done, per_iteration = None, 0, 0.0
        while done < maxiter:
            block = min(check_every, maxiter - done)
            if adaptive:
                block = min(block, _adaptive_block(history, tol, check_every, done, per_iteration))
            started = time.perf_counter()
            if cuda_graph and done > 0 and block == check_every and graph is None:
                try:
                    graph = IterationGraph(step, block, st)
                except Exception as exc:  # noqa: BLE001 - something in A or M cannot be captured
                    cuda_graph = False
                    if graph_requested:
                        warnings.warn(f"CUDA graph capture failed ({type(exc).__name__}: {exc}); launching the "
                                      "kernels one by one", RuntimeWarning, stacklevel=2)
            if graph is not None and block == check_every:
                graph.launch()
            else:
                for row in range(block):
                    step(row)
                    if ops.halted is not None:  # the host's own test (the device's freezes x)
                        break
            rows, halted = ops.rows(block)
            per_iteration = (time.perf_counter() - started) / block
            if halted is not None:
                rows = rows[:halted + 1]
            done += len(rows)
            history.extend(rows[:, 0].tolist())
            if halted is not None:
                info = _halt_code(rows[-1], tol, tiny)
                break
    if residuals is not None:
        residuals.extend(history)
    return x, info


@dataclass
class SolveResult:
    """Solution, info code (SciPy's), relative residual history and timing of :func:`solve`.

    ``tolerance`` is the relative residual the solve had to reach (``max(rtol,
    atol / ||b||)``); :attr:`converged` asks for ``info == 0`` and a last recorded residual
    within it (a solver may stop on a recurrence residual that drifted from the true one).
    """

    x: object
    info: int
    residuals: np.ndarray = field(repr=False)
    time: float
    solver: str
    tolerance: float | None = None

    @property
    def iterations(self) -> int:
        return len(self.residuals) - 1

    @property
    def converged(self) -> bool:
        if self.info != 0:
            return False
        last = float(self.residuals[-1]) if len(self.residuals) else 0.0
        # rounding of the recorded norm aside (it is recomputed from the iterate)
        return self.tolerance is None or last <= self.tolerance * (1 + 1e-7)


def solve(A, b, M=None, *, method: str = "bicgstab", rtol: float = 1e-8, atol: float = 0.0,
          maxiter: int | None = None, callback=None, x0=None, preconditioner=None) -> SolveResult:
    """Solve ``A x = b`` with a preconditioned Krylov method, recording relative residuals.

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx)
    b : array
    M : preconditioner object, LinearOperator, or None
        The preconditioner, as SciPy's solvers name it (also the third positional
        argument).
    preconditioner : the same as ``M`` (the keyword of earlier versions); give one of them.
    method : {"bicgstab", "scipy-bicgstab", "cg", "gmres"}
        ``"bicgstab"`` is :func:`bicgstab` (host-sync-free on the GPU); the others are the
        SciPy/cupyx solvers of that name (``"scipy-bicgstab"`` is SciPy's or cupyx's own).
    rtol, atol, maxiter, callback, x0 : as in SciPy.

    Returns
    -------
    SolveResult
        ``x``, ``info``, ``residuals`` (relative to ``||b||``, first entry for ``x0``),
        ``time`` (seconds, synchronized), ``iterations``.

    Examples
    --------
    >>> import matrices, precond
    >>> A = matrices.poisson2d(20)
    >>> res = precond.solve(A, A @ np.ones(400), M=precond.jacobi(A), rtol=1e-8)
    >>> res.converged, res.iterations < 100
    (True, True)
    """
    if preconditioner is not None:
        if M is not None:
            raise TypeError("give the preconditioner once: M= or preconditioner=, not both")
        M = preconditioner
    preconditioner = M
    xp = get_array_module(A, b)
    b, x0 = _system(A, b, x0, xp)
    if np.dtype(b.dtype).kind not in "fc" or np.dtype(A.dtype).kind not in "fc":
        raise TypeError("matrix and right-hand side must be floating point")
    if np.dtype(b.dtype) != np.dtype(A.dtype):
        raise TypeError(f"dtype mismatch: matrix is {A.dtype}, right-hand side is {b.dtype}")
    bnorm = float(xp.linalg.norm(b))
    if not np.isfinite(bnorm):
        _check_finite_start(b, bnorm, 0.0, None, xp)
    bnorm = bnorm or 1.0
    residuals: list[float] = []
    sync = (lambda: xp.cuda.Device().synchronize()) if xp is not np else (lambda: None)
    sync()
    t0 = time.perf_counter()
    if method == "bicgstab":
        x, info = bicgstab(A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=preconditioner,
                           callback=callback, residuals=residuals)
    else:
        name = {"scipy-bicgstab": "bicgstab", "cg": "cg", "gmres": "gmres"}.get(method)
        if name is None:
            raise ValueError(f"unknown method {method!r}")
        spla = sparse_linalg_module(xp)
        M = preconditioner.aslinearoperator() if hasattr(preconditioner, "aslinearoperator") else preconditioner
        r0 = b - A @ x0 if x0 is not None else b
        residuals.append(float(xp.linalg.norm(r0)))

        def record(xk):
            residuals.append(float(xp.linalg.norm(b - A @ xk)))
            if callback is not None:
                callback(xk)

        kwargs = {"callback_type": "x"} if name == "gmres" else {}
        x, info = getattr(spla, name)(A, b, x0=x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M,
                                      callback=record, **kwargs)
        # the iterate returned need not be the last one the callback saw (SciPy's BiCGStab
        # stops at the half step without calling it): record the returned one too
        final = float(xp.linalg.norm(b - A @ x))
        if final != residuals[-1]:
            residuals.append(final)
    sync()
    elapsed = time.perf_counter() - t0
    return SolveResult(x, int(info), np.asarray(residuals) / bnorm, elapsed, method,
                       tolerance=max(rtol, atol / bnorm))
