"""graphkit: GPU-accelerated combinatorial graph solvers with CPU twins.

Maximal independent set (ECL-MIS), exact vertex cover, exact treewidth, maximal and
maximum cliques, [0,n]-factors / matchings / linear forests, on :class:`Graph`.
"""
from .graph import Graph, as_graph

__all__ = ["Graph", "as_graph"]
