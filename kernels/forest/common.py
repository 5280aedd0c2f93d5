"""Constants and helpers that the ruling-set kernels of ``kernels/cuda/forest.cu``, their
Numba twins and the launchers share (the twins use the kernels' bit layouts one to one)."""
from __future__ import annotations

from numba import njit

__all__ = ["RULER_BLOCK", "DENSE_ENDS", "RULER_SALT", "RUN_SALT", "CLAIM_FREE", "RULER_TAG", "RULER_SAT", "HOP_ENDED",
           "ORDER_TILE", "OFFSET_TILE", "edge_less", "flat_arguments"]

RULER_SALT = 0x51  # hash salt of a ruler drawn alone (forest.cu's RULER_SALT)
RUN_SALT = 0x52  # hash salt of a run of ids drawn together (forest.cu's RUN_SALT)
RULER_BLOCK = 256  # the ruling-set kernels' block size (forest.cu's BLOCK)
DENSE_ENDS = 8  # forest.cu's DENSE_ENDS: a block is dense when 1 in this many is a path end

# claim[v]: CLAIM_FREE, RULER_TAG << 32 | the ruler's rank, or owner slot << 32 | distance
# from the owner's ruler (the CUDA kernels use the same bits as unsigned 64-bit words)
CLAIM_FREE = -1
RULER_TAG = -2

RULER_SAT = 1 << 30  # window lengths saturate here (on a cycle the windows wrap)
HOP_ENDED = 1 << 30  # forest.cu's HOP_ENDED

ORDER_TILE = 1024  # vertices per tile of the order scan: 256 threads x ORDER_ITEMS in forest.cu
OFFSET_TILE = 4096  # order_offsets' tiles: 256 threads x OFFSET_ITEMS in forest.cu


@njit(cache=True)
def edge_less(w, a, b, w2, a2, b2):
    """Whether edge ``(w, a, b)`` is weaker than ``(w2, a2, b2)``: smaller weight, then ends."""
    return w < w2 or (w == w2 and (a < a2 or (a == a2 and b < b2)))


def flat_arguments(args):
    """Kernel arguments with every tuple (a group of slot arrays) spread in place."""
    return tuple(x for a in args for x in (a if isinstance(a, tuple) else (a,)))
