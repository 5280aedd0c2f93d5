"""Backend dispatch: imports never touch CUDA; gpu_available fails closed."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from kernels import backend

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kernels", "graphkit", "precond", "matrices")

IMPORT_ALL = textwrap.dedent(
    f"""
    import sys
    for name in {PACKAGES!r}:
        __import__(name)
    for mod in ("cupyx.scipy.sparse.linalg", "cupy.cublas", "cupyx.cusparse"):
        assert mod not in sys.modules, mod + " imported at package import"
    from kernels.backend import gpu_available, resolve_device
    assert gpu_available() is False
    assert resolve_device("auto") == "cpu"
    try:
        resolve_device("gpu")
    except RuntimeError as exc:
        assert "no usable CUDA GPU" in str(exc)
    else:
        raise AssertionError("resolve_device('gpu') did not raise")
    print("OK")
    """
)


def _run(code, env_extra, tmp_path=None):
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env_extra.get("PYTHONPATH"), str(ROOT)]))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)


def test_import_without_visible_gpu():
    out = _run(IMPORT_ALL, {"CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    assert "OK" in out.stdout


def test_import_with_broken_cupy(tmp_path):
    """cupy importable but unusable: the failure must be caught, not raised."""
    fake = tmp_path / "fake"
    (fake / "cupy" / "cuda").mkdir(parents=True)
    (fake / "cupyx" / "scipy").mkdir(parents=True)
    (fake / "cupy" / "__init__.py").write_text(
        "from . import cuda\n"
        "def zeros(*a, **k):\n    raise RuntimeError('CUDARuntimeError: no CUDA-capable device')\n"
        "arange = zeros\n"
    )
    (fake / "cupy" / "cuda" / "__init__.py").write_text(
        "class runtime:\n"
        "    @staticmethod\n"
        "    def getDeviceCount():\n        raise RuntimeError('cudaErrorInsufficientDriver')\n"
    )
    (fake / "cupyx" / "__init__.py").write_text("")
    (fake / "cupyx" / "scipy" / "__init__.py").write_text("")
    (fake / "cupyx" / "scipy" / "sparse.py").write_text("raise ImportError('libcusparse.so not found')\n")
    out = _run(IMPORT_ALL, {"PYTHONPATH": str(fake)})
    assert out.returncode == 0, out.stderr
    assert "OK" in out.stdout


def test_dispatch_on_host_data():
    x = np.arange(3.0)
    A = sp.csr_matrix(np.eye(3))
    assert backend.get_array_module(x, A) is np
    assert not backend.is_device_array(x)
    assert backend.to_host(x) is x
    assert backend.sparse_module(np) is sp
    import scipy.sparse.linalg as spla

    assert backend.sparse_linalg_module(np) is spla


@pytest.mark.parametrize("bad", ["tpu", "", 3])
def test_resolve_device_rejects_unknown(bad):
    with pytest.raises((ValueError, TypeError)):
        backend.resolve_device(bad)


@pytest.mark.gpu
def test_device_roundtrip_dense_and_sparse():
    import cupy

    x = np.arange(5.0)
    d = backend.to_device(x)
    assert isinstance(d, cupy.ndarray) and backend.get_array_module(d) is cupy
    np.testing.assert_array_equal(backend.to_host(d), x)
    for fmt in ("csr", "csc", "coo"):
        A = sp.random(20, 20, density=0.2, format=fmt, random_state=1)
        dA = backend.to_device(A)
        assert dA.format == fmt
        np.testing.assert_array_equal(backend.to_host(dA).toarray(), A.toarray())
    assert backend.resolve_device("gpu") == "gpu"


def test_small_zeros_on_the_host_ignore_the_pool():
    with backend.zero_pool(gpu=False):
        z = backend.small_zeros(np, (2, 3), np.int64)
    assert isinstance(z, np.ndarray) and z.shape == (2, 3) and not z.any()
    for bad in (0, -8, 4.5):
        with pytest.raises(ValueError, match="positive number of bytes"):
            backend.zero_pool(nbytes=bad)


@pytest.mark.gpu
def test_zero_pool_hands_out_zeroed_arrays_on_separate_lines():
    import cupy

    with backend.zero_pool(nbytes=4096) as pool:
        a = backend.small_zeros(cupy, 5, np.uint64)
        b = backend.small_zeros(cupy, (2, 3), np.int32)
        a.fill(7)  # a neighbour's writes do not reach b
        big = backend.small_zeros(cupy, 4096, np.uint8)  # does not fit: a plain allocation
    assert b.shape == (2, 3) and not b.get().any() and a.get().tolist() == [7] * 5
    assert not big.get().any() and big.data.ptr != pool._buffer.data.ptr
    assert a.data.ptr == pool._buffer.data.ptr and b.data.ptr - a.data.ptr == 512
    outside = backend.small_zeros(cupy, 3, np.float32)  # no pool: cupy.zeros
    assert not outside.get().any()


@pytest.mark.gpu
def test_early_read_waits_for_the_work_before_it_only():
    import cupy

    x = cupy.zeros(1, dtype=np.int64)
    cupy.ElementwiseKernel("", "raw int64 x", "x[0] = 42", "gpuforest_test_set")(x, size=1)
    early = backend.EarlyRead(x)
    x.fill(-1)  # queued after the read: not seen by it
    assert early.get().tolist() == [42]
    assert early.get().tolist() == [42]  # read once, kept
    cupy.cuda.Device().synchronize()
    assert int(x[0]) == -1


@pytest.mark.gpu
def test_pinned_output_is_written_by_a_kernel():
    import cupy

    out = backend.PinnedOutput(3, np.uint64)
    with pytest.raises(RuntimeError, match="before ready"):
        out.get()
    write = cupy.RawKernel(r'''
        extern "C" __global__ void gpuforest_test_write(unsigned long long* p) { p[threadIdx.x] = 10 + threadIdx.x; }
        ''', "gpuforest_test_write")
    write((1,), (3,), (out.pointer,))
    out.ready()
    assert out.get().tolist() == [10, 11, 12]
