// Block-aggregated append to a list counted by *counter: every thread of the block calls it
// in block-uniform control flow (blockDim a multiple of 32); it returns the slot of an item
// kept by this thread (garbage otherwise). One atomic per block; the kept items of a block
// get consecutive slots in thread order.
#pragma once

__device__ __forceinline__ unsigned int block_append(bool keep, unsigned int* counter) {
    __shared__ unsigned int warp_base[32];
    __shared__ unsigned int block_base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned int mask = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_base[warp] = __popc(mask);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int total = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            const unsigned int c = warp_base[w];
            warp_base[w] = total;
            total += c;
        }
        block_base = total ? atomicAdd(counter, total) : 0u;
    }
    __syncthreads();
    const unsigned int slot = block_base + warp_base[warp] + __popc(mask & ((1u << lane) - 1u));
    __syncthreads();  // the next call overwrites the shared counts
    return slot;
}
