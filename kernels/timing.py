"""Timing helpers: phase clocks for set-up breakdowns, medians for the benchmark scripts
(CUDA events on the GPU)."""
from __future__ import annotations

import statistics
import time

__all__ = ["PhaseClock", "gpu_time", "cpu_time"]


class PhaseClock:
    """Times consecutive phases without making the host wait for the device.

    On the GPU every :meth:`mark` records a CUDA event on the current stream (of the
    device current when the clock was made: a clock times one device's work), so a phase
    is the device time between two marks (queue gaps included: with a host-bound phase the
    device idles until the host catches up); the events are read, with one
    synchronization, on the first access to :attr:`spans`. On the CPU marks read
    ``time.perf_counter``. A synchronization per phase would leave the device idle while
    the host queues the next phase's first kernels (a tenth of a GPU set-up's time).

    Examples
    --------
    >>> clock = PhaseClock()
    >>> _ = sum(range(1000)); clock.mark("sum")
    >>> list(clock.spans), clock.total >= 0
    (['sum'], True)
    """

    def __init__(self, gpu: bool = False):
        self.gpu = gpu
        self._names: list[str] = []
        self._marks = [self._now()]
        self._spans: dict[str, float] | None = None

    def _now(self):
        if not self.gpu:
            return time.perf_counter()
        import cupy

        # A new event per mark. Reusing the events of dead clocks saved a microsecond of host
        # time per mark but handed out events whose state this module does not control (a
        # clock can die inside a stream capture or a failed launch): the GPU suite saw
        # cudaErrorContextIsDestroyed on recording such an event, in a healthy context.
        event = cupy.cuda.Event()
        event.record()
        return event

    def mark(self, name: str) -> None:
        """End the current phase (named ``name``) and start the next."""
        self._names.append(name)
        self._marks.append(self._now())
        self._spans = None

    @property
    def spans(self) -> dict[str, float]:
        """Seconds per phase, in the order first marked."""
        if self._spans is None:
            if self.gpu:
                import cupy

                self._marks[-1].synchronize()
                seconds = [cupy.cuda.get_elapsed_time(a, b) * 1e-3 for a, b in zip(self._marks, self._marks[1:])]
            else:
                seconds = [b - a for a, b in zip(self._marks, self._marks[1:])]
            self._spans = {}
            for name, sec in zip(self._names, seconds):  # a repeated name adds up
                self._spans[name] = self._spans.get(name, 0.0) + sec
        return self._spans

    @property
    def total(self) -> float:
        return float(sum(self.spans.values()))


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
