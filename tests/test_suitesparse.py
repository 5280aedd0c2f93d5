"""SuiteSparse loader: cache location, environment overrides, local folders, failures.

Every download goes to a local HTTP server on 127.0.0.1; nothing touches the internet.
"""
import csv
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


def _mtx_bytes(A):
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, A)
    return buf.getvalue()


def _tar_gz(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def server():
    """Serves ``routes`` (path -> bytes) on 127.0.0.1; records the requested paths."""
    routes, hits = {}, []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            body = routes.get(self.path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", routes, hits
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No environment overrides, and a working directory without ../shared beside it."""
    for var in ("GPUFOREST_CACHE", "GPUFOREST_MATRIX_DIRS", "SUITESPARSE_URL", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path


def test_cache_dir_defaults_and_overrides(isolated, monkeypatch):
    monkeypatch.setenv("HOME", str(isolated / "home"))
    assert suitesparse.cache_dir() == isolated / "home" / ".cache" / "gpuforest" / "suitesparse"
    monkeypatch.setenv("XDG_CACHE_HOME", str(isolated / "xdg"))
    assert suitesparse.cache_dir() == isolated / "xdg" / "gpuforest" / "suitesparse"
    monkeypatch.setenv("GPUFOREST_CACHE", str(isolated / "mine"))
    assert suitesparse.cache_dir() == isolated / "mine"


def test_environment_url_and_cache_with_progress_bar(isolated, server, monkeypatch, capsys):
    url, routes, hits = server
    A = sp.random(25, 25, density=0.2, random_state=1, format="csr") + sp.eye(25)
    routes["/MM/Grp/envmat.tar.gz"] = _tar_gz({"envmat/envmat.mtx": _mtx_bytes(A)})
    monkeypatch.setenv("SUITESPARSE_URL", url + "/")
    monkeypatch.setenv("XDG_CACHE_HOME", str(isolated / "xdg"))
    path = suitesparse.fetch("Grp/envmat", progress=True)
    assert path == isolated / "xdg" / "gpuforest" / "suitesparse" / "Grp" / "envmat.mtx"
    assert "download envmat" in capsys.readouterr().err  # tqdm writes to stderr
    B = matrices.get("Grp/envmat", dtype=np.float32)  # resolver goes through the same cache
    assert B.dtype == np.float32 and hits == ["/MM/Grp/envmat.tar.gz"]
    np.testing.assert_allclose(B.toarray(), A.toarray(), rtol=1e-6)


def test_archive_with_extra_files_and_nested_name(isolated, server):
    url, routes, _ = server
    A = sp.diags([1.0, 2.0, 3.0]).tocsr()
    routes["/MM/G/nest.tar.gz"] = _tar_gz({
        "nest/nest_b.mtx": _mtx_bytes(sp.eye(2)),  # the collection ships side vectors too
        "nest/nest.mtx": _mtx_bytes(A),
    })
    B = suitesparse.load("G/nest", url=url, cache=isolated / "c", progress=False)
    np.testing.assert_array_equal(B.toarray(), A.toarray())


def test_failures_leave_no_partial_files(isolated, server):
    url, routes, _ = server
    cache = isolated / "c"
    routes["/MM/G/wrong.tar.gz"] = _tar_gz({"wrong/other.mtx": _mtx_bytes(sp.eye(2))})
    with pytest.raises(ValueError, match="has no wrong.mtx"):
        suitesparse.fetch("G/wrong", url=url, cache=cache, progress=False)
    routes["/MM/G/broken.tar.gz"] = b"this is not a gzip archive"
    with pytest.raises(ValueError, match="not a valid tar.gz"):
        suitesparse.fetch("G/broken", url=url, cache=cache, progress=False)
    with pytest.raises(FileNotFoundError, match="HTTP 404"):
        suitesparse.fetch("G/absent", url=url, cache=cache, progress=False)
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_offline_message_names_the_way_out(isolated):
    with pytest.raises(ConnectionError, match="offline.*GPUFOREST_MATRIX_DIRS"):
        suitesparse.fetch("ecology1", url="http://127.0.0.1:9", cache=isolated / "c", progress=False, timeout=2)


def test_local_folders_come_first(isolated, server, monkeypatch):
    url, _, hits = server
    A = sp.random(12, 12, density=0.3, random_state=2, format="csr")
    folder = isolated / "local"
    folder.mkdir()
    (folder / "localmat.mtx.gz").write_bytes(gzip.compress(_mtx_bytes(A)))
    found = suitesparse.fetch("Any/localmat", url=url, cache=isolated / "c", local_dirs=[folder])
    assert found == folder / "localmat.mtx.gz" and hits == []
    monkeypatch.setenv("GPUFOREST_MATRIX_DIRS", str(folder))
    np.testing.assert_allclose(suitesparse.load("Any/localmat", url=url).toarray(), A.toarray())
    assert hits == []


def test_unknown_name_without_group(isolated):
    with pytest.raises(ValueError, match="group/name"):
        suitesparse.fetch("no_such_matrix_anywhere", cache=isolated / "c")
    with pytest.raises(ValueError, match="not a collection matrix name"):
        suitesparse.fetch(" / ", cache=isolated / "c")


def test_registry_entries_are_consistent():
    names = [m.name.lower() for m in suitesparse.PAPER_MATRICES + suitesparse.LOCAL_MATRICES]
    assert len(names) == len(set(names))
    for m in suitesparse.PAPER_MATRICES:
        assert m.n > 0 and m.nnz >= m.n and m.path == f"{m.group}/{m.name}"
        assert suitesparse.REGISTRY[m.name.lower()] is m
    unsym = {m.name for m in suitesparse.PAPER_MATRICES if not m.symmetric}
    assert unsym == {"atmosmodd", "atmosmodj", "atmosmodl", "atmosmodm", "ML_Geer", "Transport"}


def test_local_registry_matches_shared_files(shared_data):
    rows = {r["name"]: r for r in csv.DictReader(open(shared_data / "matrices" / "matrices.csv"))}
    assert {m.name for m in suitesparse.LOCAL_MATRICES} == set(rows)
    for m in suitesparse.LOCAL_MATRICES:
        row = rows[m.name]
        assert (m.n, m.nnz, m.symmetric) == (int(row["n"]), int(row["nnz"]), row["symmetry"] == "symmetric")
        header = matrices.mmio.mm_header(shared_data / "matrices" / f"{m.name}.mtx")
        assert (header[3] == "symmetric") == m.symmetric


def test_load_shared_matrix_by_name_without_network(shared_data, isolated):
    A = suitesparse.load("watt_1", url="http://127.0.0.1:9", cache=isolated / "c")
    assert A.shape == (1856, 1856) and A.format == "csr" and A.has_sorted_indices


def test_find_local_never_downloads(isolated, monkeypatch):
    """find_local: a local folder, then the cache, else None (the demo relies on it)."""
    monkeypatch.setenv("GPUFOREST_CACHE", str(isolated / "cache"))
    assert suitesparse.find_local("Grp/nowhere") is None
    cached = isolated / "cache" / "Grp" / "nowhere.mtx"
    cached.parent.mkdir(parents=True)
    cached.write_text("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1.0\n")
    assert suitesparse.find_local("Grp/nowhere") == cached
    local = isolated / "mine"
    local.mkdir()
    (local / "nowhere.mtx").write_text(cached.read_text())
    assert suitesparse.find_local("Grp/nowhere", local_dirs=[local]) == local / "nowhere.mtx"
