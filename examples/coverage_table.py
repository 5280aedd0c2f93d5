"""Weight coverage of [0,n]-factors: Klein and Strzodka (2022), Tables 4 and 5.

For each matrix: c_id, and for the three configurations (m=1,k_m=0), (m=5,k_m=0),
(m=5,k_m=1) the coverage after 5 iterations c_pi(5), at the maximal factor c_pi(M_max)
and M_max; the sequential greedy c_pi; then n = 1..4 parallel (default configuration,
M=5) against sequential. ANISO1/2/3 rows print the paper's values beside ours.

    python examples/coverage_table.py --n 2500 --device gpu     # the paper's size
    python examples/coverage_table.py --quick                   # small CPU run

It prints the two tables as Markdown (those of ``BENCHMARKS.md``).

Besides the JSON results (``--out``) the script saves their plot as ``<out>.png``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import matrices
import precond
from kernels.backend import resolve_device, to_device

from _markdown import gpu_name, machine_line, table
from _plotting import grouped_bars, plot_path, save_figure
from _shared_data import load_matrix

CONFIGS = [(1, 0), (5, 0), (5, 1)]
# Klein and Strzodka (2022), Table 4 (c5, cM, Mmax per configuration, then sequential) and Table 5 (c_id,
# n=1..4 parallel/sequential).
PAPER_T4 = {
    "aniso1": [(0.67, 0.67, 1252), (0.67, 0.67, 11), (0.54, 0.54, 17), 0.67],
    "aniso2": [(0.67, 0.67, 1251), (0.67, 0.67, 11), (0.57, 0.57, 12), 0.67],
    "aniso3": [(0.67, 0.67, 55), (0.67, 0.67, 11), (0.56, 0.56, 17), 0.67],
}
PAPER_T5 = {
    "aniso1": (0.68, [(0.27, 0.29), (0.67, 0.67), (0.72, 0.73), (0.79, 0.79)]),
    "aniso2": (0.13, [(0.27, 0.29), (0.67, 0.67), (0.72, 0.73), (0.79, 0.79)]),
    "aniso3": (0.68, [(0.27, 0.29), (0.67, 0.67), (0.72, 0.73), (0.79, 0.79)]),
}
DEFAULT = ["aniso1", "aniso2", "aniso3", "convection_diffusion3d", "random_diffusion2d", "rotated_anisotropic2d",
           "elasticity2d", "add20", "bcsstk25", "cage9", "ex29", "memplus", "orsreg_1", "pde2961", "wang1", "watt_1"]


def sizes_for(name, n):
    """Grid size giving about n^2 rows for each generator."""
    if name in ("convection_diffusion3d", "poisson3d"):
        return max(4, round(n ** (2 / 3)))
    if name == "elasticity2d":
        return max(4, round(n / 1.41))
    return n


def table_rows(spec, n, device, max_iterations):
    A = load_matrix(spec, n=sizes_for(spec, n) if spec in matrices.GENERATORS else None, script="coverage_table")
    if A is None:
        return None
    if device == "gpu":
        A = to_device(A)
    row = {"matrix": spec, "N": int(A.shape[0]), "c_id": precond.identity_coverage(A), "configs": []}
    t0 = time.perf_counter()
    for m, k_m in CONFIGS:
        c5 = precond.weight_coverage(A, precond.factor(A, n=2, iterations=5, m=m, k_m=k_m))
        fm = precond.factor(A, n=2, iterations=max_iterations, m=m, k_m=k_m)
        row["configs"].append({"m": m, "k_m": k_m, "c5": c5, "cM": precond.weight_coverage(A, fm),
                               "M_max": fm.iterations, "maximal": fm.maximal})
    # sequential: equal weights in an arbitrary (hashed) order, as an unstable sort by weight;
    # "sequential_index" breaks ties by (row, column) instead
    row["sequential"] = precond.weight_coverage(A, precond.greedy_factor(A, 2, ties="hash"))
    row["by_n"] = []
    for n_ in (1, 2, 3, 4):
        par = precond.weight_coverage(A, precond.factor(A, n=n_))
        seq = precond.weight_coverage(A, precond.greedy_factor(A, n_, ties="hash"))
        seq_index = precond.weight_coverage(A, precond.greedy_factor(A, n_, ties="index"))
        row["by_n"].append({"n": n_, "parallel": par, "sequential": seq, "sequential_index": seq_index})
    row["time"] = time.perf_counter() - t0
    return row


def markdown_tables(rows) -> str:
    """Tables 4 and 5 as Markdown, the paper's values in brackets on its matrices."""
    t4 = []
    for r in rows:
        paper = PAPER_T4.get(r["matrix"])
        cells = []
        for i, c in enumerate(r["configs"]):
            cell = f"{c['c5']:.2f}/{c['cM']:.2f}/{c['M_max']}" + ("" if c["maximal"] else "+")
            if paper:
                cell += f" [{paper[i][0]:.2f}/{paper[i][1]:.2f}/{paper[i][2]}]"
            cells.append(cell)
        seq = f"{r['sequential']:.2f}" + (f" [{paper[3]:.2f}]" if paper else "")
        t4.append([r["matrix"], f"{r['N']:,}", *cells, seq])
    t5 = []
    for r in rows:
        paper = PAPER_T5.get(r["matrix"])
        cid = f"{r['c_id']:.2f}" + (f" [{paper[0]:.2f}]" if paper else "")
        cells = []
        for i, c in enumerate(r["by_n"]):
            cell = f"{c['parallel']:.2f}/{c['sequential']:.2f}"
            if paper:
                cell += f" [{paper[1][i][0]:.2f}/{paper[1][i][1]:.2f}]"
            cells.append(cell)
        gap = max(abs(c["parallel"] - c["sequential"]) for c in r["by_n"])
        index_ties = " ".join(f"{c['sequential_index']:.2f}" for c in r["by_n"])
        t5.append([r["matrix"], cid, *cells, f"{gap:.3f}", index_ties])
    return ("Table 4: [0,2]-factor weight coverage c_pi(5) / c_pi(M_max) / M_max per configuration, then the "
            "sequential greedy (paper in brackets; + = not maximal within the iteration limit):\n\n"
            + table(["matrix", "N", *(f"m={m}, k_m={k}" for m, k in CONFIGS), "sequential"], t4)
            + "\n\nTable 5: c_id and the weight coverage of [0,n]-factors, parallel (M=5, m=5, k_m=0) / sequential "
            "(paper in brackets):\n\n"
            + table(["matrix", "c_id", *(f"n={n}" for n in (1, 2, 3, 4)), "max \\|par - seq\\|",
                     "sequential, index ties, n=1..4"], t5)
            + "\n\n(sequential: Algorithm 1 with equal weights in an arbitrary (hashed) order, like the paper's sort; "
            "index ties: by (row, column))")


def _coverage_bars(ax, labels, series, title, hatched=()):
    """Grouped coverage bars on a fixed 0..1 scale, with room above for the legend."""
    grouped_bars(ax, labels, series, ylabel="weight coverage", title=title, hatched=hatched)
    ax.set_ylim(0, 1.25)


def _coverage_by_n_panel(rows):
    """Parallel [0,n]-factor coverage per matrix, one bar per n."""
    labels = [r["matrix"] for r in rows]
    series = {f"n={n}": [r["by_n"][n - 1]["parallel"] for r in rows] for n in (1, 2, 3, 4)}
    return lambda ax: _coverage_bars(ax, labels, series, "[0,n]-factor weight coverage (parallel, M=5)")


def _paper_panel(rows):
    """Table 5 on the paper's matrices: ours (parallel, sequential) against the paper's (hatched) per n."""
    paper_rows = [r for r in rows if r["matrix"] in PAPER_T5]
    if not paper_rows:
        return None
    labels = [f"{r['matrix']} n={c['n']}" for r in paper_rows for c in r["by_n"]]
    ours = [c for r in paper_rows for c in r["by_n"]]
    paper = [pair for r in paper_rows for pair in PAPER_T5[r["matrix"]][1]]
    series = {"parallel": [c["parallel"] for c in ours], "sequential": [c["sequential"] for c in ours],
              "paper parallel": [p[0] for p in paper], "paper sequential": [p[1] for p in paper]}
    return lambda ax: _coverage_bars(ax, labels, series, "Table 5 against the paper (hatched)",
                                     hatched=("paper parallel", "paper sequential"))


def _identity_panel(rows):
    """c_id (the matrix's own ordering) next to the [0,2]-factor's coverage; the paper's c_id hatched."""
    labels = [r["matrix"] for r in rows]
    series = {"c_id": [r["c_id"] for r in rows],
              "c_id paper": [PAPER_T5[r["matrix"]][0] if r["matrix"] in PAPER_T5 else None for r in rows],
              "[0,2]-factor (parallel)": [r["by_n"][2 - 1]["parallel"] for r in rows]}
    return lambda ax: _coverage_bars(ax, labels, series, "Identity ordering c_id vs the [0,2]-factor",
                                     hatched=("c_id paper",))


def plot_results(rows, path):
    """Weight coverage for n = 1..4 per matrix, our Table 5 against the paper's, and c_id against the [0,2]-factor."""
    save_figure(path, [_coverage_by_n_panel(rows), _paper_panel(rows), _identity_panel(rows)],
                suptitle="Weight coverage of [0,n]-factors (Klein and Strzodka 2022, Tables 4-5)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matrix", nargs="+", default=DEFAULT, help="generator names, SuiteSparse names or .mtx paths")
    ap.add_argument("--n", type=int, default=500, help="grid size of generated matrices (paper: 2500)")
    ap.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    ap.add_argument("--max-iterations", type=int, default=3000, help="iteration limit for c_pi(M_max)")
    ap.add_argument("--quick", action="store_true", help="ANISO1/2/3 and two real matrices at n=200")
    ap.add_argument("--out", default="bench_results/coverage.json")
    ap.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    args = ap.parse_args(argv)
    if args.quick:
        args.matrix, args.n = ["aniso1", "aniso2", "aniso3", "add20", "watt_1"], 200
    device = resolve_device(args.device)
    from tqdm.auto import tqdm

    rows = []
    for spec in tqdm(args.matrix, desc="coverage", leave=False):
        row = table_rows(spec, args.n, device, args.max_iterations)
        if row is not None:
            rows.append(row)
    print(machine_line(gpu_name() if device == "gpu" else None) + f"; ran on the {device.upper()}, generated matrices"
          f" at grid size {args.n}")
    print()
    print(markdown_tables(rows))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device, "n": args.n, "rows": rows}, indent=1))
    print(f"results: {out}")
    if not args.no_plot:
        plot_results(rows, plot_path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
