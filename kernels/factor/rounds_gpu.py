"""The GPU rounds of the parallel factor (``kernels/cuda/factor.cu``).

Round 0 covers every row: a sample of rows is tested for symmetry first (a checked
factor), then the first proposal reads the rows (and tests the matrix while it does),
and the first confirm lists the rows it leaves open. The later rounds run over the open
rows in one cooperative launch. The host queues the rounds without waiting for them: it
reads nothing back (the round flags are read by :func:`kernels.factor.rounds_used` when
asked). The result equals the CPU twin's (:mod:`kernels.factor.rounds_cpu`).

References
----------
.. [1] C. Klein and R. Strzodka, "Highly Parallel Linear Forest Extraction from a
   Weighted Graph on GPUs", Proceedings of the 51st International Conference on Parallel
   Processing (ICPP '22), ACM, 2022, Algorithm 2 and Section 4.1.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ..backend import EarlyRead, small_zeros
from ..matrix import ROW_THREADS, MatrixCheck, check_flags
from ..nvrtc import get_kernel, kernel_int, launch_cooperative, row_grid

__all__ = ["factor_rounds_gpu", "proposal_layout", "proposal_buffers", "ProposalLayout", "ProposalBuffers",
           "WARP_ROW_LENGTH", "FIRST_PROPOSAL_THREADS_PER_SM", "WARP_KERNEL_THREADS_PER_SM",
           "OPEN_ROUNDS_THREADS_PER_SM", "OPEN_ROUNDS_THREADS_PER_SM_SLOTTED", "SAMPLE_ROWS", "SAMPLE_THREADS", "ROW_SLOT_ENTRIES"]

#: Mean row length from which the proposals use one warp per row: below it a thread per
#: row is faster, above it a warp's lanes share a long row.
WARP_ROW_LENGTH = 96
#: Threads per SM of the grid of the thread-per-row first proposal (grid-stride over the
#: rows): more blocks than fit at once, each with fewer rows, but not one thread per row.
FIRST_PROPOSAL_THREADS_PER_SM = 8192
#: Resident threads per SM of the warp-per-row first proposal (grid-stride over the rows):
#: one block per 128 rows would make the fused check's per-warp atomics millions.
WARP_KERNEL_THREADS_PER_SM = 2048
#: Resident threads per SM of the later rounds (one cooperative launch over the open
#: rows' lists), whose gathers from arrays larger than L2 are bound by the caches, not by
#: latency: fewer threads than the row kernels' default.
OPEN_ROUNDS_THREADS_PER_SM = 768
#: The same where the rounds read the rows' slots (``ROW_SLOT_ENTRIES``): one sector per
#: listed row leaves room for more resident threads. The host chooses the grid before the
#: sample check has run: where the sample sends the rounds to ``A' + A'^T`` (the slots then
#: unread), they read ``A`` on this grid.
OPEN_ROUNDS_THREADS_PER_SM_SLOTTED = 1024
#: Rows, spread over the matrix, whose symmetry the GPU tests before the first proposal
#: of a checked factor: one fault there makes that proposal compute the weights of
#: A' + A'^T instead of checking A (factor.cu, ``sample_check``).
SAMPLE_ROWS = 4096
#: ``sample_check``'s block size (factor.cu's SAMPLE_THREADS, a warp per row): its
#: SAMPLE_BLOCKS = SAMPLE_ROWS * 32 / SAMPLE_THREADS blocks store a verdict byte each.
SAMPLE_THREADS = 128
#: A checked factor's flags (factor.cu, check[0..3]) and the sample's verdict bytes after them.
_FLAGS_BYTES = 4 * 8 + SAMPLE_ROWS * 32 // SAMPLE_THREADS
#: The rows' off-diagonal entries in one 32-byte slot each (``factor.cu``, ``RowSlot``),
#: written by the first proposal for the later rounds, for float32 matrices with int32
#: indices of at most ``ROW_SLOT_ENTRIES + 1`` entries per row on average read by the
#: thread-per-row kernel: a listed row is then read from one sector instead of parts of
#: three to five (its offsets, columns and values).
ROW_SLOT_ENTRIES = 4


class ProposalLayout(NamedTuple):
    """Byte offsets of the proposals' buffer (:func:`proposal_layout`)."""

    nbytes: int  # the buffer's size
    first: tuple  # (targets, weights) of the first round: an N x n array of each
    later: tuple  # (targets, weights, targets' stride, weights' stride) of the later rounds
    slots: int | None  # the rows' slots (ROW_SLOT_ENTRIES), or None
    masks: int | None  # with n = 2 and slots, the later rounds' proposal masks (a byte per row)
    flags: int | None  # a checked factor's flags, at the buffer's start


class ProposalBuffers(NamedTuple):
    """The proposals' buffer and the kernel arguments into it (:func:`proposal_buffers`)."""

    buffer: object  # a cupy.cuda.MemoryPointer: keep it while the rounds may run
    first: tuple
    later: tuple
    slots: object
    masks: object
    flags: object


def proposal_layout(N, n, vtype, itype, slots, flags) -> ProposalLayout:
    """The layout of :func:`proposal_buffers` for ``N`` rows of ``n`` proposals of value
    type ``vtype`` and index type ``itype``, with the rows' slots and a checked factor's
    flags if asked for, as offsets for addresses."""
    isz, vsz = np.dtype(itype).itemsize, np.dtype(vtype).itemsize
    base = -(-_FLAGS_BYTES // 256) * 256 if flags else 0
    weights_at = base + -(-N * n * isz // 256) * 256  # the first round's weights
    size = 4 * max(isz, vsz)  # a later round's record (n = 2)
    nbytes = -(-max(weights_at + N * n * vsz, base + N * size if n == 2 else 0) // 256) * 256
    slots_at = nbytes if slots else None
    nbytes += N * ROW_SLOT_ENTRIES * (isz + vsz) if slots else 0
    masks_at = nbytes if slots and n == 2 else None  # a byte per row after the slots
    nbytes += N if masks_at is not None else 0
    flags_at = 0 if flags else None
    if n != 2:
        return ProposalLayout(nbytes, (base, weights_at), (base, weights_at, n, n), slots_at, masks_at, flags_at)
    j_at, w_at = (2 * vsz, 0) if vsz >= isz else (0, 2 * isz)
    return ProposalLayout(nbytes, (base, weights_at), (base + j_at, base + w_at, size // isz, size // vsz),
                          slots_at, masks_at, flags_at)


def proposal_buffers(layout: ProposalLayout) -> ProposalBuffers:
    """The rows' proposals (``factor.cu``, ``Proposals``) in one allocation of ``layout``:
    the kernel arguments ``(targets, weights)`` of the first round (an N x n array of
    each) and ``(targets, weights, targets' stride, weights' stride)`` of the later rounds,
    the rows' slots (``ROW_SLOT_ENTRIES``; None without them), with n = 2 the later
    rounds' proposal masks of the rows read from their slots (a byte per row; else None)
    and a checked factor's flags (``_FLAGS_BYTES`` at the buffer's start, set by
    ``sample_check`` and the first proposal, no memset needed; their address, None without
    them). For n = 2 the later rounds use one record per row in the same buffer (the first
    round's proposals are dead by then): the pair of the larger type first, the other
    padded to as many bytes (16 bytes for float32 and int32, else 32)."""
    import cupy

    nbytes, first, later, slots_at, masks_at, flags_at = layout
    buffer = cupy.cuda.alloc(nbytes)  # a MemoryPointer: no array object to make
    base = buffer.ptr
    arg = kernel_int()
    return ProposalBuffers(buffer, (arg(base + first[0]), arg(base + first[1])),
                           (arg(base + later[0]), arg(base + later[1]), arg(later[2]), arg(later[3])),
                           None if slots_at is None else arg(base + slots_at),
                           None if masks_at is None else arg(base + masks_at),
                           None if flags_at is None else arg(base + flags_at))


class _FirstRound(NamedTuple):
    """What the first round's launches need besides the arrays (:func:`_first_round`)."""

    lanes: int  # threads per row: 32 (a warp per row) or 1
    slotted: bool  # the first proposal writes the rows' slots (ROW_SLOT_ENTRIES)
    layout: ProposalLayout
    sample: object  # sample_check (a checked factor), else None
    propose: object  # the first proposal's kernel
    blocks: int  # its grid
    rows: object  # N and the rows of the sample, as kernel arguments
    sampled: object
    lead: tuple  # the proposal's arguments between the proposals' arrays and the flags
    trail: tuple  # and between the flags and the diagonal


@functools.lru_cache(maxsize=64)
def _first_round(N, nnz, vchar, ichar, device_id, n, iterations, seed, k_m, threshold, absval, kernel, check, mirror):
    """The first round's kernels, grid, buffer layout and scalar arguments for a matrix
    of this size and these parameters, cached: the device idles until the host has queued
    that round, and every lookup on the way costs host time."""
    vtype, itype = np.dtype(vchar), np.dtype(ichar)
    if kernel == "auto":
        kernel = "warp" if nnz >= WARP_ROW_LENGTH * N else "thread"
    if kernel not in ("thread", "warp"):
        raise ValueError(f"kernel must be 'auto', 'thread' or 'warp', got {kernel!r}")
    warp = kernel == "warp"
    slotted = (iterations > 1 and not warp and not mirror and vchar == "f" and ichar == "i"
               and nnz <= (ROW_SLOT_ENTRIES + 1) * N)
    scalar = kernel_int()
    round0 = (scalar(seed), scalar(k_m != 0), scalar(threshold), scalar(absval))  # seed, charging, p, |a|
    if slotted:
        propose, lead = get_kernel("factor", "propose_slotted", vtype, itype), (scalar(n), *round0)
    else:  # round 0 (k = 0), first, not listed
        propose = get_kernel("factor", "propose_warp" if warp else "propose", vtype, itype)
        lead = (scalar(n), scalar(0), *round0, scalar(1), scalar(0), None, None)
    lanes = 32 if warp else 1
    blocks = row_grid(lanes * N, ROW_THREADS, WARP_KERNEL_THREADS_PER_SM if warp else FIRST_PROPOSAL_THREADS_PER_SM)
    return _FirstRound(lanes, slotted, proposal_layout(N, n, vtype, itype, slotted, check),
                       get_kernel("factor", "sample_check", vtype, itype) if check else None, propose, blocks,
                       scalar(N), scalar(min(N, SAMPLE_ROWS)), lead, (scalar(mirror), scalar(check)))


def factor_rounds_gpu(W, n, iterations, m, k_m, seed, threshold, absval, kernel="auto", check=False, mirror=False,
                      entries=False):
    """The rounds on the GPU: ``(partners, weights, proposed, check)`` as
    :func:`kernels.factor.rounds_cpu.factor_rounds_cpu` returns them, on the device, nothing
    read back (``proposed[k]``: whether round ``k`` confirmed a proposal).

    ``mirror``: on the weight graph ``A' + A'^T`` of ``W``'s pattern, whose weights every
    proposal looks up (``|a_ij| + |a_ji|``, not stored). ``entries`` (``n = 2``,
    ``absval``) appends ``(diagonal, counts)``: ``W``'s diagonal, read by the first
    proposal, and the rows' partner counts (``factor.cu``'s ``Count``), whose bit ``3 + s``
    the rounds set where the entry to partner ``s`` is negative (valid where the factor is
    on ``W`` itself, not on ``A' + A'^T``)."""
    import cupy

    N = W.shape[0]
    itype = W.indices.dtype
    vtype = W.data.dtype
    if iterations == 0:
        checked = MatrixCheck(check_flags(W)) if check else None
        return (cupy.full((N, n), -1, dtype=itype), cupy.zeros((N, n), dtype=vtype), cupy.zeros(0, dtype=np.uint64),
                checked)
    plan = _first_round(N, W.nnz, vtype.char, itype.char, cupy.cuda.runtime.getDevice(), n, iterations, seed, k_m,
                        threshold, absval, kernel, check, mirror)
    threads = ROW_THREADS
    proposals, first_layout, later_layout, slots, masks, flags = proposal_buffers(plan.layout)
    if mirror and not check:  # the flag of a pattern without some mirror (factor.cu)
        flags = cupy.zeros(4, dtype=np.uint64)
    diag = cupy.empty(N, dtype=vtype) if entries else None  # written in full by the first proposal
    # Round 0 covers all rows and lists the rows it leaves open. The device idles until
    # the first proposal is queued. The sample check (the device's first work, which also
    # sets the flags: factor.cu, sample_check) and the proposal are launched back to back,
    # everything they need made before, so that the second launch finds the launch path in
    # the host's caches.
    if plan.slotted:
        args = (plan.rows, W.indptr, W.indices, W.data, *first_layout, *plan.lead, flags, *plan.trail, diag, slots)
    else:
        args = (plan.rows, W.indptr, W.indices, W.data, None, None, *first_layout, *plan.lead, flags, *plan.trail, diag)
    if check:
        plan.sample((SAMPLE_ROWS * 32 // SAMPLE_THREADS,), (SAMPLE_THREADS,),
                    (plan.rows, plan.sampled, W.indptr, W.indices, W.data, flags))
    plan.propose((plan.blocks,), (threads,), args)
    scalar = kernel_int()  # every integer argument
    n32, N_ = scalar(n), plan.rows
    first = (scalar(0), None, None)  # not listed
    # readable once this proposal has run; a failed check stops the later rounds on the device;
    # with the check, the proposals are on the weights of A' + A'^T when a sample of rows
    # proves the values unsymmetric (flags[3]: the device chooses, no read-back). The array
    # over the checked flags is made here, once the first kernels are queued: the host's
    # time before them keeps the device idle.
    if check:  # they lead the proposals' buffer
        flags = cupy.ndarray(4, np.uint64, memptr=proposals)
    checked = MatrixCheck(EarlyRead(flags), W) if flags is not None else None
    partners = cupy.empty((N, n), dtype=itype)  # written in full by the first confirm
    weights = cupy.empty((N, n), dtype=vtype)
    count = cupy.empty(N, dtype=np.uint8)  # partners per row (factor.cu's Count)
    proposed = small_zeros(cupy, iterations, np.uint64)  # per round: whether any row proposed
    # the lists of open rows of odd and even rounds and their lengths per round; the first
    # confirm writes the first list
    rows, n_open = (None, None) if iterations == 1 else (cupy.empty(2 * N, dtype=itype),
                                                         small_zeros(cupy, iterations, np.uint32))
    get_kernel("factor", "confirm", vtype, itype)(
        ((N + threads - 1) // threads,), (threads,), (N_, *first_layout, partners, weights, count, n32, proposed,
                                                      scalar(k_m == 0), scalar(1), *first, flags, rows, n_open,
                                                      scalar(absval)))
    if iterations > 1:
        # The later rounds run over the open rows in one cooperative launch, each over the
        # rows the round before left open; an uncharged round without proposals proves the
        # factor maximal and ends it (M_max from the flags).
        launch_cooperative(get_kernel("factor", "open_rounds", vtype, itype), plan.lanes * N, threads,
                           (N_, W.indptr, W.indices, W.data, partners, weights, count, *later_layout, n32,
                            scalar(iterations), scalar(m), scalar(k_m), scalar(seed), scalar(threshold),
                            scalar(absval), scalar(plan.lanes == 32), rows, n_open, proposed, scalar(mirror),
                            flags if check else None, slots, masks),
                           per_sm=OPEN_ROUNDS_THREADS_PER_SM_SLOTTED if plan.slotted else OPEN_ROUNDS_THREADS_PER_SM)
    del proposals  # freed after the rounds (CuPy's pool is stream-ordered)
    out = (partners, weights, proposed, checked)
    return (*out, (diag, count)) if entries else out
