"""Timing helpers for the benchmark scripts: CUDA events on the GPU, medians."""
from __future__ import annotations

import statistics
import time

__all__ = ["gpu_time", "cpu_time"]


def gpu_time(fn, repeat: int = 20, warmup: int = 3) -> float:
    """Median seconds of ``fn()`` on the current CUDA stream, timed with CUDA events."""
    import cupy

    for _ in range(warmup):
        fn()
    cupy.cuda.Device().synchronize()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e-3)
    return statistics.median(times)


def cpu_time(fn, repeat: int = 5, warmup: int = 1) -> float:
    """Median wall-clock seconds of ``fn()`` on the host."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
