"""How much of a matrix's off-diagonal weight a factor or forest holds (Eqs. 3-5 of
Klein and Strzodka, 2022).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Section 5.
"""
from __future__ import annotations

from ..backend import get_array_module, sparse_module
from ..graph import offdiag_abs
from ..validation import validate_matrix
from .result import check_factor_of

__all__ = ["weight_coverage", "identity_coverage"]


def _factor_pattern(f, shape, xp):
    """The pattern of the factor or forest ``f`` (its ``neighbors``) as a CSR matrix of ones."""
    sps = sparse_module(xp)
    nb = f.neighbors
    rows = xp.repeat(xp.arange(shape[0]), nb.shape[1])
    cols = nb.ravel()
    keep = cols >= 0
    return sps.csr_matrix((xp.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=shape)


def weight_coverage(A, f) -> float:
    """Relative weight coverage c_pi (Eq. 3-4): share of the off-diagonal absolute weight
    of ``A`` on the edges of the factor or forest ``f`` (both directions counted).

    Examples
    --------
    >>> import matrices, kernels.factor as kf
    >>> A = matrices.aniso1(30)
    >>> round(weight_coverage(A, kf.greedy_factor(A, 2)), 2)
    0.67
    """
    A = validate_matrix(A, dtypes="fcbiu")
    check_factor_of(A, f)
    xp = get_array_module(A)
    Ap = offdiag_abs(A)
    total = float(Ap.sum())
    if total == 0.0:
        return 0.0
    covered = float(Ap.multiply(_factor_pattern(f, A.shape, xp)).sum())
    return covered / total


def identity_coverage(A) -> float:
    """c_id (Eq. 5): share of the off-diagonal absolute weight on the sub- and superdiagonal.

    Examples
    --------
    >>> import matrices
    >>> round(identity_coverage(matrices.aniso1(30)), 2)
    0.67
    """
    A = validate_matrix(A, dtypes="fcbiu")
    Ap = offdiag_abs(A)
    total = float(Ap.sum())
    if total == 0.0:
        return 0.0
    return float(Ap.diagonal(1).sum() + Ap.diagonal(-1).sum()) / total
