"""``as_graph``: the one coercion every solver applies to its input, objects and files alike."""
from __future__ import annotations

from pathlib import Path

from .graph import Graph, graph_from_object
from .io import read_graph

__all__ = ["as_graph"]


def as_graph(obj) -> Graph:
    """Coerce a Graph, networkx or igraph graph, sparse matrix (SciPy/cupyx), dense array
    or file path (:func:`graphkit.read_graph`) to a :class:`Graph`.

    A networkx graph keeps its node names as the Graph's ``labels``, an igraph graph its
    vertex attribute ``name``: the solvers then answer in those names.

    Examples
    --------
    >>> import networkx as nx, graphkit
    >>> graphkit.as_graph(nx.cycle_graph(4))
    Graph(n=4, m=4)
    """
    if isinstance(obj, (str, Path)):
        return read_graph(obj)
    return graph_from_object(obj)
