"""Loader for the CUDA sources in ``kernels/cuda/``: NVRTC through ``cupy.RawModule``.

Each ``.cu`` file declares its templated kernels on a line such as::

    // templates: propose<V,I>, confirm<I>

where ``V`` expands to ``float, double`` and ``I`` to ``int, long long``. The loader
compiles every instantiation as a name expression, once per file and device, with a
``#line`` prefix so compiler errors name the file. Kernels that are not templates are
declared ``extern "C"`` and fetched by their plain name.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import re
from pathlib import Path

import numpy as np

from .backend import device_attributes

__all__ = ["CUDA_DIR", "cuda_sources", "template_declarations", "name_expressions", "get_kernel", "device_workspace",
           "aligned", "kernel_int"]

CUDA_DIR = Path(__file__).resolve().parent / "cuda"

#: Template parameter letters and the C types they expand to.
TEMPLATE_TYPES = {"V": ("float", "double"), "I": ("int", "long long")}

_C_TYPES = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.int32): "int",
    np.dtype(np.int64): "long long",
    np.dtype(np.uint32): "unsigned int",
    np.dtype(np.uint64): "unsigned long long",
}

_DECL = re.compile(r"^\s*//\s*templates:\s*(.*)$", re.MULTILINE)
_ITEM = re.compile(r"(\w+)\s*<\s*([A-Z](?:\s*,\s*[A-Z])*)\s*>")


def cuda_sources() -> list[Path]:
    """All ``.cu`` files shipped in ``kernels/cuda``."""
    return sorted(CUDA_DIR.glob("*.cu"))


def template_declarations(source: str) -> dict[str, tuple[str, ...]]:
    """Parse the ``// templates:`` lines of a source into ``{kernel: (params...)}``."""
    decls: dict[str, tuple[str, ...]] = {}
    for line in _DECL.findall(source):
        for name, params in _ITEM.findall(line):
            letters = tuple(p.strip() for p in params.split(","))
            unknown = [p for p in letters if p not in TEMPLATE_TYPES]
            if unknown:
                raise ValueError(f"kernel {name}: unknown template parameter(s) {unknown}")
            decls[name] = letters
    return decls


def name_expressions(source: str) -> list[str]:
    """Every instantiation (``"propose<float,int>"``...) declared in ``source``."""
    exprs = []
    for name, letters in template_declarations(source).items():
        for combo in itertools.product(*(TEMPLATE_TYPES[p] for p in letters)):
            exprs.append(f"{name}<{','.join(combo)}>")
    return exprs


def c_type(dtype) -> str:
    """C spelling of a NumPy dtype used as a template argument."""
    try:
        return _C_TYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"no CUDA template instantiation for dtype {np.dtype(dtype)}") from None


@functools.lru_cache(maxsize=None)
def _module(stem: str, device_id: int):
    import cupy

    path = CUDA_DIR / f"{stem}.cu"
    if not path.exists():
        raise FileNotFoundError(f"no CUDA source {path}")
    source = path.read_text()
    # CuPy's disk cache keys a module by its code, not by the headers it includes: their
    # digest, appended, makes a changed header compile afresh
    headers = hashlib.sha256(b"".join(h.read_bytes() for h in sorted(CUDA_DIR.glob("*.cuh")))).hexdigest()
    code = f'#line 1 "{path}"\n{source}\n// headers {headers}\n'
    return cupy.RawModule(
        code=code,
        options=("-std=c++17", f"-I{CUDA_DIR}"),
        name_expressions=name_expressions(source) or None,
    )


def get_kernel(stem: str, name: str, *types):
    """Return the compiled kernel ``name`` of ``kernels/cuda/<stem>.cu``.

    Parameters
    ----------
    stem : str
        File name without ``.cu``.
    name : str
        Kernel name.
    *types : numpy dtypes
        Template arguments in declaration order; none for ``extern "C"`` kernels.
    """
    import cupy

    return _function(stem, name, types, cupy.cuda.runtime.getDevice())


@functools.lru_cache(maxsize=None)
def _function(stem: str, name: str, types: tuple, device_id: int):
    """Cached lookup, keyed by the dtypes as given: ``get_function`` and the C type names
    cost host time on every call, and set-up code launches a few dozen kernels."""
    if types:
        name = f"{name}<{','.join(c_type(t) for t in types)}>"
    return _module(stem, device_id).get_function(name)


@functools.lru_cache(maxsize=None)
def kernel_int():
    """Constructor of integer kernel arguments that CuPy launches without conversion: its
    C ``intptr_t`` (``cupy.cuda.function.CIntptr``) where it has one, else
    ``numpy.int64``. A 64-bit integer serves any integer parameter of up to 8 bytes whose
    value it holds (an unsigned one's bits, below 2**63): the driver copies the
    parameter's own size from it, its low bytes on a little-endian host. CuPy converts a
    NumPy scalar argument on every launch, which about doubles the host time of a launch
    with many integer arguments (the set-ups' first launches, which the device waits for)."""
    try:
        from cupy.cuda.function import CIntptr
    except ImportError:  # a CuPy without it
        return np.int64
    return CIntptr


#: Resident threads per SM for the thread-per-row CSR kernels (grid-stride loops): each
#: thread walks its own row, and with every SM full the rows of the resident warps no
#: longer fit in L1 (the first proposal of the factor has a grid of its own).
ROW_KERNEL_THREADS_PER_SM = 1024


def aligned(a, nbytes: int, dtype=None):
    """``a`` as a C-contiguous CuPy array (of ``dtype``, if given) whose data is
    ``nbytes``-aligned: ``a`` itself when it already is one, else a copy. The pair and quad
    accesses of ``pairs.cuh`` fault on a view that starts inside a row (CuPy's allocations
    are aligned)."""
    import cupy

    a = cupy.ascontiguousarray(a, dtype=dtype)
    return a if a.data.ptr % nbytes == 0 else a.copy()


def row_grid(n_rows: int, threads: int, per_sm: int = ROW_KERNEL_THREADS_PER_SM) -> int:
    """Blocks for a grid-stride kernel of ``n_rows`` threads' work: enough for it, at most
    ``per_sm`` threads per SM (``ROW_KERNEL_THREADS_PER_SM`` for thread-per-row kernels)."""
    cap = device_attributes()["MultiProcessorCount"] * max(per_sm // threads, 1)
    return max(1, min((n_rows + threads - 1) // threads, cap))


@functools.lru_cache(maxsize=None)
def _resident_blocks(function_ptr: int, threads: int, multiprocessors: int) -> int:
    """Blocks of ``threads`` threads of a compiled kernel that fit on the device at once
    (a driver query of about 10 us, made once per kernel and block size)."""
    from cupy_backends.cuda.api import driver

    return driver.occupancyMaxActiveBlocksPerMultiprocessor(function_ptr, threads, 0) * multiprocessors


def blocks_per_sm(kernel, threads: int) -> int:
    """Blocks of ``threads`` threads of ``kernel`` (from :func:`get_kernel`) that one SM holds
    at once (set by its registers and shared memory; cached per kernel)."""
    return _resident_blocks(kernel.kernel.ptr, threads, 1)


def launch_cooperative(kernel, n_rows: int, threads: int, args, per_sm: int = ROW_KERNEL_THREADS_PER_SM) -> None:
    """Launch ``kernel`` (from :func:`get_kernel`) with ``cuLaunchCooperativeKernel``, so
    that it may synchronize its whole grid: grid-stride over ``n_rows``, as many blocks as
    :func:`row_grid` gives (at most ``per_sm`` threads per SM) and no more than can be
    resident at once."""
    function = kernel.kernel  # the cupy.cuda.Function of the current device
    resident = _resident_blocks(function.ptr, threads, device_attributes()["MultiProcessorCount"])
    blocks = max(1, min(row_grid(n_rows, threads, per_sm), resident))
    function((blocks,), (threads,), args, enable_cooperative_groups=True)


def device_workspace(*arrays):
    """One device allocation for the scratch ``arrays``, given as ``(length, dtype)``.

    Returns the allocation (keep a reference while the kernels queued on it may run) and
    each array's address as a ``numpy.uint64`` kernel argument (for a pointer parameter),
    256-byte aligned. A set-up that needs a few dozen scratch arrays would spend a few us of
    host time on every ``cupy.empty``, where the device's work between two of them may be
    shorter."""
    import cupy

    offsets, size = [], 0
    for length, dtype in arrays:
        if length < 0:
            raise ValueError(f"workspace array lengths must be >= 0, got {length}")
        offsets.append(size)
        size += -(-int(length) * np.dtype(dtype).itemsize // 256) * 256
    buffer = cupy.empty(max(size, 1), dtype=np.uint8)
    base = buffer.data.ptr
    return buffer, [np.uint64(base + offset) for offset in offsets]
