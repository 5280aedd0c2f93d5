"""``precond distributed``: one distributed solve per preconditioner, under ``mpiexec``.

    mpiexec -n 4 precond distributed --matrix aniso2 --n 10000 --precond algebraic_tridiagonal --out DIR

Every rank builds its own rows (the 2D stencil generators), reads its share of a ``.mtx``
file, or receives them from rank 0 (other generators); the right-hand side is the
convergence study's ``b = A x_t`` with ``x_t[i] = sin(16 pi i / N)``. Each preconditioner
is block Jacobi with the named local solver on every rank's diagonal block. Rank 0 prints
the convergence table and writes ``DIR/distributed.json`` (iterations, relative residual,
forward error, converged, info, seconds by phase, residual history) and the gathered
solution ``DIR/solution_<preconditioner>.npy``. An error on any rank stops every rank
with its message (never a hang).
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

import numpy as np

from kernels.mpi import abort_on_error, mpi, world

__all__ = ["build_parser", "main", "run"]


def build_parser(prog="precond distributed"):
    p = argparse.ArgumentParser(prog=prog, description="One distributed solve per preconditioner (run under "
                                "mpiexec, one rank per GPU): block Jacobi + BiCGStab or CG.")
    p.add_argument("--matrix", default="aniso2",
                   help="generator name (aniso1, aniso2 and poisson2d are built row block by row block), "
                        "SuiteSparse name or .mtx path")
    p.add_argument("--n", type=int, default=None, help="grid size per side of a generated matrix")
    p.add_argument("--precond", nargs="+", default=["algebraic_tridiagonal"],
                   help="local solvers of block Jacobi: none, jacobi, tridiagonal, algebraic_tridiagonal, "
                        "algebraic_block_tridiagonal, amg (aliases triscal, algtriscal, algtriblock)")
    p.add_argument("--method", choices=["bicgstab", "cg"], default="bicgstab")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--maxiter", type=int, default=5000)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto",
                   help="auto: each rank's GPU (local rank modulo the node's GPUs) where every rank has one")
    p.add_argument("--cuda-aware", choices=["auto", "yes", "no"], default="auto",
                   help="pass device buffers to MPI (auto: ask the MPI library)")
    p.add_argument("--transport", choices=["auto", "nccl", "mpi"], default="auto",
                   help="how GPU ranks move the iteration's data: NCCL through CuPy (device-resident iteration) "
                        "or MPI (auto: NCCL where every rank has it)")
    p.add_argument("--check-every", type=int, default=None,
                   help="check convergence every K iterations (device-resident BiCGStab; default 8 with NCCL)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="time the first set-up and solve too (they include compiling kernels)")
    p.add_argument("--out", default=None, help="folder for distributed.json and the solutions (.npy)")
    p.add_argument("--no-solution", action="store_true", help="do not gather and save the solution")
    return p


def _true_solution(lo, hi, n, dtype, xp):
    i = xp.arange(lo, hi, dtype=np.float64)
    return xp.sin(16 * math.pi * i / n).astype(dtype)


def _sync(A):
    if A.device == "gpu":
        import cupy

        cupy.cuda.Device().synchronize()


class _Phases:
    """Wall-clock seconds per phase, measured between barriers (so each is the slowest
    rank's), synchronized with the rank's GPU."""

    def __init__(self, comm):
        self.comm = comm
        self.times = {}

    def run(self, name, fn, A=None):
        self.comm.Barrier()
        t0 = time.perf_counter()
        out = fn()
        if A is not None:
            _sync(A)
        self.comm.Barrier()
        self.times[name] = time.perf_counter() - t0
        return out


def run(args, comm=None):
    """Run the solves of parsed ``args``; returns the result dict on rank 0 (None elsewhere)."""
    from . import block_jacobi, distributed_matrix
    from .krylov import bicgstab, cg

    comm = world() if comm is None else comm
    dtype = np.dtype(args.dtype)
    aware = {"auto": None, "yes": True, "no": False}[args.cuda_aware]
    phases = _Phases(comm)
    transport = getattr(args, "transport", "auto")
    A = phases.run("matrix", lambda: distributed_matrix(args.matrix, args.n, comm, dtype=dtype, device=args.device,
                                                        cuda_aware_mpi=aware, transport=transport))
    extra = {}
    if getattr(args, "check_every", None) is not None and args.method == "bicgstab":
        extra["check_every"] = args.check_every
    xp = A.xp
    N = A.shape[0]
    xt = _true_solution(A.lo, A.hi, N, dtype, xp)
    b = phases.run("rhs", lambda: A.matvec(xt), A)
    solver = {"bicgstab": bicgstab, "cg": cg}[args.method]
    norm = lambda v: math.sqrt(comm.allreduce(float(xp.vdot(v, v).real)))  # noqa: E731
    bnorm, xtnorm = norm(b), norm(xt)
    results = []
    for name in args.precond:
        if not args.no_warm_up:  # compiles the kernels of the set-up and the iteration
            M = block_jacobi(A, name)
            solver(A, b, M=M, rtol=args.rtol, maxiter=min(args.maxiter, 16), **extra)
            del M
        M = phases.run(f"setup {name}", lambda: block_jacobi(A, name), A)
        history, stats = [], {}
        waited = A.exchange.seconds
        x, info = phases.run(f"solve {name}", lambda: solver(A, b, M=M, rtol=args.rtol, maxiter=args.maxiter,
                                                            residuals=history, stats=stats, **extra), A)
        rel = norm(b - A.matvec(x)) / bnorm
        fre = norm(x - xt) / xtnorm
        setup, solve = phases.times[f"setup {name}"], phases.times[f"solve {name}"]
        its = stats["iterations"]
        allreduce = comm.allreduce(stats["allreduce_time"], op=mpi().MAX)
        exchange = comm.allreduce(A.exchange.seconds - waited, op=mpi().MAX)
        local_setup = comm.allreduce(M.setup_time, op=mpi().MAX)
        row = {
            "preconditioner": name,
            "local_solver": repr(M.local) if comm.rank == 0 else None,
            "method": args.method,
            "iterations": its,
            "info": int(info),
            "converged": info == 0,
            "relative_residual": rel,
            "forward_error": fre,
            "times": {"setup": setup, "local_setup_max": local_setup, "solve": solve,
                      "per_iteration": solve / max(its, 1), "allreduce_max": allreduce, "exchange_max": exchange,
                      "time_to_solution": setup + solve},
            "allreduces_per_iteration": stats["allreduces"] / max(its, 1),
            "resident": stats.get("resident", False),
            "residual_history": [h / bnorm for h in history],
        }
        if args.out and not args.no_solution:
            full = A.gather(x)
            if comm.rank == 0:
                out = Path(args.out)
                out.mkdir(parents=True, exist_ok=True)
                path = out / f"solution_{name}.npy"
                np.save(path, full)
                row["solution"] = str(path)
        results.append(row)
        del M
    ghosts = comm.gather(len(A.ghost_cols), root=0)
    neighbours = comm.gather(len(A.exchange.neighbours), root=0)
    local_rows = comm.gather(A.n_local, root=0)
    device_buffers = bool(A.exchange.device_buffers)
    A.free()  # its NCCL communicators / persistent requests
    if comm.rank != 0:
        return None
    return {
        "matrix": args.matrix,
        "grid_n": args.n,
        "rows": N,
        "nnz": A.nnz,
        "dtype": str(dtype),
        "ranks": comm.size,
        "device": A.device,
        "gpu": _gpu_name() if A.device == "gpu" else None,
        "mpi": mpi().Get_library_version().splitlines()[0].strip(),
        "cuda_aware_mpi": device_buffers,
        "transport": A.transport,
        "host": platform.node(),
        "rows_per_rank": local_rows,
        "ghosts_per_rank": ghosts,
        "neighbours_per_rank": neighbours,
        "times": {"matrix": phases.times["matrix"], "rhs": phases.times["rhs"]},
        "rtol": args.rtol,
        "results": results,
    }


def _gpu_name():
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.runtime.getDevice())
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def format_table(result):
    """The convergence table (Markdown) of :func:`run`'s result."""
    head = (f"{result['matrix']} ({result['rows']:,} rows, {result['nnz']:,} nonzeros, {result['dtype']}) on "
            f"{result['ranks']} rank(s), {result['device']}{' ' + result['gpu'] if result['gpu'] else ''}; "
            f"matrix {result['times']['matrix']:.3g} s")
    lines = [head, "",
             "| block Jacobi + | method | iterations | relative residual | forward error | converged | set-up s | "
             "solve s | ms / iteration |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["results"]:
        t = r["times"]
        lines.append(f"| {r['preconditioner']} | {r['method']} | {r['iterations']} | {r['relative_residual']:.2e} | "
                     f"{r['forward_error']:.2e} | {'yes' if r['converged'] else 'no (info %d)' % r['info']} | "
                     f"{t['setup']:.3g} | {t['solve']:.3g} | {1e3 * t['per_iteration']:.3g} |")
    return "\n".join(lines)


@abort_on_error
def main(argv=None, prog="precond distributed") -> int:
    args = build_parser(prog).parse_args(argv)
    result = run(args)
    if result is not None:
        print(format_table(result), flush=True)
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / "distributed.json").write_text(json.dumps(result, indent=1))
    return 0
