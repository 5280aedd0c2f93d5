"""Benchmark of maximal independent sets (Burtscher et al. 2018, Tables 2, 5, 6).

For each graph: ECL-MIS and the Luby-style random-permutation baseline on the GPU
(throughput in vertices per second, CUDA events, median), the CPU versions, networkx on
small graphs, set sizes as a fraction of n, and the ratio to the maximum independent set
where it is known (``answers.csv``: n - minimum vertex cover). Also saves a plot of the results
as ``<out>.png`` (``--no-plot``: none).

    python examples/bench_mis.py              # paper-sized generated graphs + shared graphs
    python examples/bench_mis.py --quick

It prints a Markdown table (that of ``BENCHMARKS.md``) and the summary lines below it.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import graphkit
from graphkit import generators as gen
from kernels.backend import gpu_available
from kernels.timing import cpu_time, gpu_time

FULL = [("grid2d 2^20", lambda: gen.grid2d(1024, 1024)), ("uniform 2^23 d=8", lambda: gen.uniform_random(1 << 23, 8, 1)),
        ("rmat 2^22 d~16", lambda: gen.rmat(22, 8, seed=2)), ("kronecker 2^20 ef=16", lambda: gen.kronecker(20, 16, 3)),
        ("road-like 2^22", lambda: gen.road_like(1 << 22, 4))]
QUICK = [("grid2d 2^14", lambda: gen.grid2d(128, 128)), ("uniform 2^16", lambda: gen.uniform_random(1 << 16, 8, 1)),
         ("rmat 2^15", lambda: gen.rmat(15, 8, seed=2))]
from _markdown import gpu_name, machine_line, number, table  # noqa: E402
from _plotting import grouped_bars, leave_room_for_legend, plot_path, save_figure  # noqa: E402
from _shared_data import SHARED  # noqa: E402

MAXIMUM_LABEL = "maximum (answers.csv)"


def shared_graphs():
    answers = SHARED / "graphs" / "answers.csv"
    if not answers.exists():
        return []
    out = []
    for row in csv.DictReader(open(answers)):
        if row["set"] != "vc":
            continue
        path = SHARED / "graphs" / "pace2019-vc" / f"{row['name']}.gr"
        out.append((row["name"], lambda p=path: graphkit.read_graph(p), int(row["answer"])))
    return out


def measure(name, make, vc_opt=None, nx_limit=200_000):
    G = make()
    row = {"graph": name, "n": G.n, "m": G.m}
    cpu = {m: graphkit.maximal_independent_set(G, method=m, device="cpu") for m in ("ecl", "luby")}
    for m, r in cpu.items():
        row[f"{m}_size"] = r.size
        row[f"{m}_cpu_time"] = cpu_time(lambda m=m: graphkit.maximal_independent_set(G, method=m, device="cpu"),
                                        repeat=3 if G.n <= 1 << 20 else 1, warmup=0)  # the call above warmed up
    row["ecl_cpu_vps"] = G.n / row["ecl_cpu_time"]
    imp = graphkit.maximal_independent_set(G, device="cpu", improve=True)  # extra: ECL-MIS + (1,2)-swaps
    row["improved_size"], row["improved_swaps"] = imp.size, imp.swaps
    row["improved_cpu_time"] = imp.time  # one run (compiled at the start of main)
    if gpu_available():
        from kernels import mis

        import cupy

        indptr, indices, _ = G.device_arrays()
        nnz = int(G.indptr[-1])
        gpu = mis.ecl_mis_gpu(indptr, indices, nnz=nnz, skip_decided=False).get()
        luby = mis.luby_mis_gpu(indptr, indices)[0].get()
        row["gpu_equals_cpu"] = bool(np.array_equal(np.flatnonzero(gpu), cpu["ecl"].vertices)
                                     and np.array_equal(np.flatnonzero(luby), cpu["luby"].vertices))
        status = cupy.empty(G.n, dtype=np.uint8)
        # the algorithm (priority init + the paper's persistent kernel) into a preallocated status array
        row["ecl_gpu_time"] = gpu_time(lambda: mis.ecl_mis_gpu(indptr, indices, nnz=nnz, status=status,
                                                               skip_decided=False), repeat=20)
        skip = mis.ecl_mis_gpu(indptr, indices, nnz=nnz, skip_decided=True).get()
        row["gpu_equals_cpu"] = row["gpu_equals_cpu"] and bool(np.array_equal(skip, gpu))
        # kernel variant (the library default): a joining vertex writes "out" only to undecided neighbours
        row["ecl_skip_gpu_time"] = gpu_time(lambda: mis.ecl_mis_gpu(indptr, indices, nnz=nnz, status=status,
                                                                    skip_decided=True), repeat=20)
        # the library call (skip_decided variant): also allocates and returns the boolean membership array
        row["ecl_gpu_call_time"] = gpu_time(lambda: mis.ecl_mis_gpu(indptr, indices, nnz=nnz), repeat=20)
        row["luby_gpu_time"] = gpu_time(lambda: mis.luby_mis_gpu(indptr, indices), repeat=5)
        row["ecl_blocks"] = int(max(mis._RESIDENT.values()))  # persistent grid (blocks of 256 threads)
        row["ecl_cvps"] = G.n / row["ecl_gpu_time"]
        row["ecl_skip_cvps"] = G.n / row["ecl_skip_gpu_time"]
        row["luby_cvps"] = G.n / row["luby_gpu_time"]
    if G.n <= nx_limit:
        import networkx as nx

        H = G.to_networkx()
        t0 = time.perf_counter()
        row["networkx_size"] = len(nx.maximal_independent_set(H, seed=0))
        row["networkx_time"] = time.perf_counter() - t0
    if vc_opt is not None:
        row["maximum"] = G.n - vc_opt
        row["ecl_ratio_to_max"] = row["ecl_size"] / row["maximum"]
        row["luby_ratio_to_max"] = row["luby_size"] / row["maximum"]
        row["improved_ratio_to_max"] = row["improved_size"] / row["maximum"]
    return row


def upright_labels(ax):
    """Vertical graph names: the shared graphs make too many groups for slanted ones."""
    for label in ax.get_xticklabels():
        label.set(rotation=90, ha="center")


def gpu_throughput_panel(ax, rows):
    """Billion vertices per second of the GPU kernels and of the library call."""
    series = {"ECL-MIS (paper's kernel)": [r["ecl_cvps"] / 1e9 for r in rows],
              "ECL-MIS skip_decided": [r["ecl_skip_cvps"] / 1e9 for r in rows],
              "ECL-MIS library call": [r["n"] / r["ecl_gpu_call_time"] / 1e9 for r in rows],
              "Luby": [r["luby_cvps"] / 1e9 for r in rows]}
    grouped_bars(ax, [r["graph"] for r in rows], series, ylabel="billion vertices / s", log=True,
                 title="GPU throughput")
    leave_room_for_legend(ax)
    upright_labels(ax)


def cpu_time_panel(ax, rows):
    """Milliseconds of the CPU versions and of networkx."""
    series = {"ECL-MIS": [r["ecl_cpu_time"] * 1e3 for r in rows], "Luby": [r["luby_cpu_time"] * 1e3 for r in rows],
              "ECL-MIS + (1,2)-swaps": [r["improved_cpu_time"] * 1e3 for r in rows],
              "networkx": [r.get("networkx_time", math.nan) * 1e3 for r in rows]}
    grouped_bars(ax, [r["graph"] for r in rows], series, ylabel="milliseconds", log=True, title="CPU time")
    leave_room_for_legend(ax)
    upright_labels(ax)


def set_size_panel(ax, rows):
    """Set sizes as a fraction of n, next to the maximum independent set where it is known."""
    series = {"ECL-MIS": [r["ecl_size"] / r["n"] for r in rows], "Luby": [r["luby_size"] / r["n"] for r in rows],
              "ECL-MIS + (1,2)-swaps": [r["improved_size"] / r["n"] for r in rows],
              "networkx": [r.get("networkx_size", math.nan) / r["n"] for r in rows],
              MAXIMUM_LABEL: [r.get("maximum", math.nan) / r["n"] for r in rows]}
    grouped_bars(ax, [r["graph"] for r in rows], series, ylabel="|S| / n", title="independent set size",
                 hatched=(MAXIMUM_LABEL,))
    leave_room_for_legend(ax)
    upright_labels(ax)


def plot_results(rows, path):
    """Bars per graph: the GPU throughput of each kernel (with a GPU), the CPU time of each method and the set
    sizes as a fraction of n next to the maximum independent set."""
    panels = [lambda ax: cpu_time_panel(ax, rows), lambda ax: set_size_panel(ax, rows)]
    if all("ecl_gpu_time" in r for r in rows):
        panels.insert(0, lambda ax: gpu_throughput_panel(ax, rows))
    save_figure(path, panels, suptitle="maximal independent sets")


def markdown_table(rows, gpu) -> str:
    """One row per graph: set sizes (fraction of n, ratio to the maximum where known) and the
    GPU throughput (billion vertices per second) or, without a GPU, the CPU times."""
    head = ["graph", "n", "m", "ECL \\|S\\|/n", "Luby \\|S\\|/n", "ECL / Luby", "networkx \\|S\\|/n",
            "+swaps \\|S\\|/n", "ECL / max", "+swaps / max"]
    head += (["paper kernel Gv/s", "skip Gv/s", "Luby Gv/s", "CPU ms", "GPU = CPU"] if gpu
             else ["ECL CPU ms", "Luby CPU ms", "ECL CPU Mv/s"])
    out = []
    for r in rows:
        line = [r["graph"], f"{r['n']:,}", f"{r['m']:,}", number(r["ecl_size"] / r["n"], 4),
                number(r["luby_size"] / r["n"], 4), number(r["ecl_size"] / r["luby_size"], 3),
                number(r["networkx_size"] / r["n"], 4) if "networkx_size" in r else None,
                number(r["improved_size"] / r["n"], 4), number(r.get("ecl_ratio_to_max"), 3),
                number(r.get("improved_ratio_to_max"), 3)]
        if gpu:
            line += [number(r["ecl_cvps"] / 1e9, 2), number(r["ecl_skip_cvps"] / 1e9, 2), number(r["luby_cvps"] / 1e9, 2),
                     number(r["ecl_cpu_time"] * 1e3, 1), "yes" if r["gpu_equals_cpu"] else "NO"]
        else:
            line += [number(r["ecl_cpu_time"] * 1e3, 1), number(r["luby_cpu_time"] * 1e3, 1),
                     number(r["ecl_cpu_vps"] / 1e6, 1)]
        out.append(line)
    return table(head, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="bench_results/bench_mis.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message="dropped")  # duplicate edges in the PACE files
    for m in ("ecl", "luby"):  # compile the Numba code (or load its cache) before timing anything
        graphkit.maximal_independent_set(gen.grid2d(4, 4), method=m, device="cpu", improve=True)
    rows = [measure(n, f) for n, f in (QUICK if args.quick else FULL)]
    rows += [measure(n, f, opt) for n, f, opt in shared_graphs()]
    gpu = gpu_available()
    print(machine_line(gpu_name()))
    print()
    print(markdown_table(rows, gpu))
    print()
    if gpu:
        big = rows[: len(QUICK if args.quick else FULL)]
        gm = math.exp(np.mean([math.log(r["ecl_cvps"]) for r in big]))
        print(f"geometric mean ECL-MIS throughput (paper's kernel) on the generated graphs: {gm / 1e9:.2f} billion vertices/s "
              "(the small shared graphs are launch-bound)")
        gm_skip = math.exp(np.mean([math.log(r["ecl_skip_cvps"]) for r in big]))
        gm_call = math.exp(np.mean([math.log(r["n"] / r["ecl_gpu_call_time"]) for r in big]))
        print(f"  kernel variant skip_decided (library default): {gm_skip / 1e9:.2f}; the library call (membership array too):"
              f" {gm_call / 1e9:.2f} billion vertices/s")
    gain = np.mean([r["ecl_size"] / r["luby_size"] for r in rows]) - 1
    print(f"ECL-MIS sets are {100 * gain:.1f}% larger than Luby's on average")
    ratios = [r["ecl_ratio_to_max"] for r in rows if "ecl_ratio_to_max" in r]
    if ratios:
        print(f"ECL-MIS size / maximum independent set: mean {np.mean(ratios):.3f}, min {np.min(ratios):.3f}")
        luby = [r["luby_ratio_to_max"] for r in rows if "luby_ratio_to_max" in r]
        imp = [r["improved_ratio_to_max"] for r in rows if "improved_ratio_to_max" in r]
        print(f"Luby size / maximum: mean {np.mean(luby):.3f}; ECL-MIS + (1,2)-swaps (extra, not in the paper) / maximum:"
              f" mean {np.mean(imp):.3f}, min {np.min(imp):.3f}")
    nx_rows = [r for r in rows if "networkx_size" in r]
    if nx_rows:
        print(f"ECL-MIS vs networkx maximal_independent_set: {np.mean([r['ecl_size'] / r['networkx_size'] for r in nx_rows]):.3f}x"
              f" on average over {len(nx_rows)} graphs")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print(f"results: {out}")
    if not args.no_plot:
        plot_results(rows, plot_path(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
