"""[0,n]-factors of a weighted graph (paper 001, Algorithms 1 and 2).

The graph is a symmetric CSR weight matrix ``W`` with no diagonal (from
:func:`kernels.graph.abs_graph`). A factor is stored as ``partners`` (``N x n`` int,
-1 for empty slots) and ``weights`` (``N x n``, the edge weights, 0 for empty slots).

* :func:`greedy_factor` - Algorithm 1, sequential greedy by decreasing weight (Numba).
* :func:`parallel_factor` - Algorithm 2: in each iteration every unsaturated vertex
  proposes its best admissible edges (a generalized SpMV keeping the n largest
  ``(weight, -column)`` pairs per row), then non-mutual proposals are dropped. Vertex
  charges come from :func:`kernels.hashing.hash32` of (vertex, iteration, seed). The CPU
  (Numba, parallel over rows) and GPU (``kernels/cuda/factor.cu``) versions give the
  identical factor.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .backend import EarlyRead, get_array_module, is_device_array, small_zeros, sparse_module, to_host
from .cuda import get_kernel, kernel_int, launch_cooperative, row_grid
from .hashing import hash32

__all__ = ["greedy_factor", "parallel_factor", "factor_rounds", "mirror_factor_rounds", "rounds_used",
           "charge_threshold", "is_maximal", "weights_symmetric", "mirror_weights", "MatrixCheck"]

MAX_N = 4


def charge_threshold(p: float) -> int:
    """Hash values below this threshold are charged positive (probability ``p``)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"charge probability p must be in [0, 1], got {p}")
    return min(int(round(p * 2.0**32)), 2**32)


@njit(cache=True)
def _rows_of(indptr, n_entries):
    rows = np.empty(n_entries, dtype=np.int64)
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            rows[k] = i
    return rows


@njit(cache=True)
def _greedy(rows, indices, data, order, N, n_max):
    """Scan the edges ``order`` (indices into the CSR arrays, upper triangle only)."""
    partners = -np.ones((N, n_max), dtype=np.int64)
    weights = np.zeros((N, n_max), dtype=data.dtype)
    count = np.zeros(N, dtype=np.int64)
    for k in order:
        u, v = rows[k], indices[k]
        if count[u] < n_max and count[v] < n_max:
            partners[u, count[u]] = v
            weights[u, count[u]] = data[k]
            count[u] += 1
            partners[v, count[v]] = u
            weights[v, count[v]] = data[k]
            count[v] += 1
    return partners, weights


def greedy_factor(W, n, ties="index", seed=0):
    """Algorithm 1: edges by decreasing weight, added while both ends have < n partners.

    ``ties="index"`` breaks ties between equal weights by the edge's (row, column),
    smallest first (fully deterministic, the CPU reference). ``ties="hash"`` orders equal
    weights by :func:`kernels.hashing.hash32` of the edge ``(lo, hi, seed)``: an arbitrary
    but reproducible order, like an unstable sort by weight alone (the paper's Algorithm 1
    does not define the order of equal weights; on the ANISO stencils this is what moves
    its n = 1 column from 0.33 to 0.29). Returns ``(partners, weights)`` as NumPy arrays.
    """
    indptr = W.indptr.astype(np.int64)
    indices = W.indices.astype(np.int64)
    data = W.data
    rows = _rows_of(indptr, len(indices))
    upper = np.flatnonzero(rows < indices)
    if ties == "index":
        # decreasing weight; ties by (row, col) increasing: stable sort of the row-major list
        order = upper[np.argsort(-data[upper], kind="stable")]
    elif ties == "hash":
        from .hashing import hash32_array

        key = hash32_array(rows[upper], indices[upper], seed)
        order = upper[np.lexsort((key, -data[upper]))]
    else:
        raise ValueError(f"ties must be 'index' or 'hash', got {ties!r}")
    return _greedy(rows, indices, data, order, W.shape[0], int(n))


@njit(cache=True, parallel=True)
def _propose(indptr, indices, data, partners, count, prop, prop_w, n_max, k, seed, charging, threshold, absval, rows):
    """Each unsaturated row of ``rows`` keeps its best admissible columns in a small sorted
    accumulator.

    ``absval``: ``data`` is the matrix itself (weights ``|a_ij|``, zeros skipped)."""
    for r in prange(len(rows)):
        v = rows[r]
        for s in range(n_max):
            prop[v, s] = -1
            prop_w[v, s] = 0
        room = n_max - count[v]
        if room <= 0:
            continue
        qv = hash32(v, k, seed) < threshold
        acc_w = np.zeros(MAX_N, dtype=data.dtype)
        acc_j = -np.ones(MAX_N, dtype=np.int64)
        filled = 0
        for e in range(indptr[v], indptr[v + 1]):
            j = indices[e]
            if j == v or count[j] >= n_max:
                continue
            if charging and (hash32(j, k, seed) < threshold) == qv:
                continue
            already = False
            for s in range(count[v]):
                if partners[v, s] == j:
                    already = True
            if already:
                continue
            w = abs(data[e]) if absval else data[e]
            if w == 0:
                continue
            # insert (w, j) if better than the current worst; better = larger w, then smaller j
            if filled < room:
                pos = filled
                filled += 1
            elif w > acc_w[room - 1] or (w == acc_w[room - 1] and j < acc_j[room - 1]):
                pos = room - 1
            else:
                continue
            while pos > 0 and (w > acc_w[pos - 1] or (w == acc_w[pos - 1] and j < acc_j[pos - 1])):
                acc_w[pos] = acc_w[pos - 1]
                acc_j[pos] = acc_j[pos - 1]
                pos -= 1
            acc_w[pos] = w
            acc_j[pos] = j
        for s in range(filled):
            prop[v, s] = acc_j[s]
            prop_w[v, s] = acc_w[s]


@njit(cache=True, parallel=True)
def _confirm(prop, prop_w, partners, weights, count, n_max, rows):
    """Keep the mutual proposals of ``rows``; returns the number of proposals made (before
    confirmation)."""
    proposed = 0
    for r in prange(len(rows)):
        v = rows[r]
        c = count[v]
        for s in range(n_max):
            w = prop[v, s]
            if w < 0:
                continue
            proposed += 1
            mutual = False
            for t in range(n_max):
                if prop[w, t] == v:
                    mutual = True
            if mutual:
                partners[v, c] = w
                weights[v, c] = prop_w[v, s]
                c += 1
        count[v] = c
    return proposed


def _cpu_parallel_factor(W, n, iterations, m, k_m, seed, threshold, absval, check=False):
    indptr, indices, data = W.indptr, W.indices, W.data
    N = W.shape[0]
    checked = MatrixCheck(_check_flags(W)) if check else None  # the GPU fuses it into the first proposal
    partners = -np.ones((N, n), dtype=np.int64)
    weights = np.zeros((N, n), dtype=data.dtype)
    count = np.zeros(N, dtype=np.int64)
    prop = np.empty((N, n), dtype=np.int64)
    prop_w = np.empty((N, n), dtype=data.dtype)
    proposed = np.zeros(iterations, dtype=np.uint64)  # per round: proposals confirmed
    rows = np.arange(N, dtype=np.int64)
    for k in range(iterations):
        charging = (k % m) != k_m
        _propose(indptr, indices, data, partners, count, prop, prop_w, n, k, seed, charging, threshold, absval, rows)
        proposed[k] = _confirm(prop, prop_w, partners, weights, count, n, rows)
        # later rounds visit the rows left open: saturated rows stay saturated and nobody
        # proposes to them, so their stale proposals are never read
        rows = np.flatnonzero(count < n) if k == 0 else rows[count[rows] < n]
        if proposed[k] == 0 and not charging:
            break
    return partners, weights, proposed, checked


#: Mean row length from which the GPU proposals use one warp per row. H100, float32, the
#: five rounds with the fused check on random symmetric matrices (thread / warp, us): mean
#: 17: 414 / 2161, 33: 760 / 2373, 65: 886 / 1390, 129: 1310 / 867, 256: 2156 / 608; a
#: 27-point stencil of 1M rows: 2274 / 18236 (BENCHMARKS.md, eighth session).
WARP_ROW_LENGTH = 96
#: Threads per SM of the grid of the thread-per-row first proposal (grid-stride over the
#: rows; about 1,280 are resident at once): more blocks than fit, each with fewer rows, but
#: not one thread per row. H100, the first proposal alone (us, CUDA events, medians of 20)
#: at 1,024 / 2,048 / 4,096 threads per SM / one thread per row: random_diffusion2d float32
#: 162 / 144 / 137 / 182, float64 209 / 193 / 184 / 231; ANISO1 float32 407 / 376 / 362 /
#: 468, float64 452 / 447 / 430 / 543; ANISO2 float32 394 / 364 / 350 / 457, float64 434 /
#: 424 / 413 / 520; convection_diffusion3d float32 147 / 142 / 134 / 176, float64 172 / 171
#: / 164 / 216 (the row kernels' 1,024 kept the rows of the resident warps in L1 when
#: every SM was full). Since the first proposal writes the slots and sets the sample's
#: flag (twenty-third session, Nsight Compute, us, 2,048 / 4,096 / 8,192): random_diffusion2d
#: float32 172 / 164 / 158, ANISO2 float32 346 / 334 / 327, convection_diffusion3d float32
#: 207 / 206 / 191.
FIRST_PROPOSAL_THREADS_PER_SM = 8192
#: Resident threads per SM of the warp-per-row first proposal (grid-stride over the rows):
#: one block per 128 rows would make the fused check's per-warp atomics millions.
WARP_KERNEL_THREADS_PER_SM = 2048
#: Resident threads per SM of the later rounds (one cooperative launch over the open
#: rows' lists), whose gathers from arrays larger than L2 are bound by the caches, not by
#: latency. H100, per-kernel medians (us) at 512 / 768 / 1024 (the row kernels' default)
#: threads per SM: random_diffusion2d float32 608 / 555 / 557, float64 677 / 657 / 678,
#: convection_diffusion3d float32 88 / 95 / 108, ANISO2 float32 41 / 45 / 47; at 1536 and
#: 2048 (with fewer registers) random_diffusion2d float32 took 625 and 817.
OPEN_ROUNDS_THREADS_PER_SM = 768
#: The same where the rounds read the rows' slots (``ROW_SLOT_ENTRIES``): one sector per
#: listed row leaves room for more resident threads. H100, later rounds (us, Nsight
#: Compute) at 640 / 768 / 896 / 1,024 threads per SM: random_diffusion2d float32 (slots)
#: 392 / 376 / 366 / 364; without slots, random_diffusion2d float64 510 / 497 / 487 / 496
#: and convection_diffusion3d float32 86 / 89 / 94 / 99. The host chooses the grid before
#: the sample check has run: where the sample sends the rounds to ``A' + A'^T`` (the slots
#: then unread), they read ``A`` on this grid.
OPEN_ROUNDS_THREADS_PER_SM_SLOTTED = 1024
#: Rows, spread over the matrix, whose symmetry the GPU tests before the first proposal
#: of a checked factor: one fault there makes that proposal compute the weights of
#: A' + A'^T instead of checking A (factor.cu, ``sample_check``).
SAMPLE_ROWS = 4096
#: ``sample_check``'s block size (factor.cu's SAMPLE_THREADS, a warp per row): its
#: SAMPLE_BLOCKS = SAMPLE_ROWS * 32 / SAMPLE_THREADS blocks store a verdict byte each.
_SAMPLE_THREADS = 128
#: Threads per block of the row kernels of the rounds.
_ROW_THREADS = 128
#: A checked factor's flags (factor.cu, check[0..3]) and the sample's verdict bytes after them.
_FLAGS_BYTES = 4 * 8 + SAMPLE_ROWS * 32 // _SAMPLE_THREADS


#: The rows' off-diagonal entries in one 32-byte slot each (``factor.cu``, ``RowSlot``),
#: written by the first proposal for the later rounds, for float32 matrices with int32
#: indices of at most ``ROW_SLOT_ENTRIES + 1`` entries per row on average read by the
#: thread-per-row kernel: a listed row is then read from one sector instead of parts of
#: three to five (its offsets, columns and values). H100, random_diffusion2d float32 at
#: 2.9M rows (Nsight Compute, us, without / with): first proposal 133 / 177 (it writes the
#: slots, in a kernel of its own: ``propose_slotted``), first confirm 65 / 60, later rounds
#: 476 / 399.
ROW_SLOT_ENTRIES = 4


def _proposal_layout(N, n, vtype, itype, slots, flags):
    """``(bytes, first, later, slots, masks, flags)`` of :func:`_proposal_buffers`, with
    offsets for addresses."""
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
        return nbytes, (base, weights_at), (base, weights_at, n, n), slots_at, masks_at, flags_at
    j_at, w_at = (2 * vsz, 0) if vsz >= isz else (0, 2 * isz)
    return (nbytes, (base, weights_at), (base + j_at, base + w_at, size // isz, size // vsz),
            slots_at, masks_at, flags_at)


def _proposal_buffers(layout):
    """The rows' proposals (``factor.cu``, ``Proposals``) in one allocation of
    :func:`_proposal_layout`'s ``layout``: ``(buffer, first, later, slots, masks, flags)``,
    the kernel arguments ``(targets, weights)`` of the first round (an N x n array of
    each) and ``(targets, weights, targets' stride, weights' stride)`` of the later rounds,
    the rows' slots (``ROW_SLOT_ENTRIES``; None without them), with n = 2 the later
    rounds' proposal masks of the rows read from their slots (a byte per row; else None)
    and a checked factor's flags (``_FLAGS_BYTES`` at the buffer's start, set by
    ``sample_check`` and the first proposal, no memset needed; their address, None without
    them); ``buffer`` is a ``cupy.cuda.MemoryPointer``. For n = 2 the later rounds use one
    record per row in the same buffer (the first round's proposals are dead by then): the
    pair of the larger type first, the other padded to as many bytes (16 bytes for float32
    and int32, else 32)."""
    import cupy

    nbytes, first, later, slots_at, masks_at, flags_at = layout
    buffer = cupy.cuda.alloc(nbytes)  # a MemoryPointer: no array object to make
    base = buffer.ptr
    arg = kernel_int()
    return (buffer, (arg(base + first[0]), arg(base + first[1])),
            (arg(base + later[0]), arg(base + later[1]), arg(later[2]), arg(later[3])),
            None if slots_at is None else arg(base + slots_at), None if masks_at is None else arg(base + masks_at),
            None if flags_at is None else arg(base + flags_at))


class _FirstRound(NamedTuple):
    """What the first round's launches need besides the arrays (:func:`_first_round`)."""

    lanes: int  # threads per row: 32 (a warp per row) or 1
    slotted: bool  # the first proposal writes the rows' slots (ROW_SLOT_ENTRIES)
    layout: tuple  # _proposal_layout's
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
    that round, and on a host whose caches the caller's work has just evicted every lookup
    on the way costs a few us (H100 host, after an SpMV burst: ``get_kernel`` 4.8 us,
    ``row_grid`` 7.9, the proposals' layout and allocation 18.3)."""
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
    blocks = row_grid(lanes * N, _ROW_THREADS, WARP_KERNEL_THREADS_PER_SM if warp else FIRST_PROPOSAL_THREADS_PER_SM)
    return _FirstRound(lanes, slotted, _proposal_layout(N, n, vtype, itype, slotted, check),
                       get_kernel("factor", "sample_check", vtype, itype) if check else None, propose, blocks,
                       scalar(N), scalar(min(N, SAMPLE_ROWS)), lead, (scalar(mirror), scalar(check)))


def _gpu_parallel_factor(W, n, iterations, m, k_m, seed, threshold, absval, kernel="auto", check=False, mirror=False,
                         entries=False):
    """The GPU rounds; ``mirror``: on the weight graph ``A' + A'^T`` of ``W``'s pattern,
    whose weights every proposal looks up (``|a_ij| + |a_ji|``, not stored). ``entries``
    (``n = 2``, ``absval``) appends ``(diagonal, counts)``: ``W``'s diagonal, read by the
    first proposal, and the rows' partner counts (``factor.cu``'s ``Count``), whose bit
    ``3 + s`` the rounds set where the entry to partner ``s`` is negative (valid where the
    factor is on ``W`` itself, not on ``A' + A'^T``)."""
    import cupy

    N = W.shape[0]
    itype = W.indices.dtype
    vtype = W.data.dtype
    if iterations == 0:
        checked = MatrixCheck(_check_flags(W)) if check else None
        return (cupy.full((N, n), -1, dtype=itype), cupy.zeros((N, n), dtype=vtype), cupy.zeros(0, dtype=np.uint64),
                checked)
    plan = _first_round(N, W.nnz, vtype.char, itype.char, cupy.cuda.runtime.getDevice(), n, iterations, seed, k_m,
                        threshold, absval, kernel, check, mirror)
    threads = _ROW_THREADS
    proposals, first_layout, later_layout, slots, masks, flags = _proposal_buffers(plan.layout)
    if mirror and not check:  # the flag of a pattern without some mirror (factor.cu)
        flags = cupy.zeros(4, dtype=np.uint64)
    diag = cupy.empty(N, dtype=vtype) if entries else None  # written in full by the first proposal
    # Round 0 covers all rows and lists the rows it leaves open. The device idles until
    # the first proposal is queued. The sample check (the device's first work, which also
    # sets the flags: factor.cu, sample_check) and the proposal are launched back to back,
    # everything they need made before, so that the second launch finds the launch path in
    # the host's caches (H100 host: the proposal's launch cost 18.6 us with allocations and
    # arguments made between the two, against about 8 in a loop).
    if plan.slotted:
        args = (plan.rows, W.indptr, W.indices, W.data, *first_layout, *plan.lead, flags, *plan.trail, diag, slots)
    else:
        args = (plan.rows, W.indptr, W.indices, W.data, None, None, *first_layout, *plan.lead, flags, *plan.trail, diag)
    if check:
        plan.sample((SAMPLE_ROWS * 32 // _SAMPLE_THREADS,), (_SAMPLE_THREADS,),
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


def rounds_used(flags, m, k_m):
    """M_max from the per-round flags of :func:`factor_rounds` (NumPy or CuPy; a CuPy
    array is read here): one past the first uncharged round without proposals
    (``flags[k] == 0``), else all rounds."""
    flags = to_host(flags)
    idle = [k for k in range(len(flags)) if k % m == k_m and flags[k] == 0]
    return idle[0] + 1 if idle else len(flags)


def factor_rounds(W, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, from_matrix=False, kernel="auto", check=False,
                  entries=False):
    """:func:`parallel_factor` without reading anything back: returns ``(partners,
    weights, flags)``, where ``flags[k]`` is nonzero when round ``k`` confirmed a proposal
    (on the GPU a device array: the host does not wait for the rounds; see
    :func:`rounds_used`).

    ``check=True`` (with ``from_matrix``; ``W`` a canonical CSR matrix whose index arrays
    share one dtype) also tests the matrix and appends a :class:`MatrixCheck`: whether
    its entries are finite and ``|A| - diag(A)`` is symmetric, the factor being valid
    only then. On the GPU the first proposal makes these tests while it reads the rows
    anyway (no pass of its own), and the check is readable as soon as that kernel has
    run: the host need not wait for the later rounds. Before it, the GPU tests a sample of
    ``SAMPLE_ROWS`` rows; when the sample proves ``|A| - diag(A)`` unsymmetric, the rounds
    run on the weight graph ``A' + A'^T`` instead (:attr:`MatrixCheck.on_weight_graph`),
    whose weights the proposals look up on ``A``'s pattern (no buffer of them is stored;
    :meth:`MatrixCheck.weight_graph` builds the graph when asked).

    ``entries=True`` (with ``check``, ``n = 2`` and at least one round) appends, on the
    GPU, ``(diagonal, signs)``: ``W``'s diagonal, read by the first proposal, and a byte
    per row whose bit ``3 + s`` is set where the entry to partner ``s`` is negative (the
    rounds' partner counts, which they store anyway; the proposals keep the signed entries
    they read). With the weights they give ``A``'s entries to the partners
    (:func:`kernels.tridiag.extract_tridiagonal`'s ``factor_entries``), valid where the
    check finds the factor on ``W`` itself (:attr:`MatrixCheck.symmetric`): the AlgTriScal
    set-up then needs no pass of its own over ``A`` (:func:`kernels.tridiag.partner_entries`,
    H100, random_diffusion2d at 2.9M rows: 79 us in float32, 115 in float64). None on the
    CPU."""
    threshold = charge_threshold(p)
    if check:
        _check_canonical(W, "factor_rounds(check=True)")
        if not from_matrix:
            raise ValueError("check=True tests a matrix read with from_matrix=True")
    elif entries:
        raise ValueError("entries=True needs check=True (the entries are valid where the check passes)")
    if entries and not (n == 2 and iterations > 0):
        raise ValueError(f"entries=True records the entries of a [0,2]-factor's partners in at least one round, "
                         f"got n={n}, iterations={iterations}")
    return _factor_rounds(W, n, iterations, m, k_m, threshold, seed, from_matrix, kernel, check, entries)


def _factor_rounds(W, n, iterations, m, k_m, threshold, seed, from_matrix, kernel="auto", check=False, entries=False):
    """:func:`factor_rounds` of valid arguments (``threshold``: :func:`charge_threshold`'s),
    for callers that have checked them (on the GPU the device idles until the first
    proposal is queued)."""
    if is_device_array(W):
        out = _gpu_parallel_factor(W, n, iterations, m, k_m, seed, threshold, bool(from_matrix), kernel, check,
                                   entries=entries)
    else:
        out = _cpu_parallel_factor(W, n, iterations, m, k_m, seed, threshold, bool(from_matrix), check)
        out = (*out, None) if entries else out
    return out if check else out[:3]


def mirror_factor_rounds(A, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, kernel="auto"):
    """:func:`factor_rounds` on the weight graph ``A' + A'^T`` (``A' = |A| - diag(A)``) built
    on ``A``'s own pattern, for a matrix whose values are not symmetric but whose pattern
    is (as in most PDE matrices): see :func:`mirror_weights`.

    ``A``: a canonical float32/float64 CSR matrix whose index arrays share one dtype.
    Returns ``(partners, weights, flags, graph)``, where ``graph()`` builds the weight
    graph as a CSR matrix on ``A``'s pattern (explicit zeros kept, computed when called),
    or None when some nonzero entry of ``A`` has no mirror (the pattern does not hold
    ``A' + A'^T``). On the GPU the proposals look the weights up while they read the rows
    (``mirror_sum`` fused, no pass of its own) and the host waits for the first proposal
    only; a void factor stops the later rounds on the device.
    """
    _check_canonical(A, "mirror_factor_rounds")
    if not is_device_array(A) or iterations == 0:  # the CPU, or no proposal to compute the weights in
        W = mirror_weights(A)
        if W is None:
            return None
        return (*factor_rounds(W, n, iterations, m, k_m, p, seed, from_matrix=True, kernel=kernel), lambda: W)
    partners, weights, flags, check = _gpu_parallel_factor(A, n, iterations, m, k_m, seed, charge_threshold(p), True,
                                                           kernel, mirror=True)
    if not check.mirrored:
        return None
    return partners, weights, flags, lambda: mirror_weights(A)


def parallel_factor(W, n=2, iterations=5, m=5, k_m=0, p=0.5, seed=0, from_matrix=False, kernel="auto"):
    """Algorithm 2 on a symmetric weight graph ``W`` (SciPy or cupyx CSR).

    With ``from_matrix=True``, ``W`` is the matrix ``A`` itself (canonical CSR whose
    ``|A| - diag(A)`` is symmetric, see :func:`weights_symmetric`): the proposals read
    ``|a_ij|`` and skip the diagonal and zeros, so ``abs_graph`` is never built. The result
    is identical to the one on ``abs_graph(A)``.

    ``kernel`` (GPU only): ``"thread"`` (one thread per row), ``"warp"`` (one warp per
    row, for long rows) or ``"auto"`` (warp when the mean row length is at least
    ``WARP_ROW_LENGTH``). Both give the identical factor.

    Returns ``(partners, weights, used_iterations)`` on the backend of ``W``. Charging is
    disabled in iterations with ``k % m == k_m``; an uncharged iteration without any
    proposal proves the factor maximal and ends the loop (``used = k + 1``).
    """
    partners, weights, flags = factor_rounds(W, n, iterations, m, k_m, p, seed, from_matrix, kernel)
    return partners, weights, rounds_used(flags, m, k_m)


class MatrixCheck:
    """Whether a matrix has only finite entries and a symmetric ``|A| - diag(A)``, from
    the flags ``[non-finite, unmirrored, upper - lower balance, on the weight graph]`` (an
    :class:`kernels.backend.EarlyRead`), read on first access. Unmirrored: on the CPU an
    upper ``|a_ij|`` without an equal ``|a_ji|`` (the check of :func:`factor_rounds`); on
    either, a nonzero entry without a mirror entry (:func:`mirror_factor_rounds`, and a
    checked factor computed on the weight graph). The balance is zero when the entries
    above the diagonal pair up with those below it: on the CPU their counts, on the GPU
    the sums of 64-bit fingerprints of ``(i, j, |a_ij|)`` (``factor.cu``, ``check_entry``:
    no entry looks its mirror up; an unsymmetric matrix passes with probability about
    ``2**-64``).

    On the GPU a checked factor is computed on the weight graph ``A' + A'^T`` on ``A``'s
    pattern at once when a sample of rows proves ``A'`` unsymmetric (``on_weight_graph``;
    ``mirrored`` then tells whether the pattern holds that graph, and
    :meth:`weight_graph` builds it)."""

    def __init__(self, flags, matrix=None):
        self._flags = flags
        self._matrix = matrix

    def _read(self):
        return self._flags.get().view(np.int64)  # the balance: a signed count on the CPU

    @property
    def finite(self) -> bool:
        return not self._read()[0]

    @property
    def mirrored(self) -> bool:
        return not self._read()[1]

    @property
    def on_weight_graph(self) -> bool:
        return bool(self._read()[3])

    @property
    def symmetric(self) -> bool:
        return not self.on_weight_graph and self.mirrored and bool(self._read()[2] == 0)

    def weight_graph(self):
        """``A' + A'^T`` as a CSR matrix on ``A``'s pattern (explicit zeros kept), for a
        factor ``on_weight_graph`` whose pattern is ``mirrored`` (computed here: the
        proposals looked the weights up without storing them)."""
        if not (self.on_weight_graph and self.mirrored):
            raise ValueError("the factor was not computed on the weight graph on A's pattern")
        return mirror_weights(self._matrix)


def _pattern_matrix(values, A):
    """A CSR matrix of ``values`` on ``A``'s pattern (sharing its index arrays)."""
    return sparse_module(get_array_module(A)).csr_matrix((values, A.indices, A.indptr), shape=A.shape)


@njit(cache=True, inline="always")
def _mirror_position(indptr, indices, j, i):
    """Position of column ``i`` in the sorted row ``j`` (binary search), or -1."""
    lo, hi = indptr[j], indptr[j + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < i:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < indptr[j + 1] and indices[lo] == i else -1


@njit(cache=True, parallel=True)
def _sym_check(indptr, indices, data):
    """Per row: 1 where an upper off-diagonal ``|a_ij|`` (j > i) has no equal mirror
    ``|a_ji|`` (binary search, sorted rows), and the count of nonzero upper minus lower
    off-diagonal entries."""
    N = len(indptr) - 1
    bad = np.zeros(N, dtype=np.uint8)
    balance = np.zeros(N, dtype=np.int64)
    for i in prange(N):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            w = abs(data[e])
            if j == i or w == 0:
                continue
            if j < i:
                balance[i] -= 1
                continue
            balance[i] += 1
            m = _mirror_position(indptr, indices, j, i)
            if m < 0 or abs(data[m]) != w:
                bad[i] = 1
                break
    return bad, balance


def _check_canonical(A, what):
    """The preconditions of the binary-search passes: a square canonical CSR matrix of a
    float dtype whose index arrays share one dtype."""
    if getattr(A, "format", None) != "csr" or A.shape[0] != A.shape[1]:
        raise ValueError(f"{what} needs a square CSR matrix, got {type(A).__name__} of shape {getattr(A, 'shape', None)}")
    if np.dtype(A.dtype).char not in "fd":  # float32 or float64
        raise TypeError(f"{what} needs a float32 or float64 matrix, got {A.dtype}")
    # SciPy computes the flag; cupyx only caches it (set by sum_duplicates), so the GPU
    # side relies on the documented precondition
    if not is_device_array(A) and not A.has_canonical_format:
        raise ValueError(f"{what} needs sorted indices without duplicates (call sum_duplicates() first)")
    if np.dtype(A.indices.dtype) != np.dtype(A.indptr.dtype):
        raise ValueError(f"{what} needs indices and indptr of one dtype, got {A.indices.dtype} and {A.indptr.dtype}")


def weights_symmetric(A) -> bool:
    """True when ``|A| - diag(A)`` (explicit zeros dropped) equals its transpose.

    ``A`` must be a canonical CSR matrix (sorted indices, no duplicates), float32 or
    float64, SciPy or cupyx. One pass, no transpose. On the CPU every upper entry looks its
    mirror up by binary search, and the nonzero entries above and below the diagonal must
    be equally many (then the mirroring is a bijection). On the GPU the sums of 64-bit
    fingerprints of the entries ``(i, j, |a_ij|)`` above and below the diagonal must be
    equal (see :class:`MatrixCheck`).
    """
    _check_canonical(A, "weights_symmetric")
    return MatrixCheck(_check_flags(A)).symmetric


def _check_flags(A):
    """The flags of :class:`MatrixCheck` in a pass of their own (on the GPU the
    ``sym_check`` kernel, whose fingerprints the first proposal also sums; on the CPU the
    exact ``_sym_check`` and a finiteness test), as an :class:`kernels.backend.EarlyRead`."""
    if not is_device_array(A):
        bad, balance = _sym_check(A.indptr, A.indices, A.data)
        return EarlyRead(np.array([not np.isfinite(A.data).all(), bad.any(), balance.sum(), 0], dtype=np.int64))
    import cupy

    N = A.shape[0]
    flags = cupy.zeros(4, dtype=np.uint64)
    threads = _ROW_THREADS
    get_kernel("factor", "sym_check", A.data.dtype, A.indices.dtype)(
        (row_grid(N, threads),), (threads,), (A.indices.dtype.type(N), A.indptr, A.indices, A.data, flags))
    return EarlyRead(flags)


@njit(cache=True, parallel=True)
def _mirror_sum(indptr, indices, data, w):
    """Twin of the CUDA ``mirror_sum``; returns per row 1 where a nonzero entry has no mirror."""
    N = len(indptr) - 1
    bad = np.zeros(N, dtype=np.uint8)
    for i in prange(N):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            a = abs(data[e])
            if j == i:
                w[e] = 0
                continue
            m = _mirror_position(indptr, indices, j, i)
            if m >= 0:
                w[e] = a + abs(data[m])
            else:
                w[e] = a
                if a != 0:
                    bad[i] = 1
    return bad


def mirror_weights(A):
    """The weight graph ``A' + A'^T`` on ``A``'s own pattern, or None.

    ``A`` must be a canonical CSR matrix (sorted indices, no duplicates), float32 or
    float64, SciPy or cupyx. When every nonzero off-diagonal ``a_ij`` has an entry
    ``a_ji`` (a structurally symmetric pattern, as in most PDE matrices even when the
    values are not symmetric), the result shares ``A``'s index arrays and holds
    ``|a_ij| + |a_ji|`` (0 on the diagonal): one pass with binary searches instead of a
    transpose and a sparse sum. The factor reads it like a symmetric matrix
    (``from_matrix=True``). None when some nonzero entry has no mirror.
    """
    _check_canonical(A, "mirror_weights")
    if is_device_array(A):
        import cupy

        N = A.shape[0]
        w = cupy.empty_like(A.data)
        flags = cupy.zeros(2, dtype=np.uint64)  # [non-finite, unmirrored]
        threads = _ROW_THREADS
        get_kernel("factor", "mirror_sum", A.data.dtype, A.indices.dtype)(
            (row_grid(N, threads),), (threads,), (A.indices.dtype.type(N), A.indptr, A.indices, A.data, w, flags))
        if int(flags[1]):
            return None
        return _pattern_matrix(w, A)
    w = np.empty_like(A.data)
    if _mirror_sum(A.indptr, A.indices, A.data, w).any():
        return None
    return _pattern_matrix(w, A)


def is_maximal(W, partners) -> bool:
    """True when no edge of ``W`` joins two unsaturated vertices that are not yet partners."""
    from .backend import get_array_module

    xp = get_array_module(W)
    n = partners.shape[1]
    count = (partners >= 0).sum(axis=1)
    rows = xp.repeat(xp.arange(W.shape[0]), xp.diff(W.indptr).astype(np.int64))
    cols = W.indices
    free = (count[rows] < n) & (count[cols] < n) & (rows != cols)
    if not bool(free.any()):
        return True
    r, c = rows[free], cols[free]
    linked = (partners[r] == c[:, None]).any(axis=1)
    return bool(linked.all())
