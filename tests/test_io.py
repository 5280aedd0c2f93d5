"""Graph file formats: round trips, malformed input, the shared benchmark graphs."""
import csv
import re
import warnings

import networkx as nx
import numpy as np
import pytest

import graphkit
from graphkit import Graph, TreeDecomposition
from graphkit.cli import main as cli_main


def _random_graph(seed=0, n=40, p=0.15, weighted=False):
    H = nx.gnp_random_graph(n, p, seed=seed)
    G = graphkit.as_graph(H)
    if weighted:
        u, v = G.edges()
        w = np.random.default_rng(seed).uniform(0.5, 2.0, len(u)).round(3)
        G = Graph.from_edges(G.n, u, v, w)
    return G


@pytest.mark.parametrize("suffix", [".clq", ".gr", ".graph", ".txt", ".mtx", ".clq.gz", ".gr.bz2", ".graph.xz"])
def test_roundtrip_unweighted(tmp_path, suffix):
    G = _random_graph()
    path = tmp_path / f"g{suffix}"
    graphkit.write_graph(G, path)
    H = graphkit.read_graph(path)
    u1, v1 = G.edges()[:2]
    u2, v2 = H.edges()[:2]
    np.testing.assert_array_equal(u1, u2)
    np.testing.assert_array_equal(v1, v2)


@pytest.mark.parametrize("suffix", [".txt", ".graph"])
def test_roundtrip_weighted(tmp_path, suffix):
    G = _random_graph(weighted=True)
    path = tmp_path / f"w{suffix}"
    graphkit.write_graph(G, path)
    H = graphkit.read_graph(path)
    assert H == G


def test_isolated_vertices_survive_metis_and_dimacs(tmp_path):
    G = Graph.from_edges(6, [0, 3], [1, 4])
    for suffix in (".graph", ".clq", ".gr"):
        graphkit.write_graph(G, tmp_path / f"x{suffix}")
        H = graphkit.read_graph(tmp_path / f"x{suffix}")
        assert (H.n, H.m) == (6, 2)


def test_pace_zero_based_detected(tmp_path):
    p = tmp_path / "z.gr"
    p.write_text("c zero based\np td 3 2\n0 1\n1 2\n")
    G = graphkit.read_graph(p)
    assert (G.n, G.m) == (3, 2)
    p.write_text("p tw 3 2\n1 2\n2 3\n")
    assert graphkit.read_graph(p).edges()[0].tolist() == [0, 1]


def test_sniffing_without_extension(tmp_path):
    p = tmp_path / "noext"
    p.write_text("c hi\np edge 3 1\ne 1 3\n")
    assert graphkit.read_graph(p).m == 1
    p.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n2 1\n")
    assert graphkit.read_graph(p).m == 1
    p.write_text("0 1\n1 2\n")
    assert graphkit.read_graph(p).m == 2


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("a.clq", "p edge x 1\ne 1 2\n", r"a\.clq:1: non-numeric"),
        ("b.clq", "q edge 2 1\ne 1 2\n", r"b\.clq:1: bad DIMACS header"),
        ("c.clq", "p edge 2 1\ne 1 3\n", r"c\.clq:2: vertex id out of range"),
        ("d.clq", "p edge 3 2\ne 1 2\n", r"d\.clq:1: header states 2 edges"),
        ("e.gr", "p td 3 1\n1 two\n", r"e\.gr:2: non-numeric"),
        ("f.gr", "", r"f\.gr:1: empty file"),
        ("g.gr", "p td 3 1\n1 2 3\n", r"g\.gr:2: expected 2 fields"),
        ("h.graph", "3 1\n2\n1\n", r"h\.graph:1: header states 3 vertices"),
        ("i.txt", "0 1\n1 x\n", r"i\.txt:2: non-numeric"),
        ("j.clq", "c only\np edge 2 1\nx 1 2\n", r"j\.clq:3: expected an edge line"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, name, content, message):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(ValueError, match=message):
        graphkit.read_graph(p)


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="unknown graph format"):
        graphkit.read_graph(tmp_path / "x.txt", format="gml")
    with pytest.raises(FileNotFoundError):
        graphkit.read_graph(tmp_path / "missing.gr")


def test_tree_decomposition_roundtrip(tmp_path):
    td = TreeDecomposition([np.array([0, 1, 2]), np.array([2, 3])], np.array([[0, 1]]))
    assert td.width == 2
    graphkit.write_tree_decomposition(td, tmp_path / "t.td", n=4)
    text = (tmp_path / "t.td").read_text()
    assert text.splitlines()[0] == "s td 2 3 4"
    back, n = graphkit.read_tree_decomposition(tmp_path / "t.td")
    assert n == 4 and back.width == 2
    np.testing.assert_array_equal(back.bags[1], [2, 3])
    np.testing.assert_array_equal(back.edges, [[0, 1]])
    (tmp_path / "bad.td").write_text("s td 1 2 3\nb 1 1 9\n")
    with pytest.raises(ValueError, match=r"bad\.td:2: vertex id out of range"):
        graphkit.read_tree_decomposition(tmp_path / "bad.td")


def test_vertex_cover_roundtrip(tmp_path):
    graphkit.write_vertex_cover([3, 0], tmp_path / "c.vc", n=5)
    assert (tmp_path / "c.vc").read_text() == "s vc 5 2\n1\n4\n"
    cover, n = graphkit.read_vertex_cover(tmp_path / "c.vc")
    assert n == 5 and cover.tolist() == [0, 3]
    (tmp_path / "bad.vc").write_text("s vc 5 3\n1\n2\n")
    with pytest.raises(ValueError, match="header states 3 cover vertices"):
        graphkit.read_vertex_cover(tmp_path / "bad.vc")


def _header_counts(path):
    opener = open
    with opener(path) as fh:
        for line in fh:
            m = re.match(r"p\s+\w+\s+(\d+)\s+(\d+)", line)
            if m:
                return int(m.group(1)), int(m.group(2))
    raise AssertionError(f"no header in {path}")


def test_shared_graphs_load_with_header_counts(shared_data):
    names = {row["name"] for row in csv.DictReader(open(shared_data / "graphs" / "answers.csv"))}
    files = sorted(p for p in (shared_data / "graphs").rglob("*") if p.suffix in (".clq", ".gr"))
    assert len(files) >= len(names) - 1
    for path in files:
        n, m = _header_counts(path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            G = graphkit.read_graph(path)
        dropped = sum(int(re.search(r"dropped (\d+)", str(w.message)).group(1)) for w in caught
                      if "duplicate" in str(w.message) or "self-loop" in str(w.message))
        assert G.n == n, path.name
        assert G.m == m - dropped, path.name


def test_cli_stats(tmp_path, capsys):
    G = Graph.from_edges(5, [0, 1, 3], [1, 2, 4])
    graphkit.write_graph(G, tmp_path / "s.gr")
    assert cli_main(["stats", str(tmp_path / "s.gr")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"vertices\s+5", out) and re.search(r"components\s+2", out)
    assert cli_main(["stats", str(tmp_path / "missing.gr")]) == 2
