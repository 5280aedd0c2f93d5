"""Benchmark of maximal clique enumeration and maximum clique (after Jenkins et al., Euro-Par 2011).

Table 1, maximal cliques, for generated RMAT / Kronecker / Barabasi-Albert graphs with
10^5..10^6 vertices and the DIMACS graphs whose maximal cliques can be listed in seconds:

* ours on the GPU: ``count_maximal_cliques(device="gpu")`` (histogram only, no clique
  transfer) and the full enumeration with the cliques copied to the host
  (``maximal_clique_chunks(device="gpu")``), CUDA events, median of ``--repeat`` runs
  after one warm-up; the GPU cliques/s column is count / count time;
* ours on the CPU (Numba, one core): ``count_maximal_cliques(device="cpu")`` and the
  chunked enumeration, one run each (compiled before anything is timed);
* python-igraph's ``Graph.maximal_cliques()`` (the list of tuples; its count is the
  list's length) and networkx's ``find_cliques`` (graphs up to ``--nx-max-edges`` edges
  and ``--nx-max-cliques`` cliques; "skip" otherwise), on this machine's CPU in the
  same run. Where a graph has more than ``--igraph-list-max`` maximal cliques the list
  would not fit in memory: igraph then writes them to a pipe read by ``wc -l`` (marked
  ``p``; its time includes igraph's text formatting).

Every count of ours (GPU count, GPU enumeration, CPU count, CPU enumeration) must equal
igraph's, and with a list also the number of cliques of every size; the column
``=igraph`` says so ("-" where igraph did not run). Convention: an isolated vertex is a
maximal clique of size 1 for us (``min_size=1``, the default), for igraph
(``maximal_cliques(min=0, max=0)``, the defaults) and for networkx, so the counts compare
exactly without any correction. Note: igraph zeroes an n-long position array once per
vertex (``igraph_vector_int_null(&pos)`` in its Bron-Kerbosch driver), so its time has
an O(n^2) term that dominates on sparse graphs with 10^5..10^6 vertices.

Table 2, maximum clique on the DIMACS graphs: the colouring branch and bound
(``method="branch_and_bound"``) on the CPU, on the GPU and with ``device="auto"`` (CPU
first, the GPU when the CPU search has not finished after 20,000 nodes; the column tells
which one answered), and the minimum vertex cover of the complement
(``method="vertex_cover"``) on the CPU and the GPU, with a
per-instance ``--time-limit``; sizes against ``answers.csv``; next to igraph's
``clique_number()`` (a child process stopped at ``--igraph-time-limit``). Runs stopped by the time
limit show ``>limit``. Also saves a plot of both tables as ``<out>.png`` (``--no-plot``: none).

    python examples/bench_cliques.py                 # writes bench_results/bench_cliques.json
    python examples/bench_cliques.py --quick         # small graphs, seconds
    python examples/bench_cliques.py --large         # also 2^20-vertex graphs and DIMACS graphs
                                                     # with 2e7..8e7 maximal cliques
    python examples/bench_cliques.py --no-cpu --markdown
"""
from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphkit  # noqa: E402
from graphkit import generators as gen  # noqa: E402
from kernels.backend import gpu_available  # noqa: E402
from kernels.timing import gpu_time  # noqa: E402

from _plotting import grouped_bars, leave_room_for_legend, mark_stopped, plot_path, save_figure  # noqa: E402
from _shared_data import SHARED, load_answers  # noqa: E402


def barabasi_albert(n, m, seed):
    """Barabasi-Albert graph (python-igraph's generator, seeded through ``random``)."""
    import igraph

    random.seed(seed)
    e = np.asarray(igraph.Graph.Barabasi(n, m).get_edgelist(), dtype=np.int64).reshape(-1, 2)
    return graphkit.Graph.from_edges(n, e[:, 0], e[:, 1], warn=False)


# (label, generator). RMAT with (a, b, c) = (0.45, 0.15, 0.15) and the Graph500 Kronecker
# parameters (0.57, 0.19, 0.19) at a low edge factor: at edge factor 8 the Graph500 setting
# has a dense core with 4.1e6 maximal cliques at 2^15 vertices and 3.5e7 at 2^16 (igraph's
# list of them would not fit in memory from 2^17 on). The BA graphs need python-igraph.
GEN_QUICK = [
    ("rmat 2^15 ef=4", lambda: gen.rmat(15, 4, 0.45, 0.15, 0.15, seed=1)),
    ("kronecker 2^14 ef=4", lambda: gen.kronecker(14, 4, seed=2)),
    ("BA 2^15 m=4", lambda: barabasi_albert(1 << 15, 4, seed=3)),
]
GEN_FULL = [
    ("rmat 2^17 ef=8", lambda: gen.rmat(17, 8, 0.45, 0.15, 0.15, seed=1)),
    ("rmat 2^17 ef=16", lambda: gen.rmat(17, 16, 0.45, 0.15, 0.15, seed=1)),
    ("kronecker 2^17 ef=4", lambda: gen.kronecker(17, 4, seed=2)),
    ("BA 2^17 m=8", lambda: barabasi_albert(1 << 17, 8, seed=3)),
    ("rmat 2^19 ef=8", lambda: gen.rmat(19, 8, 0.45, 0.15, 0.15, seed=1)),
    ("BA 2^19 m=8", lambda: barabasi_albert(1 << 19, 8, seed=3)),
]
GEN_LARGE = [
    ("rmat 2^20 ef=8", lambda: gen.rmat(20, 8, 0.45, 0.15, 0.15, seed=1)),
    ("BA 2^20 m=8", lambda: barabasi_albert(1 << 20, 8, seed=3)),
]
# DIMACS graphs for the enumeration (maximal clique counts in the comments). Left out:
# C125.9, MANN_a27, p_hat300-3 and san200_0.7_1 (far more maximal cliques; no run ends
# in minutes).
MCE_DIMACS_QUICK = ["johnson8-2-4", "hamming6-4", "c-fat200-1", "p_hat300-1", "johnson8-4-4", "MANN_a9"]
MCE_DIMACS_FULL = MCE_DIMACS_QUICK + [
    "c-fat200-2", "c-fat500-1",  # 18, 80
    "brock200_2", "hamming6-2", "johnson16-2-4", "keller4",  # 0.43M, 1.3M, 2.0M, 10.3M
]
MCE_DIMACS_LARGE = ["brock200_4", "hamming8-4", "sanr200_0.7", "p_hat300-2"]  # 20M, 45M, 70M, 80M
MAXCLIQUE_QUICK = ["johnson8-2-4", "hamming6-4", "MANN_a9", "c-fat200-1", "johnson8-4-4", "p_hat300-1", "brock200_2",
                   "keller4", "sanr200_0.7", "p_hat300-3", "MANN_a27"]


def log(msg):
    print(f"  .. {msg}", file=sys.stderr, flush=True)


def dimacs_path(name):
    return SHARED / "graphs" / "dimacs" / f"{name}.clq"


def trim(h):
    """Histogram (index = clique size) as a list without trailing zeros."""
    return np.trim_zeros(np.asarray(h, dtype=np.int64), "b").tolist()


def add_hist(acc, sizes):
    h = np.bincount(sizes)
    if len(h) > len(acc):
        acc = np.concatenate([acc, np.zeros(len(h) - len(acc), np.int64)])
    acc[: len(h)] += h
    return acc


def enumerate_chunks(G, device, chunk):
    """Full enumeration through :func:`graphkit.maximal_clique_chunks`: (count, histogram)."""
    hist = np.zeros(1, np.int64)
    for _, off in graphkit.maximal_clique_chunks(G, device=device, chunk_cliques=chunk):
        hist = add_hist(hist, np.diff(off))
    return int(hist.sum()), trim(hist)


# ------------------------------------------------------------------------------- ours
def gpu_mce(G, repeat, chunk):
    """GPU count (library call; plan reused: kernels only) and enumeration with transfer."""
    out, box = {}, {}

    def count():
        box["count"] = graphkit.count_maximal_cliques(G, device="gpu")

    out["gpu_count_time"] = gpu_time(count, repeat=repeat, warmup=1)
    out["gpu_count"], out["gpu_hist"] = box["count"].count, trim(box["count"].histogram)

    def enum():
        box["enum"] = enumerate_chunks(G, "gpu", chunk)

    out["gpu_enum_time"] = gpu_time(enum, repeat=repeat, warmup=1)
    out["gpu_enum_count"], out["gpu_enum_hist"] = box["enum"]
    # the same count with the host-side plan (degeneracy order, task list, copies) built
    # once: the kernel launches alone
    try:
        from kernels.cliques.mce_gpu import MceGpuPlan, mce_flushes_gpu

        t0 = time.perf_counter()
        plan = MceGpuPlan(G)
        out["gpu_plan_time"] = time.perf_counter() - t0

        def kernels_only():
            g = mce_flushes_gpu(plan, 1, True, 0)
            while True:
                try:
                    next(g)
                except StopIteration as stop:
                    box["kern"] = stop.value
                    return

        out["gpu_kernel_time"] = gpu_time(kernels_only, repeat=repeat, warmup=1)
        out["gpu_kernel_hist"] = trim(box["kern"])
    except (AttributeError, TypeError, ImportError) as exc:  # kernels/cliques.py internals changed
        out["gpu_kernel_note"] = f"plan/kernels split not measured: {exc!r}"
    return out


def cpu_mce(G, chunk):
    out = {}
    t0 = time.perf_counter()
    r = graphkit.count_maximal_cliques(G, device="cpu")
    out["cpu_count_time"] = time.perf_counter() - t0
    out["cpu_count"], out["cpu_hist"] = r.count, trim(r.histogram)
    t0 = time.perf_counter()
    out["cpu_enum_count"], out["cpu_enum_hist"] = enumerate_chunks(G, "cpu", chunk)
    out["cpu_enum_time"] = time.perf_counter() - t0
    return out


# --------------------------------------------------------------------------- references
def to_igraph(G):
    import igraph

    u, v = G.edges()
    return igraph.Graph(n=G.n, edges=np.column_stack([u, v]).tolist())


def igraph_mce(G, known_count, list_max):
    """igraph's maximal_cliques(): the list (default) or, above ``list_max`` cliques,
    written to a pipe counted by ``wc -l``."""
    g = to_igraph(G)
    out = {}
    if known_count is None or known_count <= list_max:
        t0 = time.perf_counter()
        cl = g.maximal_cliques()
        out["igraph_time"] = time.perf_counter() - t0
        sizes = np.fromiter(map(len, cl), np.int64, len(cl))
        del cl
        out["igraph_count"], out["igraph_hist"], out["igraph_mode"] = len(sizes), trim(np.bincount(sizes)), "list"
    else:
        wc = subprocess.Popen(["wc", "-l"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        t0 = time.perf_counter()
        g.maximal_cliques(file=wc.stdin)
        wc.stdin.close()
        lines = wc.stdout.read()
        out["igraph_time"] = time.perf_counter() - t0
        wc.wait()
        out["igraph_count"], out["igraph_hist"], out["igraph_mode"] = int(lines), None, "pipe"
    return out


def networkx_mce(G):
    import networkx as nx

    H = G.to_networkx()
    t0 = time.perf_counter()
    sizes = [len(c) for c in nx.find_cliques(H)]
    sec = time.perf_counter() - t0
    return {"networkx_time": sec, "networkx_count": len(sizes), "networkx_hist": trim(np.bincount(sizes))}


_IGRAPH_CLIQUE_NUMBER = """
import io, sys, time, json, numpy as np, igraph
d = np.load(io.BytesIO(sys.stdin.buffer.read()))
g = igraph.Graph(n=int(d["n"]), edges=d["e"].tolist())
t0 = time.perf_counter()
w = g.clique_number()
print(json.dumps([int(w), time.perf_counter() - t0]))
"""


def igraph_clique_number(G, time_limit):
    """igraph's clique_number() in a child process stopped at the time limit: (size, seconds) or None."""
    u, v = G.edges()
    buf = io.BytesIO()
    np.savez(buf, n=np.int64(G.n), e=np.column_stack([u, v]).astype(np.int64))
    try:
        p = subprocess.run([sys.executable, "-c", _IGRAPH_CLIQUE_NUMBER], input=buf.getvalue(), capture_output=True,
                           timeout=time_limit + 3.0)  # + interpreter start and graph build
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"igraph clique_number child failed: {p.stderr.decode()[-500:]}")
    w, sec = json.loads(p.stdout.decode().strip().splitlines()[-1])
    return (w, sec) if sec <= time_limit else None


# ------------------------------------------------------------------------- table 1
def measure_mce(label, kind, make, args, gpu):
    t0 = time.perf_counter()
    G = make()
    row = {"graph": label, "kind": kind, "n": G.n, "m": G.m, "isolated": int(np.count_nonzero(G.degrees == 0))}
    log(f"{label}: n={G.n:,} m={G.m:,} (built in {time.perf_counter() - t0:.1f} s)")
    if gpu:
        row.update(gpu_mce(G, args.repeat, args.chunk_cliques))
        log(f"{label}: GPU count {row['gpu_count_time']:.3f} s, enumeration {row['gpu_enum_time']:.3f} s")
    if not args.no_cpu:
        row.update(cpu_mce(G, args.chunk_cliques))
        log(f"{label}: CPU count {row['cpu_count_time']:.3f} s, enumeration {row['cpu_enum_time']:.3f} s")
    counts = [row[k] for k in ("gpu_count", "gpu_enum_count", "cpu_count", "cpu_enum_count") if k in row]
    hists = [row[k] for k in ("gpu_hist", "gpu_enum_hist", "gpu_kernel_hist", "cpu_hist", "cpu_enum_hist")
             if k in row]
    known = counts[0] if counts else None
    row["ours_consistent"] = len(set(counts)) <= 1 and all(h == hists[0] for h in hists)
    if not args.no_igraph:
        log(f"{label}: igraph maximal_cliques ...")
        row.update(igraph_mce(G, known, args.igraph_list_max))
        log(f"{label}: igraph {row['igraph_time']:.2f} s ({row['igraph_mode']})")
        ref, ref_hist = row["igraph_count"], row["igraph_hist"]
        row["count_equals_igraph"] = (bool(all(c == ref for c in counts)
                                           and (ref_hist is None or all(h == ref_hist for h in hists)))
                                      if counts else None)  # None: nothing of ours ran (--no-cpu, no GPU)
        known = ref if known is None else known
    if args.no_cpu:
        row["networkx_skipped"] = "--no-cpu"
    elif G.m > args.nx_max_edges:
        row["networkx_skipped"] = f"m > {args.nx_max_edges:g}"
    elif known is not None and known > args.nx_max_cliques:
        row["networkx_skipped"] = f"cliques > {args.nx_max_cliques:g}"
    else:
        log(f"{label}: networkx find_cliques ...")
        row.update(networkx_mce(G))
        row["count_equals_networkx"] = bool(all(c == row["networkx_count"] for c in counts)
                                            and all(h == row["networkx_hist"] for h in hists))
    cnt = row.get("igraph_count", known)
    row["cliques"] = cnt
    hist = next((row[k] for k in ("igraph_hist", "cpu_hist", "gpu_hist") if row.get(k) is not None), None)
    row["max_size"] = len(hist) - 1 if hist else None
    if cnt:
        for p in ("gpu_count", "gpu_enum", "gpu_kernel", "cpu_count", "cpu_enum", "igraph", "networkx"):
            if f"{p}_time" in row:
                row[f"{p}_cliques_per_s"] = cnt / max(row[f"{p}_time"], 1e-12)
    if "igraph_time" in row:
        for p in ("gpu_count", "gpu_enum", "cpu_count", "cpu_enum"):
            if f"{p}_time" in row:
                row[f"{p}_speedup_vs_igraph"] = row["igraph_time"] / max(row[f"{p}_time"], 1e-12)
    row["correct"] = bool(row["ours_consistent"] and row.get("count_equals_igraph") is not False
                          and row.get("count_equals_networkx") is not False)
    del G
    return row


def _t(x):
    """Seconds: three significant digits below 1 s."""
    return f"{x:.3g}" if x < 1 else (f"{x:.2f}" if x < 100 else f"{x:.1f}")


def _s(x, width=8):
    return f"{'-':>{width}}" if x is None else f"{_t(x):>{width}}"


def _x(x, width=7):
    return f"{'-':>{width}}" if x is None else f"{x:>{width}.1f}"


def _n(x):
    return "-" if x is None else f"{x:,}"


def _yes(v):
    return "-" if v is None else ("yes" if v else "NO")


MCE_HEAD = (f"{'graph':<22} {'n':>9} {'m':>10} {'cliques':>11} {'w':>3} {'GPU cnt':>8} {'GPU enum':>8} {'GPU Mc/s':>8} "
            f"{'CPU cnt':>8} {'CPU enum':>8} {'CPU Mc/s':>8} {'igraph':>9} {'nx':>8} {'xig cnt':>7} {'xig enu':>7} "
            f"{'CPU xig':>7} {'=igraph':>7}")


def mce_line(r):
    ig = "-"
    if "igraph_time" in r:
        ig = _t(r["igraph_time"]) + ("p" if r["igraph_mode"] == "pipe" else "")
    nx_ = "skip" if "networkx_skipped" in r else _s(r.get("networkx_time"), 8).strip()
    rate = r.get("gpu_count_cliques_per_s")
    crate = r.get("cpu_count_cliques_per_s")
    return (f"{r['graph']:<22} {r['n']:>9,} {r['m']:>10,} {_n(r['cliques']):>11} "
            f"{r['max_size'] if r['max_size'] is not None else '-':>3} "
            f"{_s(r.get('gpu_count_time'))} {_s(r.get('gpu_enum_time'))} {_x(rate and rate / 1e6, 8)} "
            f"{_s(r.get('cpu_count_time'))} {_s(r.get('cpu_enum_time'))} {_x(crate and crate / 1e6, 8)} "
            f"{ig:>9} {nx_:>8} {_x(r.get('gpu_count_speedup_vs_igraph'))} {_x(r.get('gpu_enum_speedup_vs_igraph'))} "
            f"{_x(r.get('cpu_count_speedup_vs_igraph'))} {_yes(r.get('count_equals_igraph')):>7}")


def mce_markdown(rows):
    print("\n| graph | n | m | maximal cliques | ω | GPU count s | GPU enum s | GPU Mcliques/s | CPU count s "
          "| CPU enum s | igraph s | networkx s | GPU count x igraph | GPU enum x igraph | count = igraph |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = lambda k: "-" if r.get(k) is None else _t(r[k])  # noqa: E731
        ig = f("igraph_time") + (" (pipe)" if r.get("igraph_mode") == "pipe" else "")
        nx_ = "skip" if "networkx_skipped" in r else f("networkx_time")
        rate = r.get("gpu_count_cliques_per_s")
        sp = lambda k: "-" if r.get(k) is None else f"{r[k]:.1f}"  # noqa: E731
        print(f"| {r['graph']} | {r['n']:,} | {r['m']:,} | {_n(r['cliques'])} | {r['max_size']} "
              f"| {f('gpu_count_time')} | {f('gpu_enum_time')} | {'-' if rate is None else f'{rate / 1e6:.1f}'} "
              f"| {f('cpu_count_time')} | {f('cpu_enum_time')} | {ig} | {nx_} | {sp('gpu_count_speedup_vs_igraph')} "
              f"| {sp('gpu_enum_speedup_vs_igraph')} | {_yes(r.get('count_equals_igraph'))} |")


# ------------------------------------------------------------------------- table 2
def run_maxclique(G, method, device, limit):
    t0 = time.perf_counter()
    r = graphkit.maximum_clique(G, method=method, device=device, time_limit=limit)
    return time.perf_counter() - t0, r


def cpu_maxclique(G, method, limit, repeat=3):
    """Median of up to ``repeat`` runs (one when a run takes over a second or hits the limit)."""
    times = []
    for _ in range(repeat):
        sec, r = run_maxclique(G, method, "cpu", limit)
        times.append(sec)
        if sec > 1.0 or not r.optimal:
            break
    return statistics.median(times), r


def gpu_maxclique(G, method, device, limit, repeat):
    """Warm-up run, then the median of ``repeat`` CUDA-event timings when it was short."""
    sec, r = run_maxclique(G, method, device, limit)
    if not r.optimal or sec > 5:
        return sec, r
    box = {}
    t = gpu_time(lambda: box.__setitem__("r", graphkit.maximum_clique(G, method=method, device=device,
                                                                      time_limit=limit)), repeat=repeat, warmup=0)
    return t, box["r"]


MC_VARIANTS = [("bb_cpu", "branch_and_bound", "cpu"), ("bb_gpu", "branch_and_bound", "gpu"),
               ("bb_auto", "branch_and_bound", "auto"), ("vc_cpu", "vertex_cover", "cpu"),
               ("vc_gpu", "vertex_cover", "gpu")]
MC_COLUMNS = tuple(key for key, _, _ in MC_VARIANTS)


def measure_maxclique(name, omega, args, gpu):
    G = graphkit.read_graph(dimacs_path(name))
    row = {"instance": name, "n": G.n, "m": G.m, "omega": omega}
    ok = True
    for key, method, device in MC_VARIANTS:
        if device == "cpu" and args.no_cpu and key != "bb_cpu":
            continue  # the branch and bound is the library's only CPU-side maximum clique: always kept
        if device != "cpu" and not gpu:
            continue
        if device == "cpu":
            sec, r = cpu_maxclique(G, method, args.time_limit)
        else:
            sec, r = gpu_maxclique(G, method, device, args.time_limit, args.repeat)
        valid = graphkit.is_clique(G, r.vertices) and len(r.vertices) == r.size
        right = (r.size == omega) if r.optimal else (r.size <= omega)
        row.update({f"{key}_time": sec, f"{key}_size": int(r.size), f"{key}_optimal": bool(r.optimal),
                    f"{key}_nodes": int(r.nodes), f"{key}_device": r.device, f"{key}_ok": bool(valid and right)})
        ok &= valid and right
        log(f"{name}: {key} {sec:.3f} s, size {r.size}{'' if r.optimal else ' (time limit)'}")
    if not args.no_igraph:
        res = igraph_clique_number(G, args.igraph_time_limit)
        row["igraph_finished"] = res is not None
        if res is not None:
            row["igraph_size"], row["igraph_time"] = res
            ok &= res[0] == omega
    row["correct"] = bool(ok)
    return row


MC_HEAD = (f"{'instance':<14} {'n':>5} {'m':>7} {'w':>4} | {'B&B CPU':>9} {'size':>4} | {'B&B GPU':>9} {'size':>4} | "
           f"{'B&B auto':>9} {'size':>4} | {'VC CPU':>9} {'size':>4} | {'VC GPU':>9} {'size':>4} | {'igraph w':>9} | ok")


def _mc_t(row, key, limit):
    if f"{key}_time" not in row:
        return f"{'-':>9} {'-':>4}"
    t = _t(row[f"{key}_time"]) if row[f"{key}_optimal"] else f">{limit:g}"
    return f"{t:>9} {row[f'{key}_size']:>4}"


def mc_line(row, limit, ig_limit):
    if "igraph_finished" not in row:
        ig = "-"
    else:
        ig = _t(row["igraph_time"]) if row["igraph_finished"] else f">{ig_limit:g}"
    cells = " | ".join(_mc_t(row, key, limit) for key in MC_COLUMNS)
    return (f"{row['instance']:<14} {row['n']:>5} {row['m']:>7} {row['omega']:>4} | {cells} | {ig:>9} | "
            f"{'yes' if row['correct'] else 'NO'}")


def mc_markdown(rows, limit, ig_limit):
    print("\n| instance | n | m | ω | B&B CPU s | B&B GPU s | B&B auto s (answered by) | VC of complement, CPU s "
          "| VC of complement, GPU s | igraph clique_number s | sizes = ω |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = []
        for key in MC_COLUMNS:
            if f"{key}_time" not in r:
                cells.append("-")
            else:
                cells.append(_t(r[f"{key}_time"]) if r[f"{key}_optimal"] else f">{limit:g} ({r[f'{key}_size']})")
                if key == "bb_auto":
                    cells[-1] += f" ({r['bb_auto_device']})"
        ig = "-" if "igraph_finished" not in r else (_t(r["igraph_time"]) if r["igraph_finished"] else f">{ig_limit:g}")
        print(f"| {r['instance']} | {r['n']} | {r['m']:,} | {r['omega']} | {' | '.join(cells)} | {ig} "
              f"| {'yes' if r['correct'] else 'NO'} |")


# ------------------------------------------------------------------------------ plot
#: plotted series: legend label -> key prefix in the rows
MCE_SERIES = {"GPU count": "gpu_count", "GPU enumeration": "gpu_enum", "CPU count": "cpu_count", "igraph": "igraph",
              "networkx": "networkx"}
MC_LABELS = {"bb_cpu": "B&B CPU", "bb_gpu": "B&B GPU", "bb_auto": "B&B auto", "vc_cpu": "VC CPU", "vc_gpu": "VC GPU"}


def mce_panel(ax, rows, title):
    """Seconds to count / list the maximal cliques of each graph, ours and the references."""
    series = {name: [r.get(f"{key}_time") for r in rows] for name, key in MCE_SERIES.items()
              if any(f"{key}_time" in r for r in rows)}
    grouped_bars(ax, [r["graph"] for r in rows], series, ylabel="seconds", log=True, title=title)
    leave_room_for_legend(ax)


def igraph_clique_number_time(row, igraph_limit):
    """igraph's clique_number() seconds, its time limit where it was stopped, None where it did not run."""
    if "igraph_finished" not in row:
        return None
    return row["igraph_time"] if row["igraph_finished"] else igraph_limit


def maxclique_panel(ax, rows, igraph_limit):
    """Maximum clique seconds per DIMACS instance and method, runs stopped by the time limit marked."""
    series, stopped = {}, {}
    for key in MC_COLUMNS:
        if any(f"{key}_time" in r for r in rows):
            series[MC_LABELS[key]] = [r.get(f"{key}_time") for r in rows]
            stopped[MC_LABELS[key]] = [r.get(f"{key}_optimal") is False for r in rows]
    if any("igraph_finished" in r for r in rows):
        series["igraph"] = [igraph_clique_number_time(r, igraph_limit) for r in rows]
        stopped["igraph"] = [r.get("igraph_finished") is False for r in rows]
    grouped_bars(ax, [r["instance"] for r in rows], series, ylabel="seconds", log=True,
                 title="maximum clique, DIMACS (>: stopped at the time limit)")
    mark_stopped(ax, stopped)
    leave_room_for_legend(ax)


def plot_results(results, path):
    """Bars per graph: the maximal clique times (ours on the GPU and the CPU, igraph, networkx) for the
    generated and the DIMACS graphs, and the maximum clique times per DIMACS instance and method."""
    panels = []
    for kind, title in (("generated", "maximal cliques, generated graphs"), ("dimacs", "maximal cliques, DIMACS")):
        rows = [r for r in results["mce"] if r["kind"] == kind]
        if rows:
            panels.append(lambda ax, rows=rows, title=title: mce_panel(ax, rows, title))
    if results["maxclique"]:
        panels.append(lambda ax: maxclique_panel(ax, results["maxclique"], results["meta"]["igraph_time_limit"]))
    save_figure(path, panels, suptitle=f"cliques; GPU: {results['meta']['gpu'] or 'none'}")


# ------------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small graphs only (seconds)")
    ap.add_argument("--large", action="store_true",
                    help="also the 2^20-vertex graphs and the DIMACS graphs with 2e7-8e7 maximal cliques")
    ap.add_argument("--only", nargs="*", default=None, help="only graphs / instances whose label starts with these")
    ap.add_argument("--no-cpu", action="store_true", help="skip our CPU runs and networkx (igraph is kept)")
    ap.add_argument("--no-igraph", action="store_true", help="skip igraph")
    ap.add_argument("--no-maxclique", action="store_true", help="skip table 2")
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds per maximum clique run (default 30)")
    ap.add_argument("--igraph-time-limit", type=float, default=10.0,
                    help="seconds for igraph's clique_number() reference in table 2 (default 10)")
    ap.add_argument("--repeat", type=int, default=3, help="GPU repetitions for the median (default 3)")
    ap.add_argument("--chunk-cliques", type=int, default=1 << 18,
                    help="cliques per chunk of the enumeration (maximal_clique_chunks; default 2^18)")
    ap.add_argument("--nx-max-edges", type=float, default=2e5, help="networkx only up to this many edges")
    ap.add_argument("--nx-max-cliques", type=float, default=2e6, help="networkx only up to this many maximal cliques")
    ap.add_argument("--igraph-list-max", type=float, default=2e7,
                    help="above this many maximal cliques igraph writes to a pipe instead of returning the list")
    ap.add_argument("--markdown", action="store_true", help="also print both tables as markdown (BENCHMARKS.md)")
    ap.add_argument("--out", default="bench_results/bench_cliques.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)
    if args.quick:
        args.time_limit = min(args.time_limit, 2.0)
        args.igraph_time_limit = min(args.igraph_time_limit, 2.0)
    if not args.no_igraph:
        import igraph  # noqa: F401  (fail early)

    answers = {name: a for (kind, name), a in load_answers().items() if kind == "dimacs"}
    if not answers:
        print(f"no shared data at {SHARED}: the DIMACS rows are skipped", file=sys.stderr)
    gens = GEN_QUICK if args.quick else GEN_FULL + (GEN_LARGE if args.large else [])
    dimacs = MCE_DIMACS_QUICK if args.quick else MCE_DIMACS_FULL + (MCE_DIMACS_LARGE if args.large else [])
    mc_names = MAXCLIQUE_QUICK if args.quick else list(answers)
    if args.no_igraph and importlib.util.find_spec("igraph") is None:
        print("python-igraph is not installed: the Barabasi-Albert graphs (its generator) are skipped",
              file=sys.stderr)
        gens = [(label, make) for label, make in gens if not label.startswith("BA ")]
    jobs = [(label, "generated", make) for label, make in gens]
    jobs += [(name, "dimacs", lambda p=dimacs_path(name): graphkit.read_graph(p)) for name in dimacs if name in answers]
    if args.only is not None:
        jobs = [j for j in jobs if any(j[0].startswith(s) for s in args.only)]
        mc_names = [n for n in mc_names if any(n.startswith(s) for s in args.only)]
    mc_names = [n for n in mc_names if n in answers]

    gpu = gpu_available()
    device_name = None
    t_start = time.perf_counter()
    # compile the Numba code (or load its cache) and the CUDA kernels before timing anything
    small = graphkit.Graph.from_edges(5, np.array([0, 1, 0, 2]), np.array([1, 2, 2, 3]))
    for dev in ["cpu"] + (["gpu"] if gpu else []):
        graphkit.count_maximal_cliques(small, device=dev)
        enumerate_chunks(small, dev, 4)
        graphkit.maximum_clique(small, method="vertex_cover", device=dev, time_limit=60)
    # with a time limit the branch and bound reads the clock in Numba's object mode every 1024
    # nodes; the first entry costs ~0.1 s once per process: a graph with > 1024 nodes
    graphkit.maximum_clique(gen.uniform_random(200, 120, seed=0), method="branch_and_bound", device="cpu",
                            time_limit=60)
    if gpu:
        import cupy

        device_name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    versions = {}
    for mod in ("igraph", "networkx", "numba", "numpy"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    print(f"maximal cliques benchmark; GPU: {device_name or 'none (GPU columns show -)'}; CPU: "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} threads; igraph {versions['igraph']}, "
          f"networkx {versions['networkx']}")
    print("times in seconds; GPU: CUDA events, median of --repeat after a warm-up; CPU, igraph, networkx: one run. "
          "Mc/s = million maximal cliques per second (count-only). xig = igraph time / ours. igraph 'p': written "
          "to a pipe (too many cliques for the list).")
    print(MCE_HEAD)
    print("-" * len(MCE_HEAD))
    rows = []
    for label, kind, make in jobs:
        row = measure_mce(label, kind, make, args, gpu)
        rows.append(row)
        print(mce_line(row), flush=True)
    skipped = [r["networkx_skipped"] for r in rows if "networkx_skipped" in r]
    for why in sorted(set(skipped)):
        print(f"  networkx skipped: {why} ({skipped.count(why)} graphs)")
    for r in rows:
        if r.get("count_equals_networkx") is False or not r["ours_consistent"]:
            print(f"  MISMATCH on {r['graph']}: ours consistent={r['ours_consistent']}, "
                  f"= networkx {r.get('count_equals_networkx')}", flush=True)
    big = [r for r in rows if r["kind"] == "generated" and "gpu_count_speedup_vs_igraph" in r]
    if big:
        gm = lambda xs: float(np.exp(np.mean(np.log(xs))))  # noqa: E731
        cnt = gm([r["gpu_count_speedup_vs_igraph"] for r in big])
        enum = gm([r["gpu_enum_speedup_vs_igraph"] for r in big])
        print(f"generated graphs, GPU vs igraph (geometric mean): count {cnt:.1f}x, enumeration with transfer "
              f"{enum:.1f}x (target: 5x)")
    if gpu and any("gpu_kernel_time" in r for r in rows):
        print("GPU count split (host plan + kernels): " + "; ".join(
            f"{r['graph']} {r['gpu_plan_time']:.3f} + {r['gpu_kernel_time']:.3f}"
            for r in rows if "gpu_kernel_time" in r))

    mc_rows = []
    if mc_names and not args.no_maxclique:
        print(f"\nmaximum clique on the DIMACS graphs (time limit {args.time_limit:g} s per run, igraph's "
              f"clique_number {args.igraph_time_limit:g} s; CPU: median of up to 3 runs under 1 s; GPU and auto: "
              f"median of {args.repeat} after a warm-up)")
        print(MC_HEAD)
        print("-" * len(MC_HEAD))
        for name in mc_names:
            row = measure_maxclique(name, answers[name], args, gpu)
            mc_rows.append(row)
            print(mc_line(row, args.time_limit, args.igraph_time_limit), flush=True)
    if args.markdown:
        mce_markdown(rows)
        if mc_rows:
            mc_markdown(mc_rows, args.time_limit, args.igraph_time_limit)
    total = time.perf_counter() - t_start
    print(f"total {total:.1f} s")
    meta = {"gpu": device_name, "cpu": platform.processor() or platform.machine(), "cpu_threads": os.cpu_count(),
            "python": platform.python_version(), "versions": versions, "repeat": args.repeat,
            "time_limit": args.time_limit, "igraph_time_limit": args.igraph_time_limit,
            "chunk_cliques": args.chunk_cliques, "nx_max_edges": args.nx_max_edges,
            "nx_max_cliques": args.nx_max_cliques, "igraph_list_max": args.igraph_list_max, "quick": args.quick,
            "large": args.large, "no_cpu": args.no_cpu, "no_igraph": args.no_igraph, "total_seconds": total,
            "convention": "isolated vertices are maximal cliques of size 1 (ours min_size=1, igraph min=0, networkx)"}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {"meta": meta, "mce": rows, "maxclique": mc_rows}
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")
    if not args.no_plot:
        plot_results(results, plot_path(out))
    return 0 if all(r["correct"] for r in rows + mc_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
