"""graphkit: GPU-accelerated combinatorial graph solvers with CPU twins.

Maximal independent set (ECL-MIS), exact vertex cover, exact treewidth, maximal and
maximum cliques, [0,n]-factors / matchings / linear forests, on :class:`Graph`.

Every solver takes a :class:`Graph`, a networkx or igraph graph, a sparse matrix or a file
path (:func:`as_graph`). On a labelled input (networkx nodes other than ``0 .. n-1``, an
igraph graph with vertex names) the results name the vertices with the input's labels and
the checkers take labels; :meth:`Graph.to_labels` and :meth:`Graph.to_ids` map between
labels and vertex ids. :func:`warm_up` compiles the kernels before anything is timed.
"""
from kernels.version import __version__

from .factor import factor, linear_forest, matching
from .warmup import warm_up
from .cliques import (
    CliqueCount,
    MaxCliqueResult,
    count_maximal_cliques,
    is_clique,
    is_maximal_clique,
    maximal_clique_chunks,
    maximal_cliques,
    maximum_clique,
)
from .convert import as_graph
from .distributed_cliques import count_maximal_cliques_mpi, maximal_cliques_mpi
from .graph import Graph
from .mis import (
    ColoringResult,
    MISResult,
    greedy_coloring,
    is_coloring,
    is_independent_set,
    is_maximal_independent_set,
    maximal_independent_set,
)
from .vertex_cover import (
    IndependentSetResult,
    ParameterizedVertexCoverResult,
    VertexCoverResult,
    is_vertex_cover,
    maximum_independent_set,
    minimum_vertex_cover,
    parameterized_vertex_cover,
)
from .treewidth import (
    TreewidthResult,
    decomposition_from_ordering,
    is_tree_decomposition,
    ordering_width,
    tree_decomposition,
    treewidth,
    treewidth_bounds,
)
from .io import (
    Bags,
    TreeDecomposition,
    read_graph,
    read_tree_decomposition,
    read_vertex_cover,
    write_graph,
    write_tree_decomposition,
    write_vertex_cover,
)

__all__ = [
    "__version__",
    "warm_up",
    "maximal_cliques",
    "maximal_clique_chunks",
    "count_maximal_cliques",
    "count_maximal_cliques_mpi",
    "maximal_cliques_mpi",
    "is_clique",
    "is_maximal_clique",
    "maximum_clique",
    "CliqueCount",
    "MaxCliqueResult",
    "treewidth",
    "tree_decomposition",
    "is_tree_decomposition",
    "treewidth_bounds",
    "decomposition_from_ordering",
    "ordering_width",
    "TreewidthResult",
    "minimum_vertex_cover",
    "parameterized_vertex_cover",
    "maximum_independent_set",
    "is_vertex_cover",
    "VertexCoverResult",
    "ParameterizedVertexCoverResult",
    "IndependentSetResult",
    "maximal_independent_set",
    "is_independent_set",
    "is_maximal_independent_set",
    "greedy_coloring",
    "is_coloring",
    "MISResult",
    "ColoringResult",
    "factor",
    "matching",
    "linear_forest",
    "Graph",
    "as_graph",
    "read_graph",
    "write_graph",
    "TreeDecomposition",
    "Bags",
    "read_tree_decomposition",
    "write_tree_decomposition",
    "read_vertex_cover",
    "write_vertex_cover",
]
