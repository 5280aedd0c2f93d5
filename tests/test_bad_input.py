"""Bad input and edge cases (issue #41): every case ends with a correct answer or a clear
Python exception; the CLIs print one line on stderr, exit 2 for usage errors and 1 for
failures, never a traceback. Cases that could abort or exhaust the interpreter run in a
subprocess under a memory cap."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import graphkit
import kernels
import matrices
import precond

ROOT = Path(__file__).resolve().parents[1]
GRAPHKIT = "import sys; from graphkit.cli import main; sys.exit(main())"
PRECOND = "import sys; from precond.cli import main; sys.exit(main())"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def run_python(code, *args, memory_gb=2.0, timeout=120, stdin=None):
    """Run ``code`` in a fresh interpreter whose address space is capped (Linux)."""
    cap = int(memory_gb * 2**30)
    limit = (f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))\n"
             if sys.platform.startswith("linux") else "")
    return subprocess.run([sys.executable, "-c", limit + code, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=_env(), cwd=ROOT, stdin=stdin)


def assert_clean_failure(proc, code, *needles):
    """Exit ``code``, one line on stderr naming every needle, no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n") if isinstance(text, str) else text)
    return path


READ_MATRIX = "import sys, matrices\ntry:\n    matrices.read_matrix(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n    sys.exit(3)\n"
READ_GRAPH = "import sys, graphkit\ntry:\n    graphkit.read_graph(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n    sys.exit(3)\n"


# ------------------------------------------------------------------ 1. huge Matrix Market sizes
@pytest.fixture
def huge_mtx(tmp_path):
    return {
        "coordinate": write(tmp_path, "huge.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1000000000000\n1 1 1.0\n"),
        "array": write(tmp_path, "short.mtx", "%%MatrixMarket matrix array real general\n100000 100000\n1.0\n2.0\n"),
        "rows": write(tmp_path, "rows.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                            "1000000000000 1000000000000 1\n1 1 1.0\n"),
    }


@pytest.mark.parametrize("kind", ["coordinate", "array", "rows"])
def test_read_matrix_huge_declared_size_is_a_clear_error(huge_mtx, kind):
    proc = run_python(READ_MATRIX, huge_mtx[kind])
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert re.search(rf"{re.escape(str(huge_mtx[kind]))}:[23]: .*(size line|declares)", proc.stdout), proc.stdout


@pytest.mark.parametrize("kind", ["coordinate", "array"])
def test_read_graph_huge_mtx_is_a_clear_error(huge_mtx, kind):
    proc = run_python(READ_GRAPH, huge_mtx[kind])
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert re.search(rf"{re.escape(str(huge_mtx[kind]))}:[23]: .*(size line|declares)", proc.stdout), proc.stdout


def test_graphkit_stats_huge_mtx(huge_mtx):
    proc = run_python(GRAPHKIT, "stats", huge_mtx["coordinate"])
    assert_clean_failure(proc, 1, str(huge_mtx["coordinate"]))


def test_convergence_study_keeps_the_other_matrices(huge_mtx, tmp_path):
    out = tmp_path / "out"
    proc = run_python(PRECOND, "convergence", "--matrix", huge_mtx["coordinate"], "aniso1", "--n", "8",
                      "--precond", "jacobi", "--no-plot", "--quiet", "--out", out, memory_gb=3.0)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    rows = json.loads((out / "convergence.json").read_text())
    assert any(r["matrix"] == "aniso1" and r.get("converged") for r in rows)
    assert any("error" in r and str(huge_mtx["coordinate"]) in r["error"] for r in rows)


def test_read_matrix_compressed_huge_declared_size(tmp_path):
    import gzip

    path = tmp_path / "huge.mtx.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("%%MatrixMarket matrix coordinate real general\n3 3 1000000000000\n1 1 1.0\n")
    proc = run_python(READ_MATRIX, path)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert re.search(rf"{re.escape(str(path))}:[23]: .*size line", proc.stdout), proc.stdout


def test_read_matrix_still_reads_valid_files(tmp_path):
    import scipy.io

    A = sp.random(30, 20, density=0.2, random_state=1, format="csr")
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    np.testing.assert_allclose(matrices.read_matrix(tmp_path / "a.mtx").toarray(), A.toarray())
    scipy.io.mmwrite(tmp_path / "d.mtx", A.toarray())  # array format
    np.testing.assert_allclose(matrices.read_matrix(tmp_path / "d.mtx").toarray(), A.toarray())


# ------------------------------------------------------------------ 2. huge PACE sizes
def test_pace_header_beyond_memory_is_a_clear_error(tmp_path):
    path = write(tmp_path, "huge.gr", "p td 1000000000000 1\n1 2\n")
    proc = run_python(READ_GRAPH, path)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert f"{path}:1:" in proc.stdout


def test_pace_header_beyond_the_memory_cap_is_a_clear_error(tmp_path):
    """300M vertices need over 1 GiB; under a 1 GiB cap the reader refuses up front."""
    path = write(tmp_path, "big.gr", "p td 300000000 1\n1 2\n")
    proc = run_python(READ_GRAPH, path, memory_gb=1.0)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert f"{path}:1:" in proc.stdout


def test_pace_many_isolated_vertices_memory_is_proportional(tmp_path):
    """3M vertices and one edge: read under a small cap (memory proportional to n)."""
    path = write(tmp_path, "wide.gr", "p td 3000000 1\n1 2\n")
    code = ("import sys, resource, graphkit\nG = graphkit.read_graph(sys.argv[1])\n"
            "print(G.n, G.m, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    proc = run_python(code, path, memory_gb=2.0)
    assert proc.returncode == 0, proc.stderr[-1500:]
    n, m, _ = proc.stdout.split()
    assert (int(n), int(m)) == (3000000, 1)


@pytest.mark.parametrize("text", ["p edge 1000000000000 1\ne 1 2\n", "1000000000000 0\n"])
def test_other_readers_refuse_huge_headers(tmp_path, text):
    path = write(tmp_path, "huge.dimacs" if text.startswith("p") else "huge.graph", text)
    proc = run_python(READ_GRAPH, path)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert f"{path}:1:" in proc.stdout


def test_edge_list_huge_vertex_id_is_a_clear_error(tmp_path):
    path = write(tmp_path, "e.txt", "0 1\n1 999999999999\n")
    proc = run_python(READ_GRAPH, path)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
    assert f"{path}:2:" in proc.stdout


# ------------------------------------------------------------------ 3. Graph validation
def test_graph_constructor_refuses_invalid_csr():
    indptr, indices = np.array([0, 2, 2, 3]), np.array([0, 1, 1])  # self-loop 0-0, 0->1 without 1->0
    with pytest.raises(ValueError):
        graphkit.Graph(indptr, indices)


@pytest.mark.parametrize("indptr,indices", [
    ([0, 1, 2], [1, 1]),          # not symmetric (1 -> 1 is a loop, 0 -> 1 one-way)
    ([0, 2, 3, 4], [2, 1, 0, 0]),  # unsorted row
    ([0, 2, 3], [1, 1, 0]),        # duplicate
    ([0, 1, 2], [1, 5]),           # out of range
    ([0, 3, 2], [1, 0, 0]),        # decreasing indptr
    ([1, 2, 3], [1, 0]),           # indptr not starting at 0
])
def test_graph_constructor_refuses_every_invalid_csr(indptr, indices):
    with pytest.raises(ValueError):
        graphkit.Graph(np.array(indptr), np.array(indices))


def test_mis_terminates_on_a_graph_built_without_checks():
    """Even a graph that skipped validation cannot make a solver loop forever."""
    code = textwrap.dedent("""
        import numpy as np, graphkit
        from graphkit.graph import Graph
        G = Graph.__new__(Graph)
        try:
            G = Graph(np.array([0, 2, 2, 3]), np.array([0, 1, 1]), check=False)
        except TypeError:
            pass
        try:
            graphkit.maximal_independent_set(G, device="cpu")
        except (ValueError, AttributeError):
            pass
        print("done")
    """)
    proc = run_python(code, timeout=90)
    assert "done" in proc.stdout, proc.stderr[-1500:]


# ------------------------------------------------------------------ 4. bicgstab shapes
def test_bicgstab_accepts_column_vectors_like_scipy():
    A = matrices.poisson2d(12)
    n = A.shape[0]
    b = A @ np.ones(n)
    x, info = precond.bicgstab(A, b, x0=np.zeros((n, 1)), rtol=1e-10)
    assert info == 0 and x.shape == (n,)
    np.testing.assert_allclose(x, 1, rtol=1e-6)
    x, info = precond.bicgstab(A, b.reshape(-1, 1), rtol=1e-10)
    assert info == 0 and x.shape == (n,)


@pytest.mark.parametrize("shape", ["short", "long", "matrix", "scalar"])
def test_bicgstab_refuses_wrong_shapes(shape):
    A = matrices.poisson2d(8)
    n = A.shape[0]
    b = np.ones(n)
    x0 = {"short": np.zeros(n - 1), "long": np.zeros(n + 1), "matrix": np.zeros((n, 2)), "scalar": np.zeros(())}[shape]
    with pytest.raises(ValueError, match="x0"):
        precond.bicgstab(A, b, x0=x0)
    with pytest.raises(ValueError, match="b"):
        precond.bicgstab(A, x0 if x0.ndim else np.zeros(n - 1))


def test_bicgstab_memory_with_column_x0():
    """x0 of shape (n, 1) at n = 20k must not allocate an n x n residual."""
    code = textwrap.dedent("""
        import numpy as np, scipy.sparse as sp, precond
        n = 20000
        A = sp.diags([np.full(n, 4.0), np.full(n - 1, -1.0), np.full(n - 1, -1.0)], [0, 1, -1], format="csr")
        x, info = precond.bicgstab(A, np.ones(n), x0=np.zeros((n, 1)), rtol=1e-8)
        print(info, x.shape)
    """)
    proc = run_python(code, memory_gb=2.0)
    assert proc.stdout.split() == ["0", "(20000,)"], proc.stderr[-1500:]


# ------------------------------------------------------------------ 9. NaN / inf right-hand sides
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_bicgstab_non_finite_rhs_is_not_converged(bad):
    A = matrices.poisson2d(10)
    b = np.ones(A.shape[0])
    b[3] = bad
    try:
        _, info = precond.bicgstab(A, b)
    except ValueError as exc:
        assert "NaN" in str(exc) or "finite" in str(exc)
    else:
        assert info != 0
    try:
        res = precond.solve(A, b, precond.jacobi(A))
    except ValueError:
        pass
    else:
        assert not res.converged


def test_bicgstab_non_finite_preconditioner_output_is_a_breakdown():
    A = matrices.poisson2d(10)
    b = np.ones(A.shape[0])
    _, info = precond.bicgstab(A, b, M=lambda v: v * np.nan)
    assert info != 0


# ------------------------------------------------------------------ 10. tridiagonal_solve dtypes
def _tri(n=5, dtype=np.float64):
    dl = np.r_[0, np.ones(n - 1)].astype(dtype)
    du = np.r_[np.ones(n - 1), 0].astype(dtype)
    d = np.full(n, 4).astype(dtype)
    return dl, d, du


def _dense(dl, d, du):
    return np.diag(d.astype(float)) + np.diag(dl[1:].astype(float), -1) + np.diag(du[:-1].astype(float), 1)


def test_tridiagonal_solve_promotes_integers_like_scipy():
    dl, d, du = _tri(5, np.int64)
    b = np.arange(1, 6)
    x = kernels.tridiagonal_solve(dl, d, du, b)
    assert x.dtype == np.float64
    np.testing.assert_allclose(_dense(dl, d, du) @ x, b)


def test_tridiagonal_solve_float16_and_lists():
    dl, d, du = _tri(5, np.float16)
    x = kernels.tridiagonal_solve(dl, d, du, np.ones(5, np.float16))
    assert x.dtype == np.float32
    np.testing.assert_allclose(_dense(dl, d, du) @ x, 1, rtol=1e-5)
    x = kernels.tridiagonal_solve([0, 1, 1], [4, 4, 4], [1, 1, 0], [1, 2, 3])
    np.testing.assert_allclose(_dense(*map(np.array, ([0, 1, 1], [4, 4, 4], [1, 1, 0]))) @ x, [1, 2, 3])


@pytest.mark.parametrize("case", ["3d", "length", "bool", "object", "batch"])
def test_tridiagonal_solve_bad_shapes_and_types(case):
    dl, d, du = _tri(4)
    b = {"3d": np.ones((4, 2, 2)), "length": np.ones(5), "bool": np.ones(4, dtype=bool),
         "object": np.array(["a"] * 4, dtype=object), "batch": np.ones((3, 4))}[case]
    if case == "bool":  # promoted like integers
        np.testing.assert_allclose(_dense(dl, d, du) @ kernels.tridiagonal_solve(dl, d, du, b), 1)
        return
    with pytest.raises((TypeError, ValueError)) as err:
        kernels.tridiagonal_solve(dl, d, du, b)
    assert "numba" not in type(err.value).__module__


# ------------------------------------------------------------------ 11. factor of another matrix
def test_linear_forest_and_coverage_check_the_factor_shape():
    A, B = matrices.poisson2d(10), matrices.poisson2d(8)
    f = precond.factor(B, n=2)
    with pytest.raises(ValueError, match="64|100"):
        precond.linear_forest(A, f)
    with pytest.raises(ValueError, match="64|100"):
        precond.weight_coverage(A, f)


# ------------------------------------------------------------------ 12. NaN weights
@pytest.mark.parametrize("name,text,line", [
    ("nan.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1.5\n3 2 nan\n", 4),
    ("inf.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n2 1 inf\n3 2 1\n", 4),
    ("nan.txt", "0 1 1.0\n1 2 nan\n", 2),
    ("nan.graph", "3 2 001\n2 1.0\n1 1.0 3 nan\n2 nan\n", 3),
])
def test_non_finite_weights_name_file_and_line(tmp_path, name, text, line):
    path = write(tmp_path, name, text)
    with pytest.raises(ValueError, match=f"{path.name}:{line}:"):
        graphkit.read_graph(path)


# ------------------------------------------------------------------ 13. vertex ids as in the file
def _cli(capsys, *argv):
    from graphkit.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_mis_and_maxclique_keep_zero_based_pace_ids(tmp_path, capsys):
    path = write(tmp_path, "zero.gr", "p td 3 2\n0 1\n1 2\n")
    code, out, _ = _cli(capsys, "mis", path)
    assert code == 0 and sorted(map(int, out.split())) == [0, 2]
    code, out, _ = _cli(capsys, "maxclique", path)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "2" and max(map(int, lines[1].split())) <= 2


def test_one_numbering_rule_for_every_subcommand(tmp_path, capsys):
    """The same edge list (0-based) through tw, vc, mis and cliques: every id is 0-based."""
    path = write(tmp_path, "p3.txt", "0 1\n1 2\n")
    code, out, _ = _cli(capsys, "tw", path)
    bags = [list(map(int, line.split()[2:])) for line in out.splitlines() if line.startswith("b ")]
    assert code == 0 and {v for bag in bags for v in bag} == {0, 1, 2}
    code, out, _ = _cli(capsys, "vc", path)
    assert code == 0 and out.splitlines()[1:] == ["1"]
    code, out, _ = _cli(capsys, "mis", path)
    assert sorted(map(int, out.split())) == [0, 2]
    code, out, _ = _cli(capsys, "cliques", path)
    assert sorted(sorted(map(int, line.split())) for line in out.splitlines()) == [[0, 1], [1, 2]]
    # and a 1-based file stays 1-based everywhere
    path = write(tmp_path, "p3.gr", "p td 3 2\n1 2\n2 3\n")
    code, out, _ = _cli(capsys, "tw", path)
    bags = [list(map(int, line.split()[2:])) for line in out.splitlines() if line.startswith("b ")]
    assert {v for bag in bags for v in bag} == {1, 2, 3}
    code, out, _ = _cli(capsys, "mis", path)
    assert sorted(map(int, out.split())) == [1, 3]


def test_help_states_the_numbering_rule(capsys):
    from graphkit.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "numbered as in the input file" in capsys.readouterr().out


# ------------------------------------------------------------------ 14. ambiguous formats
def test_edge_list_that_looks_like_metis_asks_for_format(tmp_path):
    path = write(tmp_path, "tri.txt", "3 3\n2 3\n1 3\n1 2\n")  # METIS triangle, or 4 edges
    with pytest.raises(ValueError, match="--format|format="):
        graphkit.read_graph(path)
    assert graphkit.read_graph(path, format="metis").m == 3
    with pytest.warns(UserWarning, match="self-loop"):  # the METIS header "3 3" read as an edge
        assert graphkit.read_graph(path, format="edgelist").n == 4


def test_metis_weights_that_disagree_name_the_line(tmp_path):
    path = write(tmp_path, "w.graph", "3 2 001\n2 1.0\n1 5.0 3 1.0\n2 1.0\n")
    with pytest.raises(ValueError, match=r"w\.graph:[23]:"):
        graphkit.read_graph(path)


def test_metis_one_way_edge_names_the_line(tmp_path):
    path = write(tmp_path, "o.graph", "3 2\n2\n1 3\n\n")
    with pytest.raises(ValueError, match=r"o\.graph:[2-4]:"):
        graphkit.read_graph(path)


# ------------------------------------------------------------------ 15. scipy-bicgstab history
@pytest.mark.parametrize("rtol", [1e-6, 1e-8, 1e-10])
def test_scipy_method_reports_its_final_residual(rtol):
    A = matrices.aniso1(32)
    b = A @ np.sin(np.arange(A.shape[0]))
    res = precond.solve(A, b, precond.jacobi(A), method="scipy-bicgstab", rtol=rtol, maxiter=5000)
    true = np.linalg.norm(b - A @ res.x) / np.linalg.norm(b)
    assert res.converged
    assert res.residuals[-1] <= rtol
    assert res.residuals[-1] == pytest.approx(true, rel=1e-3)


# ------------------------------------------------------------------ 16. precond convergence CLI
def _study(capsys, *argv):
    from precond.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,needle", [
    (["--precond", "nope"], "nope"),
    (["--method", "nope"], "nope"),
    (["--n", "0"], "--n"),
    (["--rtol", "-1"], "--rtol"),
])
def test_study_argument_errors_are_usage_errors(capsys, tmp_path, argv, needle):
    code, _, err = _study(capsys, "convergence", "--matrix", "aniso1", "--n", "8", "--no-plot", "--quiet",
                          "--out", tmp_path, *argv)
    assert code == 2 and "Traceback" not in err and needle in err
    assert len([line for line in err.splitlines() if line.strip()]) <= 2  # argparse: usage + message


def test_study_gpu_without_gpu_is_a_usage_error(capsys, tmp_path):
    from kernels.backend import gpu_available

    if gpu_available():
        pytest.skip("a GPU is usable here")
    code, _, err = _study(capsys, "convergence", "--matrix", "aniso1", "--n", "8", "--device", "gpu",
                          "--no-plot", "--quiet", "--out", tmp_path)
    assert code == 2 and "Traceback" not in err and "GPU" in err


def test_study_failed_cases_exit_one(capsys, tmp_path):
    path = tmp_path / "rect.mtx"
    import scipy.io

    scipy.io.mmwrite(path, sp.random(5, 4, density=0.5, random_state=0))
    code, out, err = _study(capsys, "convergence", "--matrix", path, "--precond", "jacobi", "--no-plot", "--quiet",
                            "--out", tmp_path)
    assert code == 1 and "Traceback" not in err


def test_study_writes_each_case_as_it_goes(tmp_path, monkeypatch):
    from precond import study

    seen = []
    real = study.run_case

    def spy(A, name, p, **kw):
        path = tmp_path / "convergence.json"
        seen.append(len(json.loads(path.read_text())) if path.exists() else 0)
        return real(A, name, p, **kw)

    monkeypatch.setattr(study, "run_case", spy)
    study.main(["--matrix", "aniso1", "aniso2", "--n", "8", "--precond", "jacobi", "none", "--no-plot", "--quiet",
                "--out", str(tmp_path)])
    assert seen == [0, 1, 2, 3]


# ------------------------------------------------------------------ 17. smaller cases
def test_broken_pipe_is_silent(tmp_path):
    path = write(tmp_path, "p.gr", "p td 4 3\n1 2\n2 3\n3 4\n")
    cmd = f"{sys.executable} -c '{GRAPHKIT}' tw {path} | head -1"
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, env=_env(), cwd=ROOT,
                          timeout=120)
    assert proc.stdout.startswith("s td")
    assert "Error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_stats_reads_a_pipe(tmp_path):
    path = write(tmp_path, "p.gr", "p td 4 3\n1 2\n2 3\n3 4\n")
    with open(path) as fh:
        proc = subprocess.run([sys.executable, "-c", GRAPHKIT, "stats", "/dev/stdin"], stdin=fh, capture_output=True,
                              text=True, env=_env(), cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "vertices" in proc.stdout and " 4" in proc.stdout.splitlines()[0]


def test_read_graph_on_a_directory(tmp_path):
    with pytest.raises(OSError, match="directory"):
        graphkit.read_graph(tmp_path)
    with pytest.raises(OSError, match="directory"):
        matrices.read_matrix(tmp_path)


@pytest.mark.parametrize("edges", ["1 1\n", "1 2\n1 2\n"])
def test_tree_decomposition_tree_edges_must_form_a_tree(tmp_path, edges):
    n_bags = 2 if edges == "1 1\n" else 3
    bags = "".join(f"b {i} 1\n" for i in range(1, n_bags + 1))
    path = write(tmp_path, "t.td", f"s td {n_bags} 1 1\n{bags}{edges}")
    with pytest.raises(ValueError, match=r"t\.td:\d+:"):
        graphkit.read_tree_decomposition(path)


def test_is_coloring_non_integer_colours():
    P3 = graphkit.Graph.from_edges(3, [0, 1], [1, 2])
    assert graphkit.is_coloring(P3, [0, 1, 0.5]) is False
    assert graphkit.is_coloring(P3, [0.0, 1.0, 0.0]) is True
    assert graphkit.is_coloring(P3, [0, np.nan, 0]) is False


@pytest.mark.parametrize("n", [3.7, "3", None, True])
def test_from_edges_refuses_non_integer_n(n):
    with pytest.raises(TypeError):
        graphkit.Graph.from_edges(n, [0, 1], [1, 2])


def test_from_edges_accepts_integral_numbers():
    assert graphkit.Graph.from_edges(np.int32(3), [0, 1], [1, 2]).n == 3


@pytest.mark.parametrize("vertices", [[5], [-4], [0, 0], [0.5]])
def test_subgraph_refuses_bad_vertices(vertices):
    G = graphkit.Graph.from_edges(3, [0, 1], [1, 2])
    with pytest.raises((ValueError, TypeError)):
        G.subgraph(vertices)


def test_subgraph_negative_index_is_not_silently_wrapped():
    G = graphkit.Graph.from_edges(3, [0, 1], [1, 2])
    with pytest.raises(ValueError):
        G.subgraph([-1])


@pytest.mark.parametrize("seed", [2**70, -1, 1.5])
def test_seed_out_of_range_is_a_clear_error(seed):
    with pytest.raises((ValueError, TypeError), match="seed"):
        precond.algebraic_tridiagonal(matrices.poisson2d(8), seed=seed)


@pytest.mark.parametrize("name", ["../etc/passwd", "/etc/passwd", "HB/../../x", "a/b/c", "HB/", "..", "bad name"])
def test_collection_names_cannot_escape_the_cache(name, tmp_path):
    from matrices import suitesparse

    with pytest.raises(ValueError, match="name"):
        suitesparse.load(name, cache=tmp_path)
    with pytest.raises(ValueError, match="name"):
        suitesparse.fetch(name, cache=tmp_path)
    with pytest.raises((ValueError, OSError)):  # "/etc/passwd" is a path: not a Matrix Market file
        matrices.get(name)
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------ 8. Ctrl-C and progress
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")
def _read_pty(fd, timeout):
    """What a pseudo-terminal's child wrote within ``timeout`` seconds (b"" at its end)."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    try:
        return os.read(fd, 4096)
    except OSError:  # EIO: the child closed its end
        return b""


def test_cliques_count_stops_on_ctrl_c(tmp_path):
    from graphkit.generators import rmat

    path = tmp_path / "rmat.txt"
    graphkit.write_graph(rmat(17, edge_factor=16, seed=1), path)
    # stderr on a pseudo-terminal shows the progress bar, which moves only between chunks
    # of the search: the interrupt then lands in the search, not in Numba's compiler (which
    # Ctrl-C cannot stop, and which takes minutes on a cold cache on a loaded 2-core CI)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # tqdm draws nothing 0 columns wide
    proc = subprocess.Popen([sys.executable, "-c", GRAPHKIT, "cliques", "--count-only", "--device", "cpu", str(path)],
                            stdout=subprocess.PIPE, stderr=slave, text=True, env=_env(), cwd=ROOT,
                            # a harness that runs the suite in the background (`make test &`) ignores
                            # SIGINT, which children inherit and Python then leaves ignored
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(slave)
    try:
        seen, deadline = b"", time.monotonic() + 600
        while b"cliques:" not in seen and proc.poll() is None and time.monotonic() < deadline:
            seen += _read_pty(master, 1.0)
        assert b"cliques:" in seen, seen[-500:]
        assert proc.poll() is None, "finished before the interrupt: use a larger graph"
        start = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        took = time.perf_counter() - start
        while chunk := _read_pty(master, 0.5):
            seen += chunk
    finally:
        proc.kill()
        os.close(master)
    assert took < 6  # stops within a second; interpreter exit on a loaded 2-core CI
    assert proc.returncode == 130 and b"Traceback" not in seen and b"interrupted" in seen, seen[-500:]


@pytest.mark.parametrize("kind", ["coordinate", "rows"])
def test_distributed_reader_checks_declared_sizes(huge_mtx, kind):
    """The byte-range reader of precond.distributed: a size line beyond the file or the
    memory is an error naming the file (one rank here), never an allocation or a silently
    truncated matrix."""
    pytest.importorskip("mpi4py")
    code = ("import sys\nfrom precond.distributed import read_matrix_market\ntry:\n"
            "    read_matrix_market(sys.argv[1], device='cpu')\nexcept RuntimeError as e:\n    print(e)\n    sys.exit(3)\n")
    proc = run_python(code, huge_mtx[kind])
    assert proc.returncode == 3, (proc.returncode, proc.stdout[-800:], proc.stderr[-1500:])
    assert str(huge_mtx[kind]) in proc.stdout


# SciPy's C++ Matrix Market reader crashes the interpreter (SIGSEGV) on these: found by
# the fuzzing; read_matrix must answer instead (each in its own interpreter, in case)
@pytest.mark.parametrize("text,outcome", [
    (b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 5.0E-", "ok"),  # cut-off exponent at EOF
    (b"%%MatrixMarket matrix array real general\n2 1\n1.0\n5e", "ok"),
    (b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 5\x00.0\n", ":4: NUL byte"),
    (b"%%MatrixMarket matrix array real general\n2 1\n1.0\n5\x000\n", ":4: NUL byte"),
    (b"%%MatrixMarket matrix array real general\n0 0\n", "ok"),
    (b"%%MatrixMarket matrix array real general\n0 3\n1.5\n2.5\n", ":3: a 0 x 3 array holds no values"),
    (b"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1.0\n", ":2: a symmetric matrix must be square"),
])
def test_read_matrix_inputs_that_crash_scipys_reader(tmp_path, text, outcome):
    path = tmp_path / "crash.mtx"
    path.write_bytes(text)
    proc = run_python(READ_MATRIX, path)
    if outcome == "ok":
        assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-1500:])
    else:
        assert proc.returncode == 3, (proc.returncode, proc.stderr[-1500:])
        assert f"{path}{outcome}" in proc.stdout, proc.stdout
