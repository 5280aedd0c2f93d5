"""BiCGStab with SciPy's signature and info codes, for NumPy and CuPy alike, and a
convenience :func:`solve` that returns the residual history.

On the GPU the iteration keeps every scalar on the device: the residual norm is
written into a device history buffer each iteration and compared with the tolerance only
every ``check_every`` iterations, so the loop launches kernels without waiting for them.
(``cupyx.scipy.sparse.linalg.bicgstab``, from CuPy 14.1, synchronizes several times per
iteration.)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import get_array_module, sparse_linalg_module

__all__ = ["bicgstab", "solve", "SolveResult"]


def _as_operator(M, xp):
    """A callable ``x -> M^{-1} x`` from None, a preconditioner object, a LinearOperator or a matrix."""
    if M is None:
        return None
    if hasattr(M, "matvec"):
        return M.matvec
    if callable(M):
        return M
    return lambda x: M @ x


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
             check_every=None, residuals=None):
    """Preconditioned BiCGStab (right preconditioning, like SciPy's).

    Parameters
    ----------
    A : sparse matrix or LinearOperator (SciPy or cupyx)
    b : array of shape (n,)
    x0 : array, optional
    rtol, atol : float
        Stop when ``||r|| <= max(rtol * ||b||, atol)``.
    maxiter : int, optional
        Default ``10 * n``.
    M : preconditioner object (with ``matvec``), LinearOperator or matrix, optional
    callback : callable, optional
        Called as ``callback(xk)`` after each iteration.
    check_every : int, optional
        Iterations between convergence checks (default 1 on the CPU, 8 on the GPU; with a
        callback always 1). Between checks the GPU never waits for the host.
    residuals : list, optional
        If given, receives the residual norm after each iteration (``||b - A x0||`` first).

    Returns
    -------
    x : array
    info : int
        0 converged, ``> 0`` iterations done without convergence, ``-10`` breakdown
        (rho = 0), ``-11`` breakdown (omega = 0) - SciPy's codes.

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
    n = b.shape[0]
    if A.shape[0] != A.shape[1] or A.shape[1] != n:
        raise ValueError(f"matrix of shape {A.shape} does not match right-hand side of length {n}")
    if maxiter is None:
        maxiter = 10 * n
    if maxiter < 0:
        raise ValueError("maxiter must be >= 0")
    dtype = np.result_type(A.dtype, b.dtype, np.float32)
    if check_every is None:
        check_every = 1 if (xp is np or callback is not None) else 8
    apply_m = _as_operator(M, xp)
    matvec = A.matvec if hasattr(A, "matvec") and not hasattr(A, "tocsr") else (lambda v: A @ v)

    x = xp.zeros(n, dtype=dtype) if x0 is None else xp.array(x0, dtype=dtype, copy=True)
    r = b.astype(dtype, copy=True) - matvec(x) if x0 is not None else b.astype(dtype, copy=True)
    bnorm = float(xp.linalg.norm(b))
    tol = max(rtol * bnorm, atol)
    history = xp.empty(maxiter + 1, dtype=np.dtype(dtype).char.lower() if np.dtype(dtype).kind == "c" else dtype)
    history[0] = xp.linalg.norm(r)
    if bnorm == 0.0:
        if residuals is not None:
            residuals.append(0.0)
        return xp.zeros(n, dtype=dtype), 0
    if float(history[0]) <= tol:
        if residuals is not None:
            residuals.append(float(history[0]))
        return x, 0
    rhat = r.copy()
    p = xp.zeros_like(r)
    v = xp.zeros_like(r)
    one = xp.ones((), dtype=dtype)
    rho_prev, alpha, omega = one, one, one
    info, it = maxiter, 0
    tiny = np.finfo(np.dtype(dtype).char.lower() if np.dtype(dtype).kind == "c" else dtype).tiny

    def safe(den):
        return xp.where(abs(den) < tiny, one, den)

    broke_rho = xp.zeros((), dtype=bool)
    broke_omega = xp.zeros((), dtype=bool)
    for it in range(1, maxiter + 1):
        rho = xp.vdot(rhat, r)
        broke_rho |= abs(rho) < tiny
        beta = (rho / safe(rho_prev)) * (alpha / safe(omega))
        p = r + beta * (p - omega * v)
        phat = apply_m(p) if apply_m else p
        v = matvec(phat)
        alpha = rho / safe(xp.vdot(rhat, v))
        s = r - alpha * v
        shat = apply_m(s) if apply_m else s
        t = matvec(shat)
        tt = xp.vdot(t, t)
        omega = xp.vdot(t, s) / safe(tt)
        x = x + alpha * phat + omega * shat
        r = s - omega * t
        broke_omega |= (abs(omega) < tiny) & (xp.linalg.norm(r) > tol)
        history[it] = xp.linalg.norm(r)
        rho_prev = rho
        if callback is not None:
            callback(x)
        if it % check_every == 0 or it == maxiter:
            res = float(history[it])  # the only host synchronization
            if res <= tol or not np.isfinite(res):
                info = 0 if res <= tol else -10
                break
            if bool(broke_rho):
                info = -10
                break
            if bool(broke_omega):
                info = -11
                break
    if residuals is not None:
        residuals.extend(float(h) for h in (history[: it + 1].get() if xp is not np else history[: it + 1]))
    return x, info


@dataclass
class SolveResult:
    """Solution, info code (SciPy's), relative residual history and timing of :func:`solve`."""

    x: object
    info: int
    residuals: np.ndarray = field(repr=False)
    time: float
    solver: str

    @property
    def iterations(self) -> int:
        return len(self.residuals) - 1

    @property
    def converged(self) -> bool:
        return self.info == 0


def solve(A, b, preconditioner=None, *, method="bicgstab", rtol=1e-8, atol=0.0, maxiter=None,
          callback=None, x0=None):
    """Solve ``A x = b`` with a preconditioned Krylov method, recording relative residuals.

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx)
    b : array
    preconditioner : preconditioner object, LinearOperator, or None
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
    >>> res = precond.solve(A, A @ np.ones(400), precond.jacobi(A), rtol=1e-8)
    >>> res.converged, res.iterations < 100
    (True, True)
    """
    xp = get_array_module(A, b)
    if b.ndim != 1 or b.shape[0] != A.shape[0]:
        raise ValueError(f"right-hand side of shape {b.shape} does not match matrix of shape {A.shape}")
    if np.dtype(b.dtype).kind not in "fc" or np.dtype(A.dtype).kind not in "fc":
        raise TypeError("matrix and right-hand side must be floating point")
    if np.dtype(b.dtype) != np.dtype(A.dtype):
        raise TypeError(f"dtype mismatch: matrix is {A.dtype}, right-hand side is {b.dtype}")
    bnorm = float(xp.linalg.norm(b)) or 1.0
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
    sync()
    elapsed = time.perf_counter() - t0
    return SolveResult(x, int(info), np.asarray(residuals) / bnorm, elapsed, method)
