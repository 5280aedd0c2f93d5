"""The ``precond`` console script."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``precond COMMAND [options]``; returns the exit status."""
    from kernels.console import ArgumentParser
    from kernels.version import __version__

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = ArgumentParser(prog="precond", description="Algebraic tridiagonal preconditioners.")
    parser.add_argument("--version", action="version", version=f"precond {__version__}")
    parser.add_argument("command", choices=["convergence", "distributed"],
                        help="convergence: BiCGStab convergence study; distributed: a solve across MPI ranks "
                             "(run under mpiexec)")
    if not argv or argv[0] in ("-h", "--help", "--version"):
        if argv and argv[0] == "--version":
            parser.parse_args(["--version"])  # prints the version and exits
        parser.print_help()
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    parser.parse_args([command])
    if command == "distributed":
        from .distributed.cli import main as distributed_main

        return distributed_main(rest, prog=f"precond {command}")
    from .study import main as study_main

    return study_main(rest, prog=f"precond {command}")


if __name__ == "__main__":
    sys.exit(main())
