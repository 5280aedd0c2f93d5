"""Convergence study, the main job: BiCGStab with none / Jacobi / TriScal / AlgTriScal /
AlgTriBlock / pyamg / ILU(0) on ANISO1/2/3, stand-ins and real matrices.

    python examples/convergence.py --demo                 # CPU-friendly demo
    python examples/convergence.py --matrix aniso2 --n 2500 --device gpu
    python examples/convergence.py --matrix add20 memplus path/to/A.mtx --dtype float32

Same as the ``precond convergence`` console command.
"""
import sys

from precond.study import main

if __name__ == "__main__":
    sys.exit(main(prog="convergence.py"))
