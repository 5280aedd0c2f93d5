"""Host memory budget: how much a reader may allocate before it tries.

A file's header can declare sizes (``p td 1000000000000 1``, a Matrix Market size line of
10^12 entries) that no machine holds. The readers compare what those sizes would cost
with :func:`host_memory_budget` and refuse up front with a clear error, instead of dying in
an allocation (or, inside a C++ reader, aborting the interpreter).
"""
from __future__ import annotations

import os
import sys

__all__ = ["host_memory_budget", "check_host_memory", "format_bytes"]


def _meminfo_available() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (Linux), else None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left() -> int | None:
    """What the soft ``RLIMIT_AS`` leaves above the process's current size, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return max(soft - int(line.split()[1]) * 1024, 0)
    except (OSError, ValueError, ImportError):
        pass
    return None


def host_memory_budget() -> int:
    """Bytes this process can expect to allocate now: the smallest of the memory the
    system has available (``MemAvailable``, else the physical memory) and what an
    address-space limit (``ulimit -v``) leaves.

    Examples
    --------
    >>> host_memory_budget() > 0
    True
    """
    limits = [x for x in (_meminfo_available() or _physical_memory(), _address_space_left()) if x is not None]
    return min(limits) if limits else 1 << 62


def format_bytes(nbytes: float) -> str:
    """``nbytes`` for a message: ``'3.6 TiB'``, ``'512.0 MiB'``.

    Examples
    --------
    >>> format_bytes(3 * 2**40), format_bytes(1536)
    ('3.0 TiB', '1.5 KiB')
    """
    value = float(nbytes)
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")
    for unit in units:
        if value < 1024 or unit == units[-1]:
            break
        value /= 1024
    return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"


def check_host_memory(nbytes: float, what: str) -> None:
    """Raise ``ValueError`` when ``nbytes`` exceed :func:`host_memory_budget`; ``what``
    starts the message (e.g. ``"g.gr:1: the header declares 10^12 vertices"``).

    Examples
    --------
    >>> check_host_memory(1024, "small")
    >>> check_host_memory(2.0**70, "x.gr:1: the header declares too much")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x.gr:1: the header declares too much: that needs about 1.0 ZiB...
    """
    budget = host_memory_budget()
    if nbytes > budget:
        raise ValueError(f"{what}: that needs about {format_bytes(nbytes)}, more than the "
                         f"{format_bytes(budget)} this process can allocate")
