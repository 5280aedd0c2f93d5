"""Benchmark of algebraic multigrid with algebraic line smoothing (``precond.amg``).

Per matrix, BiCGStab (rtol 1e-8, ``b = A x_t``, ``x_t[i] = sin(16 pi i / N)``) with:

- Jacobi and AlgTriScal (GPU);
- pyamg's smoothed aggregation on the CPU, with its default smoother (symmetric block
  Gauss-Seidel) and with ours (``precond.change_smoothers``), same hierarchy;
- ``precond.amg`` on the GPU with Jacobi and with algebraic line smoothing (symmetric
  and forward sweeps; additive and multicolour Gauss-Seidel), on the pairwise hierarchy (built on the GPU; also unsmoothed
  aggregates with a W-cycle) and the smoothed aggregation hierarchy (built by pyamg on
  the host, moved to the GPU; only up to ``--sa-gpu-max`` rows);
- ``precond.amg`` on the CPU (the same cycle), for the CPU / GPU comparison.

Iterations and time to solution (set-up + solve, the GPU synchronized, after an untimed
warm-up set-up that compiles the kernels), the set-up and one cycle (CUDA-graph replay,
median of CUDA-event timings) in SpMVs of the finest matrix (our ``kernels.spmv``, with
cuSPARSE's beside it), operator complexity. The CPU rows run in worker processes beside the
GPU rows (``--workers``); a worker that has not finished by ``--cpu-deadline`` seconds is
stopped and its rows report what it had not done as unfinished (a measured lower bound).
Prints Markdown; ``--out`` also saves the rows as JSON.

    python examples/bench_amg.py            # ANISO1/2/3 at 2500 x 2500, the rest at about 90,000 rows
    python examples/bench_amg.py --quick    # small sizes
    python examples/bench_amg.py --cpu      # everything on the CPU (no GPU rows)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matrices  # noqa: E402
import precond  # noqa: E402
from kernels.backend import gpu_available, to_device  # noqa: E402
from precond.study import true_solution  # noqa: E402

RTOL = 1e-8
MAXITER = 2000
#: (label, precond.amg options) of the GPU rows and of the CPU twins.
AMG_VARIANTS = [
    ("amg pairwise, line", dict(coarsening="pairwise")),
    ("amg pairwise, line forward sweep", dict(coarsening="pairwise", smoother=("algebraic_tridiagonal",
                                                                              {"sweep": "forward"}))),
    ("amg pairwise, Jacobi", dict(coarsening="pairwise", smoother="jacobi")),
    ("amg pairwise, Jacobi forward sweep", dict(coarsening="pairwise", smoother=("jacobi", {"sweep": "forward"}))),
    # the same hierarchies, the cycle in float32 (float64 vectors in and out)
    ("amg pairwise, line, float32 cycle", dict(coarsening="pairwise", cycle_dtype="float32")),
    ("amg pairwise, Jacobi, float32 cycle", dict(coarsening="pairwise", smoother="jacobi", cycle_dtype="float32")),
    ("amg pairwise, line forward sweep, float32 cycle", dict(coarsening="pairwise", cycle_dtype="float32",
                                                              smoother=("algebraic_tridiagonal", {"sweep": "forward"}))),
    # unsmoothed aggregates of up to 8 (no Galerkin product with a smoothed prolongator:
    # the cheapest set-up), a W-cycle for the weaker coarse spaces
    ("amg pairwise plain W, line forward sweep", dict(coarsening="pairwise", smooth=None, cycle="W",
                                                      smoother=("algebraic_tridiagonal", {"sweep": "forward"}))),
    ("amg pairwise, line Gauss-Seidel", dict(coarsening="pairwise", smoother=("algebraic_tridiagonal",
                                                                             {"relaxation": "gauss_seidel"}))),
    ("amg SA, line", dict()),
    # one or two smoothing steps by the set-up's measured choice
    ("amg SA, line auto steps", dict(presmooth="auto")),
    # multicolour line Gauss-Seidel (multiplicative), and the set-up's measured choice of the
    # relaxation and the steps
    ("amg SA, line Gauss-Seidel", dict(smoother=("algebraic_tridiagonal", {"relaxation": "gauss_seidel"}))),
    ("amg SA, line auto", dict(presmooth="auto", smoother=("algebraic_tridiagonal", {"relaxation": "auto"}))),
    ("amg SA, Jacobi", dict(smoother="jacobi")),
]
CPU_TWINS = ["amg pairwise, line", "amg SA, line", "amg SA, line auto steps", "amg SA, line Gauss-Seidel",
             "amg SA, line auto"]


def matrix_list(large, small, real=True):
    """(spec, grid size or None, label) of the benchmark's matrices."""
    cube = max(4, round(small ** (2 / 3)))
    out = [(f"aniso{k}", large) for k in (1, 2, 3)]
    out += [("random_diffusion2d", small), ("rotated_anisotropic2d", small), ("convection_diffusion3d", cube),
            ("elasticity2d", max(4, small // 2))]
    if real:
        from matrices.suitesparse import shared_data_dir

        folder = shared_data_dir() / "matrices"
        out += [(str(p), None) for p in sorted(folder.glob("*.mtx"))] if folder.is_dir() else []
    return out


def load(spec, n, dtype=np.float64):
    A = matrices.get(spec, n=n, dtype=dtype).tocsr()
    A.sum_duplicates()
    return A


def label_of(spec, n):
    return Path(spec).stem if spec.endswith(".mtx") else f"{spec} ({n})"


def _solve(A, b, M, xp):
    """(iterations, seconds, converged)."""
    res = precond.solve(A, b, M, rtol=RTOL, maxiter=MAXITER)
    xn = xp.linalg.norm(b - A @ res.x) / xp.linalg.norm(b)
    return res.iterations, res.time, bool(res.converged and float(xn) <= 10 * RTOL)


# ------------------------------------------------------------------ CPU rows
def cpu_rows(spec, n, twins=True, progress=None):
    """The CPU rows of one matrix (pyamg default, pyamg with our smoother, our CPU twins)."""
    import pyamg

    A = load(spec, n)
    b = A @ true_solution(A.shape[0])
    rows = []
    with warnings.catch_warnings():  # compile the Numba kernels before anything is timed
        warnings.simplefilter("ignore")
        small = matrices.poisson2d(12)
        if twins:  # (pyamg's own row needs none of them)
            precond.change_smoothers(pyamg.smoothed_aggregation_solver(small, max_coarse=10))
            for label, options in AMG_VARIANTS:
                if label in CPU_TWINS:
                    precond.amg(small, **{**options, "max_coarse": 20}).matvec(np.ones(small.shape[0]))

    def emit(row):
        if row is not (rows[-1] if rows else None):
            rows.append(row)
        if progress:
            progress(rows)

    emit(dict(method="pyamg SA (CPU), Gauss-Seidel", where="cpu", started=time.time(), done=False))
    t0 = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A)
    setup = time.perf_counter() - t0
    rows[-1].update(setup=setup, started=time.time())
    emit(rows[-1])
    it, solve, ok = _solve(A, b, ml.aspreconditioner(), np)
    rows[-1].update(iterations=it, solve=solve, converged=ok, done=True, levels=len(ml.levels),
                    complexity=ml.operator_complexity())
    emit(rows[-1])
    if not twins:
        return rows
    emit(dict(method="pyamg SA (CPU), line", where="cpu", started=time.time(), done=False))
    t0 = time.perf_counter()
    precond.change_smoothers(ml)
    extra = time.perf_counter() - t0
    rows[-1].update(setup=setup + extra, started=time.time())
    emit(rows[-1])
    it, solve, ok = _solve(A, b, ml.aspreconditioner(), np)
    rows[-1].update(iterations=it, solve=solve, converged=ok, done=True, levels=len(ml.levels),
                    complexity=ml.operator_complexity())
    emit(rows[-1])
    for label, options in AMG_VARIANTS:
        if label not in CPU_TWINS:
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M = precond.amg(A, **options)
        setup = time.perf_counter() - t0
        it, solve, ok = _solve(A, b, M, np)
        emit(dict(method=label.replace("amg", "amg (CPU)"), where="cpu", setup=setup, solve=solve, iterations=it,
                  converged=ok, done=True, levels=len(M.levels), complexity=M.operator_complexity,
                  choice=_choice(M)))
    return rows


def _choice(M):
    """The relaxation (R: Richardson, G: Gauss-Seidel) and steps an "auto" set-up chose, or None."""
    if not M.cycle_measurements:
        return None
    return f"{'G' if M.relaxation == 'gauss_seidel' else 'R'}{M.presmooth}"


def _worker(argv):
    """``--cpu-worker SPEC N OUT TWINS``: the CPU rows of one matrix into OUT (JSON),
    rewritten after every step, so that a stopped worker leaves what it had done."""
    spec, n, out, twins = argv[0], (None if argv[1] == "None" else int(argv[1])), Path(argv[2]), argv[3] == "1"
    out.write_text("[]")
    cpu_rows(spec, n, twins, progress=lambda rows: out.write_text(json.dumps(rows)))


# ------------------------------------------------------------------ GPU rows
def gpu_rows(spec, n, sa_max, log, baselines=("jacobi", "algebraic_tridiagonal")):
    import cupy

    from kernels.spmv import spmv
    from kernels.timing import gpu_time
    from precond.study import run_case

    A_host = load(spec, n)
    A = to_device(A_host)
    N = A.shape[0]
    x = cupy.asarray(true_solution(N))
    b = A @ x
    ours = gpu_time(lambda: spmv(A, x), repeat=20)
    cusparse = gpu_time(lambda: A @ x, repeat=20)
    base = dict(spmv=ours, spmv_cusparse=cusparse)
    rows = []
    for name, label in (("jacobi", "Jacobi"), ("algebraic_tridiagonal", "AlgTriScal")):
        if name not in baselines:
            continue
        try:
            r = run_case(A, label_of(spec, n), name, rtol=RTOL, maxiter=MAXITER, trace=False)
            its = r["iterations"]
            rows.append(dict(base, method=label, where="gpu", setup=r["setup_time"], solve=r["solve_time"],
                             iterations=its, converged=r["converged"], done=True))
        except Exception as exc:  # noqa: BLE001 - report and go on
            rows.append(dict(base, method=label, where="gpu", error=f"{type(exc).__name__}: {exc}"))
        log(rows[-1])
    for label, options in AMG_VARIANTS:
        if "SA" in label and N > sa_max:
            continue
        try:
            rows.append(dict(base, **amg_gpu_row(A, b, options), method=label, where="gpu"))
        except Exception as exc:  # noqa: BLE001
            rows.append(dict(base, method=label, where="gpu", error=f"{type(exc).__name__}: {exc}"))
        log(rows[-1])
    return rows


def amg_gpu_row(A, b, options):
    import cupy

    from kernels.timing import gpu_time

    sync = cupy.cuda.Device().synchronize
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm = precond.amg(A, **options)  # compiles the kernels (CuPy caches them on disk)
        precond.solve(A, b, warm, rtol=RTOL, maxiter=16)
        del warm
        sync()
        t0 = time.perf_counter()
        M = precond.amg(A, **options)
        sync()
        setup = time.perf_counter() - t0
    it, solve, ok = _solve(A, b, M, cupy)
    for _ in range(2):  # the first apply is eager, the second captures the cycle
        M.matvec(b)
    cycle = gpu_time(M._graph.launch, repeat=20) if M._graph is not None else float("nan")
    apply = gpu_time(lambda: M.matvec(b), repeat=20)
    return dict(setup=setup, solve=solve, iterations=it, converged=ok, done=True, cycle=cycle, apply=apply,
                phases=M.setup_time, levels=len(M.levels), complexity=M.operator_complexity, relaxation=M.relaxation,
                relaxation_measurements=M.relaxation_measurements, choice=_choice(M),
                cycle_measurements=M.cycle_measurements)


# ------------------------------------------------------------------ report
def progress_line(r):
    """One GPU row as soon as it is measured: iterations, set-up, solve and total seconds,
    set-up and cycle in SpMVs of the finest matrix, the set-up's phases."""
    if "error" in r:
        return f"{r.get('method')} failed: {r['error']}"
    spmv = r.get("spmv")
    setup, solve = r.get("setup"), r.get("solve")
    parts = [f"{r.get('method')}: {r.get('iterations')}{'' if r.get('converged', True) else '*'} its",
             f"setup {fmt(setup)} s", f"solve {fmt(solve)} s",
             f"total {fmt(setup + solve) if setup is not None and solve is not None else ''} s"]
    if spmv:
        parts.append(f"spmv {spmv * 1e3:.3f} ms (cuSPARSE {r.get('spmv_cusparse', float('nan')) * 1e3:.3f})")
        if setup is not None:
            parts.append(f"setup/spmv {setup / spmv:.0f}")
        if r.get("cycle"):
            parts.append(f"cycle/spmv {r['cycle'] / spmv:.1f}")
    if r.get("phases"):
        parts.append("phases " + ", ".join(f"{k} {v:.3f}" for k, v in r["phases"].items()))
    return "; ".join(parts)


def fmt(v, digits=3):
    return "" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{v:.{digits}f}"


def markdown(results, device, host):
    lines = [f"GPU: {device}; CPU: {host}. BiCGStab rtol {RTOL:g}, b = A x_t, float64. Set-up and cycle "
             "in SpMVs of the finest matrix (kernels.spmv on the GPU).", "",
             "| matrix | rows | method | iterations | set-up s | solve s | total s | set-up / SpMV | cycle / SpMV "
             "| op. complexity | levels |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for res in results:
        for r in res["rows"]:
            if "error" in r:
                lines.append(f"| {res['label']} | {res['rows_n']} | {r['method']} | failed: {r['error'][:80]} "
                             "| | | | | | | |")
                continue
            done = r.get("done", False)
            it = f"{r.get('iterations', '')}" + ("" if r.get("converged", True) else "*") if done else "unfinished"
            if done and r.get("choice"):
                it += f" {r['choice']}"
            if not done and "bound" in r:
                step = r["unfinished"]
                r = dict(r, **{step: None})
                lines.append(f"| {res['label']} | {res['rows_n']} | {r['method']} | unfinished | "
                             f"{fmt(r.get('setup')) or '> ' + fmt(r['bound'], 0)} | "
                             f"{'> ' + fmt(r['bound'], 0) if step == 'solve' else ''} | "
                             f"> {fmt((r.get('setup') or 0) + r['bound'], 0)} | | | | |")
                continue
            setup = r.get("setup")
            total = setup + r["solve"] if done and setup is not None else None
            spmv = r.get("spmv")
            per = (lambda v: fmt(v / spmv, 1) if v is not None and spmv else "")
            lines.append(f"| {res['label']} | {res['rows_n']} | {r['method']} | {it} | {fmt(setup)} | "
                         f"{fmt(r.get('solve'))} | {fmt(total)} | {per(setup) if r['where'] == 'gpu' else ''} | "
                         f"{per(r.get('cycle')) if r['where'] == 'gpu' else ''} | {fmt(r.get('complexity'), 2)} | "
                         f"{r.get('levels', '')} |")
    lines.append("")
    lines.append("(* = not converged to rtol within the iteration limit or breakdown; unfinished = stopped at the "
                 "CPU deadline: its set-up (or solve) took longer than the time shown)")
    return "\n".join(lines)


def targets(results):
    """The issue's targets, each with the numbers it rests on."""
    out = ["", "| matrix | line SA iters / pyamg SA iters | GPU pairwise line total vs AlgTriScal | fastest GPU amg vs "
           "AlgTriScal | vs pyamg (CPU) | cycle / SpMV (pairwise variants) | CPU / GPU iterations (pairwise line, "
           "SA line) |", "|---|---|---|---|---|---|---|"]
    for res in results:
        rows = {r["method"]: r for r in res["rows"] if "error" not in r}

        def total(name):
            r = rows.get(name)
            return r["setup"] + r["solve"] if r and r.get("done") else None

        py = rows.get("pyamg SA (CPU), Gauss-Seidel")
        finished = {k: r for k, r in rows.items() if r.get("done")}
        line = finished.get("amg SA, line") or finished.get("amg (CPU) SA, line") or finished.get("pyamg SA (CPU), line")
        ratio = f"{line['iterations']} / {py['iterations']} ({line['method']})" if line and py and py.get("done") else ""
        pw = total("amg pairwise, line")
        alg = total("AlgTriScal")
        pyt = total("pyamg SA (CPU), Gauss-Seidel")
        bound = (py.get("setup") or 0) + py.get("bound", 0) if py and not py.get("done") else None
        py_note = f"{pyt / pw:.0f}x" if pw and pyt else (f"> {bound / pw:.0f}x (pyamg unfinished)" if pw and bound
                                                         else "")
        cycles = []  # one cycle in SpMVs, for every pairwise variant the run measured
        for name, r in rows.items():
            if name.startswith("amg pairwise") and r.get("cycle") and r.get("spmv"):
                cycles.append(f"{fmt(r['cycle'] / r['spmv'], 1)} ({name[len('amg pairwise'):].strip(' ,')})")
        gpu_totals = [(total(name), name) for name in rows if name.startswith("amg ") and total(name)]
        best = min(gpu_totals) if gpu_totals else None
        twins = []
        for name in CPU_TWINS:
            c, g = finished.get(name.replace("amg", "amg (CPU)")), finished.get(name)
            if c and g:
                twins.append(f"{c['iterations']} / {g['iterations']}")
        fastest = f"{alg / best[0]:.1f}x ({best[1][4:]})" if best and alg else ""
        out.append(f"| {res['label']} | {ratio} | {f'{alg / pw:.1f}x' if pw and alg else ''} | {fastest} | {py_note} | "
                   f"{'; '.join(cycles)} | {', '.join(twins)} |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (ANISO at 300, the rest at about 10,000 rows)")
    p.add_argument("--large", type=int, default=2500, help="grid size of ANISO1/2/3")
    p.add_argument("--small", type=int, default=300, help="2D grid size of the other generated matrices")
    p.add_argument("--no-real", action="store_true", help="leave out the real matrices")
    p.add_argument("--only", nargs="*", help="only these matrix labels (generator names or file stems)")
    p.add_argument("--cpu", action="store_true", help="no GPU rows")
    p.add_argument("--no-cpu", action="store_true", help="no CPU rows (no worker processes)")
    p.add_argument("--variants", nargs="*", help="only the precond.amg rows whose label contains one of these")
    p.add_argument("--baselines", nargs="*", default=["jacobi", "algebraic_tridiagonal"],
                   help="the BiCGStab baselines on the GPU (jacobi, algebraic_tridiagonal)")
    p.add_argument("--workers", type=int, default=4, help="CPU worker processes")
    p.add_argument("--cpu-deadline", type=float, default=240.0, help="seconds after which CPU workers are stopped")
    p.add_argument("--gpu-deadline", type=float, default=None,
                   help="seconds after which the GPU rows of the matrices not yet started are skipped")
    p.add_argument("--twin-max", type=int, default=1_000_000, help="largest matrix with CPU twin rows")
    p.add_argument("--sa-gpu-max", type=int, default=1_000_000, help="largest matrix with GPU SA rows")
    p.add_argument("--out", default="bench_results/bench_amg", help="folder of the JSON results")
    args = p.parse_args(argv)
    if args.quick:
        args.large, args.small = 300, 100
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    specs = matrix_list(args.large, args.small, real=not args.no_real)
    if args.only:
        specs = [(s, n) for s, n in specs if Path(s).stem in args.only or s in args.only]
    gpu = not args.cpu and gpu_available()
    if args.variants:
        AMG_VARIANTS[:] = [(label, o) for label, o in AMG_VARIANTS if any(v in label for v in args.variants)]
    start = time.perf_counter()
    # the CPU rows in worker processes, one matrix each, while the GPU rows run here
    env = dict(os.environ, NUMBA_NUM_THREADS="2", OMP_NUM_THREADS="1")
    pending = [] if args.no_cpu else [(i, s, n) for i, (s, n) in enumerate(specs)]
    pending.sort(key=lambda t: -(t[2] or 0))  # the largest first: they take longest
    running = {}

    def pump():
        for i, proc in list(running.items()):
            if proc.poll() is not None:
                del running[i]
        while pending and len(running) < args.workers:
            i, s, n = pending.pop(0)
            sizes = load_size(s, n)
            twins = "1" if sizes <= args.twin_max else "0"
            running[i] = subprocess.Popen([sys.executable, __file__, "--cpu-worker", s, str(n), str(out / f"cpu{i}.json"),
                                           twins], env=env, stdout=open(out / f"cpu{i}.log", "w"), stderr=subprocess.STDOUT)

    sizes_cache = {}

    def load_size(s, n):
        if (s, n) not in sizes_cache:
            sizes_cache[(s, n)] = load(s, n).shape[0] if n is None or not s.startswith("aniso") else n * n
        return sizes_cache[(s, n)]

    pump()
    results = []
    device = host = ""
    try:
        host = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                    "")
    except OSError:
        pass
    for i, (s, n) in enumerate(specs):
        res = dict(label=label_of(s, n), rows_n=load_size(s, n), rows=[])
        if gpu and args.gpu_deadline is not None and time.perf_counter() - start > args.gpu_deadline:
            res["rows"] = [dict(method="GPU rows", where="gpu",
                                error=f"skipped: past --gpu-deadline {args.gpu_deadline:g} s")]
        elif gpu:
            import cupy

            device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
            res["rows"] = gpu_rows(s, n, args.sa_gpu_max, baselines=args.baselines, log=
                                   (lambda r: (print(f"[{time.perf_counter() - start:6.1f}s] {res['label']}: "
                                                    f"{progress_line(r)}", file=sys.stderr, flush=True), pump())))
        results.append(res)
        (out / "gpu_rows.json").write_text(json.dumps(results, indent=1, default=str))  # kept if the run is killed
        pump()
    deadline = start + args.cpu_deadline
    while (running or pending) and time.perf_counter() < deadline:
        pump()
        time.sleep(0.5)
    stopped = time.time()
    for proc in running.values():
        proc.kill()
    for i, (s, n) in enumerate(specs):
        path = out / f"cpu{i}.json"
        try:
            rows = json.loads(path.read_text())
        except (OSError, ValueError):
            rows = []
        if not rows and any(t[0] == i for t in pending):
            rows = [dict(method="pyamg SA (CPU), Gauss-Seidel", where="cpu", error="not started before the deadline")]
        for r in rows:  # a step the deadline stopped: it took longer than this
            if not r.get("done") and "started" in r:
                r["unfinished"] = "solve" if "setup" in r else "setup"
                r["bound"] = stopped - r["started"]
        results[i]["rows"] = rows + results[i]["rows"]
    text = markdown(results, device or "none", host) + "\n" + targets(results)
    print(text)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "results.md").write_text(text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--cpu-worker":
        _worker(sys.argv[2:])
    else:
        sys.exit(main())
