"""Tridiagonal and 2x2 block tridiagonal systems: factorize once, solve many times, and
the coefficients of a matrix in a linear forest's order.

=================================  ====================================================
:class:`TridiagonalSolver`         scalar systems, through a permutation (CPU and GPU)
:func:`tridiagonal_solve`          one-shot solve of one or a batch of systems
:class:`BlockTridiagonalSolver`    2x2 block systems with ghost unknowns (AlgTriBlock)
:func:`extract_tridiagonal`        ``(dl, d, du)`` of a matrix in an order
:func:`partner_entries`            a matrix's entries to a factor's partners
:func:`extract_block_tridiagonal`  the 2x2 blocks of a matrix
=================================  ====================================================

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 4.3.
"""
from .block import BlockTridiagonalSolver
from .extract import extract_block_tridiagonal, extract_tridiagonal, partner_entries
from .partition import MAX_CHUNK
from .scalar import TridiagonalSolver, tridiagonal_solve

__all__ = ["TridiagonalSolver", "tridiagonal_solve", "BlockTridiagonalSolver", "extract_tridiagonal", "partner_entries",
           "extract_block_tridiagonal", "MAX_CHUNK"]
