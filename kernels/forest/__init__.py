"""Linear forests of [0,2]-factors: cycles broken at their weakest edge, paths ranked,
and the permutation under which the forest is tridiagonal.

=============================  =========================================================
:func:`linear_forest`          the forest of a matrix's [0,2]-factor (:class:`LinearForest`)
:func:`forest_of_factor`       the forest of a given [0,2]-factor
:func:`linear_forest_arrays`   the kernels' arrays (:class:`ForestArrays`), method dispatch
:func:`linear_forest_walk_cpu` the CPU reference: a linear-time walk
:func:`linear_forest_ruling`   the sparse ruling set, CPU (Numba twins) or GPU
:func:`linear_forest_scan_gpu` the paper's bidirectional scan (GPU)
=============================  =========================================================

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Sections 3.3 and 4.2.
"""
from .build import forest_of_factor, linear_forest, linear_forest_arrays
from .result import ForestArrays, LazyForestArrays, LinearForest
from .ruling import linear_forest_ruling
from .scan import linear_forest_scan_gpu
from .walk import linear_forest_walk_cpu

__all__ = ["LinearForest", "ForestArrays", "LazyForestArrays", "linear_forest", "forest_of_factor",
           "linear_forest_arrays", "linear_forest_walk_cpu", "linear_forest_ruling", "linear_forest_scan_gpu"]
