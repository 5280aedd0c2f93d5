// Deterministic 32-bit hash shared with kernels/hashing.py (identical results).
#pragma once

__device__ __forceinline__ unsigned int fmix32(unsigned int h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

// Hash of (x, y, seed), e.g. (vertex id, iteration, seed), to [0, 2^32).
__device__ __forceinline__ unsigned int hash32(unsigned int x, unsigned int y, unsigned int seed) {
    unsigned int s = fmix32(seed + 0x9E3779B9u);
    return fmix32(x ^ fmix32(y ^ s));
}
