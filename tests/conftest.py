"""Shared fixtures and markers: `gpu` tests skip without a usable GPU; `slow` is opt-in."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels.backend import gpu_available
from matrices.suitesparse import shared_data_dir

#: ``../shared/data`` beside the repository, or the folder named by $GPUFOREST_SHARED_DATA.
SHARED_DATA = shared_data_dir()


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def shared_data() -> Path:
    """Path of ``../shared/data`` beside the repository; skips when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("shared data folder ../shared/data is not available")
    return SHARED_DATA


@pytest.fixture
def rng():
    """A seeded NumPy generator (tests never use global random state)."""
    return np.random.default_rng(12345)


@pytest.fixture
def spd_triangles():
    """Builds ``k`` uncoupled copies of the SPD matrix [[1, .9, .9], [.9, 1, .9], [.9, .9, 1]]
    (eigenvalues 2.8, 0.1, 0.1): its tridiagonal part, a path through the triangle, has the
    eigenvalue 1 - 0.9 sqrt(2) < 0 in every copy (the definiteness check's test case)."""
    import scipy.sparse as sp

    def build(k, dtype=np.float64):
        tri = np.full((3, 3), 0.9) + 0.1 * np.eye(3)
        return sp.kron(sp.eye(k), sp.csr_matrix(tri), format="csr").astype(dtype)

    return build
