"""Benchmark of exact treewidth (paper 002, Table 1) on the instances of ../shared/data.

For each of the paper's Table 1 graphs that is available: the width found (and whether
it is proven), the states expanded and the time of

* ``paper`` mode: the paper's search (no reductions, no in-search simplicial rule; the
  clique and disjoint-path optimizations on, exact hash-set deduplication);
* ``full`` mode: the library default (reductions, LBP+ bound, simplicial rule);

on the GPU (CUDA events around the whole solve, median of repeats for short runs, after a
warm-up that compiles the kernels) and on the CPU (Numba, same run, with a time limit),
next to the paper's GTX 1060 time and states, and the states-per-second rate next to the
paper's 2-2.5 million per second. Also saves a plot of the results as ``<out>.png``
(``--no-plot``: none).

    python examples/bench_treewidth.py               # Table 1 instances that finish in seconds
    python examples/bench_treewidth.py --all         # also the paper's overflowed instances
    python examples/bench_treewidth.py --quick       # smoke run
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphkit  # noqa: E402
from kernels.backend import gpu_available  # noqa: E402

from _plotting import grouped_bars, leave_room_for_legend, mark_stopped, plot_path, save_figure  # noqa: E402
from _shared_data import SHARED  # noqa: E402

# name: (file, treewidth, paper GPU seconds, paper CPU seconds or None, paper states, paper overflow)
PAPER = {
    "water": ("water.1.21.gr", 9, 0.197, 0.006, 1_240, False),
    "queen5_5": ("queen5_5.1.25.gr", 18, 0.212, 0.023, 3_134, False),
    "queen6_6": ("queen6_6.1.36.gr", 25, 0.254, 0.389, 35_973, False),
    "myciel4": ("myciel4.1.23.gr", 10, 0.234, 0.460, 97_765, False),
    "RandomBoundedToleranceGraph_60": ("RandomBoundedToleranceGraph_60.1.59.gr", 30, 0.274, 0.635, 56_028, False),
    "McGeeGraph": ("McGeeGraph.1.24.gr", 7, 1.298, 25.267, 3_853_249, False),
    "NonisotropicUnitaryPolarGraph_3_3": ("NonisotropicUnitaryPolarGraph_3_3.1.63.gr", 53, 1.158, 60.444, 1_558_852,
                                          False),
    "DoubleStarSnark": ("DoubleStarSnark.1.30.gr", 6, 34.497, 873.370, 87_628_083, False),
    "contiki_dhcpc_handle_dhcp": ("contiki_dhcpc_handle_dhcp.1.39.gr", 6, 1490.413, None, 2_933_148_926, True),
    "HarborthGraph": ("HarborthGraph.1.40.gr", 5, 697.909, None, 1_535_664_481, True),
    "1ubq": ("1ubq.1.47.gr", 12, 1132.360, None, 2_296_029_372, True),
}
DEFAULT = ["water", "queen5_5", "queen6_6", "myciel4", "RandomBoundedToleranceGraph_60", "McGeeGraph",
           "NonisotropicUnitaryPolarGraph_3_3", "DoubleStarSnark"]
QUICK = ["water", "queen5_5", "myciel4", "queen6_6"]
PAPER_LABEL = "paper (GTX 1060)"
MODES = {
    "paper": dict(preprocess=False, simplicial_rule=False, mmw=False),
    "full": dict(),
}


def solve(G, device, mode, time_limit):
    return graphkit.treewidth(G, device=device, time_limit=time_limit, **MODES[mode])


def gpu_run(G, mode, time_limit, repeat):
    """Median CUDA-event seconds of the whole solve; returns (result, seconds)."""
    import cupy

    times, res = [], None
    for i in range(repeat):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        res = solve(G, "gpu", mode, time_limit)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e-3)
        if times[-1] > 5.0:  # long runs: one measurement
            break
    return res, statistics.median(times)


def cpu_run(G, mode, time_limit, repeat):
    times, res = [], None
    for i in range(repeat):
        t0 = time.perf_counter()
        res = solve(G, "cpu", mode, time_limit)
        times.append(time.perf_counter() - t0)
        if times[-1] > 2.0 or not res.optimal:
            break
    return res, statistics.median(times)


def record(prefix, res, seconds):
    return {
        f"{prefix}_width": res.width,
        f"{prefix}_optimal": res.optimal,
        f"{prefix}_status": res.status,
        f"{prefix}_lower": res.lower_bound,
        f"{prefix}_states": res.states_expanded,
        f"{prefix}_time": seconds,
        f"{prefix}_states_per_s": res.states_expanded / seconds if seconds > 0 else 0.0,
    }


def method_columns(rows, field):
    """``{"GPU paper mode": [value per graph], ...}`` of ``<device>_<field>`` for the runs that exist."""
    graphs = list(dict.fromkeys(r["graph"] for r in rows))
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    by_run = {(r["graph"], r["mode"]): r for r in rows}
    columns = {}
    for device in ("gpu", "cpu"):
        for mode in modes:
            values = [by_run.get((g, mode), {}).get(f"{device}_{field}") for g in graphs]
            if any(v is not None for v in values):
                columns[f"{device.upper()} {mode} mode"] = values
    return columns


def paper_column(rows, field):
    """The paper's ``paper_<field>`` per graph."""
    return list({r["graph"]: r[f"paper_{field}"] for r in rows}.values())


def methods_panel(ax, rows, field, paper, ylabel, title):
    """One group per graph: ``field`` for each device and mode, the paper's GTX 1060 value hatched; runs that
    ended by a time limit or a state overflow (the paper's too) are marked ">"."""
    series = method_columns(rows, field)
    series[PAPER_LABEL] = paper_column(rows, paper)
    stopped = {name: [v is False for v in values] for name, values in method_columns(rows, "optimal").items()}
    stopped[PAPER_LABEL] = paper_column(rows, "overflow")
    grouped_bars(ax, list(dict.fromkeys(r["graph"] for r in rows)), series, ylabel=ylabel, log=True,
                 title=f"{title} (>: stopped by a time limit or overflow)", hatched=(PAPER_LABEL,))
    mark_stopped(ax, stopped)
    leave_room_for_legend(ax)


def plot_results(results, path):
    """Bars per graph for each device and mode next to the paper's GTX 1060: the solve time, the states
    expanded and the states expanded per second."""
    rows = results["rows"]
    panels = [lambda ax: methods_panel(ax, rows, "time", "gpu_time", "seconds", "time per instance"),
              lambda ax: methods_panel(ax, rows, "states", "states", "states expanded", "states expanded"),
              lambda ax: methods_panel(ax, rows, "states_per_s", "states_per_s", "states per second",
                                       "states expanded per second")]
    save_figure(path, panels, suptitle=f"exact treewidth; GPU: {results['meta']['gpu']}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="four small instances")
    ap.add_argument("--all", action="store_true", help="also the instances the paper could not finish")
    ap.add_argument("--gpu-time-limit", type=float, default=60.0, help="seconds per GPU solve")
    ap.add_argument("--cpu-time-limit", type=float, default=20.0, help="seconds per CPU solve")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU reference")
    ap.add_argument("--modes", default="paper,full", help="comma-separated subset of: paper, full")
    ap.add_argument("--out", default="bench_results/bench_treewidth.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)
    if not (SHARED / "graphs" / "treewidth").is_dir():
        print(f"shared data not found at {SHARED}; nothing to benchmark", file=sys.stderr)
        return 1
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m!r}")
    names = QUICK if args.quick else (list(PAPER) if args.all else DEFAULT)
    gpu = gpu_available()
    device_name = "none"
    if gpu:
        import cupy

        device_name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        # warm-up: compile the kernels (all bitset widths used below are 1 word)
        warm = graphkit.read_graph(SHARED / "graphs" / "treewidth" / "water.1.21.gr")
        for m in modes:
            solve(warm, "gpu", m, None)
    warm = graphkit.read_graph(SHARED / "graphs" / "treewidth" / "water.1.21.gr")
    solve(warm, "cpu", "full", None)  # Numba compilation / cache load
    rows = []
    for name in names:
        fname, tw, p_gpu, p_cpu, p_states, p_over = PAPER[name]
        G = graphkit.read_graph(SHARED / "graphs" / "treewidth" / fname)
        for mode in modes:
            row = {"graph": name, "n": G.n, "m": G.m, "tw": tw, "mode": mode, "paper_gpu_time": p_gpu,
                   "paper_cpu_time": p_cpu, "paper_states": p_states, "paper_overflow": p_over,
                   "paper_states_per_s": p_states / p_gpu}
            if gpu:
                res, sec = gpu_run(G, mode, args.gpu_time_limit, repeat=3)
                row.update(record("gpu", res, sec))
                row["speedup_vs_paper_gpu"] = p_gpu / sec if res.optimal else None
                assert not res.optimal or res.width == tw, (name, mode, res)
            if not args.no_cpu:
                res, sec = cpu_run(G, mode, args.cpu_time_limit, repeat=3)
                row.update(record("cpu", res, sec))
                assert not res.optimal or res.width == tw, (name, mode, res)
            rows.append(row)
            print_row(row, gpu, not args.no_cpu)
    meta = {"machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(), "gpu": device_name,
            "gpu_time_limit": args.gpu_time_limit, "cpu_time_limit": args.cpu_time_limit,
            "paper_gpu": "GTX 1060 (OpenCL), Table 1", "dedup": "exact"}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {"meta": meta, "rows": rows}
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")
    if not args.no_plot:
        plot_results(results, plot_path(out))
    return 0


_HEADER_DONE = [False]


def _fmt_t(row, p):
    if f"{p}_time" not in row:
        return "-"
    mark = "" if row[f"{p}_optimal"] else f" ({row[f'{p}_status']})"
    return f"{row[f'{p}_time']:.3f}{mark}"


def print_row(row, gpu, cpu):
    if not _HEADER_DONE[0]:
        print(f"{'graph':<34} {'n':>3} {'tw':>3} {'mode':<5} | {'paper GPU s':>11} {'paper states':>13} | "
              f"{'GPU w':>5} {'GPU s':>16} {'GPU states':>12} {'GPU st/s':>10} {'x paper':>7} | "
              f"{'CPU w':>5} {'CPU s':>18} {'CPU states':>12} {'CPU st/s':>10}")
        _HEADER_DONE[0] = True
    g = (f"{row['gpu_width']:>5} {_fmt_t(row, 'gpu'):>16} {row['gpu_states']:>12} {row['gpu_states_per_s']:>10.3g} "
         f"{(row['speedup_vs_paper_gpu'] or 0):>7.1f}") if "gpu_width" in row else f"{'-':>5} {'-':>16} {'-':>12} {'-':>10} {'-':>7}"
    c = (f"{row['cpu_width']:>5} {_fmt_t(row, 'cpu'):>18} {row['cpu_states']:>12} {row['cpu_states_per_s']:>10.3g}"
         if "cpu_width" in row else f"{'-':>5} {'-':>18} {'-':>12} {'-':>10}")
    print(f"{row['graph']:<34} {row['n']:>3} {row['tw']:>3} {row['mode']:<5} | {row['paper_gpu_time']:>11.3f} "
          f"{row['paper_states']:>13} | {g} | {c}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
