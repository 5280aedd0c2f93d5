"""The linear forest of a [0,2]-factor, and of a sparse matrix: the method's dispatch.

1. Break every cycle at its weakest edge (smallest ``(weight, lo, hi)``).
2. Give every vertex its path id (the smaller end vertex id) and position (0 at that end).
3. The permutation sorting vertices by (path id, position): under it the forest's
   adjacency is tridiagonal.

Three methods give the identical forest: the linear-time walk on the CPU
(:mod:`kernels.forest.walk`), the sparse ruling set on either device, O(N) work (the GPU
default; :mod:`kernels.forest.ruling`), and the paper's bidirectional scan over all
vertices on the GPU (:mod:`kernels.forest.scan`).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 3.3 and 4.2.
"""
from __future__ import annotations

from ..backend import is_device_array
from ..timing import PhaseClock
from ..validation import validate_matrix
from .result import ForestArrays, LazyForestArrays, LinearForest
from .ruling import linear_forest_ruling
from .walk import linear_forest_walk_cpu

__all__ = ["linear_forest_arrays", "forest_of_factor", "linear_forest"]


def linear_forest_arrays(partners, weights, method=None, *, paths_later=False, overlap=None,
                         **kwargs) -> ForestArrays | LazyForestArrays:
    """The :class:`ForestArrays` of the [0,2]-factor ``(partners, weights)``, on its backend.

    ``method``: None (CPU: ``"walk"``, GPU: ``"ruling"``), ``"walk"`` (CPU linear-time
    walk), ``"ruling"`` (sparse ruling set, CPU or GPU), ``"scan"`` (the paper's
    bidirectional scan, GPU only); ``kwargs`` go to the method's function.
    ``paths_later=True`` returns :class:`LazyForestArrays`: the ruling set then computes
    ``path_start`` and ``removed_edges`` only when they are asked for (their sizes are
    counts on the device, read back there), and ``neighbors`` too (the factor's partners
    without the removed edges, which the preconditioners never read).

    ``overlap``, if given, is a function that queues work independent of the forest (on
    the backend of ``partners``): the ruling set calls it while its host waits for the
    number of rulers, so that the device works meanwhile; the other methods call it first.
    """
    gpu = is_device_array(partners)
    if method is None:
        method = "ruling" if gpu else "walk"
    if method not in ("walk", "ruling", "scan"):
        raise ValueError(f"method must be 'walk', 'ruling' or 'scan', got {method!r}")
    if method == "walk" and gpu:
        raise ValueError("method='walk' is the CPU reference; use 'ruling' or 'scan' on the GPU")
    if method == "scan" and not gpu:
        raise ValueError("method='scan' (the paper's bidirectional scan) runs on the GPU only")
    if method == "ruling":
        out = linear_forest_ruling(partners, weights, paths_later=paths_later, overlap=overlap, **kwargs)
        return LazyForestArrays(*out) if paths_later else ForestArrays(*out)
    if overlap is not None:
        overlap()
    if method == "walk":
        out = linear_forest_walk_cpu(partners, weights)
    else:
        from .scan import linear_forest_scan_gpu

        out = linear_forest_scan_gpu(partners, weights, **kwargs)
    return LazyForestArrays(lambda: out[0], *out[1:4], lambda: out[4:]) if paths_later else out


def forest_of_factor(f, method=None, *, overlap=None, labels=None) -> LinearForest:
    """The :class:`LinearForest` of the [0,2]-factor ``f`` (a :class:`kernels.factor.Factor`),
    timed; ``overlap``: see :func:`linear_forest_arrays`; ``labels``: the vertices' names."""
    if f.n != 2:
        raise ValueError(f"a linear forest needs a [0,2]-factor, got n={f.n}")
    clock = PhaseClock(is_device_array(f.neighbors))
    nb, pid, pos, perm, paths = linear_forest_arrays(f.neighbors, f.weights, method=method, paths_later=True,
                                                     overlap=overlap)
    clock.mark("forest")
    return LinearForest(pid, pos, perm, nb, paths, clock, labels=labels)


def linear_forest(A, f=None, *, method=None, **factor_kwargs) -> LinearForest:
    """Linear forest of a [0,2]-factor of a matrix: break cycles, rank paths, permutation.

    Parameters
    ----------
    A : sparse matrix (SciPy or cupyx)
    f : Factor, optional
        A [0,2]-factor of ``A`` (computed with ``factor_kwargs`` when omitted).
    method : {None, "walk", "ruling", "scan"}
        None: the linear-time walk on the CPU, the sparse ruling set (O(N) work) on the
        GPU. ``"ruling"`` also runs on the CPU (the Numba twins of the CUDA kernels);
        ``"scan"`` is the paper's bidirectional scan with log2(N) steps (GPU only). All
        give the identical forest.

    Returns
    -------
    LinearForest
        Under ``permutation`` the forest's adjacency is tridiagonal.

    Examples
    --------
    >>> import matrices, kernels.forest as kfo
    >>> A = matrices.aniso3(20)
    >>> lf = kfo.linear_forest(A)
    >>> P = lf.permutation
    >>> B = A[P][:, P]          # forest edges are now on the sub/superdiagonal
    >>> lf.n_paths < 20
    True
    """
    from ..factor import factor

    if f is None:
        A = validate_matrix(A, dtypes="fcbiu", finite=False)
        f = factor(A, n=2, **factor_kwargs)  # tests the entries itself
    else:
        from ..factor import check_factor_of

        A = validate_matrix(A, dtypes="fcbiu")
        check_factor_of(A, f)
    return forest_of_factor(f, method)
