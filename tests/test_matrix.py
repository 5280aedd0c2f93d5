"""kernels.matrix: the symmetry test of a matrix's weight graph and the mirrored weights,
CPU and GPU, and the validator's errors for the passes that need canonical CSR."""
import numpy as np
import pytest
import scipy.sparse as sp

import matrices
import precond
from helpers import mirror_cases, one_sided_lower, random_symmetric


def test_weights_symmetric_matches_transpose_test(rng):
    from kernels.matrix import weights_symmetric
    from kernels.graph import is_symmetric, offdiag_abs

    cases = [random_symmetric(rng, N=80), matrices.aniso2(12), matrices.convection_diffusion3d(4)]
    B = random_symmetric(rng, N=50)
    B = B.tolil()
    B[3, 7] = -B[3, 7] if B[3, 7] else 2.0  # |a_37| == |a_73| still, or a new one-sided entry
    cases.append(B.tocsr())
    C = random_symmetric(rng, N=50).tocsr()
    C.data[C.indices != np.repeat(np.arange(50), np.diff(C.indptr))] *= -1  # signs do not matter
    cases.append(C)
    D = random_symmetric(rng, N=50).tocsr()
    D.data[5] = 0.0  # explicit zero: dropped from the graph, so the mirror entry breaks symmetry
    cases.append(D)
    cases += one_sided_lower(rng)
    for A in cases:
        A = A.tocsr()
        A.sum_duplicates()
        symmetric = weights_symmetric(A)
        assert type(symmetric) is bool  # a plain bool (JSON, identity tests)
        assert symmetric == is_symmetric(offdiag_abs(A))


def test_mirror_weights_equal_weight_graph(rng):
    from kernels.factor import parallel_factor
    from kernels.matrix import mirror_weights
    from kernels.graph import offdiag_abs

    for A in mirror_cases(rng):
        A.sum_duplicates()
        W = mirror_weights(A)
        pattern = (A != 0).toarray()
        np.fill_diagonal(pattern, False)
        stored = np.zeros_like(pattern)
        stored[np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)), A.indices] = True
        if (pattern & ~stored.T).any():  # a nonzero without a stored mirror
            assert W is None
            continue
        ref = abs(A.toarray())
        np.fill_diagonal(ref, 0)
        np.testing.assert_array_equal(W.toarray(), ref + ref.T)
        # the factor through the pattern route equals the factor of the weight graph built
        # by a transpose and a sum
        S = offdiag_abs(A)
        S = (S + S.T).tocsr()
        S.sort_indices()
        f = precond.factor(A, n=2, iterations=7, m=3)
        p, w, used = parallel_factor(S, 2, 7, 3, 0, 0.5, 0)
        np.testing.assert_array_equal(f.neighbors, p)
        np.testing.assert_array_equal(f.weights, w)


def test_weight_passes_reject_bad_input():
    from kernels.factor import mirror_factor_rounds
    from kernels.matrix import mirror_weights, weights_symmetric

    A = matrices.convection_diffusion3d(4).tocsr()
    dup = sp.csr_matrix((np.ones(3), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))  # duplicate entry
    for f in (mirror_weights, weights_symmetric, mirror_factor_rounds):
        with pytest.raises(ValueError, match="square CSR"):
            f(A[:, :-1])
        with pytest.raises(ValueError, match="square CSR"):
            f(A.tocoo())
        with pytest.raises(TypeError, match="float32 or float64"):
            f(A.astype(np.int64))
        with pytest.raises(ValueError, match="duplicates"):
            f(dup)
    from kernels.factor import weight_source

    with pytest.raises(TypeError, match="sparse"):
        weight_source(np.eye(3))
    with pytest.raises(ValueError, match="square"):
        weight_source(A[:, :-1])


@pytest.mark.gpu
def test_mirror_weights_gpu(rng):
    from kernels.backend import to_device
    from kernels.matrix import mirror_weights

    for A in mirror_cases(rng):
        A.sum_duplicates()
        cpu, gpu = mirror_weights(A), mirror_weights(to_device(A))
        assert (cpu is None) == (gpu is None)
        if cpu is not None:
            np.testing.assert_array_equal(gpu.data.get(), cpu.data)


@pytest.mark.gpu
def test_weights_symmetric_gpu(rng):
    from kernels.backend import to_device
    from kernels.matrix import weights_symmetric

    for A in [random_symmetric(rng, N=500), matrices.convection_diffusion3d(8), matrices.aniso3(40)] + one_sided_lower(rng):
        A = A.tocsr()
        A.sum_duplicates()
        assert weights_symmetric(to_device(A)) == weights_symmetric(A)
