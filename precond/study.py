"""Convergence study (the main job): BiCGStab with several preconditioners on several
matrices, with the paper's right-hand side ``b = A x_t``, ``x_t[i] = sin(16 pi i / N)``.

Prints a table (iterations, final relative residual, forward relative error, setup and
solve time), writes JSON and a plot of relative residual and forward relative error
against iteration (one panel per matrix, like Figure 4 of Klein and Strzodka (2022)).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 6.
"""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import matrices

from kernels.backend import resolve_device, to_device

from .krylov import solve

__all__ = ["PRECONDITIONERS", "true_solution", "run_case", "run_study", "main"]


def _none(A):
    return None


def _peer_pyamg(A):
    import pyamg

    from kernels.backend import is_device_array

    if not is_device_array(A):
        return pyamg.smoothed_aggregation_solver(A.tocsr()).aspreconditioner(cycle="V")
    # pyamg is CPU-only: on a GPU matrix each apply copies the vector to the host and back
    # (a host synchronization per apply; its timings are the CPU peer's, not a GPU method's)
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    host = pyamg.smoothed_aggregation_solver(A.get().tocsr()).aspreconditioner(cycle="V")
    return cspla.LinearOperator(A.shape, matvec=lambda x: cupy.asarray(host @ cupy.asnumpy(x)), dtype=A.dtype)


def _registry():
    from . import ilu
    from . import preconditioners as pc
    from .amg import amg

    return {
        "none": _none,
        "jacobi": pc.jacobi,
        "tridiagonal": pc.tridiagonal,
        "algebraic_tridiagonal": pc.algebraic_tridiagonal,
        "algebraic_block_tridiagonal": pc.algebraic_block_tridiagonal,
        "amg": amg,
        "pyamg": _peer_pyamg,
        "ilu0": ilu.ilu0,
        "ilut": ilu.ilut,
    }


DEFAULT_ROWS = 65536  # size of generated matrices when no grid size is given
LOAD_FAILED = "(loading)"  # the preconditioner column of a matrix that could not be loaded
#: Short names accepted on the command line.
PRECONDITIONERS = ("none", "jacobi", "tridiagonal", "algebraic_tridiagonal", "algebraic_block_tridiagonal", "amg", "pyamg",
                   "ilu0", "ilut")
ALIASES = {"triscal": "tridiagonal", "algtriscal": "algebraic_tridiagonal", "algtriblock": "algebraic_block_tridiagonal",
           "ilu": "ilu0", "spilu": "ilut"}
#: Krylov methods of :func:`precond.solve` the study can run.
METHODS = ("bicgstab", "scipy-bicgstab", "cg", "gmres")


def true_solution(n, dtype=np.float64, xp=np):
    """The paper's true solution ``x_t[i] = sin(16 pi i / N)``."""
    return xp.sin(16 * math.pi * xp.arange(n, dtype=np.float64) / n).astype(dtype)


def run_case(A, name, precond_name, *, rtol=1e-8, maxiter=5000, method="bicgstab", trace=True, warm_up=True):
    """Set up one preconditioner on ``A`` and solve; returns a result dict with histories
    (``trace=False``: no second solve recording the forward error, empty histories).

    ``warm_up``: first an untimed set-up and a short solve, so that the times are the
    steady state: the first use of a kernel compiles it (CUDA through CuPy, which then
    caches it on disk; Numba loads its cache), seconds on the GPU for a set-up of
    milliseconds. Skipped for pyamg: its set-up compiles
    nothing and takes seconds at millions of rows."""
    from kernels.backend import get_array_module

    xp = get_array_module(A)
    factory = _registry().get(precond_name)
    if factory is None:
        raise ValueError(f"unknown preconditioner {precond_name!r}; choose from {PRECONDITIONERS}")
    N = A.shape[0]
    xt = true_solution(N, A.dtype, xp)
    b = A @ xt
    sync = (lambda: xp.cuda.Device().synchronize()) if xp is not np else (lambda: None)
    if warm_up and precond_name != "pyamg":
        solve(A, b, factory(A), method=method, rtol=rtol, maxiter=min(maxiter, 24))
    sync()
    t0 = time.perf_counter()
    M = factory(A)
    sync()
    setup = time.perf_counter() - t0
    errors = []
    xt_norm = float(xp.linalg.norm(xt))
    timed = solve(A, b, M, method=method, rtol=rtol, maxiter=maxiter)
    traced = solve(A, b, M, method=method, rtol=rtol, maxiter=maxiter,
                   callback=lambda xk: errors.append(float(xp.linalg.norm(xk - xt)) / xt_norm)) if trace else None
    x = timed.x
    final_res = float(xp.linalg.norm(b - A @ x)) / float(xp.linalg.norm(b))
    fre = float(xp.linalg.norm(x - xt)) / xt_norm
    row = {
        "matrix": name,
        "n": int(N),
        "nnz": int(A.nnz),
        "preconditioner": precond_name,
        "iterations": timed.iterations,
        "info": timed.info,
        "converged": timed.converged,
        "relative_residual": final_res,
        "forward_error": fre,
        "setup_time": setup,
        "solve_time": timed.time,
        "time_to_solution": setup + timed.time,
        "residual_history": traced.residuals.tolist() if trace else [],
        "error_history": [1.0] + errors if trace else [],
    }
    for attr in ("weight_coverage", "n_paths"):
        if hasattr(M, attr):
            row[attr] = float(getattr(M, attr))
    if hasattr(M, "negative_pivots"):  # the definiteness check of the factorized system
        row["negative_pivots"] = M.negative_pivots
        row["indefinite"] = M.indefinite
    return row


def resolve_preconditioners(names) -> list[str]:
    """The study's names of ``names`` (aliases resolved); ``ValueError`` for an unknown one.

    Examples
    --------
    >>> resolve_preconditioners(["AlgTriScal", "ilu"])
    ['algebraic_tridiagonal', 'ilu0']
    """
    out = [ALIASES.get(p.lower(), p.lower()) for p in names]
    for p, given in zip(out, names):
        if p not in PRECONDITIONERS:
            raise ValueError(f"unknown preconditioner {given!r}; choose from {', '.join(PRECONDITIONERS)} "
                             f"(aliases {', '.join(ALIASES)})")
    return out


def run_study(matrix_specs, precond_names, *, n=None, dtype=np.float64, device="auto", rtol=1e-8,
              maxiter=5000, method="bicgstab", progress=True, on_row=None):
    """Run every (matrix, preconditioner) pair; returns the list of result rows (a failed
    case, or a matrix that cannot be loaded, gives a row with an ``error``).

    ``n`` is the grid size of generated matrices; None picks, per generator, the size with
    about ``DEFAULT_ROWS`` rows (:func:`matrices.grid_size`). ``on_row(rows)``, if given,
    is called with the rows so far after each case (the command line writes its JSON
    there, so an interrupted study keeps what it measured)."""
    from kernels.console import progress as progress_bar

    dev = resolve_device(device)
    names = resolve_preconditioners(precond_names)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    rows = []

    def add(row):
        rows.append(row)
        if on_row is not None:
            on_row(rows)

    with progress_bar(len(matrix_specs) * len(names), "convergence", quiet=not progress, unit="case") as bar:
        for spec in matrix_specs:
            grid = n if n is not None or spec.lower() not in matrices.GENERATORS else matrices.grid_size(spec, DEFAULT_ROWS)
            label = Path(spec).stem if spec.endswith((".mtx", ".gz")) else spec
            try:
                A = matrices.get(spec, n=grid, dtype=dtype)
            except (OSError, ValueError, MemoryError) as exc:  # a missing or unreadable matrix: report it, run the others
                add({"matrix": label, "n": 0, "preconditioner": LOAD_FAILED, "error": str(exc)})
                bar.update(len(names))
                continue
            if dev == "gpu":
                A = to_device(A)
            for p in names:
                bar.set_postfix_str(f"{label} / {p}")
                try:
                    row = run_case(A, label, p, rtol=rtol, maxiter=maxiter, method=method)
                except (ValueError, TypeError, RuntimeError, ArithmeticError, MemoryError) as exc:  # report, go on
                    row = {"matrix": label, "n": int(A.shape[0]), "preconditioner": p, "error": str(exc)}
                add(row)
                bar.update()
    return rows


def format_table(rows) -> str:
    head = (f"{'matrix':<16} {'preconditioner':<28} {'iters':>6} {'rel.res':>9} {'FRE':>9} {'setup s':>8} "
            f"{'solve s':>8} {'total s':>8} {'cover':>6} {'neg.piv':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['matrix']:<16} {r['preconditioner']:<28} failed: {r['error']}")
            continue
        it = f"{r['iterations']}" + ("" if r["converged"] else "*")
        cover = f"{r['weight_coverage']:.2f}" if "weight_coverage" in r else ""
        negative = f"{r['negative_pivots']}" + ("!" if r["indefinite"] else "") if "negative_pivots" in r else ""
        lines.append(
            f"{r['matrix']:<16} {r['preconditioner']:<28} {it:>6} {r['relative_residual']:>9.1e} "
            f"{r['forward_error']:>9.1e} {r['setup_time']:>8.3f} {r['solve_time']:>8.3f} {r['time_to_solution']:>8.3f} "
            f"{cover:>6} {negative:>8}"
        )
    lines.append("(* = not converged: maxiter reached or breakdown, info != 0)")
    if any(r.get("indefinite") for r in rows):
        lines.append("(! = the factorized system is indefinite where its diagonal is not: its negative pivots "
                     "are not the diagonal's negative entries; BiCGStab may stall)")
    return "\n".join(lines)


#: The most curves one panel of the convergence plot holds; more preconditioners are split
#: evenly over further panels, so that every curve stays distinguishable.
PLOT_LINES_PER_PANEL = 8
#: The plot's names of the preconditioners (the paper's).
PLOT_LABELS = {"none": "none", "jacobi": "Jacobi", "tridiagonal": "TriScal", "algebraic_tridiagonal": "AlgTriScal",
               "algebraic_block_tridiagonal": "AlgTriBlock", "amg": "AMG", "pyamg": "pyamg (SA)", "ilu0": "ILU(0)"}


def plot(rows, path) -> None:
    """Relative residual and forward relative error against iteration, like Figure 4 of
    Klein and Strzodka (ICPP 2022): per matrix a residual panel and an error panel, at
    most :data:`PLOT_LINES_PER_PANEL` preconditioners in each (more go to further
    panels), one colour per preconditioner throughout, an ``x`` at the end of every run
    that did not converge, and one legend to the right of all panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    done = [r for r in rows if "error" not in r]
    mats = list(dict.fromkeys(r["matrix"] for r in done))
    if not mats:
        return
    preconds = list(dict.fromkeys(r["preconditioner"] for r in done))
    colors = {p: f"C{i % 10}" for i, p in enumerate(preconds)}
    styles = {p: "-" if i < 10 else "--" for i, p in enumerate(preconds)}
    n_groups = math.ceil(len(preconds) / PLOT_LINES_PER_PANEL)
    size = math.ceil(len(preconds) / n_groups)
    groups = [preconds[i:i + size] for i in range(0, len(preconds), size)]
    # one cell per (matrix, group of preconditioners): a residual panel beside an error panel
    cells = [(mat, group) for mat in mats for group in groups
             if any(r["matrix"] == mat and r["preconditioner"] in group for r in done)]
    per_row = 2 if len(cells) > 1 else 1
    nrows = math.ceil(len(cells) / per_row)
    fig, axes = plt.subplots(nrows, 2 * per_row, figsize=(4.6 * 2 * per_row, 3.3 * nrows), squeeze=False)
    flat = list(axes.flat)
    for k, (mat, group) in enumerate(cells):
        residual_ax, error_ax = flat[2 * k], flat[2 * k + 1]
        rows_n = next(r["n"] for r in done if r["matrix"] == mat)
        for r in (r for r in done if r["matrix"] == mat and r["preconditioner"] in group):
            for ax, history in ((residual_ax, r["residual_history"]), (error_ax, r["error_history"])):
                if not history:
                    continue
                ax.semilogy(history, color=colors[r["preconditioner"]], linestyle=styles[r["preconditioner"]],
                            linewidth=1.2)
                if not r["converged"]:  # mark where a run that failed stopped
                    ax.semilogy([len(history) - 1], [history[-1]], marker="x", color=colors[r["preconditioner"]],
                                markersize=9, markeredgewidth=2, linestyle="none", zorder=5)  # over every curve
        part = "" if len(groups) == 1 else f", part {groups.index(group) + 1}"
        residual_ax.set_title(f"{mat} (N={rows_n:,}){part}: relative residual", fontsize=9)
        error_ax.set_title(f"{mat}{part}: forward relative error", fontsize=9)
        for ax in (residual_ax, error_ax):
            ax.set_xlabel("iteration", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, which="major", alpha=0.3)
    for ax in flat[2 * len(cells):]:
        ax.axis("off")
    handles = [Line2D([], [], color=colors[p], linestyle=styles[p], linewidth=1.5) for p in preconds]
    labels = [PLOT_LABELS.get(p, p) for p in preconds]
    if any(not r["converged"] for r in done):
        handles.append(Line2D([], [], color="black", marker="x", markersize=8, markeredgewidth=2, linestyle="none"))
        labels.append("not converged (end of run)")
    fig.tight_layout()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=9,
               title="preconditioner")
    fig.savefig(path, dpi=110, bbox_inches="tight")  # the legend right of the panels is kept
    plt.close(fig)


DEMO = {"matrices": ["aniso1", "aniso2", "aniso3", "add20", "watt_1", "memplus"], "n": 128}


def demo_matrices():
    """The demo's matrices that need no download: the collection matrices only when a
    copy is on this machine (``../shared/data/matrices``, ``$GPUFOREST_MATRIX_DIRS``, the
    cache), so that ``--demo`` runs offline on built-in data."""
    from matrices import suitesparse

    keep = []
    for spec in DEMO["matrices"]:
        if spec in suitesparse.REGISTRY and suitesparse.find_local(spec) is None:
            print(f"demo: {spec} is not on this machine (no download in the demo); skipped")
            continue
        keep.append(spec)
    return keep


def build_parser(prog="precond convergence"):
    from kernels.console import ArgumentParser, non_negative, positive_int

    p = ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("--matrix", nargs="+", default=["aniso1", "aniso2", "aniso3"],
                   help="generator names (aniso1, poisson2d, ...), SuiteSparse names or .mtx paths")
    p.add_argument("--n", type=positive_int, default=None,
                   help=f"grid size per side of generated matrices (default: about {DEFAULT_ROWS:,} rows each, "
                        "256 in 2D and 40 in 3D)")
    p.add_argument("--precond", nargs="+",
                   default=["none", "jacobi", "triscal", "algtriscal", "algtriblock", "amg", "pyamg", "ilu0", "ilut"],
                   help=f"preconditioners: {', '.join(PRECONDITIONERS)} (aliases {', '.join(ALIASES)}); ilu0 is "
                        "ILU(0) (no fill-in, no pivoting), ilut SciPy's spilu (SuperLU's ILUTP, default drop "
                        "tolerance and fill)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--rtol", type=non_negative(float), default=1e-8)
    p.add_argument("--maxiter", type=non_negative(int), default=5000)
    p.add_argument("--method", choices=METHODS, default="bicgstab",
                   help="bicgstab (ours), scipy-bicgstab (SciPy/cupyx), cg, gmres")
    p.add_argument("--out", default="bench_results",
                   help="folder for convergence.json (rewritten after each case) and convergence.png")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--demo", action="store_true", help=f"CPU-friendly demo: {DEMO['matrices']} at n={DEMO['n']}")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _write_json(path: Path, rows) -> None:
    """Write ``rows`` whole or not at all (a temporary file renamed over the old one)."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(rows, indent=1))
    tmp.replace(path)


def main(argv=None, prog="precond convergence") -> int:
    """Run the study from the command line; returns the exit status: 0, 1 when a matrix
    could not be loaded or a case failed, 2 for a usage error (one line on stderr)."""
    from kernels.backend import gpu_available
    from kernels.console import run_command

    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        args.precond = resolve_preconditioners(args.precond)
    except ValueError as exc:
        parser.error(f"--precond: {exc}")
    if args.device == "gpu" and not gpu_available():
        parser.error("--device gpu: no usable CUDA GPU (CuPy missing, no device, or CUDA libraries unavailable)")
    return run_command(prog, _run, args)


def _run(args) -> int:
    if args.demo:
        args.matrix, args.n = demo_matrices(), DEMO["n"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "convergence.json"
    rows = run_study(args.matrix, args.precond, n=args.n, dtype=np.dtype(args.dtype), device=args.device,
                     rtol=args.rtol, maxiter=args.maxiter, method=args.method, progress=not args.quiet,
                     on_row=lambda rows: _write_json(results, rows))
    _write_json(results, rows)
    print(f"BiCGStab ({args.method}), rtol={args.rtol:g}, {args.dtype}, device={resolve_device(args.device)}, "
          f"b = A x_t with x_t[i] = sin(16 pi i / N)")
    print(format_table(rows))
    if not args.no_plot:
        try:
            plot(rows, out / "convergence.png")
            print(f"plot: {out / 'convergence.png'}")
        except ImportError:
            print("matplotlib not installed: no plot (pip install '.[plot]')", file=sys.stderr)
    print(f"results: {results}")
    failed = [r for r in rows if "error" in r]
    if failed:
        print(f"{len(failed)} case(s) failed (see the table)", file=sys.stderr)
    return 1 if failed else 0
