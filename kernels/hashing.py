"""Deterministic 32-bit integer hashing shared by the CPU and GPU code.

``kernels/cuda/hashing.cuh`` holds the identical device function, so random choices
(vertex charges, MIS priorities) agree bit for bit between backends. The arithmetic is
done in 64-bit and masked, which gives exactly the 32-bit wrap-around of the CUDA code.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["hash32", "hash32_array", "fmix32_array"]

_MASK = np.uint64(0xFFFFFFFF)
_C1 = np.uint64(0x85EBCA6B)
_C2 = np.uint64(0xC2B2AE35)
_GOLDEN = np.uint64(0x9E3779B9)
_S16 = np.uint64(16)
_S13 = np.uint64(13)


def _fmix32(h):
    h = h ^ (h >> _S16)
    h = (h * _C1) & _MASK
    h = h ^ (h >> _S13)
    h = (h * _C2) & _MASK
    return h ^ (h >> _S16)


def _hash32(x, y, seed):
    s = _fmix32((seed + _GOLDEN) & _MASK)
    return _fmix32((x & _MASK) ^ _fmix32((y & _MASK) ^ s))


_fmix32_jit = njit(cache=True, inline="always")(_fmix32)


def fmix32_array(values, xp=np):
    """MurmurHash3's 32-bit finalizer (``fmix32`` of ``hashing.cuh``) of each entry of
    ``values`` (non-negative integers below 2**32), as ``uint32`` on the backend ``xp``.

    Examples
    --------
    >>> int(fmix32_array(np.arange(2))[1])
    1364076727
    """
    return _fmix32(xp.asarray(values).astype(np.uint64)).astype(np.uint32)


@njit(cache=True, inline="always")
def hash32(x, y, seed):
    """Hash of three integers (vertex id, iteration, seed) to a uint64 in [0, 2**32)."""
    s = _fmix32_jit((np.uint64(seed) + _GOLDEN) & _MASK)
    return _fmix32_jit((np.uint64(x) & _MASK) ^ _fmix32_jit((np.uint64(y) & _MASK) ^ s))


def hash32_array(x, y, seed):
    """Vectorized :func:`hash32` over NumPy arrays (broadcasting)."""
    u = lambda a: np.asarray(a).astype(np.uint64)  # noqa: E731
    return _hash32(u(x), u(y), u(seed))
