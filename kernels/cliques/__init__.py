"""Maximal clique enumeration (Bron-Kerbosch with pivoting) and maximum clique
(colouring branch and bound), CPU (Numba) and GPU (``kernels/cuda/cliques.cu``,
``kernels/cuda/maxclique.cu``).

============================  ==========================================================
:func:`degeneracy_order`      the order that splits every search (:mod:`.degeneracy`)
:func:`mce_chunks_cpu`        maximal cliques in chunks, CPU (:mod:`.mce_cpu`)
:func:`mce_count_cpu`         their size histogram, CPU
:func:`mce_chunks_gpu`        maximal cliques in chunks, GPU (:mod:`.mce_gpu`)
:func:`mce_count_gpu`         their size histogram, GPU
:func:`max_clique_cpu`        maximum clique, CPU (:mod:`.maxclique_cpu`)
:func:`max_clique_gpu`        maximum clique, GPU (:mod:`.maxclique_gpu`)
============================  ==========================================================

References
----------
.. [1] J. Jenkins, I. Arkatkar, J. D. Owens, A. Choudhary and N. F. Samatova, "Lessons
   Learned from Exploring the Backtracking Paradigm on the GPU", Euro-Par 2011 Parallel
   Processing, LNCS 6853, Springer, 2011.
.. [2] D. Eppstein, M. Loeffler and D. Strash, "Listing All Maximal Cliques in Sparse
   Graphs in Near-Optimal Time", ISAAC 2010, LNCS 6506, Springer, 2010 (the degeneracy
   order that splits the top level).
"""
from .degeneracy import degeneracy_order
from .maxclique_cpu import compile_once as compile_max_clique_cpu, max_clique_cpu
from .maxclique_gpu import GpuCapacityError, max_clique_gpu
from .mce_cpu import MceState, mce_chunks_cpu, mce_count_cpu
from .mce_gpu import mce_chunks_gpu, mce_count_gpu

__all__ = ["degeneracy_order", "MceState", "mce_chunks_cpu", "mce_count_cpu", "mce_chunks_gpu", "mce_count_gpu",
           "max_clique_cpu", "compile_max_clique_cpu", "max_clique_gpu", "GpuCapacityError"]
