"""Krylov iterations captured once into a CUDA graph and replayed.

The GPU Krylov solvers (:func:`precond.krylov.bicgstab`, :func:`precond.distributed.bicgstab`
and ``cg``) run ``check_every`` iterations between two looks at the residual; those
iterations launch the same kernels on the same memory every time, so they are captured
once (CuPy's stream capture) and replayed as one graph launch.
"""
from __future__ import annotations

__all__ = ["IterationGraph"]


class IterationGraph:
    """``block`` Krylov iterations ``step(0) ... step(block - 1)`` captured once into a
    CUDA graph and replayed: one launch instead of some sixty kernel launches (and their
    Python overhead) per iteration. The temporaries of the captured iterations come from
    a private memory pool that lives as long as the graph, so no other allocation can take
    their memory while the graph may still write to it.

    The steps may rebind the arrays ``st[key]`` for ``key`` in ``carried`` (a new ``v``
    each iteration): the captured block copies each one's last value into the array it
    started from, so every replay starts from, and leaves its result in, the same memory.

    Examples
    --------
    On a GPU, eight iterations of a solver whose ``step(row)`` updates ``x`` in place::

        graph = IterationGraph(step, 8, state, carried=("v",))
        graph.launch()          # the eight iterations again, as one launch
    """

    def __init__(self, step, block, st, carried=("v",)):
        import cupy

        self.pool = cupy.cuda.MemoryPool()
        stream = cupy.cuda.Stream(non_blocking=True)
        start = {key: st[key] for key in carried}
        try:
            with cupy.cuda.using_allocator(self.pool.malloc), stream:
                stream.begin_capture()
                try:
                    for row in range(block):
                        step(row)
                    for key, array in start.items():
                        array[...] = st[key]
                finally:
                    self.graph = stream.end_capture()
        finally:
            st.update(start)

    def launch(self):
        import cupy

        self.graph.launch(cupy.cuda.get_current_stream())
