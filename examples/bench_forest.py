"""Benchmark of the [0,2]-factor and linear forest on the GPU (Klein and Strzodka (2022), Figure 6).

Per matrix and precision: one proposal kernel (k > 0) next to one cuSPARSE SpMV of the
same matrix; one bidirectional-scan step next to a device-to-device copy of the same
bytes; the breakdown symmetry test + factor (M=5, proposals read A directly) + linear
forest, for the work-efficient ruling-set forest (default), the paper's fixed log2(N)
scan and the scan with early exit; the weight-graph build ``A' + A'^T`` (unsymmetric
matrices only, as ``precond.factor`` does it: ``kernels.factor.weight_source``); the
end-to-end ``precond.factor`` + ``precond.linear_forest``; and the CPU (Numba) times of the same steps for the GPU
speedup.

    python examples/bench_forest.py                  # ANISO2 2500x2500 + stand-ins, GPU
    python examples/bench_forest.py --quick          # small sizes (CPU-only machines too)

It prints Markdown tables (those of ``BENCHMARKS.md``).

Besides the JSON results (``--out``) the script saves their plot as ``<out>.png``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import precond
from kernels.backend import gpu_available, to_device
from kernels.factor import WARP_KERNEL_THREADS_PER_SM, charge_threshold, parallel_factor, weight_source
from kernels.forest import linear_forest_ruling, linear_forest_scan_gpu, linear_forest_walk_cpu
from kernels.graph import abs_graph
from kernels.matrix import weights_symmetric
from kernels.timing import cpu_time, gpu_time

from _markdown import gpu_name, machine_line, ms, number, table
from _plotting import grouped_bars, matrix_label, milliseconds, plot_path, save_figure, stacked_bars
from _shared_data import load_matrix

CASES = [("aniso2", 2500), ("convection_diffusion3d", 140), ("random_diffusion2d", 1700), ("rotated_anisotropic2d", 1700)]
QUICK = [("aniso2", 300), ("random_diffusion2d", 200)]


def gpu_case(A, dtype):
    import cupy

    from kernels.nvrtc import get_kernel, row_grid
    from kernels.factor import proposal_buffers, proposal_layout

    Ad = to_device(A.astype(dtype))
    Ad.sum_duplicates()  # canonical CSR (sorted rows) for the symmetry test
    N, nnz = Ad.shape[0], Ad.nnz
    x = cupy.ones(N, dtype=dtype)
    out = {"N": N, "nnz": nnz}
    out["spmv"] = gpu_time(lambda: Ad @ x)
    out["abs_graph"] = gpu_time(lambda: abs_graph(Ad, symmetric=True), repeat=5)
    out["sym_check"] = gpu_time(lambda: weights_symmetric(Ad))
    # symmetric |A|-diag: the proposals read A itself (|a_ij|, diagonal skipped); else A' + A'^T
    out["symmetric"] = weights_symmetric(Ad)
    W, fm = weight_source(Ad, out["symmetric"])
    if not out["symmetric"]:
        out["abs_graph"] = gpu_time(lambda: weight_source(Ad, False), repeat=5)
    # one proposal kernel at k = 1 (charging on) on the state after iteration 0
    partners, weights, _ = parallel_factor(W, 2, 1, 5, 0, 0.5, 0, from_matrix=fm)
    count = (partners >= 0).sum(axis=1).astype(np.uint8)
    buffers = proposal_buffers(proposal_layout(N, 2, W.data.dtype, W.indices.dtype, False, False))
    layout = buffers.first  # addresses into buffers.buffer, which stays allocated with buffers
    propose = get_kernel("factor", "propose", W.data.dtype, W.indices.dtype)
    threads = 128
    blocks = (N + threads - 1) // threads
    args = (W.indices.dtype.type(N), W.indptr, W.indices, W.data, partners, count, *layout, np.int32(2),
            np.uint32(1), np.uint32(0), np.int32(1), np.uint64(charge_threshold(0.5)), np.int32(fm), np.int32(0),
            np.int32(0), cupy.empty(1, dtype=W.indices.dtype), cupy.zeros(1, dtype=np.uint32),
            None, np.int32(0), np.int32(0), None)  # all rows (the paper's kernel), no check, read weights, no diagonal
    out["propose_k1"] = gpu_time(lambda: propose((blocks,), (threads,), args))
    propose_warp = get_kernel("factor", "propose_warp", W.data.dtype, W.indices.dtype)
    wblocks = row_grid(32 * N, threads, WARP_KERNEL_THREADS_PER_SM)  # the factor's own grid
    out["propose_warp_k1"] = gpu_time(lambda: propose_warp((wblocks,), (threads,), args))
    out["factor_M5"] = gpu_time(lambda: parallel_factor(W, 2, 5, 5, 0, 0.5, 0, from_matrix=fm))
    partners, weights, _ = parallel_factor(W, 2, 5, 5, 0, 0.5, 0, from_matrix=fm)
    # one ranking scan step next to a copy of the bytes it reads and writes
    q = cupy.where(partners >= 0, partners, -1)
    r = cupy.ones_like(partners)
    q2, r2 = cupy.empty_like(q), cupy.empty_like(r)
    active = cupy.zeros(1, dtype=np.int32)
    step = get_kernel("forest", "rank_step", weights.dtype, partners.dtype)
    sblocks = (N + 255) // 256
    out["scan_step"] = gpu_time(lambda: step((sblocks,), (256,), (partners.dtype.type(N), q, r, q2, r2, active)))
    both = cupy.concatenate([q.ravel(), r.ravel()])
    dst = cupy.empty_like(both)
    out["copy_same_bytes"] = gpu_time(lambda: dst.__setitem__(Ellipsis, both))
    for key, method, early in (("paper_log2N", "scan", False), ("early_exit", "scan", True), ("ruling", "ruling", True)):
        stats = {}
        def forest(stats=None):
            if method == "ruling":
                return linear_forest_ruling(partners, weights, stats=stats)
            return linear_forest_scan_gpu(partners, weights, early_exit=early, stats=stats)

        forest(stats)
        out[f"forest_{key}"] = gpu_time(forest, repeat=20 if method == "ruling" else 5)
        out[f"phases_{key}"] = stats
    out["total_factor_forest"] = out["factor_M5"] + out["forest_ruling"] + (0.0 if out["symmetric"] else out["abs_graph"])
    out["precond_end_to_end"] = gpu_time(lambda: precond.linear_forest(Ad, precond.factor(Ad, n=2)))
    return out


def cpu_case(A, dtype):
    A = A.astype(dtype).tocsr()
    A.sum_duplicates()
    out = {"abs_graph": cpu_time(lambda: abs_graph(A, symmetric=True), repeat=2)}
    out["sym_check"] = cpu_time(lambda: weights_symmetric(A), repeat=2)
    W, fm = weight_source(A, weights_symmetric(A))
    out["factor_M5"] = cpu_time(lambda: parallel_factor(W, 2, 5, 5, 0, 0.5, 0, from_matrix=fm), repeat=2)
    partners, weights, _ = parallel_factor(W, 2, 5, 5, 0, 0.5, 0, from_matrix=fm)
    out["forest"] = cpu_time(lambda: linear_forest_walk_cpu(partners, weights), repeat=2)
    out["precond_end_to_end"] = cpu_time(lambda: precond.linear_forest(A, precond.factor(A, n=2)), repeat=2)
    out["spmv"] = cpu_time(lambda: A @ np.ones(A.shape[0], dtype), repeat=3)
    return out


def _setup_panel(rows, side, parts, title):
    """Stacked setup steps (ms) of the ``side`` ("gpu"/"cpu") timings, one SpMV as the reference line."""
    labels = [matrix_label(r) for r in rows]
    values = {name: [milliseconds(step(r[side])) for r in rows] for name, step in parts.items()}
    reference = [milliseconds(r[side]["spmv"]) for r in rows]
    return lambda ax: stacked_bars(ax, labels, values, ylabel="ms", title=title, reference=reference,
                                   reference_label="one SpMV")


GPU_SETUP_PARTS = {
    "symmetry test": lambda g: g["sym_check"],
    "|A| (unsymmetric only)": lambda g: None if g["symmetric"] else g["abs_graph"],
    "factor (M=5)": lambda g: g["factor_M5"],
    "forest: rulers": lambda g: g["phases_ruling"]["select_rulers"],
    "forest: walks": lambda g: g["phases_ruling"]["walks"],
    "forest: scan over rulers": lambda g: g["phases_ruling"]["ruler_scan"],
    "forest: path ids and positions": lambda g: g["phases_ruling"]["finish"],
    "forest: permutation": lambda g: g["phases_ruling"]["permutation"],
}
CPU_SETUP_PARTS = {
    "symmetry test": lambda c: c["sym_check"],
    "factor (M=5)": lambda c: c["factor_M5"],
    "forest": lambda c: c["forest"],
}


def _line_at_one(ax, label):
    """Dashed line at ratio 1, added to the legend."""
    ax.axhline(1, color="black", linestyle="--", linewidth=1, label=label)
    ax.legend(fontsize=7)


def _kernel_panel(rows):
    """GPU kernels relative to the memory-bound operation moving the same data."""
    labels = [matrix_label(r) for r in rows]
    series = {"proposal, thread per row / SpMV": [r["gpu"]["propose_k1"] / r["gpu"]["spmv"] for r in rows],
              "proposal, warp per row / SpMV": [r["gpu"]["propose_warp_k1"] / r["gpu"]["spmv"] for r in rows],
              "scan step / copy of its bytes": [r["gpu"]["scan_step"] / r["gpu"]["copy_same_bytes"] for r in rows]}

    def draw(ax):
        grouped_bars(ax, labels, series, ylabel="time / reference time",
                     title="GPU kernels against SpMV and a device copy")
        _line_at_one(ax, "as fast as the reference")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.4)  # room for the legend

    return draw


def _forest_panel(rows):
    """The three GPU linear-forest methods in multiples of one SpMV."""
    labels = [matrix_label(r) for r in rows]
    methods = {"ruling set (default)": "forest_ruling", "scan, early exit": "forest_early_exit",
               "scan, log2 N steps (paper)": "forest_paper_log2N"}
    series = {name: [r["gpu"][key] / r["gpu"]["spmv"] for r in rows] for name, key in methods.items()}
    return lambda ax: grouped_bars(ax, labels, series, ylabel="multiples of one SpMV", title="GPU linear forest")


def _speedup_panel(rows):
    """CPU time / GPU time per step (log scale)."""
    labels = [matrix_label(r) for r in rows]
    steps = {"factor (M=5)": ("factor_M5", "factor_M5"), "forest": ("forest", "forest_ruling"),
             "end to end": ("precond_end_to_end", "precond_end_to_end")}
    series = {name: [r["cpu"][cpu_key] / r["gpu"][gpu_key] for r in rows] for name, (cpu_key, gpu_key) in steps.items()}

    def draw(ax):
        grouped_bars(ax, labels, series, ylabel="CPU time / GPU time", log=True,
                     title="GPU speedup over the CPU (Numba)")
        _line_at_one(ax, "as fast as the CPU")
        low, high = ax.get_ylim()
        ax.set_ylim(min(low, 0.5), high * 10)  # bars grow from below 1; room for the legend

    return draw


def plot_results(results, path):
    """Setup breakdown (factor, forest passes, ...) against one SpMV, on the GPU and/or the CPU; on a GPU run also
    the kernels against SpMV / a copy, the three forest methods and the GPU speedup."""
    gpu_rows = [r for r in results if "gpu" in r]
    cpu_rows = [r for r in results if "cpu" in r]
    both = [r for r in gpu_rows if "cpu" in r]
    panels = []
    if gpu_rows:
        panels += [_setup_panel(gpu_rows, "gpu", GPU_SETUP_PARTS, "GPU setup: factor + linear forest (ruling set)"),
                   _kernel_panel(gpu_rows), _forest_panel(gpu_rows)]
    if both:
        panels.append(_speedup_panel(both))
    elif cpu_rows:
        panels.append(_setup_panel(cpu_rows, "cpu", CPU_SETUP_PARTS, "CPU (Numba) setup: factor + linear forest"))
    save_figure(path, panels, suptitle="[0,2]-factor and linear forest (Klein and Strzodka 2022, Figure 6)")


GPU_HEADERS = ["matrix", "dtype", "N", "SpMV", "propose", "%SpMV", "scan", "copy", "sym", "\\|A\\|", "factor",
               "forest R", "R phases", "steps", "forest E", "forest P", "total", "total/SpMV", "e2e"]
CPU_HEADERS = ["matrix", "dtype", "N", "\\|A\\|", "sym", "factor", "forest", "e2e", "SpMV", "GPU speedup (e2e)"]
RULING_PHASES = ("select_rulers", "walks", "ruler_scan", "finish", "permutation")


def markdown_tables(results) -> str:
    """The GPU table (ms) and the CPU table (ms) of BENCHMARKS.md's factor + forest section."""
    parts = []
    gpu_rows = [r for r in results if "gpu" in r]
    if gpu_rows:
        rows = []
        for r in gpu_rows:
            g = r["gpu"]
            phases = " / ".join(number(g["phases_ruling"].get(k, float("nan")) * 1e3, 2) for k in RULING_PHASES)
            fastest = min(g["propose_k1"], g["propose_warp_k1"])
            rows.append([f"{r['matrix']} {r['grid']}", r["dtype"].replace("float", "f"), f"{r['N']:,}", ms(g["spmv"]),
                         ms(fastest), f"{100 * g['spmv'] / fastest:.0f}%", ms(g["scan_step"]), ms(g["copy_same_bytes"]),
                         ms(g["sym_check"], 2), "-" if g["symmetric"] else ms(g["abs_graph"], 2), ms(g["factor_M5"], 2),
                         ms(g["forest_ruling"], 2), phases, g["phases_ruling"].get("ruler_steps", "-"),
                         ms(g["forest_early_exit"], 2), ms(g["forest_paper_log2N"], 2),
                         ms(g["total_factor_forest"], 2), number(g["total_factor_forest"] / g["spmv"], 1),
                         ms(g["precond_end_to_end"], 2)])
        parts.append("GPU, ms (CUDA events, medians):\n\n" + table(GPU_HEADERS, rows) + "\n\n"
                     "propose = one proposal kernel at k = 1 over all rows (the faster of the thread- and warp-per-row "
                     "kernels); %SpMV = SpMV time / proposal time; scan = one step of the paper's bidirectional scan, "
                     "copy = a device copy of the same bytes; sym = the symmetry test; |A| = the weight graph A' + A'^T "
                     "(unsymmetric matrices only); factor = [0,2]-factor, M = 5; forest R = ruling set (default), its "
                     "phases rulers / walks / scan / finish / permutation and the scan's steps; E = the paper's scan "
                     "with early exit, P = with log2(N) steps; total = |A| + factor + forest R; e2e = precond.factor + "
                     "precond.linear_forest.")
    cpu_rows = [r for r in results if "cpu" in r]
    if cpu_rows:
        rows = []
        for r in cpu_rows:
            c = r["cpu"]
            speedup = (number(c["precond_end_to_end"] / r["gpu"]["precond_end_to_end"], 0) + "x") if "gpu" in r else "-"
            rows.append([f"{r['matrix']} {r['grid']}", r["dtype"].replace("float", "f"), f"{r['N']:,}",
                         ms(c["abs_graph"], 1), ms(c["sym_check"], 1), ms(c["factor_M5"], 1), ms(c["forest"], 1),
                         ms(c["precond_end_to_end"], 1), ms(c["spmv"], 2), speedup])
        parts.append("CPU (NumPy/Numba, this machine), ms:\n\n" + table(CPU_HEADERS, rows))
    return "\n\n".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU reference timings")
    ap.add_argument("--cpu-first", action="store_true",
                    help="CPU reference timings for the first matrix only (ANISO2 2500x2500 by default)")
    ap.add_argument("--out", default="bench_results/bench_forest.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)
    cases = QUICK if args.quick else CASES
    gpu = gpu_available()
    results = []
    for name, n in cases:
        A = load_matrix(name, n=n, script="bench_forest")
        if A is None:
            continue
        for dtype in (np.float32, np.float64):
            row = {"matrix": name, "grid": n, "dtype": np.dtype(dtype).name, "N": A.shape[0], "nnz": A.nnz}
            if gpu:
                row["gpu"] = gpu_case(A, dtype)
            if not args.no_cpu and not (args.cpu_first and results and results[0]["matrix"] != name):
                row["cpu"] = cpu_case(A, dtype)
            results.append(row)
    print(machine_line(gpu_name()))
    print(markdown_tables(results))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"results: {out}")
    if not args.no_plot:
        plot_results(results, plot_path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
