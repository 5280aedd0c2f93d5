"""Several dot products of device vectors in one pass (one kernel, then one tiny one).

The reductions of a Krylov iteration ask for up to five dot products of three vectors at
once (BiCGStab's ``(t, s)``, ``(t, t)``, ``(s, s)``, ``(rhat, s)``, ``(rhat, t)``). One
``vdot`` each reads ten vectors; here every thread walks its stretch once and keeps the
sums in registers, so each vector comes from memory once (the repeated operands hit the
cache). Sums are accumulated in double precision per thread, per block (shuffles), and
over the blocks in a fixed order: the result is deterministic.
"""
from __future__ import annotations

import numpy as np

__all__ = ["multi_dot", "MAX_PAIRS"]

MAX_PAIRS = 5
_THREADS = 256

_SOURCE = r"""
template <typename T>
__global__ void multidot_partial(const T* __restrict__ a0, const T* __restrict__ b0,
                                 const T* __restrict__ a1, const T* __restrict__ b1,
                                 const T* __restrict__ a2, const T* __restrict__ b2,
                                 const T* __restrict__ a3, const T* __restrict__ b3,
                                 const T* __restrict__ a4, const T* __restrict__ b4,
                                 int k, long long n, double* __restrict__ partial) {
    double acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        acc[0] += (double)a0[i] * (double)b0[i];
        if (k > 1) acc[1] += (double)a1[i] * (double)b1[i];
        if (k > 2) acc[2] += (double)a2[i] * (double)b2[i];
        if (k > 3) acc[3] += (double)a3[i] * (double)b3[i];
        if (k > 4) acc[4] += (double)a4[i] * (double)b4[i];
    }
    __shared__ double warp_sums[5][32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int j = 0; j < k; ++j) {
        double v = acc[j];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) warp_sums[j][warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        int warps = blockDim.x >> 5;
        for (int j = 0; j < k; ++j) {
            double v = lane < warps ? warp_sums[j][lane] : 0.0;
            for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
            if (lane == 0) partial[blockIdx.x * 5 + j] = v;
        }
    }
}

template <typename T>
__global__ void multidot_final(const double* __restrict__ partial, int blocks, int k, T* __restrict__ out) {
    // one warp per dot product, the blocks' sums in a fixed order
    int lane = threadIdx.x & 31, j = threadIdx.x >> 5;
    if (j >= k) return;
    double v = 0.0;
    for (int b = lane; b < blocks; b += 32) v += partial[b * 5 + j];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) out[j] = (T)v;
}
"""

_MODULE = {}


def _functions(dtype):
    import cupy

    if "module" not in _MODULE:
        names = [f"multidot_{part}<{t}>" for part in ("partial", "final") for t in ("float", "double")]
        _MODULE["module"] = cupy.RawModule(code=_SOURCE, options=("-std=c++17",), name_expressions=names)
        _MODULE["scratch"] = {}
    t = "float" if np.dtype(dtype) == np.float32 else "double"
    mod = _MODULE["module"]
    return mod.get_function(f"multidot_partial<{t}>"), mod.get_function(f"multidot_final<{t}>")


def multi_dot(pairs, out=None):
    """``[a @ b for a, b in pairs]`` (real CuPy vectors of one length and dtype, float32
    or float64, at most :data:`MAX_PAIRS` pairs) as one device array, in two launches and
    without a host synchronization.

    Examples
    --------
    >>> import cupy                                     # doctest: +SKIP
    >>> x = cupy.arange(4.0)                            # doctest: +SKIP
    >>> multi_dot([(x, x), (x, cupy.ones(4))]).tolist()  # doctest: +SKIP
    [14.0, 6.0]
    """
    import cupy

    k = len(pairs)
    if not 1 <= k <= MAX_PAIRS:
        raise ValueError(f"1 to {MAX_PAIRS} pairs, got {k}")
    dtype = np.dtype(pairs[0][0].dtype)
    n = pairs[0][0].size
    for a, b in pairs:
        if a.dtype != dtype or b.dtype != dtype or a.size != n or b.size != n:
            raise ValueError("every vector must have the same length and dtype")
        if not (a.flags.c_contiguous and b.flags.c_contiguous):
            raise ValueError("vectors must be contiguous")
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"multi_dot takes float32 or float64 vectors, got {dtype}")
    if out is None:
        out = cupy.empty(k, dtype=dtype)
    if n == 0:
        out[...] = 0
        return out
    partial_fn, final_fn = _functions(dtype)
    dev = cupy.cuda.Device()
    sms = dev.attributes["MultiProcessorCount"]
    blocks = int(min((n + _THREADS - 1) // _THREADS, 4 * sms))
    key = (dev.id, blocks)
    scratch = _MODULE["scratch"].get(key)
    if scratch is None:
        scratch = _MODULE["scratch"][key] = cupy.empty(blocks * 5, dtype=np.float64)
    ptrs = [v for a, b in pairs for v in (a, b)]
    ptrs += [pairs[0][0]] * (2 * MAX_PAIRS - len(ptrs))  # unused slots: never read
    partial_fn((blocks,), (_THREADS,), (*ptrs, np.int32(k), np.int64(n), scratch))
    final_fn((1,), (32 * MAX_PAIRS,), (scratch, np.int32(blocks), np.int32(k), out))
    return out
