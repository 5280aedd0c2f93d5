"""Test matrices shared by the tests of kernels.factor and kernels.matrix."""
import numpy as np
import scipy.sparse as sp

import matrices


def random_symmetric(rng, N=60, density=0.1, ties=False):
    """A random symmetric matrix with a heavy diagonal (``ties``: few distinct values)."""
    A = sp.random(N, N, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    if ties:
        A.data = np.round(A.data * 3) + 1
    A = A + A.T + sp.eye(N) * 10
    return A.tocsr()


def one_sided_lower(rng):
    """Matrices whose only asymmetry lies below the diagonal (an entry without a mirror, a
    mirror that is an explicit zero): the upper entries alone do not reveal it."""
    E = random_symmetric(rng, N=60).tolil()
    E[41, 2], E[2, 41] = 3.0, 0.0
    F = random_symmetric(rng, N=60).tolil()
    F[50, 7], F[7, 50] = 1.5, 0.0
    F = F.tocsr()
    F.sum_duplicates()
    F.data[(F.indices == 50) & (np.repeat(np.arange(60), np.diff(F.indptr)) == 7)] = 0.0
    return [E.tocsr(), F]


def mirror_cases(rng):
    """Unsymmetric values on symmetric patterns, and patterns that are not symmetric."""
    cd = matrices.convection_diffusion3d(6)
    R = sp.random(80, 80, density=0.05, random_state=int(rng.integers(1 << 30)), format="csr")
    P = (R + R.T + sp.eye(80)).tocsr()
    P.data = rng.standard_normal(P.nnz)  # symmetric pattern, unsymmetric values
    Z = P.copy()
    Z.data[:5] = 0  # explicit zeros on a symmetric pattern
    return [cd, P, Z, (R + sp.eye(80)).tocsr()]


_SIGNATURES = """
import sys, numba
def _signatures():
    return {(m, k): len(v.signatures) for m, mod in list(sys.modules.items())
            if m.startswith(("kernels", "graphkit"))
            for k, v in vars(mod).items() if isinstance(v, numba.core.registry.CPUDispatcher)}
"""


def compiled_during(warm_up: str, work: str, *args) -> list:
    """Run the Python source ``warm_up``, then ``work``, in a fresh interpreter (``args``
    in its ``sys.argv[1:]``) and return the Numba functions of kernels and graphkit that
    gained a compiled signature during ``work``: empty when the warm-up compiled (or
    loaded) everything the work reaches, so that a time limit never pays for compiling."""
    import ast
    import subprocess
    import sys

    code = (_SIGNATURES + warm_up + "\n_before = _signatures()\n" + work
            + "\nprint(sorted(k for k, c in _signatures().items() if c != _before.get(k, 0)))\n")
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                         check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])
