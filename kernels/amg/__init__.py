"""Algebraic multigrid: the compute layer of :func:`precond.amg` (hierarchies, their
transfer to the device, the cycle and its CUDA graph)."""
