"""Array-backend dispatch between NumPy/SciPy (CPU) and CuPy/cupyx (GPU).

Nothing here imports CuPy at module level or touches a device on import: a machine
without CUDA libraries can have an importable ``cupy`` whose first allocation raises.
:func:`gpu_available` decides once, catching every exception.
"""
from __future__ import annotations

import functools
import importlib

import numpy as np

__all__ = [
    "gpu_available",
    "is_device_array",
    "get_array_module",
    "inverse_permutation",
    "resolve_device",
    "sparse_module",
    "sparse_linalg_module",
    "device_attributes",
    "all_finite",
    "to_device",
    "to_host",
    "EarlyRead",
]


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    """Return True when CuPy is installed and a CUDA device can allocate and run.

    The answer is cached for the life of the process. Every failure (missing package,
    missing CUDA libraries, no device, driver too old, ``CUDA_VISIBLE_DEVICES=""``)
    counts as "no GPU".
    """
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False
        x = cupy.arange(4, dtype=cupy.float32)
        float((x * 2).sum())
        importlib.import_module("cupyx.scipy.sparse")
        return True
    except Exception:  # noqa: BLE001 - any failure means the GPU is not usable
        return False


def all_finite(x) -> bool:
    """True when no entry of the array ``x`` (NumPy or CuPy) is NaN or infinite. On the GPU
    one reduction pass without a temporary (``isfinite(x).all()`` writes a boolean copy)."""
    if not is_device_array(x):
        return bool(np.isfinite(x).all())
    if x.size == 0 or x.dtype.kind in "biu":
        return True
    if x.dtype.kind == "c":  # real and imaginary parts
        x = x.ravel().view(np.empty(0, x.dtype).real.dtype)
    return bool(_all_finite_kernel()(x))


@functools.lru_cache(maxsize=None)
def _all_finite_kernel():
    import cupy

    return cupy.ReductionKernel("T x", "bool y", "isfinite(x)", "a && b", "y = a", "true", "gpuforest_all_finite")


def device_attributes() -> dict:
    """The current CUDA device's attributes (``cupy.cuda.Device().attributes``), cached
    per device: querying all of them costs host time on every call."""
    import cupy

    return _device_attributes(cupy.cuda.runtime.getDevice())


@functools.lru_cache(maxsize=None)
def _device_attributes(device_id: int) -> dict:
    import cupy

    return dict(cupy.cuda.Device(device_id).attributes)


def is_device_array(x) -> bool:
    """True for CuPy arrays and cupyx sparse matrices (checked without importing CuPy)."""
    return type(x).__module__.split(".")[0] in ("cupy", "cupyx")


def get_array_module(*arrays):
    """Return ``cupy`` if any argument lives on the GPU, else ``numpy``."""
    if any(is_device_array(a) for a in arrays):
        import cupy

        return cupy
    return np


def inverse_permutation(perm, dtype=None):
    """``inverse[perm[k]] = k`` (old -> new for a new -> old ``perm``), on ``perm``'s
    backend, of ``dtype`` (default: ``perm``'s)."""
    xp = get_array_module(perm)
    perm = xp.asarray(perm)
    dtype = perm.dtype if dtype is None else dtype
    inverse = xp.empty(len(perm), dtype=dtype)
    inverse[perm] = xp.arange(len(perm), dtype=dtype)
    return inverse


def resolve_device(device: str = "auto") -> str:
    """Map a ``device`` argument to ``"cpu"`` or ``"gpu"``.

    ``"auto"`` picks the GPU when one is usable. ``"gpu"`` (or ``"cuda"``) without a
    usable GPU raises ``RuntimeError`` rather than silently falling back.
    """
    if not isinstance(device, str):
        raise TypeError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")
    d = device.lower()
    if d == "auto":
        return "gpu" if gpu_available() else "cpu"
    if d == "cpu":
        return "cpu"
    if d in ("gpu", "cuda"):
        if not gpu_available():
            raise RuntimeError(
                "device='gpu' was requested but no usable CUDA GPU was found "
                "(CuPy missing, no device, or CUDA libraries unavailable)"
            )
        return "gpu"
    raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")


@functools.lru_cache(maxsize=None)
def sparse_module(xp):
    """``scipy.sparse`` for NumPy, ``cupyx.scipy.sparse`` for CuPy (imported lazily, once:
    ``import_module`` costs the GPU set-ups some 10 us of host time per call)."""
    if xp is np:
        return importlib.import_module("scipy.sparse")
    return importlib.import_module("cupyx.scipy.sparse")


@functools.lru_cache(maxsize=None)
def sparse_linalg_module(xp):
    """``scipy.sparse.linalg`` for NumPy, ``cupyx.scipy.sparse.linalg`` for CuPy."""
    if xp is np:
        return importlib.import_module("scipy.sparse.linalg")
    return importlib.import_module("cupyx.scipy.sparse.linalg")


def _is_scipy_sparse(x) -> bool:
    return type(x).__module__.startswith("scipy.sparse")


def to_device(x):
    """Copy a NumPy array or SciPy sparse matrix to the GPU (no-op if already there).

    Sparse matrices keep their format (CSR, CSC or COO; others become CSR).
    """
    if is_device_array(x):
        return x
    import cupy

    if _is_scipy_sparse(x):
        csp = sparse_module(cupy)
        fmt = x.format if x.format in ("csr", "csc", "coo") else "csr"
        cls = {"csr": csp.csr_matrix, "csc": csp.csc_matrix, "coo": csp.coo_matrix}[fmt]
        return cls(x.asformat(fmt))
    return cupy.asarray(x)


def to_host(x):
    """Copy a CuPy array or cupyx sparse matrix to the host (no-op for host data)."""
    if is_device_array(x):
        return x.get()
    return x


class EarlyRead:
    """A small array read on the host as soon as the work queued before it is done.

    On the GPU the array is copied, asynchronously, into pinned host memory right away
    and an event marks the copy's end: :meth:`get` waits for that event only, while the
    kernels queued after it keep running (``to_host`` would wait for the whole queue and
    leave the device idle until the host queues more). On the CPU it holds the array.
    """

    def __init__(self, array):
        if not is_device_array(array):
            self._host, self._event = np.asarray(array), None
            return
        import cupy
        import cupyx

        self._host = cupyx.empty_pinned(array.shape, array.dtype)
        cupy.asnumpy(array, out=self._host, blocking=False)
        self._event = cupy.cuda.Event()
        self._event.record()

    def get(self) -> np.ndarray:
        """The array on the host (waits for the copy on the GPU)."""
        if self._event is not None:
            self._event.synchronize()
            self._event = None
        return self._host
