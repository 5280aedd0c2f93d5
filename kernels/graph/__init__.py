"""Graphs of sparse matrices and of edge lists: the weight graph ``|A| - diag(A)`` the
factor reads (:mod:`kernels.graph.weights`), the contraction of matched pairs
(:mod:`kernels.graph.contract`) and simple graphs from edge arrays
(:mod:`kernels.graph.edges`)."""
from .contract import contract_pairs
from .edges import csr_from_edges, rmat_edges
from .weights import abs_graph, is_symmetric, offdiag_abs, transpose_sum

__all__ = ["offdiag_abs", "abs_graph", "transpose_sum", "is_symmetric", "contract_pairs", "csr_from_edges",
           "rmat_edges"]
