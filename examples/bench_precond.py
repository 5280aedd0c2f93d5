"""Benchmark of the preconditioners on the GPU (Klein and Strzodka (2022), Sections 5-6).

Part 1 (per matrix, full size): setup (median of five) with its breakdown (factor, forest,
extract, factorize) and apply time of AlgTriScal, TriScal and AlgTriBlock next to one
cuSPARSE SpMV, our ``kernels.spmv`` and one cuSPARSE ``gtsv2`` / ``gtsv2_nopivot`` solve of
the same size, measured in the same run. The SpMV is timed in a burst before every set-up:
``spmv`` is the median of the bursts (``spmv_spread`` their range) and ``<name>_setup_per_spmv``
the median of each set-up over the burst before it. AlgTriScal's apply and gtsv2_nopivot
are timed in alternating bursts (medians of both).
Part 2: BiCGStab time per iteration (fixed iteration count) with our host-sync-free
BiCGStab (CUDA graph, and eager launches) and cupyx's, next to the memory-traffic floor of
one iteration (2 SpMV, the faster of cuSPARSE and ``kernels.spmv``, + 2 preconditioner
applies + the vector updates at device-copy bandwidth).
Part 3: time to solution (rtol 1e-8, the paper's right-hand side) per preconditioner,
including setup, at the sizes of part 1 (``--tts-small``: about 250,000 rows); the peers
pyamg / ILU(0) run on the CPU.

    python examples/bench_precond.py             # the full-size GPU run
    python examples/bench_precond.py --quick     # small sizes

It prints Markdown tables (those of ``BENCHMARKS.md``); progress goes to stderr.

Besides the JSON results (``--out``) the script saves their plot as ``<out>.png``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import precond
from kernels.backend import gpu_available, to_device
from kernels.spmv import spmv
from kernels.timing import gpu_time
from precond.study import run_case, true_solution

from _markdown import gpu_name, machine_line, ms, number, ratio, table
from _plotting import grouped_bars, matrix_label, milliseconds, plot_path, save_figure, stacked_bars
from _shared_data import load_matrix

FULL = [("aniso1", 2500), ("aniso2", 2500), ("aniso3", 2500), ("convection_diffusion3d", 140), ("random_diffusion2d", 1700)]
TTS_SMALL = [("aniso1", 500), ("aniso2", 500), ("aniso3", 500), ("convection_diffusion3d", 64), ("random_diffusion2d", 500)]
QUICK_FULL = [("aniso2", 300)]
QUICK_TTS = [("aniso2", 100), ("aniso3", 100)]
GPU_PRECONDS = ["none", "jacobi", "tridiagonal", "algebraic_tridiagonal", "algebraic_block_tridiagonal"]
CPU_PRECONDS = ["none", "jacobi", "tridiagonal", "algebraic_tridiagonal", "algebraic_block_tridiagonal", "pyamg", "ilu0"]
SHORT_NAMES = {"none": "none", "jacobi": "Jacobi", "tridiagonal": "TriScal", "algebraic_tridiagonal": "AlgTriScal",
               "algebraic_block_tridiagonal": "AlgTriBlock", "pyamg": "pyamg", "ilu0": "ILU(0)"}


def gtsv2_call(dl, d, du, pivot):
    """A call of cuSPARSE gtsv2 (pivoting) or gtsv2_nopivot on one system of size N."""
    import cupy
    from cupy_backends.cuda.libs import cusparse

    handle = cupy.cuda.device.get_cusparse_handle()
    n = len(d)
    prefix = "s" if d.dtype == np.float32 else "d"
    name = f"{prefix}gtsv2" + ("" if pivot else "_nopivot")
    dl = dl.copy()
    dl[0] = 0
    du = du.copy()
    du[-1] = 0
    b = cupy.ones(n, dtype=d.dtype)
    size = getattr(cusparse, name + "_bufferSizeExt")(handle, n, 1, dl.data.ptr, d.data.ptr, du.data.ptr, b.data.ptr, n)
    buf = cupy.empty(max(size, 1), dtype=np.uint8)
    fn = getattr(cusparse, name)
    return lambda: fn(handle, n, 1, dl.data.ptr, d.data.ptr, du.data.ptr, b.data.ptr, n, buf.data.ptr)


def part1(A, dtype):
    import cupy

    from kernels.tridiag import extract_tridiagonal

    Ad = to_device(A.astype(dtype))
    N = Ad.shape[0]
    x = cupy.asarray(true_solution(N, dtype))
    out = {"N": N, "nnz": Ad.nnz, "spmv_ours": gpu_time(lambda: spmv(Ad, x))}
    spmv_bursts = [gpu_time(lambda: Ad @ x)]
    src = cupy.empty(N, dtype)
    dst = cupy.empty(N, dtype)
    out["copy_vector"] = gpu_time(lambda: dst.__setitem__(Ellipsis, src))
    dl, d, du = extract_tridiagonal(Ad)
    gtsv2 = {}
    for pivot in (False, True):
        key = "gtsv2" + ("" if pivot else "_nopivot")
        try:
            gtsv2[key] = gtsv2_call(dl, d, du, pivot)
            out[key] = gpu_time(gtsv2[key], repeat=10)
        except Exception as exc:  # noqa: BLE001 - report what cuSPARSE said
            out[key] = f"unavailable: {exc}"
    for name, make in (("triscal", precond.tridiagonal), ("algtriscal", precond.algebraic_tridiagonal),
                       ("algtriblock", precond.algebraic_block_tridiagonal)):
        make(Ad)  # warm-up (kernel compilation)
        setups = []  # (seconds, phases, seconds / SpMV) of five set-ups: the median is reported
        for _ in range(5):
            # the previous preconditioner is freed here, not in the timed assignment below
            # (freeing its arrays to CuPy's pool costs the host some 20 us)
            M = None
            # an SpMV burst before every set-up: on a machine whose speed drifts, the ratio
            # compares a set-up with the SpMV of the same moment
            spmv_bursts.append(gpu_time(lambda: Ad @ x, repeat=10, warmup=1))
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            M = make(Ad)
            cupy.cuda.Device().synchronize()
            seconds = time.perf_counter() - t0
            setups.append((seconds, M.setup_time, seconds / spmv_bursts[-1]))
        out[f"{name}_setup"], out[f"{name}_setup_breakdown"], _ = sorted(setups, key=lambda t: t[0])[2]
        out[f"{name}_setup_per_spmv"] = float(np.median([t[2] for t in setups]))
        if name == "algtriscal" and "gtsv2_nopivot" in gtsv2:
            # the apply and gtsv2_nopivot in alternating bursts: a drifting machine slows both alike
            pairs = [(gpu_time(lambda: M.matvec(x), repeat=10, warmup=1),
                      gpu_time(gtsv2["gtsv2_nopivot"], repeat=10, warmup=1)) for _ in range(5)]
            out["algtriscal_apply"], out["gtsv2_nopivot"] = (float(np.median(t)) for t in zip(*pairs))
        else:
            out[f"{name}_apply"] = gpu_time(lambda: M.matvec(x))
        out[f"{name}_coverage"] = M.weight_coverage
        out[f"{name}_paths"] = M.n_paths
    out["spmv"] = float(np.median(spmv_bursts))
    out["spmv_spread"] = [float(min(spmv_bursts)), float(max(spmv_bursts))]
    return out


def part2(A, dtype, iterations, apply_times, spmv_time, copy_vec):
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    Ad = to_device(A.astype(dtype))
    N = Ad.shape[0]
    b = Ad @ cupy.asarray(true_solution(N, dtype))
    rows = {}
    for name in GPU_PRECONDS:
        M = {"none": lambda A: None, "jacobi": precond.jacobi, "tridiagonal": precond.tridiagonal,
             "algebraic_tridiagonal": precond.algebraic_tridiagonal,
             "algebraic_block_tridiagonal": precond.algebraic_block_tridiagonal}[name](Ad)
        ours = gpu_time(lambda: precond.bicgstab(Ad, b, rtol=0.0, maxiter=iterations, M=M), repeat=3, warmup=1) / iterations
        eager = gpu_time(lambda: precond.bicgstab(Ad, b, rtol=0.0, maxiter=iterations, M=M, cuda_graph=False),
                         repeat=3, warmup=1) / iterations
        op = M.aslinearoperator() if M is not None else None
        theirs = gpu_time(lambda: cspla.bicgstab(Ad, b, rtol=1e-30, maxiter=iterations, M=op), repeat=3, warmup=1) / iterations
        apply = 0.0 if M is None else (gpu_time(lambda: M.matvec(b)) if name not in apply_times else apply_times[name])
        floor = 2 * spmv_time + 2 * apply + 22 * copy_vec / 2  # 22 vector reads/writes; a copy moves 2
        rows[name] = {"ours_per_iter": ours, "ours_eager_per_iter": eager, "cupyx_per_iter": theirs,
                      "floor_per_iter": floor}
    return rows


def _setup_panel(part1):
    """AlgTriScal setup steps (ms) stacked, one SpMV as the reference line."""
    labels = [matrix_label(r) for r in part1]
    steps = {step: [milliseconds(r["algtriscal_setup_breakdown"][step]) for r in part1]
             for step in part1[0]["algtriscal_setup_breakdown"]}
    return lambda ax: stacked_bars(ax, labels, steps, ylabel="ms", title="AlgTriScal setup (GPU)",
                                   reference=[milliseconds(r["spmv"]) for r in part1], reference_label="one SpMV")


def _apply_panel(part1):
    """One preconditioner application next to cuSPARSE SpMV and gtsv2 (hatched), ms."""
    labels = [matrix_label(r) for r in part1]
    columns = {"cuSPARSE SpMV": "spmv", "kernels.spmv": "spmv_ours", "cuSPARSE gtsv2_nopivot": "gtsv2_nopivot", "cuSPARSE gtsv2": "gtsv2",
               "TriScal": "triscal_apply", "AlgTriScal": "algtriscal_apply", "AlgTriBlock": "algtriblock_apply"}
    series = {name: [milliseconds(r.get(key)) for r in part1] for name, key in columns.items()}
    references = [name for name in columns if name.startswith("cuSPARSE")]
    return lambda ax: grouped_bars(ax, labels, series, ylabel="ms", title="One apply (GPU) vs cuSPARSE",
                                   hatched=references)


def _iteration_panel(part2):
    """BiCGStab time per iteration in multiples of its memory-traffic floor: ours as bars, cupyx's as black ticks."""
    matrix_names = list(dict.fromkeys(r["matrix"] for r in part2))
    preconds = dict.fromkeys(r["preconditioner"] for r in part2)
    by_case = {(r["matrix"], r["preconditioner"]): r for r in part2}

    def over_floor(key):
        return {SHORT_NAMES[pc]: [by_case[m, pc][key] / by_case[m, pc]["floor_per_iter"] if (m, pc) in by_case
                                  else float("nan") for m in matrix_names] for pc in preconds}

    def draw(ax):
        grouped_bars(ax, matrix_names, over_floor("ours_per_iter"), ylabel="multiples of the memory-traffic floor",
                     title="BiCGStab time per iteration (GPU, float64)")
        for i, (bars, cupyx) in enumerate(zip(ax.containers, over_floor("cupyx_per_iter").values())):
            centers = [bar.get_x() + bar.get_width() / 2 for bar in bars]
            ax.plot(centers, cupyx, "k_", markersize=9, markeredgewidth=2, label=None if i else "cupyx bicgstab")
        ax.axhline(1, color="black", linestyle="--", linewidth=1, label="floor: 2 SpMV + 2 applies + vector traffic")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.5)  # room for the legend
        ax.legend(fontsize=7, ncol=2)

    return draw


def _matrix_on_device(row):
    return f"{row['matrix']} ({row['device'].upper()})"


def _solution_panel(part3):
    """Setup + solve seconds per matrix/device and preconditioner; no bar where BiCGStab did not converge."""
    labels = list(dict.fromkeys(_matrix_on_device(r) for r in part3))
    times = {(_matrix_on_device(r), r["preconditioner"]): r["time_to_solution"] for r in part3 if r.get("converged")}
    preconds = dict.fromkeys(r["preconditioner"] for r in part3)
    series = {SHORT_NAMES[pc]: [times.get((lab, pc)) for lab in labels] for pc in preconds}
    return lambda ax: grouped_bars(ax, labels, series, ylabel="seconds", log=True,
                                   title="Time to solution, BiCGStab rtol 1e-8 (no bar: not converged)")


def progress(message):
    """What the run is doing, on stderr (the tables go to stdout)."""
    print(message, file=sys.stderr, flush=True)


SETUP_HEADERS = ["matrix", "dtype", "N", "SpMV", "our SpMV", "gtsv2_nopivot", "gtsv2", "TriScal apply",
                 "AlgTriScal apply", "apply / SpMV", "apply / gtsv2np", "AlgTriScal set-up", "set-up / SpMV",
                 "set-up phases", "AlgTriBlock apply / SpMV", "AlgTriBlock set-up / SpMV"]


def markdown_setup_apply(part1) -> str:
    """Part 1 as a Markdown table: set-up and apply against cuSPARSE SpMV and gtsv2 (ms)."""
    rows = []
    for r in part1:
        phases = " / ".join(f"{k} {v * 1e3:.2f}" for k, v in r["algtriscal_setup_breakdown"].items())
        rows.append([r["matrix"], r["dtype"].replace("float", "f"), f"{r['N']:,}", ms(r["spmv"]), ms(r["spmv_ours"]),
                     ms(r["gtsv2_nopivot"]), ms(r["gtsv2"]), ms(r["triscal_apply"]), ms(r["algtriscal_apply"]),
                     ratio(r["algtriscal_apply"], r["spmv"]), ratio(r["algtriscal_apply"], r["gtsv2_nopivot"]),
                     ms(r["algtriscal_setup"], 2), number(r["algtriscal_setup_per_spmv"], 1), phases,
                     ratio(r["algtriblock_apply"], r["spmv"]), number(r["algtriblock_setup_per_spmv"], 1)])
    return ("Set-up and apply on the GPU, ms (CUDA events, medians; set-up: wall time of the call, median of "
            "five, each over the median SpMV of the burst before it):\n\n" + table(SETUP_HEADERS, rows))


def markdown_iterations(part2) -> str:
    """Part 2 as a Markdown table: BiCGStab time per iteration against the memory-traffic floor (ms)."""
    rows = [[r["matrix"], SHORT_NAMES[r["preconditioner"]], ms(r["ours_per_iter"]), ms(r["ours_eager_per_iter"]),
             ms(r["cupyx_per_iter"]), ms(r["floor_per_iter"]), ratio(r["ours_per_iter"], r["floor_per_iter"]),
             ratio(r["cupyx_per_iter"], r["ours_per_iter"])] for r in part2]
    return ("BiCGStab time per iteration, float64, ms: ours from a CUDA graph and with eager launches, cupyx's, and "
            "the memory-traffic floor (2 SpMVs + 2 applies + 22 vector reads and writes at copy bandwidth):\n\n"
            + table(["matrix", "preconditioner", "ours (graph)", "ours (eager)", "cupyx", "floor", "ours / floor",
                     "cupyx / ours"], rows))


def markdown_time_to_solution(part3) -> str:
    """Part 3 as a Markdown table: iterations and seconds to solution per preconditioner."""
    rows = []
    for r in part3:
        if "error" in r:
            rows.append([r["matrix"], f"{r['n']:,}", r["device"].upper(), SHORT_NAMES[r["preconditioner"]],
                         f"failed: {r['error']}", None, None, None])
            continue
        rows.append([r["matrix"], f"{r['n']:,}", r["device"].upper(), SHORT_NAMES[r["preconditioner"]],
                     f"{r['iterations']}" + ("" if r["converged"] else "*"), number(r["setup_time"]),
                     number(r["solve_time"]), number(r["time_to_solution"])])
    return ("Time to solution, BiCGStab rtol 1e-8, float64, b = A x_t, seconds (* = not converged: 8000 iterations "
            "or a breakdown):\n\n" + table(["matrix", "N", "device", "preconditioner", "iterations", "set-up",
                                              "solve", "total"], rows))


def plot_results(result, path):
    """AlgTriScal setup breakdown against one SpMV, apply times against cuSPARSE SpMV / gtsv2, BiCGStab time per
    iteration (parts 1-2, GPU runs only) and the time to solution per preconditioner (part 3)."""
    panels = []
    if result["part1"]:
        panels += [_setup_panel(result["part1"]), _apply_panel(result["part1"])]
    if result["part2"]:
        panels.append(_iteration_panel(result["part2"]))
    if result["part3"]:
        panels.append(_solution_panel(result["part3"]))
    save_figure(path, panels, suptitle="Preconditioners (Klein and Strzodka 2022, Sections 5-6)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--iterations", type=int, default=100, help="BiCGStab iterations for the per-iteration timing")
    ap.add_argument("--skip-tts", action="store_true", help="skip part 3 (time to solution)")
    ap.add_argument("--tts-only", action="store_true", help="only part 3")
    ap.add_argument("--gpu-methods-only", action="store_true", help="part 3 without the CPU-only methods")
    ap.add_argument("--tts-small", action="store_true",
                    help="part 3 at about 250,000 rows instead of the sizes of part 1 (millions of rows)")
    ap.add_argument("--matrices", nargs="+", default=None, help="only these matrices (names as in the tables)")
    ap.add_argument("--out", default="bench_results/bench_precond.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)
    full, tts = (QUICK_FULL, QUICK_TTS) if args.quick else (FULL, TTS_SMALL if args.tts_small else FULL)
    if args.matrices:
        names = {name for name, _ in FULL}
        unknown = sorted(set(args.matrices) - names)
        if unknown:
            ap.error(f"unknown matrices {unknown}; choose from {sorted(names)}")
        full = [c for c in full if c[0] in args.matrices]
        tts = [c for c in tts if c[0] in args.matrices]
    result = {"part1": [], "part2": [], "part3": []}
    print(machine_line(gpu_name()))
    if gpu_available() and not args.tts_only:
        for name, n in full:
            A = load_matrix(name, n=n, script="bench_precond")
            if A is None:
                continue
            for dtype in (np.float32, np.float64):
                progress(f"part 1: {name} {np.dtype(dtype).name}")
                r = part1(A, dtype)
                r.update(matrix=name, dtype=np.dtype(dtype).name)
                result["part1"].append(r)
                if dtype == np.float64:
                    known = {"tridiagonal": r["triscal_apply"], "algebraic_tridiagonal": r["algtriscal_apply"],
                             "algebraic_block_tridiagonal": r["algtriblock_apply"]}
                    progress(f"part 2: {name}")
                    rows = part2(A, dtype, args.iterations, known,
                                 min(r["spmv"], r["spmv_ours"]), r["copy_vector"])  # the faster SpMV
                    for pc, v in rows.items():
                        result["part2"].append({"matrix": name, "N": r["N"], "preconditioner": pc, **v})
        print(markdown_setup_apply(result["part1"]))
        print()
        print(markdown_iterations(result["part2"]))
    if not args.skip_tts:
        devices = (["gpu"] if gpu_available() else []) + ([] if args.gpu_methods_only and gpu_available() else ["cpu"])
        for name, n in tts:
            A = load_matrix(name, n=n, script="bench_precond")
            if A is None:
                continue
            for dev in devices:
                Ad = to_device(A) if dev == "gpu" else A
                for pc in (GPU_PRECONDS if dev == "gpu" else CPU_PRECONDS):
                    if dev == "cpu" and gpu_available() and pc in GPU_PRECONDS and A.shape[0] > 300_000:
                        continue  # the GPU rows cover these; keep the CPU for the CPU-only methods
                    progress(f"part 3: {name} {dev} {pc}")
                    try:
                        r = run_case(Ad, name, pc, rtol=1e-8, maxiter=8000, trace=False)  # warms up first
                    except (ValueError, RuntimeError, MemoryError) as exc:
                        progress(f"{name} {dev} {pc} failed: {exc}")
                        r = {"matrix": name, "n": int(A.shape[0]), "preconditioner": pc, "error": str(exc)}
                    r.pop("residual_history", None)
                    r.pop("error_history", None)
                    r["device"] = dev
                    result["part3"].append(r)
        print()
        print(markdown_time_to_solution(result["part3"]))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"results: {out}")
    if not args.no_plot:
        plot_results(result, plot_path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
