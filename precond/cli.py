"""The ``precond`` console script."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="precond", description="Algebraic tridiagonal preconditioners.")
    parser.add_argument("command", choices=["convergence"], help="convergence: BiCGStab convergence study")
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    parser.parse_args([command])
    from .study import main as study_main

    return study_main(rest, prog=f"precond {command}")


if __name__ == "__main__":
    sys.exit(main())
