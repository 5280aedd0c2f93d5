"""GPU kernels of the distributed layer, one process: the fused dot products of the
device-resident iteration and the clique search's order from parallel peeling rounds."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_multi_dot_matches_numpy(dtype):
    import cupy

    from kernels.multidot import multi_dot

    rng = np.random.default_rng(0)
    for n in (1, 31, 1000, 300_001):
        vs = [rng.standard_normal(n).astype(dtype) for _ in range(3)]
        d = [cupy.asarray(v) for v in vs]
        pairs = [(0, 1), (0, 0), (1, 1), (2, 1), (2, 0)]
        for k in range(1, 6):
            got = multi_dot([(d[i], d[j]) for i, j in pairs[:k]]).get()
            want = np.array([np.dot(vs[i].astype(np.float64), vs[j].astype(np.float64)) for i, j in pairs[:k]])
            tol = 1e-12 if dtype == np.float64 else 1e-5
            assert got.dtype == dtype and np.allclose(got, want, rtol=tol, atol=tol * n), (n, k, got, want)
    empty = cupy.zeros(0, dtype)
    assert multi_dot([(empty, empty)]).get().tolist() == [0.0]
    with pytest.raises(ValueError):
        multi_dot([(d[0], d[1])] * 6)


def _graphs():
    import networkx as nx

    from graphkit import generators as gen
    from graphkit.convert import as_graph

    yield gen.rmat(12, 8, 0.45, 0.15, 0.15, seed=1)
    yield as_graph(nx.gnm_random_graph(500, 4000, seed=2))
    yield as_graph(nx.complete_graph(30))
    yield as_graph(nx.empty_graph(7))
    yield as_graph(nx.path_graph(200))


@pytest.mark.gpu
def test_peeling_order_is_bounded_by_the_core_numbers():
    import cupy

    from kernels.cliques.degeneracy import degeneracy_order, later_counts
    from kernels.cliques.peel_gpu import later_counts_device, peeling_order

    for G in _graphs():
        indptr = np.asarray(G.indptr, np.int64)
        indices = np.asarray(G.indices, np.int64)
        rank, core = peeling_order(indptr, indices.astype(np.int32))
        rank, core = rank.get(), core.get()
        assert sorted(rank.tolist()) == list(range(G.n))
        _, ref = degeneracy_order(indptr, indices)
        assert np.array_equal(core, ref)  # the core numbers
        later = later_counts(indptr, indices, rank)
        assert np.all(later <= core)
        assert np.array_equal(later_counts_device(indptr, indices, cupy.asarray(rank)).get(), later)


@pytest.mark.gpu
def test_device_ordered_gpu_count_equals_the_cpu_count():
    import graphkit
    from kernels.cliques.mce_gpu import mce_count_gpu

    for G in _graphs():
        ref = graphkit.count_maximal_cliques(G, device="cpu").histogram
        for share in (None, 2):
            if share is None:
                hist = mce_count_gpu(G, ordering="device")
            else:
                parts = [mce_count_gpu(G, share=(i, share), ordering="device") for i in range(share)]
                width = max(len(p) for p in parts)
                hist = sum(np.pad(p, (0, width - len(p))) for p in parts)
            nz = np.nonzero(hist)[0]
            hist = hist[:nz[-1] + 1] if len(nz) else hist[:1]
            assert np.array_equal(hist, ref[:len(hist)]) and hist.sum() == ref.sum(), (G.n, share, hist, ref)
