"""One validator for the sparse matrices that every entry point takes.

:func:`validate_matrix` plays the part of SciPy's ``make_system`` for the matrices of this
library: the preconditioners, the factor and forest, the weight graphs and the symmetry
passes all check their matrix here, so a bad matrix gets the same clear error wherever it
enters. :func:`check_integer` does the same for integer parameters.
"""
from __future__ import annotations

import numbers

import numpy as np

from .backend import all_finite, get_array_module, is_device_array, sparse_module

__all__ = ["validate_matrix", "check_integer"]

#: The dtypes of the passes that read the values of a canonical CSR matrix directly
#: (their CUDA kernels are instantiated for these only).
REAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_KIND_NAMES = {"f": "floating point", "c": "complex", "b": "boolean", "i": "integer", "u": "unsigned integer"}


def _describe_dtypes(dtypes) -> str:
    if isinstance(dtypes, str):
        if dtypes == "fc":
            return "floating point"
        if set(dtypes) == set("fcbiu"):
            return "numeric"
        return " or ".join(_KIND_NAMES.get(k, k) for k in dtypes)
    return " or ".join(str(np.dtype(d)) for d in dtypes)


def validate_matrix(A, *, dtypes="fc", finite: bool = True, csr: str = "convert", canonical: str | None = None,
                    empty: bool = False, what: str = "matrix"):
    """Check a sparse matrix and return it in CSR form.

    Parameters
    ----------
    A : scipy.sparse or cupyx.scipy.sparse matrix (or SciPy sparse array)
        Must be square.
    dtypes : str or tuple of dtypes
        Accepted dtypes: a string of NumPy kind letters (``"fc"``: floating point or
        complex; ``"fcbiu"``: any number), or a tuple of exact dtypes.
    finite : bool
        Reject NaN and infinite entries (one pass over the values; on the GPU one
        reduction without a temporary).
    csr : {"convert", "require"}
        ``"convert"``: other formats are converted to CSR (``A`` itself is returned when it
        is CSR). ``"require"``: anything but CSR is an error (the passes that read the
        arrays of the matrix they were given).
    canonical : {None, "make", "require"}
        ``"make"``: return a canonical CSR matrix (sorted indices, no duplicates, index
        arrays of one dtype), a copy only when ``A`` is not one. ``"require"``: raise unless
        ``A`` is one (on the GPU the sortedness cannot be tested without a pass, so cupyx
        matrices are trusted to be sorted, as their ``has_canonical_format`` flag says
        only what ``sum_duplicates`` left).
    empty : bool
        Accept a 0 x 0 matrix.
    what : str
        The name used in error messages (the entry point or argument).

    Returns
    -------
    CSR matrix on the backend of ``A``.

    Raises
    ------
    TypeError
        ``A`` is not a sparse matrix, or its dtype is not accepted.
    ValueError
        ``A`` is not square, is empty, has NaN or infinite entries, or is not canonical
        where that is required.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> validate_matrix(sp.coo_matrix(np.eye(3))).format
    'csr'
    >>> validate_matrix(sp.csr_matrix(np.ones((2, 3))))
    Traceback (most recent call last):
    ...
    ValueError: matrix must be square, got shape (2, 3)
    """
    on_gpu = is_device_array(A)
    if not sparse_module(get_array_module(A)).issparse(A):
        raise TypeError(f"{what}: expected a scipy.sparse or cupyx.scipy.sparse matrix, got {type(A).__name__}")
    shape = A.shape
    if csr == "require" and A.format != "csr":
        raise ValueError(f"{what} needs a square CSR matrix, got {type(A).__name__} of shape {shape}")
    if len(shape) != 2 or shape[0] != shape[1]:
        if csr == "require":
            raise ValueError(f"{what} needs a square CSR matrix, got {type(A).__name__} of shape {shape}")
        raise ValueError(f"{what} must be square, got shape {shape}")
    if shape[0] == 0 and not empty:
        raise ValueError(f"{what} is empty")
    dtype = np.dtype(A.dtype)
    ok = dtype.kind in dtypes if isinstance(dtypes, str) else dtype in tuple(np.dtype(d) for d in dtypes)
    if not ok:
        if isinstance(dtypes, str):
            raise TypeError(f"{what} dtype must be {_describe_dtypes(dtypes)}, got {dtype}")
        raise TypeError(f"{what} needs a {_describe_dtypes(dtypes)} matrix, got {dtype}")
    if A.format != "csr":
        A = A.tocsr()
    if canonical == "make":
        A = _canonical(A)
    elif canonical == "require":
        # SciPy computes the flag; cupyx only caches it (set by sum_duplicates), so the GPU
        # side relies on the documented precondition
        if not on_gpu and not A.has_canonical_format:
            raise ValueError(f"{what} needs sorted indices without duplicates (call sum_duplicates() first)")
        if A.indices.dtype != A.indptr.dtype:
            raise ValueError(f"{what} needs indices and indptr of one dtype, got {A.indices.dtype} and "
                             f"{A.indptr.dtype}")
    elif canonical is not None:
        raise ValueError(f"canonical must be None, 'make' or 'require', got {canonical!r}")
    if finite and A.nnz and not all_finite(A.data):
        raise ValueError(f"{what} has NaN or infinite entries")
    return A


def _canonical(A):
    """``A`` (CSR) as a canonical CSR matrix whose index arrays share one dtype; ``A``
    itself when it already is one."""
    C = A
    if not C.has_canonical_format:
        C = C.copy()
        C.sum_duplicates()
    if C.indices.dtype != C.indptr.dtype:
        C = sparse_module(get_array_module(C)).csr_matrix((C.data, C.indices.astype(C.indptr.dtype), C.indptr),
                                                          shape=C.shape)
    return C


def check_integer(name: str, value, lo: int, hi: int | None = None) -> int:
    """``value`` as an ``int`` when it is an integer (not a bool) in ``[lo, hi]``, else
    ``ValueError`` naming the parameter.

    Examples
    --------
    >>> check_integer("n", 2, 1, 4)
    2
    >>> check_integer("n", 5, 1, 4)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer in 1..4, got 5
    """
    if type(value) is int and value >= lo and (hi is None or value <= hi):  # the common case, without ABC checks
        return value
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer in {rng}, got {value!r}")
    return int(value)
