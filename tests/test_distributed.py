"""precond.distributed and graphkit.distributed_cliques under ``mpiexec -n 2`` and ``-n 3``.

The pytest functions spawn ``mpiexec -n P python tests/test_distributed.py CASE`` (with a
timeout: a hang fails the test instead of blocking CI); the same file, run as a program,
holds the cases, which compare every distributed result with the serial one on each rank
and print ``OK`` from rank 0. Skipped where mpi4py or ``mpiexec`` is missing.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]


def _mpiexec():
    """``mpiexec`` beside this Python (the ``mpich`` wheel installs it there) or on PATH."""
    if importlib.util.find_spec("mpi4py") is None:
        return None
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec")


# MPICH yields the core while it waits (CI has 2 cores for up to 3 ranks); one BLAS thread
# per rank (threads of several ranks spinning on the same cores slow every dot product)
_RANK_ENV = {"MPIR_CVAR_ENABLE_HEAVY_YIELD": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _working_mpiexec():
    """The launcher, if it starts a rank whose mpi4py loads an MPI library (an ``mpiexec``
    on PATH beside an mpi4py without a loadable library, or of another MPI, is no MPI)."""
    launcher = _mpiexec()
    if launcher is None:
        return None, "mpi4py or mpiexec not installed (pip install '.[mpi]')"
    env = dict(os.environ, **_RANK_ENV, CUDA_VISIBLE_DEVICES="")
    try:
        proc = subprocess.run([launcher, "-n", "1", sys.executable, "-c",
                               "from mpi4py import MPI; MPI.COMM_WORLD.Barrier(); print('MPI OK')"],
                              capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{launcher} does not start a rank: {exc}"
    if "MPI OK" not in proc.stdout:
        return None, f"{launcher} cannot run mpi4py: {(proc.stderr or proc.stdout).strip()[-300:]}"
    return launcher, ""


MPIEXEC, _NO_MPI = _working_mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason=_NO_MPI)


def spawn(n, *args, timeout=180, expect_ok=True, gpu=False):
    """Run ``mpiexec -n n python <this file> *args``; returns (returncode, stdout, stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(_RANK_ENV)
    if not gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU tests
    env["PYTHONUNBUFFERED"] = "1"
    cmd = [MPIEXEC, "-n", str(n), sys.executable, str(Path(__file__).resolve()), *map(str, args)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"mpiexec -n {n} {' '.join(map(str, args))} hung for {timeout} s\n{out}\n{err}")
    if expect_ok:
        assert proc.returncode == 0 and "OK" in out, f"rc {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    return proc.returncode, out, err


# --- pytest side ---------------------------------------------------------------------------
@needs_mpi
def test_two_ranks_products_solves_readers_cliques(tmp_path):
    spawn(2, "main", tmp_path)


@needs_mpi
def test_three_ranks_odd_splits_and_cliques(tmp_path):
    spawn(3, "odd", tmp_path)


@needs_mpi
def test_bad_input_on_one_rank_raises_on_every_rank():
    spawn(3, "bad_input")


@needs_mpi
@pytest.mark.gpu
def test_one_gpu_rank_resident_solve_nccl_and_clique_orders():
    spawn(1, "gpu_one", timeout=300, gpu=True)


def _gpu_count():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy or no driver
        return 0


@needs_mpi
@pytest.mark.gpu
@pytest.mark.skipif(_gpu_count() < 2, reason="needs two GPUs")
def test_two_gpu_ranks_replay_nccl_in_a_cuda_graph_and_free():
    spawn(2, "gpu_two", timeout=300, gpu=True)


@needs_mpi
def test_uncaught_error_on_one_rank_aborts_all_ranks():
    t0 = time.perf_counter()
    rc, out, err = spawn(2, "crash", timeout=120, expect_ok=False)
    assert rc != 0
    assert "rank 1 of 2: error: ValueError: rank 1 cannot go on" in err
    assert time.perf_counter() - t0 < 110


@needs_mpi
def test_command_line_program(tmp_path):
    import json

    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="", **_RANK_ENV)
    cmd = [MPIEXEC, "-n", "2", sys.executable, "-m", "precond.distributed", "--matrix", "aniso2", "--n", "40",
           "--precond", "jacobi", "algebraic_tridiagonal", "--rtol", "1e-10", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "| algebraic_tridiagonal | bicgstab |" in proc.stdout
    result = json.loads((tmp_path / "distributed.json").read_text())
    assert result["ranks"] == 2 and result["rows"] == 1600
    import matrices
    from precond.study import true_solution

    A = matrices.aniso2(40)
    for row in result["results"]:
        assert row["converged"] and row["relative_residual"] < 1e-9
        assert set(row["times"]) >= {"setup", "solve", "per_iteration"}
        x = np.load(row["solution"])
        assert np.linalg.norm(A @ x - A @ true_solution(1600)) < 1e-9 * np.linalg.norm(A @ true_solution(1600))
    # a broken matrix file: every rank stops with rank 0's message, no hang
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 2.0\n")
    cmd[cmd.index("aniso2")] = str(bad)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode != 0
    assert "unreadable entry" in proc.stderr and "rank 0" in proc.stderr


def test_partition_and_stencil_rows_without_mpi():
    import matrices
    from matrices.generators import ANISO1_STENCIL
    from precond.distributed.matrix import partition_rows
    from precond.distributed.problems import stencil_rows_2d

    assert partition_rows(10, 3).tolist() == [0, 4, 7, 10]
    assert partition_rows(0, 2).tolist() == [0, 0, 0]
    w = np.r_[np.full(5, 10.0), np.ones(5)]
    starts = partition_rows(10, 2, weights=w)
    assert starts[0] == 0 and starts[-1] == 10 and 2 <= starts[1] <= 4
    A = matrices.aniso1(9)
    for lo, hi in [(0, 81), (0, 0), (5, 40), (72, 81)]:
        B = stencil_rows_2d(ANISO1_STENCIL, 9, lo, hi)
        assert B.shape == (hi - lo, 81) and abs(A[lo:hi] - B).max() == 0 if hi > lo else B.nnz == 0


def test_clique_chunks_cover_the_queue():
    from graphkit.distributed_cliques import _chunks

    costs = np.r_[np.full(3, 500), np.zeros(1000, np.int64)]
    b = _chunks(costs, 4)
    assert b[0] == 0 and b[-1] == len(costs) and np.all(np.diff(b) > 0)
    assert b[1] <= 3  # the expensive sub-problems go out one chunk at a time
    assert _chunks(np.zeros(0), 2).tolist() == [0]


# --- MPI side ------------------------------------------------------------------------------
def _check_product(A, A_dist, rng):
    x = rng.standard_normal(A.shape[0])
    y = A_dist.gather(A_dist @ A_dist.local_vector(x))
    if A_dist.comm.rank == 0:
        assert np.allclose(y, A @ x, rtol=1e-13, atol=1e-13), np.abs(y - A @ x).max()


def _check_solves(A, A_dist, locals_, rtol=1e-10, symmetric=True):
    from precond import distributed as dist

    xt = np.sin(np.arange(A.shape[0]) / 7.0)
    b = A @ xt
    bl = A_dist.local_vector(b)
    for local in locals_:
        M = dist.block_jacobi(A_dist, local)
        for method in (dist.bicgstab, dist.cg) if symmetric else (dist.bicgstab,):
            hist = []
            x, info = method(A_dist, bl, rtol=rtol, M=M, residuals=hist, maxiter=2000)
            assert info == 0, (local, method.__name__, info)
            full = A_dist.gather(x)
            if A_dist.comm.rank == 0:
                assert np.linalg.norm(b - A @ full) <= 1.01 * rtol * np.linalg.norm(b), (local, method.__name__)
                assert np.allclose(full, xt, atol=1e-6), (local, method.__name__)
                assert abs(hist[-1] - np.linalg.norm(b - A @ full)) <= 1e-3 * np.linalg.norm(b) * rtol + 1e-12
    # the device-resident iteration's steps (on the CPU: NumPy scalars, MPI sums), checked
    # every few iterations: converges as far, measured on the true residual
    for local in locals_[:2]:
        for method in (dist.bicgstab, dist.cg) if symmetric else (dist.bicgstab,):
            st = {}
            x, info = method(A_dist, bl, rtol=rtol, M=dist.block_jacobi(A_dist, local), maxiter=2000,
                             check_every=3, stats=st)
            full = A_dist.gather(x)
            assert info == 0 and st["resident"], (local, method.__name__, info, st)
            if A_dist.comm.rank == 0:
                assert np.linalg.norm(b - A @ full) <= 1.01 * rtol * np.linalg.norm(b), (local, method.__name__)
    x, info = dist.bicgstab(A_dist, A_dist.zeros(), rtol=1e-8)
    assert info == 0 and not np.any(x)


def _serial_cliques(G):
    import graphkit

    return graphkit.count_maximal_cliques(G, device="cpu"), sorted(
        tuple(c.tolist()) for c in graphkit.maximal_cliques(G, device="cpu"))


def _check_cliques(comm, G):
    from graphkit.distributed_cliques import count_maximal_cliques_mpi, maximal_cliques_mpi

    res = count_maximal_cliques_mpi(G if comm.rank == 0 else None, device="cpu")
    mine = [tuple(c.tolist()) for c in maximal_cliques_mpi(G)]
    parts = comm.gather(mine, root=0)
    ref, ref_list = _serial_cliques(G)
    assert res.count == ref.count and np.array_equal(res.histogram, ref.histogram), (res, ref)
    if comm.rank == 0:
        found = [c for p in parts for c in p]
        assert len(found) == len(set(found)) and sorted(found) == ref_list


def case_main(tmp):
    import matrices
    from graphkit import generators as gen
    from precond import distributed as dist

    comm = dist.world()
    assert comm.size == 2
    rng = np.random.default_rng(3)
    A = matrices.aniso2(30)
    # scattered from rank 0, built from each rank's own rows, and built per rank from the stencil
    D1 = dist.DistributedCSR.from_global(A if comm.rank == 0 else None, device="cpu")
    lo, hi = D1.lo, D1.hi
    D2 = dist.DistributedCSR.from_local_rows(A[lo:hi], device="cpu")
    D3 = dist.distributed_matrix("aniso2", 30, device="cpu")
    for D in (D1, D2, D3):
        _check_product(A, D, rng)
    assert len(D1.exchange.neighbours) == 1 and len(D1.ghost_cols) == 30
    _check_solves(A, D1, ["jacobi", "algebraic_tridiagonal", "algebraic_block_tridiagonal", "amg", "none"])
    # the iteration cap gives SciPy's info code (the number of iterations) on every rank
    for method in (dist.bicgstab, dist.cg):
        assert method(D1, D1.ones(), rtol=1e-14, maxiter=3)[1] == 3
    # CUDA graphs need GPU ranks on NCCL (or one GPU rank)
    for method in (dist.bicgstab, dist.cg):
        try:
            method(D1, D1.ones(), cuda_graph=True)
        except ValueError as exc:
            assert "cuda_graph" in str(exc)
        else:
            raise AssertionError("cuda_graph=True on CPU ranks")
    # freeing releases the persistent requests on every rank; the context manager frees too
    with dist.distributed_matrix("aniso2", 30, device="cpu") as D4:
        _check_product(A, D4, rng)
    assert D4.exchange is None and "freed" in repr(D4)
    D2.free()
    D2.free()
    # a non-symmetric matrix with random entries, read from Matrix Market files by byte ranges
    import scipy.io

    R = (sp.random(200, 200, density=0.05, random_state=4, format="csr") + 10 * sp.eye(200)).tocsr()
    S = (R + R.T).tocsr()
    path = Path(tmp)
    if comm.rank == 0:
        scipy.io.mmwrite(path / "r.mtx", R)
        scipy.io.mmwrite(path / "s.mtx", S, symmetry="symmetric")
        import gzip

        (path / "s.mtx.gz").write_bytes(gzip.compress((path / "s.mtx").read_bytes()))
    comm.Barrier()
    for name, M in (("r.mtx", R), ("s.mtx", S), ("s.mtx.gz", S)):
        D = dist.read_matrix_market(path / name, device="cpu")
        assert D.nnz == M.nnz, (name, D.nnz, M.nnz)
        _check_product(M, D, rng)
    _check_solves(R, dist.read_matrix_market(path / "r.mtx", device="cpu"), ["jacobi"], symmetric=False)
    # complex values (file and solve) and a pattern file
    C = (matrices.poisson2d(12) + 1j * sp.random(144, 144, density=0.02, random_state=1)).tocsr()
    if comm.rank == 0:
        scipy.io.mmwrite(path / "c.mtx", C)
        scipy.io.mmwrite(path / "p.mtx", (abs(R) > 0).astype(float).tocsr(), field="pattern")
    comm.Barrier()
    DC = dist.read_matrix_market(path / "c.mtx", device="cpu")
    assert DC.dtype == np.complex128
    _check_product(C, DC, rng)
    xt = np.exp(1j * np.arange(144) / 9)
    x, info = dist.bicgstab(DC, DC.local_vector(C @ xt), rtol=1e-10, M=dist.block_jacobi(DC, "jacobi"))
    full = DC.gather(x)
    assert info == 0 and (comm.rank or np.abs(full - xt).max() < 1e-7)
    _check_product((abs(R) > 0).astype(float), dist.read_matrix_market(path / "p.mtx", device="cpu"), rng)
    _check_cliques(comm, gen.rmat(10, 4, 0.45, 0.15, 0.15, seed=1))


def case_odd(tmp):
    import matrices
    from graphkit import generators as gen
    from precond import distributed as dist

    comm = dist.world()
    assert comm.size == 3
    rng = np.random.default_rng(5)
    A = matrices.poisson2d(12)
    N = A.shape[0]
    # rank 1 owns no rows
    D = dist.DistributedCSR.from_global(A if comm.rank == 0 else None, row_starts=[0, 70, 70, N], device="cpu")
    assert D.n_local == (0 if comm.rank == 1 else {0: 70, 2: N - 70}[comm.rank])
    _check_product(A, D, rng)
    _check_solves(A, D, ["jacobi", "algebraic_tridiagonal"])
    # an arrow matrix: rank 1's middle row couples to every column, so rank 1 holds every
    # other rank's column as a ghost and every rank sends to it
    n = 90
    k = 45
    arrow = sp.lil_matrix((n, n))
    arrow.setdiag(4.0)
    arrow[k, :] = 1.0 / n
    arrow[:, k] = 1.0 / n
    arrow[k, k] = 4.0
    arrow = arrow.tocsr()
    D = dist.DistributedCSR.from_global(arrow if comm.rank == 0 else None, device="cpu")
    if comm.rank == 1:
        assert len(D.ghost_cols) == n - D.n_local
    _check_product(arrow, D, rng)
    _check_solves(arrow, D, ["jacobi", "algebraic_block_tridiagonal"])
    # every rank but the last without rows; and more ranks than... one row each at the end
    D = dist.DistributedCSR.from_global(A if comm.rank == 0 else None, row_starts=[0, 0, N - 1, N], device="cpu")
    _check_product(A, D, rng)
    _check_cliques(comm, gen.kronecker(9, 4, seed=2))
    import networkx as nx

    _check_cliques(comm, nx.complete_graph(5))  # fewer sub-problems with candidates than ranks
    # labelled input given on rank 0 only: the other ranks get the labels with the graph
    from graphkit.distributed_cliques import maximal_cliques_mpi

    L = nx.relabel_nodes(nx.karate_club_graph(), {i: f"v{i}" for i in range(34)})
    mine = [tuple(c.tolist()) for c in maximal_cliques_mpi(L if comm.rank == 0 else None, device="cpu")]
    found = comm.gather(mine, root=0)
    if comm.rank == 0:
        ref = sorted(tuple(sorted(c)) for c in nx.find_cliques(L))
        assert sorted(tuple(sorted(c)) for part in found for c in part) == ref


def case_bad_input(tmp):
    from precond import distributed as dist

    comm = dist.world()
    A = sp.random(10, 30, density=0.2, random_state=comm.rank, format="csr") + sp.eye(10, 30, 10 * comm.rank)
    if comm.rank == 1:
        A.data[0] = np.nan
    A = sp.csr_matrix(A)
    for bad, expect in ((A, "rank 1: ValueError: 1 NaN or infinite entry"),
                        (A[:4] if comm.rank == 2 else A.copy(), "rows add up to")):
        if comm.rank == 1 and bad is not A:
            bad.data[0] = 1.0
        try:
            dist.DistributedCSR.from_local_rows(bad, device="cpu")
        except dist.DistributedError as exc:
            assert expect in str(exc), str(exc)
        else:
            raise AssertionError("no error")
    A.data[~np.isfinite(A.data)] = 1.0
    D = dist.DistributedCSR.from_local_rows(sp.csr_matrix(A + 30 * sp.eye(10, 30, 10 * comm.rank)), device="cpu")
    b = D.ones() if comm.rank != 2 else np.ones(D.n_local + 1)
    try:
        dist.bicgstab(D, b)
    except dist.DistributedError as exc:
        assert exc.ranks == (2,) and "does not match the 10 local rows" in str(exc), str(exc)
    else:
        raise AssertionError("no error")
    try:
        dist.block_jacobi(D, "no_such_solver")
    except dist.DistributedError as exc:
        assert "unknown local solver" in str(exc)
    else:
        raise AssertionError("no error")
    try:
        dist.DistributedCSR.from_local_rows(sp.csr_matrix(A + 30 * sp.eye(10, 30, 10 * comm.rank)), device="cpu",
                                            transport="pigeon")
    except dist.DistributedError as exc:
        assert "transport must be" in str(exc), str(exc)
    else:
        raise AssertionError("no error")
    from graphkit.distributed_cliques import count_maximal_cliques_mpi

    try:
        count_maximal_cliques_mpi(np.ones((3, 3)) - np.eye(3), device="cpu", ordering="random")
    except dist.DistributedError as exc:
        assert "ordering must be" in str(exc), str(exc)
    else:
        raise AssertionError("no error")
    try:
        dist.bicgstab(D, D.ones(), check_every=0)
    except ValueError as exc:
        assert "check_every" in str(exc)
    else:
        raise AssertionError("no error")


def case_gpu_one(tmp):
    """One GPU rank: the device-resident BiCGStab (fused dot products, device scalars),
    NCCL asked for explicitly (a communicator of one), and both clique orders."""
    import graphkit
    import matrices
    from graphkit import generators as gen
    from graphkit.distributed_cliques import count_maximal_cliques_mpi
    from precond import distributed as dist

    A = matrices.aniso2(64)
    xt = np.sin(np.arange(A.shape[0]) / 7.0)
    b = A @ xt
    for transport, dtype, rtol in (("auto", np.float64, 1e-10), ("nccl", np.float64, 1e-10),
                                   ("auto", np.float32, 1e-4)):
        D = dist.distributed_matrix("aniso2", 64, device="gpu", transport=transport, dtype=dtype)
        assert D.device == "gpu" and D.transport == ("nccl" if transport == "nccl" else "mpi")
        if dtype == np.float64:
            _check_product(A, D, np.random.default_rng(1))
        st = {}
        x, info = dist.bicgstab(D, D.local_vector(b).astype(dtype), rtol=rtol, stats=st,
                                M=dist.block_jacobi(D, "algebraic_tridiagonal"), maxiter=3000)
        full = D.gather(x).astype(np.float64)
        # replays start with the second block of check_every (8) iterations
        assert info == 0 and st["resident"] and st["cuda_graph"] == (st["iterations"] > 8), (transport, dtype, st)
        assert np.linalg.norm(b - A @ full) <= 1.5 * rtol * np.linalg.norm(b), (transport, dtype)
        # the replayed graph and the kernels launched one by one: the same iteration
        st_plain = {}
        x2, info = dist.bicgstab(D, D.local_vector(b).astype(dtype), rtol=rtol, stats=st_plain, cuda_graph=False,
                                 M=dist.block_jacobi(D, "algebraic_tridiagonal"), maxiter=3000)
        assert info == 0 and not st_plain["cuda_graph"] and st_plain["resident"]
        assert abs(st_plain["iterations"] - st["iterations"]) <= 8, (st, st_plain)
        for stats in (st, st_plain):  # replays count their reductions too
            its = stats["iterations"]
            assert 2 * its <= stats["allreduces"] <= 2 * its + its // 8 + 3, stats
        x, info = dist.cg(D, D.local_vector(b).astype(dtype), rtol=rtol, stats=st,
                          M=dist.block_jacobi(D, "jacobi"), maxiter=3000)
        full = D.gather(x).astype(np.float64)
        assert info == 0 and st["resident"] and st["cuda_graph"] == (st["iterations"] > 8), ("cg", transport, st)
        assert np.linalg.norm(b - A @ full) <= 1.5 * rtol * np.linalg.norm(b), ("cg", transport, dtype)
        D.free()  # destroys the NCCL communicators; a freed matrix refuses to multiply
        assert D.nccl is None and "freed" in repr(D)
        try:
            D @ D.ones()
        except RuntimeError as exc:
            assert "freed" in str(exc)
        else:
            raise AssertionError("a freed matrix multiplied")
        D.free()
    G = gen.rmat(12, 8, 0.45, 0.15, 0.15, seed=1)
    ref = graphkit.count_maximal_cliques(G, device="cpu")
    for ordering in ("device", "host"):
        res = count_maximal_cliques_mpi(G, device="gpu", ordering=ordering)
        assert res.count == ref.count and np.array_equal(res.histogram, ref.histogram), (ordering, res, ref)


def case_gpu_two(tmp):
    """Two GPU ranks with NCCL: BiCGStab and CG replay their iterations (NCCL's kernels
    inside) from a CUDA graph, agree with the serial solution, and ``free()`` then
    destroys the communicators at once (NCCL waits for every graph that captured its
    kernels: a graph kept alive past the solve made it wait forever)."""
    import matrices
    from precond import distributed as dist

    A = matrices.aniso2(96)
    xt = np.sin(np.arange(A.shape[0]) / 7.0)
    b = A @ xt
    D = dist.distributed_matrix("aniso2", 96, device="gpu", transport="nccl")
    assert D.transport == "nccl"
    _check_product(A, D, np.random.default_rng(2))
    for solver, precond_name in ((dist.bicgstab, "algebraic_tridiagonal"), (dist.cg, "jacobi")):
        st = {}
        x, info = solver(D, D.local_vector(b), rtol=1e-10, stats=st, M=dist.block_jacobi(D, precond_name),
                         maxiter=3000)
        full = D.gather(x)  # on rank 0
        assert info == 0 and st["resident"] and st["cuda_graph"] and st["iterations"] > 8, (solver, st)
        if full is not None:
            assert np.linalg.norm(b - A @ full) <= 1.5e-10 * np.linalg.norm(b), solver
    t0 = time.perf_counter()
    D.free()
    assert time.perf_counter() - t0 < 10 and D.nccl is None


def case_crash(tmp):
    from precond import distributed as dist

    @dist.abort_on_error
    def program():
        comm = dist.world()
        if comm.rank == 1:
            raise ValueError("rank 1 cannot go on")
        comm.Barrier()  # rank 0 would wait here forever without the abort

    program()


if __name__ == "__main__":
    case, tmp = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
    from kernels.mpi import abort_on_error, world

    abort_on_error(globals()[f"case_{case}"])(tmp)
    world().Barrier()
    if world().rank == 0:
        print("OK", flush=True)
