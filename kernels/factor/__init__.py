"""[0,n]-factors of weighted graphs and sparse matrices.

A [0,n]-factor keeps at most ``n`` partners per vertex, preferring heavy edges: with
``n = 1`` a matching, with ``n = 2`` paths and cycles (the linear forest's input,
:mod:`kernels.forest`).

==============================  ======================================================
:func:`factor`                  the factor of a matrix (:class:`Factor`): the policy
:func:`greedy_factor`           Algorithm 1, sequential, the quality reference
:func:`weight_coverage`         share of the off-diagonal weight on a factor or forest
:func:`identity_coverage`       the same for the tridiagonal part in the original order
:func:`factor_rounds`           Algorithm 2's rounds on a weight graph, nothing read back
:func:`parallel_factor`         the same, returning the rounds used
:func:`mirror_factor_rounds`    the rounds on ``A' + A'^T`` on ``A``'s own pattern
:func:`greedy_factor_cpu`       Algorithm 1 on a weight graph
==============================  ======================================================

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithms 1 and 2.
"""
from .build import factor, greedy_factor, weight_source
from .coverage import identity_coverage, weight_coverage
from .greedy import greedy_factor_cpu
from .result import Factor, check_factor_of
from .rounds import (charge_threshold, factor_rounds, is_maximal, mirror_factor_rounds, parallel_factor, rounds_used,
                     run_factor_rounds)
from .rounds_cpu import MAX_N, confirm_cpu, factor_rounds_cpu, propose_cpu
from .rounds_gpu import (FIRST_PROPOSAL_THREADS_PER_SM, OPEN_ROUNDS_THREADS_PER_SM, OPEN_ROUNDS_THREADS_PER_SM_SLOTTED,
                         ROW_SLOT_ENTRIES, SAMPLE_ROWS, WARP_KERNEL_THREADS_PER_SM, WARP_ROW_LENGTH, ProposalBuffers,
                         ProposalLayout, factor_rounds_gpu, proposal_buffers, proposal_layout)

__all__ = ["Factor", "check_factor_of", "factor", "greedy_factor", "weight_source", "weight_coverage", "identity_coverage",
           "greedy_factor_cpu", "charge_threshold", "factor_rounds", "run_factor_rounds", "mirror_factor_rounds",
           "parallel_factor", "rounds_used", "is_maximal", "factor_rounds_cpu", "factor_rounds_gpu", "propose_cpu",
           "confirm_cpu", "proposal_layout", "proposal_buffers", "ProposalLayout", "ProposalBuffers", "MAX_N",
           "WARP_ROW_LENGTH", "FIRST_PROPOSAL_THREADS_PER_SM", "WARP_KERNEL_THREADS_PER_SM",
           "OPEN_ROUNDS_THREADS_PER_SM", "OPEN_ROUNDS_THREADS_PER_SM_SLOTTED", "SAMPLE_ROWS", "ROW_SLOT_ENTRIES"]
