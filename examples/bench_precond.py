"""Benchmark of the preconditioners on the GPU (paper 001, Sections 5-6).

Part 1 (per matrix, full size): setup breakdown (factor, forest, extract, factorize) and
apply time of AlgTriScal and TriScal next to one cuSPARSE SpMV and one cuSPARSE
``gtsv2`` / ``gtsv2_nopivot`` solve of the same size, measured in the same run.
Part 2: BiCGStab time per iteration (fixed iteration count) with our host-sync-free
BiCGStab and cupyx's, next to the memory-traffic floor of one iteration (2 SpMV + 2
preconditioner applies + the vector updates at device-copy bandwidth).
Part 3: time to solution (rtol 1e-8, the paper's right-hand side) per preconditioner,
including setup; the peers pyamg / ILU(0) run on the CPU. AlgTriBlock's setup runs on the
host (also for a GPU matrix), so parts 1-2 measure it only up to ``BLOCK_MAX_N`` rows.

    python examples/bench_precond.py             # H100-sized run
    python examples/bench_precond.py --quick     # small sizes
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import matrices
import precond
from kernels.backend import gpu_available, to_device
from kernels.timing import gpu_time
from precond.study import run_case, true_solution

FULL = [("aniso1", 2500), ("aniso2", 2500), ("aniso3", 2500), ("convection_diffusion3d", 140), ("random_diffusion2d", 1700)]
TTS = [("aniso1", 500), ("aniso2", 500), ("aniso3", 500), ("convection_diffusion3d", 64), ("random_diffusion2d", 500)]
QUICK_FULL = [("aniso2", 300)]
QUICK_TTS = [("aniso2", 100), ("aniso3", 100)]
GPU_PRECONDS = ["none", "jacobi", "tridiagonal", "algebraic_tridiagonal", "algebraic_block_tridiagonal"]
BLOCK_MAX_N = 3_000_000  # AlgTriBlock setup is host-side: ~5 s per million rows on one core
CPU_PRECONDS = ["none", "jacobi", "tridiagonal", "algebraic_tridiagonal", "algebraic_block_tridiagonal", "pyamg", "ilu0"]


def gtsv2_time(dl, d, du, pivot):
    """Median time of cuSPARSE gtsv2 (pivoting) or gtsv2_nopivot on one system of size N."""
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
    return gpu_time(lambda: fn(handle, n, 1, dl.data.ptr, d.data.ptr, du.data.ptr, b.data.ptr, n, buf.data.ptr), repeat=10)


def part1(A, dtype):
    import cupy

    from kernels.tridiag import extract_tridiagonal

    Ad = to_device(A.astype(dtype))
    N = Ad.shape[0]
    x = cupy.asarray(true_solution(N, dtype))
    out = {"N": N, "nnz": Ad.nnz, "spmv": gpu_time(lambda: Ad @ x)}
    src = cupy.empty(N, dtype)
    dst = cupy.empty(N, dtype)
    out["copy_vector"] = gpu_time(lambda: dst.__setitem__(Ellipsis, src))
    dl, d, du = extract_tridiagonal(Ad)
    for pivot in (False, True):
        try:
            out["gtsv2" + ("" if pivot else "_nopivot")] = gtsv2_time(dl, d, du, pivot)
        except Exception as exc:  # noqa: BLE001 - report what cuSPARSE said
            out["gtsv2" + ("" if pivot else "_nopivot")] = f"unavailable: {exc}"
    for name, make in (("triscal", precond.tridiagonal), ("algtriscal", precond.algebraic_tridiagonal)):
        make(Ad)  # warm-up (kernel compilation)
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        M = make(Ad)
        cupy.cuda.Device().synchronize()
        out[f"{name}_setup"] = time.perf_counter() - t0
        out[f"{name}_setup_breakdown"] = M.setup_time
        out[f"{name}_apply"] = gpu_time(lambda: M.matvec(x))
        out[f"{name}_coverage"] = M.weight_coverage
        out[f"{name}_paths"] = M.n_paths
    if dtype == np.float64 and N <= BLOCK_MAX_N:
        precond.algebraic_block_tridiagonal(to_device(matrices.aniso2(20)))  # warm-up: kernel compilation
        t0 = time.perf_counter()
        M = precond.algebraic_block_tridiagonal(Ad)
        cupy.cuda.Device().synchronize()
        out["algtriblock_setup"] = time.perf_counter() - t0
        out["algtriblock_setup_breakdown"] = M.setup_time
        out["algtriblock_apply"] = gpu_time(lambda: M.matvec(x))
        out["algtriblock_coverage"] = M.weight_coverage
    return out


def part2(A, dtype, iterations, apply_times, spmv, copy_vec):
    import cupy
    import cupyx.scipy.sparse.linalg as cspla

    Ad = to_device(A.astype(dtype))
    N = Ad.shape[0]
    b = Ad @ cupy.asarray(true_solution(N, dtype))
    rows = {}
    for name in GPU_PRECONDS:
        if name == "algebraic_block_tridiagonal" and N > BLOCK_MAX_N:
            continue
        M = {"none": lambda A: None, "jacobi": precond.jacobi, "tridiagonal": precond.tridiagonal,
             "algebraic_tridiagonal": precond.algebraic_tridiagonal,
             "algebraic_block_tridiagonal": precond.algebraic_block_tridiagonal}[name](Ad)
        ours = gpu_time(lambda: precond.bicgstab(Ad, b, rtol=0.0, maxiter=iterations, M=M), repeat=3, warmup=1) / iterations
        op = M.aslinearoperator() if M is not None else None
        theirs = gpu_time(lambda: cspla.bicgstab(Ad, b, rtol=1e-30, maxiter=iterations, M=op), repeat=3, warmup=1) / iterations
        apply = 0.0 if M is None else (gpu_time(lambda: M.matvec(b)) if name not in apply_times else apply_times[name])
        floor = 2 * spmv + 2 * apply + 22 * copy_vec / 2  # 22 vector reads/writes; a copy moves 2
        rows[name] = {"ours_per_iter": ours, "cupyx_per_iter": theirs, "floor_per_iter": floor}
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--iterations", type=int, default=100, help="BiCGStab iterations for the per-iteration timing")
    ap.add_argument("--skip-tts", action="store_true", help="skip part 3 (time to solution)")
    ap.add_argument("--tts-only", action="store_true", help="only part 3")
    ap.add_argument("--gpu-methods-only", action="store_true", help="part 3 without the CPU-only methods")
    ap.add_argument("--out", default="bench_results/bench_precond.json")
    args = ap.parse_args(argv)
    full, tts = (QUICK_FULL, QUICK_TTS) if args.quick else (FULL, TTS)
    result = {"part1": [], "part2": [], "part3": []}
    ms = lambda s: f"{s * 1e3:9.3f}" if isinstance(s, float) else f"{'n/a':>9}"  # noqa: E731
    if gpu_available() and not args.tts_only:
        import cupy

        dev = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"GPU: {dev}; ms, CUDA events, medians")
        print(f"{'matrix':<24}{'dtype':<8}{'N':>9} {'SpMV':>9} {'gtsv2np':>9} {'gtsv2':>9} {'TriScal':>9} {'AlgTri':>9}"
              f" {'x SpMV':>7} {'setup':>9} {'x SpMV':>7}  setup breakdown (ms)")
        for name, n in full:
            A = matrices.get(name, n=n)
            for dtype in (np.float32, np.float64):
                r = part1(A, dtype)
                r.update(matrix=name, dtype=np.dtype(dtype).name)
                result["part1"].append(r)
                bd = " ".join(f"{k}={v * 1e3:.2f}" for k, v in r["algtriscal_setup_breakdown"].items())
                print(f"{name:<24}{r['dtype']:<8}{r['N']:>9} {ms(r['spmv'])} {ms(r['gtsv2_nopivot'])} {ms(r['gtsv2'])}"
                      f" {ms(r['triscal_apply'])} {ms(r['algtriscal_apply'])} {r['algtriscal_apply'] / r['spmv']:>7.2f}"
                      f" {ms(r['algtriscal_setup'])} {r['algtriscal_setup'] / r['spmv']:>7.1f}  {bd}")
                if "algtriblock_apply" in r:
                    print(f"{'':<24}{'':<8}{'':>9} AlgTriBlock apply {ms(r['algtriblock_apply'])}"
                          f" ({r['algtriblock_apply'] / r['spmv']:.2f} x SpMV), setup {r['algtriblock_setup']:.2f} s"
                          f" (host), coverage {r['algtriblock_coverage']:.2f}")
                if dtype == np.float64:
                    known = {"tridiagonal": r["triscal_apply"], "algebraic_tridiagonal": r["algtriscal_apply"]}
                    if "algtriblock_apply" in r:
                        known["algebraic_block_tridiagonal"] = r["algtriblock_apply"]
                    rows = part2(A, dtype, args.iterations, known,
                                 r["spmv"], r["copy_vector"])
                    for pc, v in rows.items():
                        result["part2"].append({"matrix": name, "N": r["N"], "preconditioner": pc, **v})
        print()
        print("BiCGStab time per iteration (ms, float64): ours (host-sync-free) vs cupyx, and the memory-traffic floor")
        print(f"{'matrix':<24}{'preconditioner':<24}{'ours':>9} {'cupyx':>9} {'floor':>9} {'ours/floor':>10}")
        for r in result["part2"]:
            print(f"{r['matrix']:<24}{r['preconditioner']:<24}{ms(r['ours_per_iter'])} {ms(r['cupyx_per_iter'])}"
                  f" {ms(r['floor_per_iter'])} {r['ours_per_iter'] / r['floor_per_iter']:>10.2f}")
    if not args.skip_tts:
        print()
        print("Time to solution, BiCGStab rtol 1e-8, float64, b = A x_t (setup + solve, seconds)")
        print(f"{'matrix':<24}{'N':>9} {'device':<5}{'preconditioner':<30}{'iters':>6} {'setup':>8} {'solve':>8} {'total':>8}")
        devices = (["gpu"] if gpu_available() else []) + ([] if args.gpu_methods_only and gpu_available() else ["cpu"])
        for name, n in tts:
            A = matrices.get(name, n=n)
            for dev in devices:
                Ad = to_device(A) if dev == "gpu" else A
                for pc in (GPU_PRECONDS if dev == "gpu" else CPU_PRECONDS):
                    if dev == "cpu" and gpu_available() and pc in GPU_PRECONDS and A.shape[0] > 300_000:
                        continue  # the GPU rows cover these; keep the CPU for the CPU-only methods
                    try:
                        run_case(Ad, name, pc, rtol=1e-8, maxiter=1)  # warm-up: compilation, caches
                        r = run_case(Ad, name, pc, rtol=1e-8, maxiter=8000)
                    except (ValueError, RuntimeError, MemoryError) as exc:
                        print(f"{name:<24}{A.shape[0]:>9} {dev:<5}{pc:<30} failed: {exc}")
                        continue
                    r.pop("residual_history")
                    r.pop("error_history")
                    r["device"] = dev
                    result["part3"].append(r)
                    it = f"{r['iterations']}" + ("" if r["converged"] else "*")
                    print(f"{name:<24}{r['n']:>9} {dev:<5}{pc:<30}{it:>6} {r['setup_time']:>8.3f} {r['solve_time']:>8.3f}"
                          f" {r['time_to_solution']:>8.3f}")
        print("(* = not converged within 8000 iterations)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
