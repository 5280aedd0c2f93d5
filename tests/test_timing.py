"""kernels.timing: the phase clock of the set-ups (CUDA events on the GPU, no synchronization
between phases) and the benchmark timers."""
import numpy as np
import pytest

from kernels.timing import PhaseClock, cpu_time


def test_phase_clock_on_the_host_sums_its_phases():
    clock = PhaseClock()
    sum(range(1000))
    clock.mark("first")
    clock.mark("second")
    assert list(clock.spans) == ["first", "second"]
    assert all(t >= 0 for t in clock.spans.values()) and clock.total == sum(clock.spans.values())


def test_cpu_time_is_a_median_of_repeats():
    calls = []
    t = cpu_time(lambda: calls.append(1), repeat=3, warmup=2)
    assert len(calls) == 5 and t >= 0


@pytest.mark.gpu
def test_phase_clock_times_device_phases_with_fresh_events():
    import cupy

    a = cupy.ones(1 << 22)
    clock = PhaseClock(gpu=True)
    a *= 2
    clock.mark("scale")
    a += 1
    clock.mark("shift")
    assert list(clock.spans) == ["scale", "shift"] and all(s > 0 for s in clock.spans.values())
    events = {id(e) for e in clock._marks}
    again = PhaseClock(gpu=True)  # while the first clock lives: its own events
    a *= 3
    again.mark("scale")
    assert not {id(e) for e in again._marks} & events
    assert again.spans["scale"] > 0
    assert float(a[0]) == 9.0
