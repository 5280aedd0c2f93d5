"""kernels.hashing: the integer hash of (x, y, seed) behind every random choice, scalar,
vectorized and on the GPU."""
import numpy as np
import pytest

from kernels.hashing import hash32, hash32_array


def test_hash_scalar_matches_vectorized():
    ids = np.arange(1000)
    vec = hash32_array(ids, 7, 3)
    assert all(int(vec[i]) == int(hash32(i, 7, 3)) for i in range(0, 1000, 37))
    assert vec.max() < 2**32
    # roughly uniform low bit
    assert 400 < int((vec & 1).sum()) < 600


@pytest.mark.gpu
def test_hash_gpu_equals_cpu():
    import cupy

    kernel = cupy.RawKernel(
        r'''
        #include "hashing.cuh"
        extern "C" __global__ void h(unsigned int* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) out[i] = hash32(i, 7u, 3u);
        }''',
        "h",
        options=(f"-I{__import__('kernels.nvrtc', fromlist=['CUDA_DIR']).CUDA_DIR}",),
    )
    out = cupy.empty(4096, dtype=cupy.uint32)
    kernel((16,), (256,), (out, np.int32(4096)))
    np.testing.assert_array_equal(out.get(), hash32_array(np.arange(4096), 7, 3).astype(np.uint32))
