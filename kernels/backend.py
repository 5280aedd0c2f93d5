"""Array-backend dispatch between NumPy/SciPy (CPU) and CuPy/cupyx (GPU).

Nothing here imports CuPy at module level or touches a device on import: a machine
without CUDA libraries can have an importable ``cupy`` whose first allocation raises.
:func:`gpu_available` decides once, catching every exception.
"""
from __future__ import annotations

import contextvars
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
    "PinnedOutput",
    "zero_pool",
    "small_zeros",
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


_ON_DEVICE: dict[type, bool] = {}  # is_device_array's answer per type


def is_device_array(x) -> bool:
    """True for CuPy arrays and cupyx sparse matrices (checked without importing CuPy;
    cached per type: a GPU set-up asks a dozen times before its first kernel, while the
    device waits)."""
    kind = type(x)
    on_device = _ON_DEVICE.get(kind)
    if on_device is None:
        on_device = _ON_DEVICE[kind] = kind.__module__.split(".")[0] in ("cupy", "cupyx")
    return on_device


def get_array_module(*arrays):
    """Return ``cupy`` if any argument lives on the GPU, else ``numpy``."""
    for a in arrays:
        if is_device_array(a):
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

    On the GPU the array is copied into pinned host memory, asynchronously, on a side
    stream that waits for the work queued so far: :meth:`get` waits for that copy only,
    and the kernels queued after it neither wait for the copy nor are held up by it (a
    copy between two kernels of one stream costs device time, and
    ``to_host`` would wait for the whole queue, leaving the device idle until the host
    queues more). The object keeps the array until it is read. On the CPU it holds the
    array.
    """

    def __init__(self, array):
        if not is_device_array(array):
            self._host, self._event = np.asarray(array), None
            return
        import cupy
        import cupyx

        self._array = array
        self._host = cupyx.empty_pinned(array.shape, array.dtype)
        queued = cupy.cuda.Event(block=False, disable_timing=True)
        queued.record()
        side = _side_stream(cupy.cuda.runtime.getDevice())
        side.wait_event(queued)
        cupy.asnumpy(array, stream=side, out=self._host, blocking=False)
        self._event = cupy.cuda.Event(block=False, disable_timing=True)
        self._event.record(side)

    def get(self) -> np.ndarray:
        """The array on the host (waits for the copy on the GPU)."""
        if self._event is not None:
            self._event.synchronize()
            self._event = self._array = None
        return self._host

    def __del__(self):
        _release_pinned(self)


class PinnedOutput:
    """A small result that a kernel writes straight into pinned host memory.

    Pass :attr:`pointer` (the memory's device address, the same as its host address under
    unified addressing) to the kernel and call :meth:`ready` once it is queued: :meth:`get`
    then waits for that kernel only and reads the memory, with no copy queued after the
    kernel (for the last read of a set-up, whose latency the host waits out in full).
    """

    def __init__(self, shape, dtype):
        import cupyx

        self._host = cupyx.empty_pinned(shape, dtype)
        self.pointer = np.uint64(self._host.ctypes.data)
        self._event = None

    def ready(self) -> None:
        """Marks the work queued so far as the work that writes the result."""
        import cupy

        self._event = cupy.cuda.Event(block=False, disable_timing=True)
        self._event.record()

    def get(self) -> np.ndarray:
        """The result (waits for the work marked by :meth:`ready`)."""
        if self._event is None:
            raise RuntimeError("PinnedOutput.get() before ready(): no kernel was marked as writing it")
        self._event.synchronize()
        return self._host

    def __del__(self):
        _release_pinned(self)


def _release_pinned(reader) -> None:
    """Waits, before ``reader``'s pinned memory goes back to CuPy's pool, for the copy or
    kernel that may still write it (a reader dropped unread)."""
    event = getattr(reader, "_event", None)
    if event is not None:
        try:
            event.synchronize()
        except Exception:  # noqa: BLE001 - at interpreter exit CUDA may be gone already
            pass


@functools.lru_cache(maxsize=None)
def _side_stream(device_id: int):
    """The stream of :class:`EarlyRead`'s copies on a device (non-blocking: it never
    synchronizes with the legacy default stream)."""
    import cupy

    with cupy.cuda.Device(device_id):
        return cupy.cuda.Stream(non_blocking=True)


class zero_pool:
    """Context in which :func:`small_zeros` on the GPU takes its arrays from one zeroed
    allocation of ``nbytes``, made at its first call: a set-up's dozen counters and flags
    then cost one memset instead of one each between its kernels (each a few us of device
    time). Each array starts on a 512-byte boundary, as CuPy's own
    allocations do: counters that kernels update atomically must not share a cache line
    with flags that many threads read (the contention slowed AlgTriScal's first confirm by
    half or more). ``gpu=False``
    makes it a no-op.
    Arrays that no longer fit are allocated as before.

    Examples
    --------
    >>> with zero_pool(gpu=False):
    ...     small_zeros(np, 3, np.int32)
    array([0, 0, 0], dtype=int32)
    """

    _ALIGN = 512

    def __init__(self, gpu: bool = True, nbytes: int = 65536):
        if not isinstance(nbytes, int) or nbytes < 1:
            raise ValueError(f"zero_pool needs a positive number of bytes, got {nbytes!r}")
        self.gpu, self.nbytes = gpu, nbytes
        self._buffer, self._used, self._device = None, 0, None

    def __enter__(self):
        self._token = _ZERO_POOL.set(self) if self.gpu else None
        return self

    def __exit__(self, *exc):
        if self._token is not None:
            _ZERO_POOL.reset(self._token)

    def _take(self, shape, dtype):
        import cupy

        if self._buffer is None:
            self._device = cupy.cuda.runtime.getDevice()
            self._buffer = cupy.zeros(self.nbytes, dtype=np.uint8)
        elif cupy.cuda.runtime.getDevice() != self._device:
            return None
        dtype = np.dtype(dtype)
        nbytes = (shape if isinstance(shape, int) else int(np.prod(shape, dtype=np.int64))) * dtype.itemsize
        start = self._used
        if start + nbytes > self.nbytes:
            return None
        self._used = start + -(-nbytes // self._ALIGN) * self._ALIGN
        return cupy.ndarray(shape, dtype, memptr=self._buffer.data + start)


_ZERO_POOL: contextvars.ContextVar = contextvars.ContextVar("gpuforest_zero_pool", default=None)


def small_zeros(xp, shape, dtype):
    """``xp.zeros(shape, dtype)`` for a small counter or flag array; on the GPU inside a
    :class:`zero_pool`, a view of its zeroed allocation (no memset of its own)."""
    pool = _ZERO_POOL.get() if xp is not np else None
    out = pool._take(shape, dtype) if pool is not None else None
    return xp.zeros(shape, dtype=dtype) if out is None else out
