"""Convergence study, the main job: BiCGStab with none / Jacobi / TriScal / AlgTriScal /
AlgTriBlock / AMG / pyamg / ILU(0) / ILUT on ANISO1/2/3, stand-ins and real matrices.

    python examples/convergence.py --demo                 # CPU-friendly demo
    python examples/convergence.py --matrix aniso2 --n 2500 --device gpu
    python examples/convergence.py --matrix add20 memplus path/to/A.mtx --dtype float32
    python examples/convergence.py --markdown ...         # also the summary table of BENCHMARKS.md

Same as the ``precond convergence`` console command. With ``--markdown`` it then prints one
Markdown table: a row per matrix, a column per preconditioner, each cell the iterations and
the time to solution in ms (set-up + solve, after the study's warm-up), ``*`` where the
solver did not converge.
"""
import json
import sys
from pathlib import Path

from kernels.backend import resolve_device
from precond.study import LOAD_FAILED, build_parser, main

from _markdown import gpu_name, machine_line, table

SHORT_NAMES = {"none": "none", "jacobi": "Jacobi", "tridiagonal": "TriScal", "algebraic_tridiagonal": "AlgTriScal",
               "algebraic_block_tridiagonal": "AlgTriBlock", "amg": "AMG", "pyamg": "pyamg (CPU)", "ilu0": "ILU(0)",
               "ilut": "ILUT (SciPy)"}


def markdown_table(rows) -> str:
    """Iterations / time to solution (ms) per matrix and preconditioner, from the study's result rows."""
    preconds = [p for p in dict.fromkeys(r["preconditioner"] for r in rows) if p != LOAD_FAILED]
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    cells = {(r["matrix"], r["preconditioner"]): r for r in rows}
    out = []
    for name in matrices:
        if (name, LOAD_FAILED) in cells:
            out.append([name, None, *(["not loaded"] * len(preconds))])
            continue
        size = max(r["n"] for r in rows if r["matrix"] == name)
        line = [name, f"{size:,}"]
        for p in preconds:
            r = cells.get((name, p))
            if r is None:
                line.append(None)
            elif "error" in r:
                line.append("failed")
            else:
                line.append(f"{r['iterations']}{'' if r['converged'] else '*'} / {r['time_to_solution'] * 1e3:.0f}")
        out.append(line)
    return table(["matrix", "N", *(SHORT_NAMES.get(p, p) for p in preconds)], out) + (
        "\n\n(iterations / time to solution in ms; * = not converged: maxiter reached or a breakdown)")


def run(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    markdown = "--markdown" in argv
    argv = [a for a in argv if a != "--markdown"]
    status = main(argv, prog="convergence.py")
    if markdown:
        args, _ = build_parser().parse_known_args(argv)
        rows = json.loads((Path(args.out) / "convergence.json").read_text())
        device = resolve_device(args.device)
        print()
        print(machine_line(gpu_name() if device == "gpu" else None) + f"; ran on the {device.upper()}")
        print()
        print(markdown_table(rows))
    return status


if __name__ == "__main__":
    sys.exit(run())
