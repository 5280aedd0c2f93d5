"""Benchmark of exact vertex cover (paper 000, Table I and the load balance of Figure 5).

For each instance (complements of the DIMACS graphs, PACE 2019 vc-exact graphs) and each
problem (MVC; PVC with k = min-1, min, min+1): the Sequential CPU branch-and-reduce
(Numba), the StackOnly and Hybrid GPU kernels (CUDA events, median after a warm-up), the
paper's V100 times where Table I has the instance, and the load balance over the SMs
(max / mean tree nodes per SM). Runs stopped by a time limit are reported as ``>limit``.
Also saves a plot of the results as ``<out>.png`` (``--no-plot``: none).

    python examples/bench_vc.py                       # Table I subset, writes bench_results/bench_vc.json
    python examples/bench_vc.py --quick               # small smoke run
    python examples/bench_vc.py --instances p_hat300-3 --time-limit 60
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphkit  # noqa: E402
from graphkit.vertex_cover import minimum_vertex_cover, parameterized_vertex_cover  # noqa: E402
from kernels.backend import gpu_available  # noqa: E402

from _plotting import grouped_bars, leave_room_for_legend, mark_stopped, plot_path, save_figure  # noqa: E402
from _shared_data import SHARED, load_answers  # noqa: E402

#: Table I of the paper (V100 GPU, EPYC 7551P CPU), seconds: Sequential, StackOnly, Hybrid.
PAPER = {
    "p_hat300-1": {"mvc": (0.138, 0.780, 0.021), "k-1": (0.140, 0.782, 0.023), "k": (0.031, 0.021, 0.016),
                   "k+1": (0.028, 0.001, 0.003)},
    "p_hat300-2": {"mvc": (1.262, 15.681, 0.029), "k-1": (1.266, 15.714, 0.029), "k": (0.016, 0.021, 0.016),
                   "k+1": (0.016, 0.010, 0.016)},
    "p_hat300-3": {"mvc": (200.990, 2197.583, 1.657), "k-1": (193.597, 2199.056, 1.658), "k": (0.047, 0.528, 0.056),
                   "k+1": (0.006, 0.005, 0.008)},
}

DEFAULT = ["p_hat300-1", "p_hat300-2", "p_hat300-3", "keller4", "brock200_4", "hamming8-4", "C125.9",
           "MANN_a27", "johnson16-2-4"]
QUICK = ["johnson8-4-4", "p_hat300-1", "hamming6-4"]
PROBLEMS = ["mvc", "k-1", "k", "k+1"]
PROBLEM_LABELS = {"mvc": "MVC", "k-1": "PVC k=min-1", "k": "PVC k=min", "k+1": "PVC k=min+1"}
#: plotted engines: legend label -> key prefix in the rows
ENGINES = {"Sequential CPU": "cpu", "CPU + clique bound": "cpu_bound", "StackOnly GPU": "stackonly",
           "Hybrid GPU": "hybrid"}
PAPER_HYBRID = "paper Hybrid (V100)"
STOPPED_NOTE = ">: stopped at the time limit"


def load_instance(name, answers):
    """(graph, minimum cover size or None, label)."""
    if ("dimacs", name) in answers:
        G = graphkit.read_graph(SHARED / "graphs" / "dimacs" / f"{name}.clq").complement()
        return G, G.n - answers[("dimacs", name)], f"{name} (compl.)"
    if ("vc", name) in answers:
        G = graphkit.read_graph(SHARED / "graphs" / "pace2019-vc" / f"{name}.gr")
        return G, answers[("vc", name)], name
    raise SystemExit(f"unknown instance {name!r} (not in {SHARED / 'graphs' / 'answers.csv'})")


def solve(G, problem, opt, device, method, time_limit, start_depth, clique_bound=False):
    """Run one problem once; returns (seconds, result, finished, correct).

    ``clique_bound=False`` (default) is the paper's algorithm, as on the GPU; the
    kernelization (not in the paper) is off for the same reason."""
    t0 = time.perf_counter()
    if problem == "mvc":
        r = minimum_vertex_cover(G, device=device, method=method, time_limit=time_limit, start_depth=start_depth,
                                 clique_bound=clique_bound, kernelize=False)
        sec = time.perf_counter() - t0
        finished = r.optimal
        correct = (r.size == opt) if finished else (r.size >= opt)
    else:
        k = opt + {"k-1": -1, "k": 0, "k+1": 1}[problem]
        r = parameterized_vertex_cover(G, k, device=device, method=method, time_limit=time_limit,
                                       start_depth=start_depth, clique_bound=clique_bound, kernelize=False)
        sec = time.perf_counter() - t0
        finished = r.proved
        correct = (r.found is (k >= opt)) if finished else True
    return sec, r, finished, correct


def timed_gpu(G, problem, opt, method, time_limit, start_depth, repeat):
    """Median seconds over CUDA events (after one warm-up); the last result."""
    import cupy

    sec, r, finished, correct = solve(G, problem, opt, "gpu", method, time_limit, start_depth)  # warm-up
    if not finished or sec > 5:
        return sec, r, finished, correct
    times = []
    for _ in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        _, r, finished, c2 = solve(G, problem, opt, "gpu", method, time_limit, start_depth)
        stop.record()
        stop.synchronize()
        correct = correct and c2
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e-3)
    return statistics.median(times), r, finished, correct


def fmt(sec, finished, limit):
    if sec is None:
        return "-"
    if not finished:
        return f">{limit:g}"
    return f"{sec:.3f}"


def mvc_times_panel(ax, mvc_rows, engines):
    """MVC seconds per instance and engine, the paper's V100 Hybrid hatched."""
    series = {name: [r.get(f"{key}_time") for r in mvc_rows] for name, key in engines.items()}
    if any("paper_hybrid" in r for r in mvc_rows):
        series[PAPER_HYBRID] = [r.get("paper_hybrid") for r in mvc_rows]
    grouped_bars(ax, [r["instance"] for r in mvc_rows], series, ylabel="seconds", log=True,
                 title=f"MVC: time per instance ({STOPPED_NOTE})", hatched=(PAPER_HYBRID,))
    mark_stopped(ax, {name: [r.get(f"{key}_finished") is False for r in mvc_rows] for name, key in engines.items()})
    leave_room_for_legend(ax)


def problems_panel(ax, rows, engine, key):
    """Seconds of one engine per instance for MVC and the three PVC budgets."""
    instances = list(dict.fromkeys(r["instance"] for r in rows))
    by_case = {(r["instance"], r["problem"]): r for r in rows}

    def column(problem, field):
        return [by_case.get((name, problem), {}).get(f"{key}_{field}") for name in instances]

    grouped_bars(ax, instances, {PROBLEM_LABELS[p]: column(p, "time") for p in PROBLEMS}, ylabel="seconds", log=True,
                 title=f"{engine}: MVC and PVC per instance ({STOPPED_NOTE})")
    mark_stopped(ax, {PROBLEM_LABELS[p]: [f is False for f in column(p, "finished")] for p in PROBLEMS})
    leave_room_for_legend(ax)


def load_balance_panel(ax, mvc_rows):
    """Max / mean tree nodes per GPU worker (MVC), 1 = perfectly even."""
    series = {name: [r.get(f"{key}_load_max_over_mean") for r in mvc_rows]
              for name, key in (("StackOnly GPU", "stackonly"), ("Hybrid GPU", "hybrid"))}
    grouped_bars(ax, [r["instance"] for r in mvc_rows], series, ylabel="max / mean tree nodes per worker", log=True,
                 title="MVC: load balance over the GPU workers (1 = even)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    leave_room_for_legend(ax)


def plot_results(results, path):
    """Bars per instance: the MVC time of each engine next to the paper's V100 Hybrid, the time of MVC and the
    PVC budgets for the Hybrid GPU (the Sequential CPU without a GPU), and the GPU load balance on MVC."""
    rows = results["rows"]
    mvc_rows = [r for r in rows if r["problem"] == "mvc"]
    engines = {name: key for name, key in ENGINES.items() if any(f"{key}_time" in r for r in rows)}
    panels = [lambda ax: mvc_times_panel(ax, mvc_rows, engines)]
    engine = next((name for name in ("Hybrid GPU", "Sequential CPU") if name in engines), None)
    if engine:
        panels.append(lambda ax: problems_panel(ax, rows, engine, engines[engine]))
    if any("hybrid_load_max_over_mean" in r for r in mvc_rows):
        panels.append(lambda ax: load_balance_panel(ax, mvc_rows))
    save_figure(path, panels, suptitle=f"exact vertex cover; GPU: {results['meta']['gpu'] or 'none'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", nargs="*", default=None, help="names from answers.csv (DIMACS or PACE)")
    ap.add_argument("--quick", action="store_true", help="small smoke run")
    ap.add_argument("--time-limit", type=float, default=15.0, help="Hybrid GPU seconds per run (default 15)")
    ap.add_argument("--cpu-time-limit", type=float, default=5.0, help="CPU seconds per run (default 5)")
    ap.add_argument("--stackonly-time-limit", type=float, default=5.0, help="StackOnly GPU seconds per run (default 5)")
    ap.add_argument("--start-depth", type=int, default=8, help="StackOnly sub-tree depth (paper: 8, 12, 16)")
    ap.add_argument("--repeat", type=int, default=3, help="GPU repetitions for the median")
    ap.add_argument("--no-cpu", action="store_true", help="skip the Sequential CPU column")
    ap.add_argument("--cpu-bound", action="store_true",
                    help="add a CPU column with the adaptive clique-cover bound (beyond the paper)")
    ap.add_argument("--out", default="bench_results/bench_vc.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)

    answers = load_answers()
    if not answers:
        print(f"no shared data at {SHARED}; nothing to benchmark", file=sys.stderr)
        return 0
    names = args.instances or (QUICK if args.quick else DEFAULT)
    if args.quick:
        args.time_limit = min(args.time_limit, 5.0)
        args.cpu_time_limit = min(args.cpu_time_limit, 5.0)
        args.stackonly_time_limit = min(args.stackonly_time_limit, 5.0)
    gpu = gpu_available()
    device_name = None
    if gpu:
        import cupy

        device_name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    # compile the Numba search before timing anything: the Petersen graph (3-regular, no
    # triangle) survives the root reductions, so the timed code paths all run once
    outer, inner = np.arange(5), 5 + np.arange(5)
    petersen = graphkit.Graph.from_edges(10, np.concatenate([outer, outer, inner]),
                                         np.concatenate([(outer + 1) % 5, inner, 5 + (inner + 2) % 5]))
    for bound in (False, True):
        minimum_vertex_cover(petersen, device="cpu", time_limit=60, clique_bound=bound, kernelize=False)
        parameterized_vertex_cover(petersen, 6, device="cpu", time_limit=60, clique_bound=bound, kernelize=False)

    rows = []
    header = (f"{'instance':<24} {'n':>5} {'m':>7} {'min':>5} {'prob':>5} {'Seq(CPU)':>9} {'CPU+bnd':>9} {'StackOnly':>9} "
              f"{'Hybrid':>9} {'paper Seq/SO/Hy (V100)':>24} {'nodes(Hy)':>10} {'LB SO':>6} {'LB Hy':>6} ok")
    print(f"vertex cover benchmark; GPU: {device_name or 'none (GPU columns skipped)'}")
    print(header)
    print("-" * len(header))
    for name in names:
        G, opt, label = load_instance(name, answers)
        for problem in PROBLEMS:
            row = {"instance": name, "n": G.n, "m": G.m, "min": opt, "problem": problem}
            ok = True
            if not args.no_cpu:
                sec, r, fin, corr = solve(G, problem, opt, "cpu", "hybrid", args.cpu_time_limit, args.start_depth)
                row.update(cpu_time=sec, cpu_finished=bool(fin), cpu_nodes=r.nodes)
                ok &= corr
            if args.cpu_bound:
                sec, r, fin, corr = solve(G, problem, opt, "cpu", "hybrid", args.cpu_time_limit, args.start_depth,
                                          clique_bound="auto")
                row.update(cpu_bound_time=sec, cpu_bound_finished=bool(fin), cpu_bound_nodes=r.nodes)
                ok &= corr
            if gpu:
                for method, limit in (("stackonly", args.stackonly_time_limit), ("hybrid", args.time_limit)):
                    sec, r, fin, corr = timed_gpu(G, problem, opt, method, limit, args.start_depth, args.repeat)
                    w = np.asarray(r.worker_nodes, dtype=np.float64)
                    row.update({f"{method}_time": sec, f"{method}_finished": bool(fin), f"{method}_nodes": int(r.nodes),
                                f"{method}_load_max_over_mean": float(w.max() / w.mean()) if w.mean() > 0 else 1.0,
                                f"{method}_load_min_over_mean": float(w.min() / w.mean()) if w.mean() > 0 else 1.0})
                    ok &= corr
            paper = PAPER.get(name, {}).get(problem)
            if paper:
                row.update(paper_seq=paper[0], paper_stackonly=paper[1], paper_hybrid=paper[2])
                if gpu and row.get("hybrid_finished"):
                    row["hybrid_vs_paper_speedup"] = paper[2] / max(row["hybrid_time"], 1e-9)
            if row.get("cpu_finished") and row.get("hybrid_finished"):
                row["hybrid_vs_cpu_speedup"] = row["cpu_time"] / max(row["hybrid_time"], 1e-9)
            row["correct"] = bool(ok)
            rows.append(row)
            pap = "/".join(f"{x:g}" for x in paper) if paper else "-"
            print(f"{label:<24} {G.n:>5} {G.m:>7} {opt:>5} {problem:>5} "
                  f"{fmt(row.get('cpu_time'), row.get('cpu_finished'), args.cpu_time_limit):>9} "
                  f"{fmt(row.get('cpu_bound_time'), row.get('cpu_bound_finished'), args.cpu_time_limit):>9} "
                  f"{fmt(row.get('stackonly_time'), row.get('stackonly_finished'), args.stackonly_time_limit):>9} "
                  f"{fmt(row.get('hybrid_time'), row.get('hybrid_finished'), args.time_limit):>9} {pap:>24} "
                  f"{row.get('hybrid_nodes', row.get('cpu_nodes', 0)):>10} "
                  f"{row.get('stackonly_load_max_over_mean', float('nan')):>6.2f} "
                  f"{row.get('hybrid_load_max_over_mean', float('nan')):>6.2f} {'yes' if ok else 'NO'}", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gpu": device_name, "cpu_threads": os.cpu_count(), "time_limit": args.time_limit,
            "cpu_time_limit": args.cpu_time_limit, "stackonly_time_limit": args.stackonly_time_limit,
            "start_depth": args.start_depth, "repeat": args.repeat}
    results = {"meta": meta, "rows": rows}
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")
    if not args.no_plot:
        plot_results(results, plot_path(out))
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
