"""Matrix generators, Matrix Market reading, SuiteSparse loader (local HTTP server only)."""
import gzip
import http.server
import io
import tarfile
import threading

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import matrices
from matrices import suitesparse


@pytest.mark.parametrize("gen", [matrices.aniso1, matrices.aniso2, matrices.aniso3])
def test_aniso_structure(gen):
    n = 12
    A = gen(n)
    assert A.shape == (n * n, n * n)
    # 9-point stencil truncated at the boundary: the paper's nnz formula (6.25M rows -> 56,220,004)
    assert A.nnz == 9 * n * n - 6 * 2 * n + 4
    np.testing.assert_allclose(A.diagonal(), 3.0)
    assert abs(A - A.T).max() == 0
    full = np.diff(A.indptr) == 9  # interior rows: zero row sum
    np.testing.assert_allclose(np.asarray(A.sum(axis=1)).ravel()[full], 0.0, atol=1e-12)


def test_aniso_paper_size_nnz_formula():
    n = 2500
    assert 9 * n * n - 12 * n + 4 == 56_220_004


def test_aniso1_strong_couplings_on_offdiagonals():
    A = matrices.aniso1(10)
    assert np.count_nonzero(A.diagonal(1) == -1.0) == 10 * 9
    B = matrices.aniso2(10)
    assert np.count_nonzero(B.diagonal(1) == -1.0) == 0
    assert np.count_nonzero(B.diagonal(11) == -1.0) == 9 * 9


def test_aniso3_is_permuted_aniso2():
    n = 9
    p = matrices.generators.aniso3_permutation(n)
    assert sorted(p) == list(range(n * n))
    A2, A3 = matrices.aniso2(n), matrices.aniso3(n)
    np.testing.assert_array_equal(A3.toarray(), A2.toarray()[np.ix_(p, p)])
    # every -1.0 coupling sits on the sub/superdiagonal
    strong = sp.triu(A3 == -1.0, 1).tocoo()
    assert np.all(strong.col - strong.row == 1)


def test_dtypes_and_bad_sizes():
    assert matrices.poisson2d(5, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError):
        matrices.aniso1(0)
    with pytest.raises(TypeError):
        matrices.aniso1(4, dtype=np.int32)


@pytest.mark.parametrize(
    "gen, n, symmetric",
    [
        (matrices.poisson2d, 6, True),
        (matrices.poisson3d, 5, True),
        (matrices.convection_diffusion3d, 5, False),
        (matrices.random_diffusion2d, 8, True),
        (matrices.rotated_anisotropic2d, 8, True),
        (matrices.elasticity2d, 5, True),
    ],
)
def test_standins(gen, n, symmetric):
    A = gen(n)
    assert A.shape[0] == A.shape[1] and A.format == "csr"
    assert (abs(A - A.T).max() == 0) == symmetric
    assert np.all(A.diagonal() > 0)
    if symmetric:  # SPD: Cholesky-like check via smallest eigenvalue of a small case
        assert np.linalg.eigvalsh(A.toarray()).min() > -1e-10


def test_matrix_market_roundtrip_gzip_pattern_integer(tmp_path):
    A = sp.random(30, 30, density=0.1, random_state=3, format="csr")
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(path, A)
    np.testing.assert_allclose(matrices.read_matrix(path).toarray(), A.toarray())
    gz = tmp_path / "a.mtx.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    np.testing.assert_allclose(matrices.read_matrix(gz).toarray(), A.toarray())
    pat = tmp_path / "p.mtx"
    pat.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n")
    P = matrices.read_matrix(pat)
    assert P.dtype == np.float64
    np.testing.assert_array_equal(P.toarray(), [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    ints = tmp_path / "i.mtx"
    ints.write_text("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 7\n")
    assert matrices.read_matrix(ints).dtype == np.float64


def test_matrix_market_errors(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("not a matrix\n")
    with pytest.raises(ValueError, match="bad.mtx"):
        matrices.read_matrix(bad)
    with pytest.raises(FileNotFoundError):
        matrices.read_matrix(tmp_path / "missing.mtx")


def test_get_resolves_generators_paths_and_names(tmp_path, shared_data):
    assert matrices.get("ANISO2", n=4).shape == (16, 16)
    with pytest.raises(ValueError, match="grid size"):
        matrices.get("aniso2")
    A = matrices.get("add20")
    assert A.shape == (2395, 2395)
    assert matrices.get(str(shared_data / "matrices" / "watt_1.mtx")).shape == (1856, 1856)


def test_registry_has_paper_table3():
    names = {m.name.lower() for m in suitesparse.PAPER_MATRICES}
    assert {"ecology1", "atmosmodm", "g3_circuit", "thermal2"} <= names
    assert len(suitesparse.PAPER_MATRICES) == 19


def _archive(name, matrix):
    buf = io.BytesIO()
    mtx = io.BytesIO()
    scipy.io.mmwrite(mtx, matrix)
    data = mtx.getvalue()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(f"{name}/{name}.mtx")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def collection_server():
    """A local HTTP server on 127.0.0.1 serving /MM/<group>/<name>.tar.gz."""
    A = sp.random(40, 40, density=0.1, random_state=7, format="csr") + sp.eye(40)
    payload = _archive("testmat", A)
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            if self.path == "/MM/TestGroup/testmat.tar.gz":
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            else:
                self.send_response(404)
                self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", A, hits
    server.shutdown()
    server.server_close()


def test_download_caches_atomically(collection_server, tmp_path):
    url, A, hits = collection_server
    B = suitesparse.load("TestGroup/testmat", url=url, cache=tmp_path, progress=False, local_dirs=[])
    np.testing.assert_allclose(B.toarray(), A.toarray())
    assert (tmp_path / "TestGroup" / "testmat.mtx").is_file()
    assert not list((tmp_path / "TestGroup").glob("tmp*"))  # no leftovers
    suitesparse.load("TestGroup/testmat", url=url, cache=tmp_path, progress=False)
    assert len(hits) == 1  # second load from the cache


def test_download_missing_matrix_and_offline(collection_server, tmp_path):
    url, _, _ = collection_server
    with pytest.raises(FileNotFoundError, match="404"):
        suitesparse.fetch("TestGroup/nothere", url=url, cache=tmp_path, progress=False)
    with pytest.raises(ConnectionError, match="offline"):
        suitesparse.fetch("TestGroup/testmat", url="http://127.0.0.1:9", cache=tmp_path, progress=False, timeout=2)
    with pytest.raises(ValueError, match="group/name"):
        suitesparse.fetch("definitely_unknown_matrix", cache=tmp_path)


def _reference_stencil(stencil, n):
    """Dense reference: entry (i, j) of unknown i = iy*n+ix and neighbour (ix+dx, iy+dy)."""
    A = np.zeros((n * n, n * n))
    for iy in range(n):
        for ix in range(n):
            for r in range(3):
                for c in range(3):
                    jx, jy = ix + c - 1, iy + 1 - r  # row 0 is north (iy + 1), column 0 west
                    if 0 <= jx < n and 0 <= jy < n and stencil[r][c]:
                        A[iy * n + ix, jy * n + jx] = stencil[r][c]
    return A


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_stencils_match_dense_reference(n):
    from matrices.generators import ANISO1_STENCIL, ANISO2_STENCIL

    for gen, stencil in ((matrices.aniso1, ANISO1_STENCIL), (matrices.aniso2, ANISO2_STENCIL)):
        A = gen(n)
        np.testing.assert_array_equal(A.toarray(), _reference_stencil(stencil, n))
        assert A.has_sorted_indices and np.all(np.diff(A.indices[A.indptr[0]:A.indptr[1]]) > 0)
    # ANISO2: the -1.0 coupling of an interior point goes to its NE and SW neighbours
    if n >= 3:
        A = matrices.aniso2(n)
        centre = 1 * n + 1
        assert A[centre, 2 * n + 2] == -1.0 and A[centre, 0] == -1.0 and A[centre, 2 * n] == -0.1


@pytest.mark.parametrize("n", [1, 2, 3, 5, 11])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_aniso3_direct_build_equals_permuted_aniso2(n, dtype):
    p = matrices.generators.aniso3_permutation(n)
    ref = matrices.aniso2(n, dtype)[p][:, p].tocsr()
    ref.sort_indices()
    A3 = matrices.aniso3(n, dtype)
    assert A3.dtype == dtype
    np.testing.assert_array_equal(A3.indptr, ref.indptr)
    np.testing.assert_array_equal(A3.indices, ref.indices)
    np.testing.assert_array_equal(A3.data, ref.data)


def test_generator_index_types_and_validation():
    A = matrices.aniso1(30)
    assert A.indices.dtype == np.int32 and A.indptr.dtype == np.int32
    assert matrices.aniso3(4, dtype=np.float32).dtype == np.float32
    for bad in (2.5, "3", -1, None):
        with pytest.raises(ValueError):
            matrices.aniso2(bad)
    with pytest.raises(ValueError, match="3x3"):
        matrices.stencil_matrix_2d(np.ones((2, 2)), 3)
    Z = matrices.stencil_matrix_2d(np.zeros((3, 3)), 3)
    assert Z.shape == (9, 9) and Z.nnz == 0


def test_poisson_and_convection_values():
    A = matrices.poisson3d(3)
    assert A[13, 13] == 6.0 and A.nnz == 27 + 3 * 2 * 18  # 27 diagonals, 18 neighbour pairs per axis
    C = matrices.convection_diffusion3d(4, wind=(1.0, 0.0, 0.0), peclet=10.0)
    row = C[5].toarray().ravel()  # interior-ish x neighbours of unknown 5 are 4 and 6
    assert row[4] < row[6] < 0  # upwind (west) neighbour takes the convective flux
    assert np.all(np.asarray(C.sum(axis=1)).ravel() >= -1e-12)  # diagonally dominant M-matrix rows


@pytest.mark.slow
def test_paper_size_aniso_builds_quickly():
    import time

    for gen in (matrices.aniso1, matrices.aniso3):
        start = time.perf_counter()
        A = gen(2500)
        assert time.perf_counter() - start < 30
        assert A.nnz == 56_220_004
        del A


@pytest.mark.parametrize("name", sorted(matrices.GENERATORS))
def test_grid_size_gives_about_the_rows_asked(name):
    for rows in (5000, 65536):
        n = matrices.grid_size(name, rows)
        actual = matrices.get(name, n=n).shape[0]
        assert 0.85 * rows <= actual <= 1.15 * rows
    with pytest.raises(ValueError, match="unknown generator"):
        matrices.grid_size("nope", 100)
    with pytest.raises(ValueError, match="positive integer"):
        matrices.grid_size(name, 0)
