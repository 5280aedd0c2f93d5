"""matrices: test-matrix generators, Matrix Market reading and the SuiteSparse loader.

Generators and readers return ``scipy.sparse.csr_matrix``, not SciPy's newer
``csr_array``: the GPU side, ``cupyx.scipy.sparse``, has the matrix interface only, and
``kernels.backend.to_device`` / ``to_host`` map a ``csr_matrix`` to its cupyx twin and back
with the same semantics (``*`` and ``@`` alike). Every entry point of the library also
accepts ``csr_array`` input (``scipy.sparse.csr_array(A)`` works on the results).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from kernels.version import __version__

from . import suitesparse
from .generators import (
    aniso1,
    aniso2,
    aniso3,
    convection_diffusion3d,
    elasticity2d,
    poisson2d,
    poisson3d,
    random_diffusion2d,
    rotated_anisotropic2d,
    stencil_matrix_2d,
)
from .mmio import read_matrix

#: Generators addressable by name in :func:`get`, with the grid size they take.
GENERATORS = {
    "aniso1": aniso1,
    "aniso2": aniso2,
    "aniso3": aniso3,
    "poisson2d": poisson2d,
    "poisson3d": poisson3d,
    "convection_diffusion3d": convection_diffusion3d,
    "random_diffusion2d": random_diffusion2d,
    "rotated_anisotropic2d": rotated_anisotropic2d,
    "elasticity2d": elasticity2d,
}

# (grid dimension, unknowns per grid point) of the generators that are not 2D scalar
_GRID_SHAPE = {"poisson3d": (3, 1), "convection_diffusion3d": (3, 1), "elasticity2d": (2, 2)}

__all__ = [
    "__version__",
    "GENERATORS",
    "get",
    "grid_size",
    "read_matrix",
    "suitesparse",
    *GENERATORS,
    "stencil_matrix_2d",
]


def grid_size(name: str, rows: int) -> int:
    """The grid size ``n`` at which generator ``name`` gives about ``rows`` rows (``n^2``
    rows in 2D, ``n^3`` in 3D, ``2 n^2`` for elasticity2d's two displacements).

    Examples
    --------
    >>> import matrices
    >>> matrices.grid_size("aniso2", 65536), matrices.grid_size("convection_diffusion3d", 65536)
    (256, 40)
    """
    key = name.lower()
    if key not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; choose from {sorted(GENERATORS)}")
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ValueError(f"rows must be a positive integer, got {rows!r}")
    dim, dofs = _GRID_SHAPE.get(key, (2, 1))
    return max(2, round((rows / dofs) ** (1 / dim)))


def get(spec: str, n: int | None = None, dtype: DTypeLike = np.float64) -> sp.csr_matrix:
    """Resolve a matrix by generator name (grid size ``n``), ``.mtx`` path or SuiteSparse name.

    Examples
    --------
    >>> import matrices
    >>> matrices.get("aniso2", n=8).shape
    (64, 64)
    """
    key = spec.lower()
    if key in GENERATORS:
        if n is None:
            raise ValueError(f"generator {spec!r} needs a grid size n")
        return GENERATORS[key](n, dtype=dtype)
    if ".mtx" in key or Path(spec).is_file():
        return read_matrix(spec, dtype=dtype)
    return suitesparse.load(spec, dtype=dtype)
