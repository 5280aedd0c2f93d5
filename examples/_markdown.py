"""Markdown tables for the benchmark scripts: what they print is what BENCHMARKS.md holds.

Each script prints its results as GitHub-flavoured Markdown tables, so that one command
regenerates one table of ``BENCHMARKS.md``; missing or failed measurements print as ``-``.
"""
from __future__ import annotations

import math
import platform
import sys


def table(headers, rows) -> str:
    """A Markdown table: ``headers`` (strings) and ``rows`` (sequences of cells, already
    formatted or anything ``str`` accepts; None prints as ``-``)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"a row of {len(row)} cells under {len(headers)} headers")
        lines.append("| " + " | ".join("-" if cell is None else str(cell).replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines)


def number(value, digits=3):
    """``value`` with ``digits`` decimals; ``-`` for None, NaN or a note such as ``"unavailable: ..."``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}f}"


def ms(seconds, digits=3):
    """Seconds shown as milliseconds (see :func:`number`)."""
    return number(seconds * 1e3 if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None,
                  digits)


def ratio(numerator, denominator, digits=2):
    """``numerator / denominator`` (see :func:`number`); ``-`` when either is missing or the
    denominator is zero."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (numerator, denominator)):
        return "-"
    return number(numerator / denominator, digits) if denominator else "-"


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name():
    """The current CUDA device's name, or None without a usable GPU."""
    from kernels.backend import gpu_available

    if not gpu_available():
        return None
    import cupy

    return cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()


def machine_line(gpu=None) -> str:
    """One line naming the machine the numbers come from: the GPU (if any), the CPU and its
    thread count, Python, and the versions of NumPy, SciPy, Numba and CuPy."""
    import os

    versions = []
    for module in ("numpy", "scipy", "numba", "cupy"):
        mod = sys.modules.get(module)
        if mod is None and module != "cupy":
            try:
                mod = __import__(module)
            except ImportError:
                mod = None
        if mod is not None:
            versions.append(f"{module} {mod.__version__}")
    cpu = cpu_name()
    where = f"GPU: {gpu}; " if gpu else "no GPU; "
    return f"{where}CPU: {cpu}, {os.cpu_count()} threads; Python {platform.python_version()}, " + ", ".join(versions)
