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
    assert cli_main(["stats", str(tmp_path / "missing.gr")]) == 1  # a failure; 2 is for usage errors
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.gr" in err and "Traceback" not in err


# ------------------------------------------------------------ tokenizer and parsing details
def _edge_set(G):
    u, v = G.edges()[:2]
    return set(zip(u.tolist(), v.tolist()))


def test_whitespace_crlf_tabs_comments_and_no_final_newline(tmp_path):
    p = tmp_path / "w.gr"
    p.write_bytes(b"c first\r\n  p td 4 3\r\n1\t2\r\nc middle comment\r\n\r\n   2   3\r\n3 4")
    G = graphkit.read_graph(p)
    assert (G.n, G.m) == (4, 3) and _edge_set(G) == {(0, 1), (1, 2), (2, 3)}
    q = tmp_path / "w.clq"
    q.write_bytes(b"c x\np edge 3 2\ne 1 2\n\nc y\ne\t2 3\n\n\n")
    assert _edge_set(graphkit.read_graph(q)) == {(0, 1), (1, 2)}
    r = tmp_path / "w.txt"
    r.write_text("# header\n% other comment\n0 1 2.5\n\n1 2 -1e-3\n")
    G = graphkit.read_graph(r)
    assert G.weights.tolist() == [2.5, 2.5, -1e-3, -1e-3][: len(G.weights)] or sorted(G.weights.tolist()) == [-1e-3, -1e-3, 2.5, 2.5]


@pytest.mark.parametrize(
    "body, line",
    [
        ("1 2\n2 +3\n3 1x\n", 4),  # '+3' is a valid integer, '1x' is not
        ("1 2\n2 3\n3 -\n", 4),
        ("1 2\n2 3\n3 1.0\n", 4),
        ("1 2\n2 0x3\n3 1\n", 3),
        ("1 2\n2 12345678901234567890\n3 1\n", 3),  # too long for int64
        ("1 2\nc note\n2 3\n\n3 é\n", 6),
    ],
)
def test_non_numeric_token_reports_physical_line(tmp_path, body, line):
    p = tmp_path / "t.gr"
    p.write_text("p td 3 3\n" + body, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"t\.gr:{line}: non-numeric"):
        graphkit.read_graph(p)


def test_vectorized_integer_parser_matches_python(tmp_path, rng):
    from pathlib import Path

    from graphkit.io import Tokens

    values = np.concatenate([rng.integers(-10**17, 10**17, 500), rng.integers(-9, 10, 500), [0, 10**18 - 1, -(10**18 - 1)]])
    text = "\n".join(" ".join(["+" + str(x) if x >= 0 and k % 3 == 0 else str(x) for x in values[k:k + 7].tolist()])
                     for k in range(0, len(values), 7))
    p = Path(tmp_path / "ints.txt")
    p.write_text("  " + text.replace(" ", " \t ") + "\n\n")
    t = Tokens(p)
    np.testing.assert_array_equal(t.ints(np.arange(len(t.starts))), values)
    np.testing.assert_array_equal(t.floats(np.arange(len(t.starts))), values.astype(np.float64))


def test_pace_range_and_count_errors(tmp_path):
    p = tmp_path / "r.gr"
    p.write_text("p td 3 2\n1 2\n2 4\n")
    with pytest.raises(ValueError, match=r"r\.gr:3: vertex id out of range 1\.\.3"):
        graphkit.read_graph(p)
    p.write_text("p td 3 2\n0 1\n1 3\n")  # 0-based because of the 0, so 3 is out of range
    with pytest.raises(ValueError, match=r"r\.gr:3: vertex id out of range 0\.\.2"):
        graphkit.read_graph(p)
    p.write_text("p td 3 1\n1 2\n2 3\n")
    with pytest.raises(ValueError, match=r"r\.gr:1: header states 1 edges but the file has 2"):
        graphkit.read_graph(p)
    p.write_text("p td 3 1 7\n1 2\n")
    with pytest.raises(ValueError, match=r"r\.gr:1: bad PACE header"):
        graphkit.read_graph(p)
    p.write_text("c nothing but comments\n")
    with pytest.raises(ValueError, match=r"r\.gr:1: empty file"):
        graphkit.read_graph(p)


def test_duplicates_and_self_loops_dropped_with_warning(tmp_path):
    p = tmp_path / "d.gr"
    p.write_text("p td 3 4\n1 2\n2 1\n3 3\n2 3\n")
    with pytest.warns(UserWarning):
        G = graphkit.read_graph(p)
    assert _edge_set(G) == {(0, 1), (1, 2)}


def test_metis_weights_sizes_and_errors(tmp_path):
    p = tmp_path / "m.graph"
    # fmt 011, ncon 2: two vertex weights then (neighbour, edge weight) pairs
    p.write_text("% comment\n3 2 011 2\n5 6 2 1.5\n7 8 1 1.5 3 4\n% between\n9 1 2 4\n")
    G = graphkit.read_graph(p)
    assert _edge_set(G) == {(0, 1), (1, 2)}
    assert sorted(G.weights.tolist()) == [1.5, 1.5, 4.0, 4.0]
    p.write_text("3 2 100\n1 2\n1 1 3\n1 2\n")  # vertex sizes only
    assert _edge_set(graphkit.read_graph(p)) == {(0, 1), (1, 2)}
    p.write_text("3 2\n2\n1 3\n\n")  # 2-3 listed only at vertex 2
    with pytest.raises(ValueError, match=r"m\.graph:3: edge 2-3 is listed at only one of its endpoints"):
        graphkit.read_graph(p)
    p.write_text("2 1\n1 2\n1\n")
    with pytest.raises(ValueError, match=r"m\.graph:2: vertex lists itself"):
        graphkit.read_graph(p)
    p.write_text("2 1\n2\n3\n")
    with pytest.raises(ValueError, match=r"m\.graph:3: vertex id out of range 1\.\.2"):
        graphkit.read_graph(p)
    p.write_text("2 5\n2\n1\n")
    with pytest.raises(ValueError, match=r"m\.graph:1: header states 5 edges"):
        graphkit.read_graph(p)
    p.write_text("2 1 001\n2 1.0\n1\n")
    with pytest.raises(ValueError, match=r"m\.graph:3: expected 0 vertex weight"):
        graphkit.read_graph(p)
    p.write_text("2 1 abc\n2\n1\n")
    with pytest.raises(ValueError, match=r"m\.graph:1: bad METIS header"):
        graphkit.read_graph(p)


def test_edgelist_errors(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("# n=3 m=1\n0 3\n")
    with pytest.raises(ValueError, match=r"e\.txt:2: vertex id out of range 0\.\.2"):
        graphkit.read_graph(p)
    p.write_text("# n=5\n")
    assert (graphkit.read_graph(p).n, graphkit.read_graph(p).m) == (5, 0)
    p.write_text("0 1\n1 2 3.0\n")
    with pytest.raises(ValueError, match=r"e\.txt:2: expected 2 fields"):
        graphkit.read_graph(p)
    p.write_text("0 1 1.0\n1 2 heavy\n")
    with pytest.raises(ValueError, match=r"e\.txt:2: non-numeric"):
        graphkit.read_graph(p)
    p.write_text("0 1\n-1 2\n")
    with pytest.raises(ValueError, match=r"e\.txt:2: negative vertex id"):
        graphkit.read_graph(p)
    p.write_text("0 1 2 3\n")
    with pytest.raises(ValueError, match=r"e\.txt:1: expected 'u v' or 'u v w'"):
        graphkit.read_graph(p)


def test_matrix_market_graphs(tmp_path):
    p = tmp_path / "g.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 2\n3 3\n")
    G = graphkit.read_graph(p)
    assert G.weights is None and _edge_set(G) == {(0, 1), (1, 2)}  # diagonal ignored
    p.write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 -2.5\n3 2 0.25\n")
    G = graphkit.read_graph(p)
    assert sorted(G.weights.tolist()) == [0.25, 0.25, 2.5, 2.5]  # |a_ij|, the matrix graph
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1.0\n2 1 -3.0\n")
    assert graphkit.read_graph(p).weights.tolist() == [4.0, 4.0]  # unsymmetric: |a_ij| + |a_ji|
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 2 1.0\n")
    with pytest.raises(ValueError, match="square"):
        graphkit.read_graph(p)
    p.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 x 1.0\n")
    with pytest.raises(ValueError, match=r"g\.mtx:4: non-numeric"):
        graphkit.read_graph(p)
    p.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n")
    with pytest.raises(ValueError, match=r"g\.mtx:3: size line states 2 entries but the file has 1"):
        graphkit.read_graph(p)
    p.write_text("%%MatrixMarket tensor coordinate real general\n3 3 0\n")
    with pytest.raises(ValueError, match=r"g\.mtx:1: unsupported"):
        graphkit.read_graph(p)


def test_unweighted_mtx_is_written_as_pattern(tmp_path):
    G = _random_graph(seed=3)
    graphkit.write_graph(G, tmp_path / "u.mtx")
    assert "pattern symmetric" in (tmp_path / "u.mtx").read_text().splitlines()[0]
    H = graphkit.read_graph(tmp_path / "u.mtx")
    assert H.weights is None and H == G
    W = _random_graph(seed=3, weighted=True)
    graphkit.write_graph(W, tmp_path / "w.mtx.gz")
    assert graphkit.read_graph(tmp_path / "w.mtx.gz") == W


def test_sniffing_metis_and_percent_comments(tmp_path):
    G = _random_graph(seed=5)
    p = tmp_path / "metis_noext"
    graphkit.write_graph(G, p, format="metis")
    assert graphkit.io.guess_format(p) == "metis"
    assert graphkit.read_graph(p) == G
    r = tmp_path / "dimacs.txt"  # a generic extension: the header decides
    r.write_text("p edge 3 1\ne 1 3\n")
    assert graphkit.io.guess_format(r) == "dimacs" and graphkit.read_graph(r).m == 1
    q = tmp_path / "el_noext"
    q.write_text("% a comment\n0 1\n1 2\n2 3\n")  # '2 3' is not a METIS file with 2 lines
    assert graphkit.io.guess_format(q) == "edgelist"
    assert graphkit.read_graph(q).m == 3


def test_write_graph_accepts_networkx_file_objects_and_stdout(tmp_path, capsys):
    import io as _io

    H = nx.path_graph(4)
    buf = _io.StringIO()
    graphkit.write_graph(H, buf, format="dimacs")
    assert buf.getvalue() == "p edge 4 3\ne 1 2\ne 2 3\ne 3 4\n"
    graphkit.write_graph(H, "-", format="edgelist")
    assert capsys.readouterr().out == "# n=4 m=3\n0 1\n1 2\n2 3\n"
    with pytest.raises(ValueError, match="unknown graph format"):
        graphkit.write_graph(H, tmp_path / "x.gr", format="gml")


def test_corrupt_compressed_file(tmp_path):
    p = tmp_path / "bad.gr.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match=r"bad\.gr\.gz"):
        graphkit.read_graph(p)


@pytest.mark.parametrize("fmt", ["dimacs", "pace", "metis", "edgelist", "mtx"])
def test_roundtrip_property(tmp_path, fmt):
    hypothesis = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")

    @hypothesis.settings(max_examples=25, deadline=None, derandomize=True)
    @hypothesis.given(n=st.integers(1, 30), data=st.data())
    def check(n, data):
        pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60))
        pairs = [(a, b) for a, b in pairs if a != b]
        weighted = fmt in ("metis", "edgelist", "mtx") and data.draw(st.booleans())
        u = np.array([a for a, _ in pairs], dtype=np.int64)
        v = np.array([b for _, b in pairs], dtype=np.int64)
        w = data.draw(st.lists(st.floats(0.001, 1e6), min_size=len(pairs), max_size=len(pairs))) if weighted else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            G = Graph.from_edges(n, u, v, None if w is None else np.array(w))
        path = tmp_path / f"prop.{fmt}"
        graphkit.write_graph(G, path, format=fmt)
        H = graphkit.read_graph(path, format=fmt)
        assert H.n == G.n and _edge_set(H) == _edge_set(G)
        if G.weighted and G.m:  # an edgeless file cannot say whether it is weighted
            np.testing.assert_array_equal(H.edges()[2], G.edges()[2])

    check()


def test_tree_decomposition_errors_and_compression(tmp_path):
    td = TreeDecomposition([np.array([0, 1]), np.array([1, 2]), np.array([2, 3])], np.array([[0, 1], [1, 2]]))
    graphkit.write_tree_decomposition(td, tmp_path / "t.td.xz", n=4)
    back, n = graphkit.read_tree_decomposition(tmp_path / "t.td.xz")
    assert n == 4 and [b.tolist() for b in back.bags] == [[0, 1], [1, 2], [2, 3]]
    cases = {
        "s td 2 2 3\nb 1 1 2\nb 1 2 3\n1 2\n": r"x\.td:3: bag 1 is listed twice",
        "s td 2 2 3\nb 1 1 2\n": r"x\.td:1: bag 2 is not listed",
        "s td 2 2 3\nb 1 1 2\nb 3 2 3\n1 2\n": r"x\.td:3: bag id out of range 1\.\.2",
        "s td 2 2 3\nb 1 1 2\nb 2 2 3\n": r"x\.td:1: a tree on 2 bags has 1 edges",
        "s td 2 3 3\nb 1 1 2\nb 2 2 3\n1 2\n": r"x\.td:1: header states largest bag 3",
        "s td 2 2 3\nb 1 1 2\nb 2 2 3\n1 5\n": r"x\.td:4: bag id out of range",
        "s td 2 2 3\nb 1 1 x\nb 2 2 3\n1 2\n": r"x\.td:2: non-numeric",
        "p td 2 2 3\n": r"x\.td:1: bad header 'p td 2 2 3', expected 's td bags width\+1 n'",
        "s td 2 x 3\n": r"x\.td:1: non-numeric header",
    }
    for text, message in cases.items():
        (tmp_path / "x.td").write_text(text)
        with pytest.raises(ValueError, match=message):
            graphkit.read_tree_decomposition(tmp_path / "x.td")
    (tmp_path / "e.td").write_text("c empty graph\ns td 0 0 0\n")
    empty, n = graphkit.read_tree_decomposition(tmp_path / "e.td")
    assert n == 0 and empty.bags == [] and empty.width == -1


def test_vertex_cover_errors(tmp_path):
    p = tmp_path / "c.vc"
    for text, message in {
        "s vc 4 2\n1\n1\n": r"c\.vc:3: vertex 1 is listed twice",
        "s vc 4 2\n1\n5\n": r"c\.vc:3: vertex id out of range 1\.\.4",
        "s vc 4 1\n1 2\n": r"c\.vc:2: expected 1 fields",
        "s vc 4\n1\n": r"c\.vc:1: bad header",
    }.items():
        p.write_text(text)
        with pytest.raises(ValueError, match=message):
            graphkit.read_vertex_cover(p)
    with pytest.raises(ValueError, match="0..3"):
        graphkit.write_vertex_cover([4], p, n=4)
    graphkit.write_vertex_cover(np.array([], dtype=np.int64), tmp_path / "e.vc.gz", n=3)
    cover, n = graphkit.read_vertex_cover(tmp_path / "e.vc.gz")
    assert n == 3 and cover.size == 0


@pytest.mark.slow
def test_large_file_reads_fast(tmp_path, rng):
    import time

    n, m = 200_000, 1_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        G = Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m))
    for suffix in (".gr", ".clq", ".txt", ".graph"):
        graphkit.write_graph(G, tmp_path / f"big{suffix}")
        start = time.perf_counter()
        H = graphkit.read_graph(tmp_path / f"big{suffix}")
        assert time.perf_counter() - start < 10.0
        assert H == G
