"""Scaling of the distributed solve and the distributed maximal clique count (issue 46).

Runs each configuration as its own ``mpiexec -n P`` job (one rank per GPU) and prints
Markdown tables:

* weak scaling: ANISO2 with about ``--weak-rows`` rows per rank (grid ``sqrt(P * rows)``),
  BiCGStab with block-Jacobi AlgTriScal for a fixed ``--weak-iterations`` iterations; the
  time per iteration (slowest rank, after a warm-up set-up and solve), its growth over one
  rank, and next to it the single-GPU solver of the project (``precond.solve``, CUDA
  graphs, no MPI) on the one-rank matrix, in the same call;
* strong scaling: ANISO2 at ``--strong-n`` squared rows solved to ``--rtol`` on 1, 2, ...
  ranks: iterations, set-up and solve seconds, time to solution and speed-up;
* the maximal clique count of the clique benchmark's largest generated graph (RMAT 2^20,
  edge factor 8) on 1, 2, ... ranks (GPUs), with the count checked against the one-rank run.

    python examples/bench_distributed.py --ranks 1 2                 # GPUs where usable
    python examples/bench_distributed.py --ranks 1 2 --quick         # small sizes, CPU-friendly
    python examples/bench_distributed.py --check                     # distributed == serial, then exit

``--device cpu`` runs the same on CPU ranks. Set ``MPIEXEC`` to the launcher (default:
``mpiexec`` beside this Python, else on PATH) and ``MPIEXEC_ARGS`` for its options (e.g.
``--bind-to core``).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def log(msg):
    print(f"  .. {msg}", file=sys.stderr, flush=True)


def mpiexec():
    env = os.environ.get("MPIEXEC")
    if env:
        return env
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def launch(ranks, args, timeout):
    """``mpiexec -n ranks python <args>``; returns the completed process (output echoed on failure)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PYTHONUNBUFFERED="1")
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):  # one BLAS thread per rank
        env.setdefault(key, "1")
    cmd = [mpiexec(), *shlex.split(os.environ.get("MPIEXEC_ARGS", "")), "-n", str(ranks), sys.executable, *args]
    log(" ".join(cmd))
    t0 = time.perf_counter()
    # its own process group: on a timeout the launcher and every rank go (no rank left holding a GPU)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        log(f"timed out after {timeout} s: {out[-2000:]}{err[-2000:]}")
        return None
    proc = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    log(f"done in {time.perf_counter() - t0:.1f} s (rc {proc.returncode})")
    if proc.returncode != 0:
        log(proc.stdout[-3000:] + proc.stderr[-3000:])
        return None
    return proc


def solve_run(ranks, n, iterations, rtol, device, timeout, precond="algebraic_tridiagonal", dtype="float64",
              transport="auto"):
    with tempfile.TemporaryDirectory() as out:
        proc = launch(ranks, ["-m", "precond.distributed", "--matrix", "aniso2", "--n", str(n), "--precond", precond,
                              "--rtol", str(rtol), "--maxiter", str(iterations), "--device", device, "--dtype", dtype,
                              "--cuda-aware", "no", "--transport", transport, "--out", out, "--no-solution"], timeout)
        if proc is None:
            return None
        return json.loads((Path(out) / "distributed.json").read_text())


# --- workers (inside mpiexec or a plain process) --------------------------------------------
def worker_reference(n, iterations, device):
    """The single-GPU (or single-process CPU) solver of the project on ANISO2 n x n."""
    import matrices
    import precond
    from kernels.backend import to_device

    A = matrices.aniso2(n)
    if device != "cpu":
        A = to_device(A)
    from kernels.backend import get_array_module

    xp = get_array_module(A)
    b = A @ xp.ones(A.shape[0])
    M = precond.algebraic_tridiagonal(A)
    precond.solve(A, b, M, rtol=1e-30, maxiter=16)  # warm-up: compiles, captures
    res = precond.solve(A, b, M, rtol=1e-30, maxiter=iterations)
    print(json.dumps({"per_iteration": res.time / max(res.iterations, 1), "iterations": res.iterations}))


def worker_cliques(scale, edge_factor, device, repeat, ordering="device"):
    from graphkit import generators as gen
    from graphkit.distributed_cliques import count_maximal_cliques_mpi
    from kernels.mpi import world

    comm = world()
    G = gen.rmat(scale, edge_factor, 0.45, 0.15, 0.15, seed=1) if comm.rank == 0 else None
    count_maximal_cliques_mpi(G, device=device, ordering=ordering)  # warm-up (compiles; the GPU plan's kernels)
    times = []
    for _ in range(repeat):
        res = count_maximal_cliques_mpi(G, device=device, ordering=ordering)
        times.append(res.time)
    if comm.rank == 0:
        print(json.dumps({"count": res.count, "histogram": res.histogram.tolist(), "time": float(np.median(times)),
                          "device": res.device, "ranks": comm.size, "ordering": ordering}))


def worker_profile(n, device, transport, reps):
    """Seconds per call of each phase of an iteration (slowest rank), on this transport."""
    from kernels.spmv import spmv
    from precond import distributed as dist
    from precond.distributed.krylov import _Reducer, _ResidentOps

    comm = dist.world()
    D = dist.distributed_matrix("aniso2", n, device=device, transport=transport)
    M = dist.block_jacobi(D, "algebraic_tridiagonal")
    xp = D.xp
    x = D.ones()
    y = D.zeros()
    b = D @ x
    sync = (lambda: xp.cuda.Device().synchronize()) if D.device == "gpu" else (lambda: None)
    resident = _ResidentOps(D, D.dtype, 1e-300, 8)
    host = _Reducer(comm, xp, D.dtype)
    dot1 = (lambda: resident.reduce((x, b))) if D.transport == "nccl" else (lambda: host((x, b)))
    pairs = [(x, b), (b, b), (x, x), (y, b), (y, x)]
    dot5 = (lambda: resident.reduce(*pairs)) if D.transport == "nccl" else (lambda: host(*pairs))

    def begin_end():
        D.exchange.begin(x)
        D.exchange.end()

    def iterations(cuda_graph=None):
        dist.bicgstab(D, b, M=M, rtol=1e-30, maxiter=reps, cuda_graph=cuda_graph)

    st = {}
    try:  # where the iterations can be replayed from a CUDA graph, time both ways
        dist.bicgstab(D, b, M=M, rtol=1e-30, maxiter=24, stats=st, cuda_graph=True)
        graphs = st["cuda_graph"]
    except ValueError:  # CPU ranks, or the MPI transport
        graphs = False

    phases = [("local SpMV (diagonal block)", lambda: spmv(D.diag, x, out=y) if D.device == "gpu" else D.diag @ x),
              ("ghost exchange (begin + end)", begin_end),
              ("distributed SpMV (exchange overlapped)", lambda: D.matvec(x, out=y)),
              ("block-Jacobi AlgTriScal apply", lambda: M.matvec(x)),
              ("1 dot + all-reduce", dot1),
              ("5 dots + all-reduce", dot5)]
    out = {"ranks": comm.size, "transport": D.transport, "n": n, "phases": {}}
    iterations()  # warm-up of everything
    whole = [("BiCGStab iteration", None)]
    if graphs:
        iterations(False)
        whole = [("BiCGStab iteration (CUDA graph)", True), ("BiCGStab iteration (kernels one by one)", False)]
    for name, fn in phases + whole:
        for _ in range(3):
            fn() if callable(fn) else None
        sync()
        comm.Barrier()
        t0 = time.perf_counter()
        if not callable(fn):
            iterations(fn)
        else:
            for _ in range(reps):
                fn()
        sync()
        dt = comm.allreduce((time.perf_counter() - t0) / reps, op=dist.mpi().MAX)
        out["phases"][name] = dt
    if comm.rank == 0:
        print(json.dumps(out))


def worker_clique_profile(scale, edge_factor, device):
    """Seconds of the GPU count's host plan (and the order in it) and of its launches, one
    process, with the host's smallest-last order and with the GPU's peeling order (second
    of two runs each)."""
    from graphkit import generators as gen
    from kernels.cliques.degeneracy import ranked_degeneracy
    from kernels.cliques.mce_gpu import MceGpuPlan, mce_flushes_gpu
    from kernels.cliques.peel_gpu import peeling_order

    import cupy

    G = gen.rmat(scale, edge_factor, 0.45, 0.15, 0.15, seed=1)
    indptr = np.ascontiguousarray(G.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(G.indices, dtype=np.int64)
    out = {"n": G.n}
    for ordering in ("host", "device"):
        for _ in range(2):
            t0 = time.perf_counter()
            if ordering == "host":
                ranked_degeneracy(indptr, indices)
            else:
                peeling_order(indptr, indices)
                cupy.cuda.Device().synchronize()
            t1 = time.perf_counter()
            plan = MceGpuPlan(G, ordering=ordering)
            cupy.cuda.Device().synchronize()
            t2 = time.perf_counter()
            flush = mce_flushes_gpu(plan, 1, True, 0)
            try:
                while True:
                    next(flush)
            except StopIteration as stop:
                hist = stop.value
            cupy.cuda.Device().synchronize()
            t3 = time.perf_counter()
            out[ordering] = {"order": t1 - t0, "plan": t2 - t1, "launches": t3 - t2, "count": int(np.sum(hist)),
                             "D": plan.D, "histogram": hist.tolist()}
    print(json.dumps(out))


def worker_check(device):
    """Distributed results against the serial ones on this device: products, solves, counts."""
    import graphkit
    import matrices
    from graphkit import generators as gen
    from graphkit.distributed_cliques import count_maximal_cliques_mpi
    from precond import distributed as dist

    comm = dist.world()
    A = matrices.aniso2(300)
    D = dist.distributed_matrix("aniso2", 300, device=device)
    x = np.random.default_rng(1).standard_normal(A.shape[0])
    y = D.gather(D @ D.local_vector(x))
    ok = True
    if comm.rank == 0:
        err = float(np.abs(y - A @ x).max())
        print(f"check spmv on {D.device}: max error {err:.2e}", flush=True)
        ok &= err < 1e-12
    b = D.local_vector(A @ np.ones(A.shape[0]))
    for local in ("jacobi", "algebraic_tridiagonal", "algebraic_block_tridiagonal"):
        for method in (dist.bicgstab, dist.cg):
            if method is dist.cg and local != "jacobi":
                continue
            st = {}
            xs, info = method(D, b, rtol=1e-10, M=dist.block_jacobi(D, local), stats=st, maxiter=3000)
            full = D.gather(xs)
            if comm.rank == 0:
                res = float(np.linalg.norm(A @ full - A @ np.ones(A.shape[0])) / np.linalg.norm(A @ np.ones(A.shape[0])))
                print(f"check {method.__name__} + block Jacobi {local}: info {info}, {st['iterations']} iterations, "
                      f"relative residual {res:.2e}", flush=True)
                ok &= info == 0 and res < 2e-10
    G = gen.rmat(14, 8, 0.45, 0.15, 0.15, seed=1)
    res = count_maximal_cliques_mpi(G, device=device)
    if comm.rank == 0:
        ref = graphkit.count_maximal_cliques(G, device="cpu")
        print(f"check clique count on {res.device}: {res.count} (serial CPU {ref.count})", flush=True)
        ok &= res.count == ref.count and np.array_equal(res.histogram, ref.histogram)
        print("CHECK " + ("PASSED" if ok else "FAILED"), flush=True)


# --- tables ----------------------------------------------------------------------------------
def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}g}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2], help="ranks (GPUs) of each run")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--weak-rows", type=float, default=6.25e6)
    p.add_argument("--weak-iterations", type=int, default=100)
    p.add_argument("--strong-n", type=int, default=5000)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--maxiter", type=int, default=5000)
    p.add_argument("--clique-scale", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", nargs="+", choices=["weak", "strong", "cliques", "profile", "clique-profile"],
                   default=["weak", "strong", "cliques"])
    p.add_argument("--transports", nargs="+", choices=["auto", "nccl", "mpi"], default=["auto"],
                   help="transports of the weak-scaling and profile runs (strong: the first)")
    p.add_argument("--orderings", nargs="+", choices=["device", "host"], default=["device"],
                   help="orders that split the clique search on GPU ranks (see count_maximal_cliques_mpi)")
    p.add_argument("--profile-n", type=int, default=2500, help="grid side per rank of the profile (n^2 rows each)")
    p.add_argument("--quick", action="store_true", help="weak 10^5 rows per rank, strong n=400, RMAT 2^14")
    p.add_argument("--timeout", type=float, default=300, help="seconds per mpiexec run")
    p.add_argument("--check", action="store_true", help="only check distributed == serial on the largest --ranks")
    p.add_argument("--json", default=None, help="write all results here")
    p.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        kind, *rest = args.worker
        if kind == "reference":
            return worker_reference(int(rest[0]), int(rest[1]), rest[2])
        if kind == "clique_profile":
            return worker_clique_profile(int(rest[0]), 8, rest[1])
        from kernels.mpi import abort_on_error

        if kind == "cliques":
            return abort_on_error(worker_cliques)(int(rest[0]), 8, rest[1], int(rest[2]), *rest[3:4])
        if kind == "check":
            return abort_on_error(worker_check)(rest[0])
        if kind == "profile":
            return abort_on_error(worker_profile)(int(rest[0]), rest[1], rest[2], int(rest[3]))
        raise SystemExit(f"unknown worker {kind}")
    if mpiexec() is None:
        raise SystemExit("no mpiexec found: pip install '.[mpi]' (mpi4py and the mpich wheel)")
    if args.quick:
        args.weak_rows, args.strong_n, args.clique_scale, args.weak_iterations = 1e5, 400, 14, 50
    me = str(Path(__file__).resolve())
    results = {"ranks": args.ranks, "device": args.device}
    if args.check:
        proc = launch(max(args.ranks), [me, "--worker", "check", args.device], args.timeout)
        print(proc.stdout if proc else "check run failed")
        return 0 if proc and "CHECK PASSED" in proc.stdout else 1
    if "profile" in args.only:
        prof = []
        for tr in args.transports:
            for r in args.ranks:
                n = round(args.profile_n * math.sqrt(r))
                proc = launch(r, [me, "--worker", "profile", str(n), args.device, tr, "40"], args.timeout)
                prof.append(json.loads(proc.stdout.strip().splitlines()[-1]) if proc else None)
        results["profile"] = prof
        ok = [p_ for p_ in prof if p_]
        if ok:
            print(f"\n### Per-phase time of one call (ms, slowest rank), ANISO2 {args.profile_n}² rows per rank\n")
            print("| phase | " + " | ".join(f"{p_['ranks']} rank(s), {p_['transport']}" for p_ in ok) + " |")
            print("|---|" + "---|" * len(ok))
            for name in ok[0]["phases"]:
                print(f"| {name} | " + " | ".join(f"{1e3 * p_['phases'].get(name, float('nan')):.3f}" for p_ in ok) + " |")
    if "clique-profile" in args.only:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, me, "--worker", "clique_profile", str(args.clique_scale), args.device],
                              capture_output=True, text=True, env=env, timeout=args.timeout)
        cp = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
        if cp is None:
            log(proc.stderr[-2000:])
        results["clique_profile"] = cp
        print(f"\nClique count, one process: {cp}")
    def save():  # after every run: a run cut short by an outer timeout keeps what was measured
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))

    if "weak" in args.only:
        print(f"\n### Weak scaling: ANISO2, {args.weak_rows:.3g} rows per rank, BiCGStab + block-Jacobi AlgTriScal, "
              f"{args.weak_iterations} iterations\n", flush=True)
        print("| transport | ranks | grid | rows | ms / iteration | growth over 1 rank | host ms in all-reduces / "
              "iteration (max rank) | host ms waiting for ghosts / iteration (max rank) | set-up s |")
        print("|---|---|---|---|---|---|---|---|---|", flush=True)
        results["weak"] = []
        seen = None
        for tr in args.transports:
            base = None
            for r in args.ranks:
                n = round(math.sqrt(r * args.weak_rows))
                res = solve_run(r, n, args.weak_iterations, 1e-30, args.device, args.timeout, transport=tr)
                results["weak"].append({"ranks": r, "n": n, "transport": tr, "result": res})
                save()
                if res is None:
                    print(f"| {tr} | {r} | {n}² | {n * n:,} | failed | | | | |", flush=True)
                    continue
                seen = seen or res
                t = res["results"][0]["times"]
                its = res["results"][0]["iterations"]
                base = base or t["per_iteration"]
                growth = f"{100 * (t['per_iteration'] / base - 1):+.1f}%"
                label = res.get("transport", "mpi") + (" (resident)" if res["results"][0].get("resident") else "")
                print(f"| {label} | {r} | {n}² | {n * n:,} | {1e3 * t['per_iteration']:.3f} | {growth} | "
                      f"{1e3 * t['allreduce_max'] / max(its, 1):.3f} | "
                      f"{1e3 * t.get('exchange_max', 0) / max(its, 1):.3f} | {t['setup']:.3f} |", flush=True)
        if seen:
            print(f"\nDevice: {seen['device']}{' (' + seen['gpu'] + ')' if seen.get('gpu') else ''}; "
                  f"MPI: {seen['mpi']}", flush=True)
        if args.device != "cpu":
            n1 = round(math.sqrt(args.weak_rows))
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            ref = None
            try:
                proc = subprocess.run([sys.executable, me, "--worker", "reference", str(n1),
                                       str(args.weak_iterations), args.device], capture_output=True, text=True,
                                      env=env, timeout=args.timeout)
                ref = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
                if ref is None:
                    log(proc.stderr[-2000:])
            except subprocess.TimeoutExpired:
                log(f"reference timed out after {args.timeout} s")
            results["weak_reference"] = ref
            save()
            if ref:
                print(f"\nSingle-GPU solver of the project (precond.solve, no MPI) on the 1-rank matrix: "
                      f"{1e3 * ref['per_iteration']:.3f} ms / iteration.", flush=True)
    if "strong" in args.only:
        print(f"\n### Strong scaling: ANISO2 {args.strong_n}² ({args.strong_n ** 2:,} rows), BiCGStab + block-Jacobi "
              f"AlgTriScal to rtol {args.rtol:g}\n")
        print("| ranks | transport | iterations | iterations / 1 rank | relative residual | set-up s | solve s | "
              "time to solution s | speed-up |")
        print("|---|---|---|---|---|---|---|---|---|", flush=True)
        results["strong"] = []
        first = None
        for r in args.ranks:
            res = solve_run(r, args.strong_n, args.maxiter, args.rtol, args.device, args.timeout,
                            transport=args.transports[0])
            results["strong"].append({"ranks": r, "result": res})
            save()
            if res is None:
                print(f"| {r} | | failed | | | | | | |", flush=True)
                continue
            row = res["results"][0]
            first = first or row
            t = row["times"]
            print(f"| {r} | {res.get('transport', 'mpi')} | {row['iterations']}"
                  f"{'' if row['converged'] else ' (not converged)'} | "
                  f"{row['iterations'] / first['iterations']:.2f} | {row['relative_residual']:.1e} | "
                  f"{t['setup']:.3f} | {t['solve']:.3f} | {t['time_to_solution']:.3f} | "
                  f"{first['times']['time_to_solution'] / t['time_to_solution']:.2f} |", flush=True)
    if "cliques" in args.only:
        print(f"\n### Maximal clique count, RMAT 2^{args.clique_scale} edge factor 8 (at 2^20: the clique "
              "benchmark's largest generated graph)\n")
        print("| ranks | device | order of the split | maximal cliques | = 1 rank | seconds (median) | speed-up |")
        print("|---|---|---|---|---|---|---|", flush=True)
        results["cliques"] = []
        orderings = args.orderings if args.device != "cpu" else ["host"]
        for ordering in orderings:
            first = None
            for r in args.ranks:
                proc = launch(r, [me, "--worker", "cliques", str(args.clique_scale), args.device, str(args.repeat),
                                  ordering], args.timeout)
                res = json.loads(proc.stdout.strip().splitlines()[-1]) if proc else None
                results["cliques"].append({"ranks": r, "result": res})
                save()
                if res is None:
                    print(f"| {r} | failed | | | | | |", flush=True)
                    continue
                first = first or res
                order = "smallest-last (host)" if res.get("ordering") == "host" or res["device"] == "cpu" else \
                    "peeling rounds (GPU)"
                same = "yes" if res["histogram"] == first["histogram"] else "NO"
                print(f"| {r} | {res['device']} | {order} | {res['count']:,} | {same} | {res['time']:.3f} | "
                      f"{fmt(first['time'] / res['time'])} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
