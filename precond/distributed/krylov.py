"""BiCGStab and CG on a :class:`DistributedCSR`, with SciPy's signature and info codes.

Every rank holds its part of each vector (NumPy or CuPy); the products exchange ghost
values with the neighbouring ranks, and the inner products are local dot products summed
by ``MPI_Allreduce``, several per call:

* BiCGStab, two all-reduces per iteration: ``(rhat, v)``; then ``(t, s)``, ``(t, t)``,
  ``(s, s)``, ``(rhat, s)``, ``(rhat, t)`` together, from which ``omega``, the next
  ``rho = (rhat, s) - omega (rhat, t)`` and the residual norm
  ``||s - omega t||^2 = (s, s) - 2 Re(conj(omega) (t, s)) + |omega|^2 (t, t)`` all follow
  without another reduction. Where that difference cancels (a residual far below
  ``||s||``, or at the tolerance) the norm is recomputed directly, one more all-reduce
  in that iteration only, so convergence is never declared on a rounded estimate.
* CG, two all-reduces per iteration: ``(p, A p)``; then ``(r, z)`` and ``(r, r)``.

On GPU ranks that talk through NCCL (:mod:`kernels.nccl`; or a single rank) BiCGStab is
*device-resident*: the local dot products go into one device buffer that NCCL sums in
place on the compute stream, the scalars (``rho``, ``alpha``, ``omega``) never leave the
device, the vector updates are fused kernels that read them there, and the ghost exchange
is stream-ordered too; the host only queues kernels and reads the residual history every
``check_every`` iterations (like :func:`precond.krylov.bicgstab` on one GPU). Otherwise
(CPU ranks, or GPUs with the MPI transport) each reduction is a device-to-host copy of a
few numbers and ``MPI_Allreduce`` on the host, every iteration checked.
"""
from __future__ import annotations

import time

import numpy as np

from kernels.mpi import mpi
from kernels.multidot import MAX_PAIRS, multi_dot

from ..krylov import as_operator

__all__ = ["bicgstab", "cg"]


class _Ops:
    """The vector updates of both iterations, on the backend of the vectors."""

    def __init__(self, xp):
        self.xp = xp
        self.gpu = xp is not np
        if self.gpu:
            ek = xp.ElementwiseKernel
            self._p = ek("T r, T v, T beta, T omega", "T p", "p = r + beta * (p - omega * v)", "dist_bicgstab_p")
            self._xr = ek("T s, T t, T phat, T shat, T alpha, T omega", "T x, T r",
                          "x = x + alpha * phat + omega * shat; r = s - omega * t", "dist_bicgstab_xr")
            self._axpy = ek("T a, T x", "T y", "y = y + a * x", "dist_axpy")
            self._xpay = ek("T x, T a", "T y", "y = x + a * y", "dist_xpay")

    def update_p(self, p, r, v, beta, omega):
        if self.gpu:
            self._p(r, v, beta, omega, p)
        else:
            p -= omega * v
            p *= beta
            p += r

    def update_xr(self, x, r, s, t, phat, shat, alpha, omega):
        if self.gpu:
            self._xr(s, t, phat, shat, alpha, omega, x, r)
        else:
            x += alpha * phat
            x += omega * shat
            np.subtract(s, omega * t, out=r)

    def axpy(self, a, x, y):
        """``y += a x``."""
        if self.gpu:
            self._axpy(a, x, y)
        else:
            y += a * x

    def xpay(self, x, a, y):
        """``y = x + a y``."""
        if self.gpu:
            self._xpay(x, a, y)
        else:
            y *= a
            y += x


class _Reducer:
    """Local dot products summed over the ranks: one host copy and one ``Allreduce`` per call."""

    def __init__(self, comm, xp, dtype):
        self.comm = comm
        self.xp = xp
        self.dtype = np.dtype(dtype)
        self.count = 0
        self.seconds = 0.0

    def __call__(self, *pairs):
        xp = self.xp
        if xp is np:
            local = np.array([np.vdot(a, b) for a, b in pairs], dtype=self.dtype)
        else:
            local = xp.stack([xp.vdot(a, b) for a, b in pairs]).astype(self.dtype, copy=False).get()
        t0 = time.perf_counter()
        total = np.empty_like(local)
        self.comm.Allreduce(local, total, op=mpi().SUM)
        self.seconds += time.perf_counter() - t0
        self.count += 1
        # Python scalars: they take the vectors' dtype in NumPy and CuPy expressions (NEP 50)
        return [complex(z) for z in total] if total.dtype.kind == "c" else [float(z) for z in total]


def _prepare(A, b, x0, maxiter, M):
    """Shared argument checks (collective where a rank's own input could be bad)."""
    from kernels.mpi import agree

    error = None
    try:
        if b.shape != (A.n_local,):
            raise ValueError(f"right-hand side of shape {b.shape} does not match the {A.n_local} local rows")
        if x0 is not None and x0.shape != (A.n_local,):
            raise ValueError(f"x0 of shape {x0.shape} does not match the {A.n_local} local rows")
        if np.dtype(b.dtype).kind not in "fc":
            raise TypeError(f"right-hand side must be floating point, got {b.dtype}")
        if (A.xp is np) != isinstance(b, np.ndarray):
            raise TypeError(f"right-hand side on the wrong device for a matrix on the {A.device}")
    except Exception as exc:  # noqa: BLE001 - reported collectively
        error = exc
    agree(A.comm, error, "right-hand side")
    if maxiter is None:
        maxiter = 10 * A.shape[0]
    if maxiter < 0:
        raise ValueError("maxiter must be >= 0")
    xp = A.xp
    dtype = np.result_type(A.dtype, b.dtype)
    x = xp.zeros(A.n_local, dtype) if x0 is None else xp.array(x0, dtype=dtype, copy=True)
    apply_m = as_operator(M)
    precondition = (lambda v: v) if apply_m is None else apply_m
    return xp, dtype, x, maxiter, precondition


class _ResidentOps:
    """The steps of the device-resident BiCGStab: scalars in arrays of shape (1,), the
    reductions summed in place (NCCL on the device, or MPI through the host), the
    per-iteration rows (residual estimate, ``|rho|``, ``|(rhat, v)|``, ``|omega|``,
    ``||s||``) written to a buffer that the host reads at the checks. On the CPU the same
    steps run with NumPy (what the CPU tests exercise)."""

    COLS = 5

    def __init__(self, A, dtype, tiny, block):
        self.xp = xp = A.xp
        self.gpu = xp is not np
        self.comm, self.nccl = A.comm, A.nccl
        self.dtype = np.dtype(dtype)
        self.tiny = float(tiny)
        self.hist = xp.zeros((block, self.COLS), dtype=self.dtype)
        self.count = 0
        self.seconds = 0.0
        self.blocks = None  # the _Blocks that ran the iterations
        if self.gpu:
            from ..krylov import SAFE_DIVISOR, bicgstab_gpu_kernels

            self.k = dict(bicgstab_gpu_kernels())
            self.go = xp.zeros(1, dtype=np.int32)  # update_xr's halt flag, never raised here
            self.k["record"] = xp.ElementwiseKernel(
                "T ts, T tt, T ss, T rs, T rt, T rv, float64 tiny, int64 row",
                "T alpha, T omega, T rho, T rho_prev, raw T hist",
                "T a = rho / safe(rv, tiny); T w = ts / safe(tt, tiny); T rr = ss - 2 * w * ts + w * w * tt;"
                "hist[5 * row] = sqrt(rr > T(0) ? rr : T(0)); hist[5 * row + 1] = abs(rho);"
                "hist[5 * row + 2] = abs(rv); hist[5 * row + 3] = abs(w); hist[5 * row + 4] = sqrt(abs(ss));"
                "alpha = a; omega = w; rho_prev = rho; rho = rs - w * rt;",
                "dist_bicgstab_record", preamble=SAFE_DIVISOR)

    def scalar(self, value):
        return self.xp.full(1, value, dtype=self.dtype)

    def reduce(self, *pairs):
        """The global dot products of ``pairs`` as one array (on the vectors' device)."""
        xp = self.xp
        self.count += 1
        if self.gpu:
            if len(pairs) <= MAX_PAIRS:  # one pass over the vectors
                buf = multi_dot(pairs)
            else:
                buf = xp.stack([xp.vdot(a, b) for a, b in pairs]).astype(self.dtype, copy=False)
            t0 = time.perf_counter()
            if self.nccl is not None:
                self.nccl.allreduce(buf)
            elif self.comm.size > 1:  # GPUs on the MPI transport: through the host
                host = buf.get()
                self.comm.Allreduce(mpi().IN_PLACE, host, op=mpi().SUM)
                buf.set(host)
            self.seconds += time.perf_counter() - t0
            return buf
        buf = np.array([np.vdot(a, b) for a, b in pairs], dtype=self.dtype)
        t0 = time.perf_counter()
        if self.comm.size > 1:
            self.comm.Allreduce(mpi().IN_PLACE, buf, op=mpi().SUM)
        self.seconds += time.perf_counter() - t0
        return buf

    def _safe(self, d):
        return np.where(np.abs(d) < self.tiny, 1.0, d)

    def update_p(self, p, r, v, st):
        if self.gpu:
            self.k["update_p"](r, v, st["rho"], st["rho_prev"], st["alpha"], st["omega"], self.tiny, p)
        else:
            beta = (st["rho"] / self._safe(st["rho_prev"])) * (st["alpha"] / self._safe(st["omega"]))
            p -= st["omega"] * v
            p *= beta
            p += r

    def direction_s(self, r, v, rho, rv):
        if self.gpu:
            return self.k["direction_s"](r, v, rho, rv, self.tiny)
        return r - (rho / self._safe(rv)) * v

    def update_xr(self, x, r, s, t, phat, shat, rho, rv, ts, tt):
        if self.gpu:
            self.k["update_xr"](s, t, phat, shat, rho, rv, ts, tt, self.tiny, self.go, x, r)
        else:
            alpha, omega = rho / self._safe(rv), ts / self._safe(tt)
            x += alpha * phat
            x += omega * shat
            np.subtract(s, omega * t, out=r)

    def record(self, red, rv, st, row):
        """``red`` = (ts, tt, ss, rs, rt): the step's scalars and its row of the history."""
        ts, tt, ss, rs, rt = (red[i:i + 1] for i in range(5))
        if self.gpu:
            self.k["record"](ts, tt, ss, rs, rt, rv, self.tiny, row, st["alpha"], st["omega"], st["rho"],
                             st["rho_prev"], self.hist)
            return
        a, w = st["rho"] / self._safe(rv), ts / self._safe(tt)
        rr = ss - 2 * w * ts + w * w * tt
        self.hist[row] = [np.sqrt(max(rr[0], 0.0)), abs(st["rho"][0]), abs(rv[0]), abs(w[0]), np.sqrt(abs(ss[0]))]
        st["alpha"], st["omega"], st["rho_prev"], st["rho"] = a, w, st["rho"].copy(), rs - w * rt

    def rows(self, n):
        h = self.hist[:n]
        return (h.get() if self.gpu else h.copy()).astype(np.float64)


def _resident_choice(A, dtype, callback, check_every):
    """Whether the device-resident iteration runs, and its check period."""
    if check_every is not None and (isinstance(check_every, bool) or int(check_every) < 1):
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    if check_every is not None and callback is not None:
        raise ValueError("a callback needs every iteration checked: leave check_every None")
    resident = callback is None and np.dtype(dtype).kind == "f" and (
        check_every is not None or (A.device == "gpu" and (A.nccl is not None or A.comm.size == 1)))
    return resident, (int(check_every or 8) if resident else None)


def _graph_capturable(A):
    """Whether an iteration on ``A`` can be captured into a CUDA graph: GPU ranks whose
    exchanges and reductions are all stream-ordered (NCCL, or a single rank). The MPI
    transport waits on the host inside each product and reduction."""
    return A.device == "gpu" and (A.nccl is not None or A.comm.size == 1)


# Rows per rank up to which the default replays a CUDA graph. Measured on H200s (ANISO2,
# block-Jacobi AlgTriScal, NCCL, one and two ranks, 40-iteration solves, the capture
# included): replays beat the kernels launched one by one at 250,000 rows per rank (0.31
# against 0.39 ms per iteration on one rank, 0.64 against 0.77 on two) and lost from 1M rows
# on (0.47 against 0.40 ms; 1.73 against 1.63 at 6.25M), where launches no longer bound the
# iteration; 200-iteration solves at 6.25M rows gained 1%, less than one capture costs a
# short solve.
GRAPH_MAX_LOCAL_ROWS = 500_000


def _graph_choice(A, resident, cuda_graph):
    if cuda_graph is None:  # the same answer on every rank: all capture, or none
        small = int(np.diff(A.row_starts).max()) <= GRAPH_MAX_LOCAL_ROWS
        return bool(resident and small and _graph_capturable(A))
    if cuda_graph and not (resident and _graph_capturable(A)):
        raise ValueError("cuda_graph needs the device-resident iteration (no callback) on GPU ranks that use NCCL, "
                         "or a single GPU rank")
    return bool(cuda_graph)


class _Blocks:
    """Runs the ``check_every`` iterations between two checks: one by one, or, once a
    first block has run (kernels compiled, pools warm), captured into a CUDA graph on every
    rank and replayed (:class:`kernels.capture.IterationGraph`; NCCL's kernels are captured
    with the rest, the ghost exchange's side stream joins the capture through its events).
    All ranks capture, or none: a rank whose capture fails says so in one all-reduce before
    any graph runs, since NCCL's kernels pair up across ranks."""

    def __init__(self, A, ops, step, st, carried, check_every, enabled):
        self.A, self.ops, self.step, self.st, self.carried = A, ops, step, st, carried
        self.check_every = check_every
        self.enabled = enabled
        self.graph = None
        self.reductions = 0  # per replay
        self.replays = 0

    def _capture(self, block):
        from kernels.capture import IterationGraph

        count = self.ops.count
        graph, error = None, None
        try:
            graph = IterationGraph(self.step, block, self.st, self.carried)
        except Exception as exc:  # noqa: BLE001 - something in A or M cannot be captured
            error = exc
        self.reductions = self.ops.count - count
        self.ops.count = count
        everyone = self.A.comm.allreduce(0 if graph is None else 1, op=mpi().MIN)
        self.enabled = False  # one attempt
        if everyone:
            self.graph = graph
        elif self.A.comm.rank == 0 or error is not None:
            import warnings

            warnings.warn(f"CUDA graph capture failed ({type(error).__name__ if error else 'on another rank'}"
                          f"{': ' + str(error) if error else ''}); launching the kernels one by one",
                          RuntimeWarning, stacklevel=4)

    def release(self):
        """Destroy the graph and its memory pool when the solve ends (the replay count
        stays): ``ops`` and the blocks refer to each other, so without this only the cycle
        collector would free them, holding device memory and NCCL's captured work past
        the solve."""
        self.graph = None
        self.step = None

    def run(self, block, done):
        if self.enabled and done > 0 and block == self.check_every:
            self._capture(block)
        if self.graph is not None and block == self.check_every:
            self.graph.launch()
            self.ops.count += self.reductions
            self.replays += 1
            return
        for row in range(block):
            self.step(row)


def _bicgstab_resident(A, r, rho0, x, tol, maxiter, precondition, check_every, history, cuda_graph=False):
    """BiCGStab without host synchronizations between checks; returns ``(x, info, ops)``.

    Two reductions per iteration as in :func:`bicgstab` (``(rhat, v)``; then ``(t, s)``,
    ``(t, t)``, ``(s, s)``, ``(rhat, s)``, ``(rhat, t)``, from which ``omega``, the next
    ``rho`` and the residual estimate follow). The estimate can cancel near the answer:
    when the last one of a block says converged (or cancelled), the true residual norm is
    measured with one more reduction, and only that one declares convergence.
    """
    xp = A.xp
    dtype = x.dtype
    tiny = np.finfo(dtype).tiny
    eps = np.finfo(dtype).eps
    ops = _ResidentOps(A, dtype, tiny, check_every)
    rhat = r.copy()
    p = xp.zeros_like(r)
    v = xp.zeros_like(r)
    st = {"rho": ops.scalar(rho0), "rho_prev": ops.scalar(1.0), "alpha": ops.scalar(1.0),
          "omega": ops.scalar(1.0), "v": v}

    def step(row):
        """One iteration: x, r, p and the scalars updated in place, ``st["v"]`` rebound."""
        ops.update_p(p, r, st["v"], st)
        phat = precondition(p)
        st["v"] = v = A.matvec(phat)
        rv = ops.reduce((rhat, v))
        s = ops.direction_s(r, v, st["rho"], rv)
        shat = precondition(s)
        t = A.matvec(shat)
        red = ops.reduce((t, s), (t, t), (s, s), (rhat, s), (rhat, t))
        ops.update_xr(x, r, s, t, phat, shat, st["rho"], rv, red[0:1], red[1:2])
        ops.record(red, rv, st, row)

    blocks = _Blocks(A, ops, step, st, ("v",), check_every, cuda_graph)
    ops.blocks = blocks
    info, done = maxiter, 0
    try:
        while done < maxiter:
            block = min(check_every, maxiter - done)
            blocks.run(block, done)
            done += block
            rows = ops.rows(block)
            history.extend(rows[:, 0].tolist())
            est, ss = rows[-1, 0], rows[-1, 4]
            if not np.isfinite(rows[:, :4]).all():
                info = -10
                break
            if est <= 2.0 * tol or est * est < 64 * eps * ss * ss:  # near the answer, or cancelled: measure
                true = float(np.sqrt(max(_real(ops.reduce((r, r))[0].item()), 0.0)))
                history[-1] = true
                if true <= tol:
                    info = 0
                    break
            if (rows[:, 1] < tiny).any() or (rows[:, 2] < tiny).any():
                info = -10
                break
            if ((rows[:, 3] < tiny) & (rows[:, 0] > tol)).any():
                info = -11
                break
    finally:
        blocks.release()
    return x, info, ops


def _cg_resident(A, r, z, rz0, x, tol, maxiter, precondition, check_every, history, cuda_graph=False):
    """CG without host synchronizations between checks; returns ``(x, info, ops)``.

    Two reductions per iteration as in :func:`cg` (``(p, A p)``; then ``(r, z)`` with
    ``(r, r)``), the scalars kept in arrays of shape (1,) on the vectors' device and used
    there by the updates; ``(r, r)`` and ``(p, A p)`` of each iteration go to a buffer the
    host reads every ``check_every`` iterations.
    """
    xp = A.xp
    ops = _ResidentOps(A, x.dtype, np.finfo(x.dtype).tiny, check_every)
    vec = _Ops(xp)
    hist = xp.zeros((check_every, 2), dtype=x.dtype)
    p = z.copy()
    st = {"rz": ops.scalar(rz0)}
    info, done = maxiter, 0

    def quiet():  # a breakdown (division by zero) shows at the check
        return np.errstate(divide="ignore", invalid="ignore")

    def step(row):
        """One iteration: x, r, p updated in place, ``st["rz"]`` rebound."""
        q = A.matvec(p)
        pq = ops.reduce((p, q))
        with quiet():
            alpha = st["rz"] / pq
            vec.axpy(alpha, p, x)
            vec.axpy(-alpha, q, r)
        z = precondition(r)
        red = ops.reduce((r, z), (r, r))
        hist[row, 0] = red[1]
        hist[row, 1] = pq[0]
        with quiet():
            beta = red[0:1] / st["rz"]
            st["rz"] = red[0:1]
            vec.xpay(z, beta, p)

    blocks = _Blocks(A, ops, step, st, ("rz",), check_every, cuda_graph)
    ops.blocks = blocks
    try:
        while done < maxiter:
            block = min(check_every, maxiter - done)
            blocks.run(block, done)
            done += block
            rows = (hist[:block].get() if ops.gpu else hist[:block].copy()).astype(np.float64)
            history.extend(np.sqrt(np.maximum(rows[:, 0], 0.0)).tolist())
            if not (rows[:, 1] > 0).all() or not np.isfinite(rows).all():
                info = -10
                break
            if history[-1] <= tol:
                info = 0
                break
    finally:
        blocks.release()
    return x, info, ops


def _real(z):
    return float(z.real) if isinstance(z, complex) or np.iscomplexobj(z) else float(z)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, residuals=None,
             stats=None, check_every=None, cuda_graph=None):
    """Distributed preconditioned BiCGStab (right preconditioning, like SciPy's); collective.

    Parameters
    ----------
    A : DistributedCSR
    b : array of shape (A.n_local,)
        This rank's part of the right-hand side (NumPy, or CuPy on the GPU).
    x0 : array of shape (A.n_local,), optional
    rtol, atol : float
        Stop when ``||r|| <= max(rtol * ||b||, atol)`` (global norms).
    maxiter : int, optional
        Default ``10 * N``.
    M : preconditioner (``matvec`` of local vectors, e.g. :func:`block_jacobi`), optional
    callback : callable, optional
        ``callback(xk)`` with this rank's part after each iteration (then every iteration
        is checked on the host).
    residuals : list, optional
        Receives the global residual norm after each iteration (``||b - A x0||`` first;
        between the checks of the device-resident iteration, the recurrence's estimate).
    stats : dict, optional
        Receives ``iterations``, ``allreduces``, ``allreduce_time`` (s, host time in the
        all-reduces, waiting for the slowest rank included; with NCCL only the time to
        queue them), ``resident``, ``cuda_graph`` (whether replays ran) and ``transport``.
    check_every : int, optional
        Check convergence every ``check_every`` iterations with the device-resident
        iteration (real dtypes, no callback). Default: 8 on GPU ranks that use NCCL (or a
        single GPU rank), otherwise the classic iteration checked every time. An
        explicit value selects the resident iteration on any device (on CPU ranks it only
        changes when convergence is noticed).
    cuda_graph : bool, optional
        Capture the ``check_every`` iterations between two checks once into a CUDA graph
        on every rank and replay it (NCCL's kernels and the ghost exchange included), as
        :func:`precond.krylov.bicgstab` does on one GPU. Default: yes where the resident
        iteration runs on GPU ranks that use NCCL (or a single GPU rank) and no rank owns
        more than ``GRAPH_MAX_LOCAL_ROWS`` (500,000) rows: above that, launches no longer
        bound an iteration and the kernels launched one by one measured faster. ``True``
        where no graph can be captured raises ``ValueError``. Where a capture fails on any rank, every rank
        launches the kernels one by one (with a ``RuntimeWarning``).

    Returns
    -------
    x : array
        This rank's part of the solution.
    info : int
        0 converged, ``> 0`` iterations done without convergence, ``-10`` breakdown
        (``rho`` or ``(rhat, v)`` = 0), ``-11`` breakdown (``omega`` = 0): SciPy's codes.

    Examples
    --------
    Under ``mpiexec -n 2``::

        import matrices
        from precond import distributed as dist
        A = dist.DistributedCSR.from_global(matrices.aniso2(64))
        b = A @ A.ones()
        x, info = dist.bicgstab(A, b, rtol=1e-10, M=dist.block_jacobi(A, "algebraic_tridiagonal"))
    """
    xp, dtype, x, maxiter, precondition = _prepare(A, b, x0, maxiter, M)
    resident, check_every = _resident_choice(A, dtype, callback, check_every)
    cuda_graph = _graph_choice(A, resident, cuda_graph)
    replays = False
    ops = _Ops(xp)
    reduce = _Reducer(A.comm, xp, dtype)
    b = b.astype(dtype, copy=False)
    r = b - A.matvec(x) if x0 is not None else b.copy()
    bb, rr = (_real(z) for z in reduce((b, b), (r, r)))
    bnorm = np.sqrt(bb)
    tol = max(rtol * bnorm, atol)
    history = [0.0 if bnorm == 0.0 else float(np.sqrt(rr))]
    eps = np.finfo(np.dtype(dtype).char.lower() if np.dtype(dtype).kind == "c" else dtype).eps
    tiny = np.finfo(np.dtype(dtype).char.lower() if np.dtype(dtype).kind == "c" else dtype).tiny
    info, it = 0, 0
    if bnorm == 0.0:
        x = xp.zeros(A.n_local, dtype)
    elif np.sqrt(rr) > tol and resident:
        x, info, rops = _bicgstab_resident(A, r, rr, x, tol, maxiter, precondition, check_every, history,
                                           cuda_graph)
        reduce.count += rops.count
        reduce.seconds += rops.seconds
        replays = rops.blocks.replays > 0
    elif np.sqrt(rr) > tol:
        rhat = r.copy()
        p = xp.zeros_like(r)
        v = xp.zeros_like(r)
        rho = rr  # (rhat, r) with rhat = r
        rho_prev = alpha = omega = 1.0
        info = maxiter
        for it in range(1, maxiter + 1):
            if abs(rho) < tiny:
                info = -10
                break
            beta = (rho / rho_prev) * (alpha / omega)
            ops.update_p(p, r, v, beta, omega)
            phat = precondition(p)
            v = A.matvec(phat)
            (rv,) = reduce((rhat, v))
            if abs(rv) < tiny:
                info = -10
                break
            alpha = rho / rv
            s = r - alpha * v
            shat = precondition(s)
            t = A.matvec(shat)
            ts, tt, ss, rs, rt = reduce((t, s), (t, t), (s, s), (rhat, s), (rhat, t))
            ss = _real(ss)
            if np.sqrt(ss) <= tol:  # converged at the half step: x += alpha phat, r = s
                ops.axpy(alpha, phat, x)
                r = s
                history.append(float(np.sqrt(ss)))
                info = 0
                break
            tt = _real(tt)
            omega = ts / tt if tt > tiny else 0.0
            ops.update_xr(x, r, s, t, phat, shat, alpha, omega)
            rho_prev, rho = rho, rs - omega * rt
            rr = ss - 2.0 * _real(np.conj(omega) * ts) + abs(omega) ** 2 * tt
            if rr <= tol * tol * 4.0 or rr < 64 * eps * ss:  # near the answer or cancelled: measure
                (rr,) = reduce((r, r))
                rr = _real(rr)
            res = float(np.sqrt(max(rr, 0.0)))
            history.append(res)
            if callback is not None:
                callback(x)
            if not np.isfinite(res):
                info = -10
                break
            if res <= tol:
                info = 0
                break
            if abs(omega) < tiny:
                info = -11
                break
    if residuals is not None:
        residuals.extend(history)
    if stats is not None:
        stats.update(iterations=len(history) - 1, allreduces=reduce.count, allreduce_time=reduce.seconds,
                     resident=bool(resident), cuda_graph=replays, transport=A.transport)
    return x, info


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, residuals=None, stats=None,
       check_every=None, cuda_graph=None):
    """Distributed preconditioned conjugate gradients (``A`` and ``M`` Hermitian positive
    definite), SciPy's signature and info codes; collective. Parameters and returns as
    in :func:`bicgstab` (``check_every`` too: the device-resident iteration on GPU ranks
    with NCCL or alone); ``info`` is 0 (converged), the iteration count (not converged)
    or ``-10`` (``(p, A p)`` not positive: ``A`` or ``M`` is not positive definite).

    Examples
    --------
    Under ``mpiexec -n 2``::

        import matrices
        from precond import distributed as dist
        A = dist.DistributedCSR.from_global(matrices.poisson2d(64))
        x, info = dist.cg(A, A @ A.ones(), rtol=1e-10, M=dist.block_jacobi(A, "jacobi"))
    """
    xp, dtype, x, maxiter, precondition = _prepare(A, b, x0, maxiter, M)
    resident, check_every = _resident_choice(A, dtype, callback, check_every)
    cuda_graph = _graph_choice(A, resident, cuda_graph)
    replays = False
    ops = _Ops(xp)
    reduce = _Reducer(A.comm, xp, dtype)
    b = b.astype(dtype, copy=False)
    r = b - A.matvec(x) if x0 is not None else b.copy()
    z = precondition(r)
    bb, rr, rz = reduce((b, b), (r, r), (r, z))
    bb, rr = _real(bb), _real(rr)
    bnorm = np.sqrt(bb)
    tol = max(rtol * bnorm, atol)
    history = [0.0 if bnorm == 0.0 else float(np.sqrt(rr))]
    info = 0
    if bnorm == 0.0:
        x = xp.zeros(A.n_local, dtype)
    elif np.sqrt(rr) > tol and resident:
        x, info, rops = _cg_resident(A, r, z, rz, x, tol, maxiter, precondition, check_every, history, cuda_graph)
        replays = rops.blocks.replays > 0
        reduce.count += rops.count
        reduce.seconds += rops.seconds
    elif np.sqrt(rr) > tol:
        p = z.copy()
        info = maxiter
        for _ in range(maxiter):
            q = A.matvec(p)
            (pq,) = reduce((p, q))
            if not _real(pq) > 0:
                info = -10
                break
            alpha = rz / pq
            ops.axpy(alpha, p, x)
            ops.axpy(-alpha, q, r)
            z = precondition(r)
            rz_new, rr = reduce((r, z), (r, r))
            res = float(np.sqrt(max(_real(rr), 0.0)))
            history.append(res)
            if callback is not None:
                callback(x)
            if res <= tol:
                info = 0
                break
            if not np.isfinite(res):
                info = -10
                break
            ops.xpay(z, rz_new / rz, p)
            rz = rz_new
    if residuals is not None:
        residuals.extend(history)
    if stats is not None:
        stats.update(iterations=len(history) - 1, allreduces=reduce.count, allreduce_time=reduce.seconds,
                     resident=bool(resident), cuda_graph=replays, transport=A.transport)
    return x, info
