"""Benchmark of exact vertex cover: the PACE 2019 set against the winner, and the GPU paper's Table I.

``--set pace2019``: the 160 PACE 2019 exact-track instances of
``../shared/data/graphs/bench/vc`` (answers in ``bench/answers.csv``) with the pipeline
(``minimum_vertex_cover(method="auto")``), each in a fresh worker process under a hard
timeout: the worker compiles / loads the Numba code first, then times reading the file
plus solving with the time limit applied to that (on the CPU in CPU seconds of the
process, so a shared machine does not count others' work; on the GPU wall clock). Next to each result the
time of WeGotYouCovered (PACE 2019 winner, one thread, 20 s per instance, on the
development CPU) from ``bench/peers.csv``. Prints the solved counts, the median times on
the instances both solve, and (``--markdown``) the per-instance table. Run it on one core,
``taskset -c 0 python examples/bench_vc.py --set pace2019``, on a quiet machine.

``--set table1`` (default): the paper's Table I rows (complements of p_hat300-1/2/3 and
more DIMACS graphs; MVC and PVC with k = min-1, min, min+1): the paper's algorithm on the
CPU ("Sequential", Numba) and the GPU (StackOnly, Hybrid: the paper's kernels), the
library's GPU route (``device="gpu"``, ``method="auto"``: the pipeline with its GPU
searches), the pipeline on the CPU of the same host, and the paper's V100 times; beside
them the route's speed-up over the better paper kernel and over the CPU pipeline, and
whether every finished run found the same size; plus the load balance over the SMs. Saves
a plot as ``<out>.png`` (``--no-plot``: none).

    taskset -c 0 python examples/bench_vc.py --set pace2019 --time-limit 20 --markdown
    python examples/bench_vc.py --set pace2019 --instances vc-exact_055 vc-exact_176
    python examples/bench_vc.py --set pace2019 --time-limit 60 --open-in A.json --out B.json  # the 60 s column
    python examples/bench_vc.py --set pace2019 --docs-table A.json B.json    # docs/pace-instances.md table
    python examples/bench_vc.py --set pace2019 --device gpu --out G.json     # the GPU route, wall clock
    python examples/bench_vc.py --compare C1.json,C2.json G1.json,G2.json    # GPU route beside the CPU
    python examples/bench_vc.py                      # Table I, writes bench_results/bench_vc.json
    python examples/bench_vc.py --quick              # small smoke run
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
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

PEER = "wegotyoucovered-pace2019"

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
ENGINES = {"paper Sequential (CPU)": "cpu", "pipeline (CPU)": "bnr", "StackOnly GPU": "stackonly",
           "Hybrid GPU": "hybrid", "GPU route": "route"}
#: GPU runs of a row: (method, key, limit attribute of the arguments)
GPU_RUNS = (("stackonly", "stackonly", "stackonly_time_limit"), ("hybrid", "hybrid", "time_limit"),
            ("auto", "route", "time_limit"))
PAPER_HYBRID = "paper Hybrid (V100)"
STOPPED_NOTE = ">: stopped at the time limit"


# ============================================================================ PACE 2019
def bench_rows():
    """``[(file, n, m, answer, peer seconds or None)]`` of the vc rows of bench/."""
    base = SHARED / "graphs" / "bench"
    with open(base / "answers.csv") as fh:
        answers = [r for r in csv.DictReader(fh) if r["set"] == "vc"]
    with open(base / "peers.csv") as fh:
        peers = {r["file"]: r for r in csv.DictReader(fh) if r["set"] == "vc"}
    out = []
    for r in answers:
        p = peers.get(r["file"], {})
        sec = float(p["seconds"]) if p.get("solved") == "1" and p.get("seconds") else None
        out.append((r["file"], int(r["n"]), int(r["m"]), int(r["answer"]), sec))
    return out


def worker(path, time_limit, device):
    """One instance in this process: warm up, then time reading + solving.

    On the CPU the clock is the process's CPU time (``time.process_time``), both for
    the time limit and for the reported seconds, so that a shared machine does not
    count other people's work; the wall time is reported beside it. On the GPU the
    wall clock is used."""
    import warnings

    warnings.filterwarnings("ignore")
    graphkit.warm_up(device=device, problems=("vertex_cover",))
    from kernels.backend import resolve_device
    from kernels.vertex_cover.exact import compile_once

    compile_once()
    if resolve_device(device) == "gpu":  # the GPU kernels too, before the clock
        compile_once("gpu")
    clock = time.process_time if device == "cpu" else time.perf_counter
    t0, w0 = clock(), time.perf_counter()
    G = graphkit.read_graph(path)
    t_read = clock() - t0
    left = max(time_limit - t_read, 1e-3)
    if device == "cpu":
        from kernels.vertex_cover.exact import solve as solve_cpu

        # the pipeline of minimum_vertex_cover(device="cpu"), timed in CPU seconds
        r = solve_cpu(G.indptr, G.indices, left, clock=clock)
        kernel, used, ls_steps = r.kernel_vertices, "cpu", int(r.stats.get("local_search_steps", 0))
    else:
        r = minimum_vertex_cover(G, device=device, time_limit=left)
        kernel, used, ls_steps = r.kernel_size, r.device, 0
    seconds = clock() - t0
    wall = time.perf_counter() - w0
    valid = graphkit.is_vertex_cover(G, r.cover)
    print(json.dumps(dict(size=int(r.size), optimal=bool(r.optimal), lower_bound=int(r.lower_bound), seconds=seconds,
                          wall=wall, read=t_read, kernel=int(kernel), solved_by=r.solved_by, nodes=int(r.nodes),
                          valid=bool(valid), device=used, clock="cpu" if device == "cpu" else "wall",
                          local_search_steps=ls_steps)), flush=True)


def run_pace(args):
    rows = bench_rows()
    if args.instances:
        want = {name.removesuffix(".gr.xz") for name in args.instances}
        rows = [r for r in rows if Path(r[0]).name.removesuffix(".gr.xz") in want]
    if args.open_in:
        done = {r["instance"] for r in json.loads(Path(args.open_in).read_text())["rows"] if r["solved"]}
        rows = [r for r in rows if Path(r[0]).name.removesuffix(".gr.xz") not in done]
    base = SHARED / "graphs" / "bench"
    results = []
    print(f"PACE 2019 exact vertex cover, {len(rows)} instances, time limit {args.time_limit:g} s, "
          f"device {args.device}; CPU affinity {sorted(os.sched_getaffinity(0))}", file=sys.stderr)
    for file, n, m, answer, peer in rows:
        name = Path(file).name.removesuffix(".gr.xz")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(base / file), "--time-limit",
               str(args.time_limit), "--device", args.device]
        t0 = time.perf_counter()
        row = dict(instance=name, n=n, m=m, answer=answer, peer_seconds=peer)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.time_limit + args.grace)
            line = [x for x in p.stdout.splitlines() if x.startswith("{")]
            if line:
                row.update(json.loads(line[-1]))
                row["solved"] = bool(row["optimal"] and row["size"] == answer)
                row["wrong"] = bool((row["optimal"] and row["size"] != answer) or not row["valid"]
                                    or row["lower_bound"] > answer or row["size"] < answer)
            else:
                row.update(solved=False, wrong=False, error=p.stderr.strip().splitlines()[-1:] or ["no output"])
        except subprocess.TimeoutExpired:
            row.update(solved=False, wrong=False, error=["killed at the hard timeout"])
        row["process_seconds"] = time.perf_counter() - t0
        results.append(row)
        save_pace(args, results)  # an interrupted sweep keeps what it measured
        status = "WRONG" if row.get("wrong") else ("solved" if row["solved"] else "open")
        print(f"{name:<14} n={n:<7} {status:<6} {row.get('seconds', float('nan')):7.2f} s  size {row.get('size')} "
              f"(answer {answer}, lb {row.get('lower_bound')})  peer {peer if peer is not None else '-'}", flush=True)
    summary = save_pace(args, results)
    print(pace_markdown(results, summary, args.time_limit, per_instance=args.markdown))
    print(f"wrote {args.out}", file=sys.stderr)
    return 1 if any(r.get("wrong") for r in results) else 0


def save_pace(args, results):
    """Write the rows so far and their summary to ``args.out``; returns the summary."""
    summary = pace_summary(results, args.time_limit)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": {"time_limit": args.time_limit, "device": args.device,
                                        "clock": "process CPU seconds" if args.device == "cpu" else "wall",
                                        "affinity": sorted(os.sched_getaffinity(0))},
                               "summary": summary, "rows": results}, indent=1))
    return summary


def pace_summary(results, limit):
    ours = [r for r in results if r["solved"] and r["seconds"] <= limit]
    peer = [r for r in results if r["peer_seconds"] is not None and r["peer_seconds"] <= limit]
    both = [r for r in ours if r["peer_seconds"] is not None and r["peer_seconds"] <= limit]
    return dict(instances=len(results), solved=len(ours), peer_solved=len(peer), both=len(both),
                only_ours=len(ours) - len(both), only_peer=len(peer) - len(both),
                median=statistics.median([r["seconds"] for r in both]) if both else None,
                peer_median=statistics.median([r["peer_seconds"] for r in both]) if both else None,
                wrong=sum(bool(r.get("wrong")) for r in results))


def pace_markdown(results, s, limit, per_instance=True):
    lines = [f"| {limit:g} s per instance | this library | WeGotYouCovered |", "|---|---|---|",
             f"| proved optimal (of {s['instances']}) | {s['solved']} | {s['peer_solved']} |",
             f"| solved by one only | {s['only_ours']} | {s['only_peer']} |"]
    if s["both"]:
        lines.append(f"| median seconds on the {s['both']} both solve | {s['median']:.2f} | {s['peer_median']:.2f} |")
    if s["wrong"]:
        lines.append(f"| wrong answers | {s['wrong']} | - |")
    if per_instance:
        lines += ["", "| instance | n | m | answer | ours (s) | size / lower bound | how | peer (s) |",
                  "|---|---:|---:|---:|---:|---|---|---:|"]
        for r in results:
            t = f"{r['seconds']:.2f}" if r["solved"] else f">{limit:g}"
            sz = f"{r.get('size')} / {r.get('lower_bound')}" if "size" in r else "-"
            peer = f"{r['peer_seconds']:.2f}" if r["peer_seconds"] is not None else f">{limit:g}"
            lines.append(f"| {r['instance']} | {r['n']} | {r['m']} | {r['answer']} | {t} | {sz} | "
                         f"{r.get('solved_by', r.get('error', ['-'])[0])} | {peer} |")
    return "\n".join(lines)


# ============================================================================ Table I
def load_instance(name, answers):
    """(graph, minimum cover size or None, label)."""
    if ("dimacs", name) in answers:
        G = graphkit.read_graph(SHARED / "graphs" / "dimacs" / f"{name}.clq").complement()
        return G, G.n - answers[("dimacs", name)], f"{name} (compl.)"
    if ("vc", name) in answers:
        G = graphkit.read_graph(SHARED / "graphs" / "pace2019-vc" / f"{name}.gr")
        return G, answers[("vc", name)], name
    raise SystemExit(f"unknown instance {name!r} (not in {SHARED / 'graphs' / 'answers.csv'})")


def solve(G, problem, opt, device, method, time_limit, start_depth):
    """Run one problem once; returns (seconds, result, finished, correct)."""
    t0 = time.perf_counter()
    if problem == "mvc":
        r = minimum_vertex_cover(G, device=device, method=method, time_limit=time_limit, start_depth=start_depth)
        sec = time.perf_counter() - t0
        finished = r.optimal
        correct = (r.size == opt) if finished else (r.size >= opt)
    else:
        k = opt + {"k-1": -1, "k": 0, "k+1": 1}[problem]
        r = parameterized_vertex_cover(G, k, device=device, method=method, time_limit=time_limit,
                                       start_depth=start_depth)
        sec = time.perf_counter() - t0
        finished = r.proved
        correct = (r.found is (k >= opt)) if finished else True
    return sec, r, finished, correct


def answer(problem, r, finished):
    """What a finished run says (the cover size, or whether a cover within k exists);
    None when it did not finish."""
    if not finished:
        return None
    return int(r.size) if problem == "mvc" else bool(r.found)


def ratio(a, b):
    """``a / b`` when both are set, else None."""
    return a / max(b, 1e-9) if a is not None and b is not None else None


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
    return f"{sec:.4f}" if sec < 0.01 else f"{sec:.3f}"


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
    PVC budgets for the Hybrid GPU (the pipeline without a GPU), and the GPU load balance on MVC."""
    rows = results["rows"]
    mvc_rows = [r for r in rows if r["problem"] == "mvc"]
    engines = {name: key for name, key in ENGINES.items() if any(f"{key}_time" in r for r in rows)}
    panels = [lambda ax: mvc_times_panel(ax, mvc_rows, engines)]
    engine = next((name for name in ("Hybrid GPU", "branch-and-reduce (CPU)") if name in engines), None)
    if engine:
        panels.append(lambda ax: problems_panel(ax, rows, engine, engines[engine]))
    if any("hybrid_load_max_over_mean" in r for r in mvc_rows):
        panels.append(lambda ax: load_balance_panel(ax, mvc_rows))
    save_figure(path, panels, suptitle=f"exact vertex cover; GPU: {results['meta']['gpu'] or 'none'}")


def run_table1(args):
    answers = load_answers()
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
    # compile every search before timing anything: the Petersen graph survives the paper's
    # rules, the warm-up covers the pipeline
    outer, inner = np.arange(5), 5 + np.arange(5)
    petersen = graphkit.Graph.from_edges(10, np.concatenate([outer, outer, inner]),
                                         np.concatenate([(outer + 1) % 5, inner, 5 + (inner + 2) % 5]))
    graphkit.warm_up(device="cpu", problems=("vertex_cover",))
    minimum_vertex_cover(petersen, device="cpu", method="hybrid", time_limit=60)
    parameterized_vertex_cover(petersen, 6, device="cpu", method="hybrid", time_limit=60)
    if gpu:
        from kernels.vertex_cover.exact import compile_once

        compile_once("gpu")

    rows = []
    header = (f"{'instance':<24} {'n':>5} {'m':>7} {'min':>5} {'prob':>5} {'Seq(CPU)':>9} {'pipe(CPU)':>9} "
              f"{'StackOnly':>9} {'Hybrid':>9} {'GPU route':>9} {'x paper':>7} {'x CPU':>6} "
              f"{'paper Seq/SO/Hy (V100)':>24} {'nodes(Hy)':>10} {'LB SO':>6} {'LB Hy':>6} same ok")
    print(f"vertex cover benchmark; GPU: {device_name or 'none (GPU columns skipped)'}")
    print(header)
    print("-" * len(header))
    for name in names:
        G, opt, label = load_instance(name, answers)
        for problem in args.problems:
            row = {"instance": name, "n": G.n, "m": G.m, "min": opt, "problem": problem}
            ok = True
            if not args.no_cpu:
                sec, r, fin, corr = solve(G, problem, opt, "cpu", "hybrid", args.cpu_time_limit, args.start_depth)
                row.update(cpu_time=sec, cpu_finished=bool(fin), cpu_nodes=r.nodes)
                ok &= corr
            said_by = {}
            # the pipeline on the CPU (wall clock, the same host): median of `repeat` runs
            # when a run takes under a second
            sec, r, fin, corr = solve(G, problem, opt, "cpu", "auto", args.cpu_time_limit, args.start_depth)
            if sec < 1.0 and args.repeat > 1:
                sec = statistics.median([sec] + [solve(G, problem, opt, "cpu", "auto", args.cpu_time_limit,
                                                       args.start_depth)[0] for _ in range(args.repeat - 1)])
            row.update(bnr_time=sec, bnr_finished=bool(fin), bnr_nodes=r.nodes)
            said_by["bnr"] = answer(problem, r, fin)
            ok &= corr
            if gpu:
                for method, key, limit_name in GPU_RUNS:
                    limit = getattr(args, limit_name)
                    try:
                        sec, r, fin, corr = timed_gpu(G, problem, opt, method, limit, args.start_depth, args.repeat)
                    except Exception as e:  # recorded (and the row marked wrong), the table goes on
                        row.update({f"{key}_time": None, f"{key}_finished": False, f"{key}_error": repr(e)})
                        print(f"{label} {problem} {key}: {e!r}", file=sys.stderr, flush=True)
                        ok = False
                        continue
                    w = np.asarray(r.worker_nodes, dtype=np.float64)
                    row.update({f"{key}_time": sec, f"{key}_finished": bool(fin), f"{key}_nodes": int(r.nodes),
                                f"{key}_device": r.device,
                                f"{key}_load_max_over_mean": float(w.max() / w.mean()) if w.mean() > 0 else 1.0,
                                f"{key}_load_min_over_mean": float(w.min() / w.mean()) if w.mean() > 0 else 1.0})
                    said_by[key] = answer(problem, r, fin)
                    ok &= corr
                # the route against today's kernels (the better of the two) and the CPU pipeline
                paper_best = min((row[f"{m}_time"] for m in ("stackonly", "hybrid") if row[f"{m}_finished"]),
                                 default=None)
                if row["route_finished"]:
                    row["route_vs_paper_kernels"] = ratio(paper_best, row["route_time"])
                    row["route_vs_cpu_pipeline"] = ratio(row["bnr_time"] if row["bnr_finished"] else None,
                                                         row["route_time"])
            # "CPU and GPU sizes equal": every finished run gives the same answer
            said = {k: v for k, v in said_by.items() if v is not None}
            row["answers"] = said
            row["same"] = len(set(said.values())) <= 1
            paper = PAPER.get(name, {}).get(problem)
            if paper:
                row.update(paper_seq=paper[0], paper_stackonly=paper[1], paper_hybrid=paper[2])
                if gpu and row.get("hybrid_finished"):
                    row["hybrid_vs_paper_speedup"] = paper[2] / max(row["hybrid_time"], 1e-9)
            if row.get("bnr_finished") and row.get("hybrid_finished"):
                row["hybrid_vs_bnr_speedup"] = row["bnr_time"] / max(row["hybrid_time"], 1e-9)
            row["correct"] = bool(ok and row["same"])
            rows.append(row)
            save_table1(args, rows, device_name)  # a run stopped early keeps what it measured
            pap = "/".join(f"{x:g}" for x in paper) if paper else "-"
            xp, xc = row.get("route_vs_paper_kernels"), row.get("route_vs_cpu_pipeline")
            print(f"{label:<24} {G.n:>5} {G.m:>7} {opt:>5} {problem:>5} "
                  f"{fmt(row.get('cpu_time'), row.get('cpu_finished'), args.cpu_time_limit):>9} "
                  f"{fmt(row.get('bnr_time'), row.get('bnr_finished'), args.cpu_time_limit):>9} "
                  f"{fmt(row.get('stackonly_time'), row.get('stackonly_finished'), args.stackonly_time_limit):>9} "
                  f"{fmt(row.get('hybrid_time'), row.get('hybrid_finished'), args.time_limit):>9} "
                  f"{fmt(row.get('route_time'), row.get('route_finished'), args.time_limit):>9} "
                  f"{'-' if xp is None else f'{xp:.2f}':>7} {'-' if xc is None else f'{xc:.1f}':>6} {pap:>24} "
                  f"{row.get('hybrid_nodes', row.get('bnr_nodes', 0)):>10} "
                  f"{row.get('stackonly_load_max_over_mean', float('nan')):>6.2f} "
                  f"{row.get('hybrid_load_max_over_mean', float('nan')):>6.2f} {'yes' if row['same'] else 'NO':>4} "
                  f"{'yes' if ok else 'NO'}", flush=True)
    results = save_table1(args, rows, device_name)
    print(table1_summary(rows))
    print(f"wrote {args.out}")
    if not args.no_plot:
        plot_results(results, plot_path(Path(args.out)))
    return 0 if all(r["correct"] for r in rows) else 1


def save_table1(args, rows, device_name):
    """Write the Table I rows so far to ``args.out``; returns the saved dict."""
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"gpu": device_name, "cpu_threads": os.cpu_count(), "time_limit": args.time_limit,
            "cpu_time_limit": args.cpu_time_limit, "stackonly_time_limit": args.stackonly_time_limit,
            "start_depth": args.start_depth, "repeat": args.repeat}
    results = {"meta": meta, "rows": rows}
    out.write_text(json.dumps(results, indent=1))
    return results


def table1_summary(rows):
    """The GPU route against the paper's kernels (every row) and against the CPU pipeline
    (the MVC rows), and whether all finished runs agreed."""
    lines = []
    xp = [r for r in rows if "route_time" in r]
    if xp:
        faster = [r for r in xp if (r.get("route_vs_paper_kernels") or 0) > 1
                  or (r["route_finished"] and not (r["hybrid_finished"] or r["stackonly_finished"]))]
        slower = [f"{r['instance']} {PROBLEM_LABELS[r['problem']]}" for r in xp if r not in faster]
        lines.append(f"- GPU route faster than the paper's kernels on {len(faster)} of {len(xp)} rows"
                     + (f"; not on: {', '.join(slower)}" if slower else ""))
        mvc = [r for r in xp if r["problem"] == "mvc"]
        # the two often run the same CPU code on easy rows: within 10% is a tie
        ahead = [r["instance"] for r in mvc if (r.get("route_vs_cpu_pipeline") or 0) > 1.1]
        behind = [r["instance"] for r in mvc if (r.get("route_vs_cpu_pipeline") or 0) < 1 / 1.1]
        lines.append(f"- GPU route ahead of the CPU pipeline by more than 10% on {len(ahead)} of {len(mvc)} MVC rows"
                     + (f" ({', '.join(ahead)})" if ahead else "")
                     + (f", behind on {len(behind)} ({', '.join(behind)})" if behind else ", behind on none"))
    lines.append(f"- the same answer from every finished run: {sum(r['same'] for r in rows)} of {len(rows)} rows")
    return "\n".join(lines)


def docs_table(base_json, long_json=None):
    """Summary rows and the compact per-instance table of docs/pace-instances.md from saved
    results: ``base_json`` (every instance) and optionally ``long_json`` (a run with a longer
    limit of the instances open in the base run; the others keep their base time)."""
    base = json.loads(Path(base_json).read_text())
    limit = base["meta"]["time_limit"]
    rows = base["rows"]
    out = [pace_markdown(rows, pace_summary(rows, limit), limit, per_instance=False)]
    longer = {}
    if long_json:
        lj = json.loads(Path(long_json).read_text())
        long_limit = lj["meta"]["time_limit"]
        longer = {r["instance"]: r for r in lj["rows"]}
        merged = [longer.get(r["instance"], r) for r in rows]
        s = pace_summary(merged, long_limit)
        out += ["", f"{long_limit:g} s (instances open at {limit:g} s rerun; the peer's times are from its "
                    f"{limit:g} s runs): proved {s['solved']}, median {s['median']:.2f} s against "
                    f"{s['peer_median']:.2f} s on the {s['both']} both prove"]
    cells = []
    for r in rows:
        name = r["instance"].removeprefix("vc-exact_")
        ours_ok = r["solved"] and r["seconds"] <= limit
        peer_ok = r["peer_seconds"] is not None and r["peer_seconds"] <= limit
        star = "*" if ours_ok != peer_ok else ""
        ours = f"{r['seconds']:.2f}" if ours_ok else f">{limit:g}"
        peer = f"{r['peer_seconds']:.2f}" if peer_ok else f">{limit:g}"
        cell = f"{name}{star}: {ours} / {peer}"
        if not ours_ok:
            cell += f" ({r.get('size')}/{r.get('lower_bound')})" if "size" in r else " (-)"
            lr = longer.get(r["instance"])
            if lr is not None:
                lim2 = lj["meta"]["time_limit"]
                cell += f"; {lim2:g} s: " + (f"{lr['seconds']:.2f}" if lr["solved"] else
                                              f">{lim2:g} ({lr.get('size')}/{lr.get('lower_bound')})")
        cells.append(cell)
    out += ["", "| instance: ours / peer | instance: ours / peer | instance: ours / peer | instance: ours / peer |",
            "|---|---|---|---|"]
    for i in range(0, len(cells), 4):
        row = cells[i:i + 4] + [""] * (4 - len(cells[i:i + 4]))
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def table1_markdown(paths):
    """The BENCHMARKS.md Table I from saved ``--set table1`` results (several files are
    joined): per row the paper's kernels, the GPU route, the CPU pipeline of the same host,
    the paper's V100 Hybrid, and whether every finished run gave the same answer."""
    rows, meta = [], {}
    for path in paths:
        data = json.loads(Path(path).read_text())
        rows += data["rows"]
        meta = data["meta"]

    def t(r, key, limit):
        if r.get(f"{key}_time") is None:
            return "-"
        sec = r[f"{key}_time"]
        # (a millisecond row keeps two significant digits)
        return (f"{sec:.4f}" if sec < 0.01 else f"{sec:.3f}") if r.get(f"{key}_finished") else f">{limit:g}"

    lines = ["| complement of | problem | StackOnly | Hybrid | GPU route | route x kernels | CPU pipeline | "
             "route x CPU | paper Hybrid (V100) | same answer |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        xp, xc = r.get("route_vs_paper_kernels"), r.get("route_vs_cpu_pipeline")
        lines.append(f"| {r['instance']} | {PROBLEM_LABELS[r['problem']]} | "
                     f"{t(r, 'stackonly', meta['stackonly_time_limit'])} | {t(r, 'hybrid', meta['time_limit'])} | "
                     f"**{t(r, 'route', meta['time_limit'])}** | {'-' if xp is None else f'{xp:.1f}'} | "
                     f"{t(r, 'bnr', meta['cpu_time_limit'])} | {'-' if xc is None else f'{xc:.1f}'} | "
                     f"{r.get('paper_hybrid', '-')} | {'yes' if r.get('same') else 'NO'} |")
    lines += ["", table1_summary(rows)]
    return "\n".join(lines)


def load_rows(paths):
    """Rows of saved pace2019 results (several files: shards of one run), by instance."""
    rows = {}
    for path in paths:
        for r in json.loads(Path(path).read_text())["rows"]:
            rows[r["instance"]] = r
    return rows


def compare_table(cpu_paths, gpu_paths):
    """The GPU route next to the CPU pipeline on the instances both runs measured (shards of
    each side may come in several files): seconds, who proved what, and whether the sizes
    agree wherever both finished."""
    cpu, gpu = load_rows(cpu_paths), load_rows(gpu_paths)
    names = sorted(set(cpu) & set(gpu))
    lines = ["| instance | n | kernel | CPU s | GPU route s | GPU route / CPU | GPU took part | same size |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    same_all = True
    for name in names:
        c, g = cpu[name], gpu[name]

        def cell(r):
            if "size" not in r:
                return "-"
            return f"{r['seconds']:.2f}" if r["solved"] else f">{r['seconds']:.0f} ({r['size']}/{r['lower_bound']})"

        both = c.get("solved") and g.get("solved")
        same = "size" in c and "size" in g and (c["size"] == g["size"] if both else True)
        same_all &= bool(same)
        quotient = f"{g['seconds'] / max(c['seconds'], 1e-9):.2f}" if both else "-"
        lines.append(f"| {name.removeprefix('vc-exact_')} | {c['n']} | {g.get('kernel', '-')} | {cell(c)} | {cell(g)} | "
                     f"{quotient} | {'yes' if g.get('device') == 'gpu' else 'no'} | {'yes' if same else 'NO'} |")
    sc = sum(bool(cpu[n].get("solved")) for n in names)
    sg = sum(bool(gpu[n].get("solved")) for n in names)
    lines.append(f"\n{len(names)} instances: CPU proves {sc}, GPU route {sg}; sizes agree wherever both proved: "
                 f"{'yes' if same_all else 'NO'}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=["table1", "pace2019"], default="table1")
    ap.add_argument("--instances", nargs="*", default=None, help="names (DIMACS or PACE; pace2019: vc-exact_NNN)")
    ap.add_argument("--quick", action="store_true", help="small smoke run (table1)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per instance (pace2019, default 20) or per Hybrid GPU run (table1, default 15)")
    ap.add_argument("--grace", type=float, default=30.0, help="pace2019: seconds past the limit before the worker "
                                                              "is killed (start-up and warm-up)")
    ap.add_argument("--device", choices=["cpu", "gpu", "auto"], default="cpu", help="pace2019: device of the solve")
    ap.add_argument("--markdown", action="store_true", help="pace2019: print the per-instance table too")
    ap.add_argument("--open-in", default=None, metavar="JSON",
                    help="pace2019: run only the instances not proved in this earlier result (the longer column)")
    ap.add_argument("--docs-table", nargs="+", default=None, metavar="JSON",
                    help="pace2019: print the summary and the compact per-instance table of saved results (a "
                         "base run, then optionally a longer run of its open instances) and exit")
    ap.add_argument("--compare", nargs=2, default=None, metavar=("CPU_JSONS", "GPU_JSONS"),
                    help="pace2019: print the GPU route next to the CPU pipeline from saved results (each a "
                         "comma-separated list of files, e.g. shards) and exit")
    ap.add_argument("--table1-markdown", nargs="+", default=None, metavar="JSON",
                    help="table1: print the BENCHMARKS.md table of saved results and exit")
    ap.add_argument("--problems", nargs="+", choices=PROBLEMS, default=PROBLEMS,
                    help="table1: which rows per instance (default: MVC and the three PVC budgets)")
    ap.add_argument("--cpu-time-limit", type=float, default=5.0, help="table1: CPU seconds per run (default 5)")
    ap.add_argument("--stackonly-time-limit", type=float, default=5.0, help="table1: StackOnly GPU seconds per run")
    ap.add_argument("--start-depth", type=int, default=8, help="StackOnly sub-tree depth (paper: 8, 12, 16)")
    ap.add_argument("--repeat", type=int, default=3, help="table1: GPU repetitions for the median")
    ap.add_argument("--no-cpu", action="store_true", help="table1: skip the paper's Sequential CPU column")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-plot", action="store_true", help="table1: do not write the PNG plot")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.time_limit, args.device)
        return 0
    if args.docs_table:
        print(docs_table(*args.docs_table))
        return 0
    if args.table1_markdown:
        print(table1_markdown(args.table1_markdown))
        return 0
    if args.compare:
        print(compare_table(*(paths.split(",") for paths in args.compare)))
        return 0
    if not SHARED.is_dir():
        print(f"no shared data at {SHARED}; nothing to benchmark", file=sys.stderr)
        return 0
    if args.set == "pace2019":
        args.time_limit = args.time_limit or 20.0
        args.out = args.out or f"bench_results/bench_vc_pace2019_{args.time_limit:g}s.json"
        return run_pace(args)
    args.time_limit = args.time_limit or 15.0
    args.out = args.out or "bench_results/bench_vc.json"
    return run_table1(args)


if __name__ == "__main__":
    sys.exit(main())
