// Maximal independent set (ECL-MIS, Burtscher et al., ACM TOPC 2018) and the Luby-style random-permutation baseline.
//
// status/priority in one byte: 0 = out, 254 = in, odd values 1..253 = undecided with that
// priority (higher wins, ties by the larger vertex id). ecl_mis is a single persistent,
// asynchronous kernel: each thread sweeps its vertices until all are decided; a vertex
// gives up as soon as it sees a neighbour of higher priority (an "in" neighbour has the
// highest). luby_* run synchronous rounds with 32-bit priorities.
// templates: ecl_init<I>, ecl_mis<I>, luby_init<I>, luby_select<I>, luby_exclude<I>
#include "hashing.cuh"

#define MIS_OUT 0
#define MIS_IN 254

template <typename I>
__global__ void ecl_init(const I n, const I* __restrict__ indptr, const float avg_degree, const unsigned int seed,
                         unsigned char* __restrict__ status) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < n; v += (I)gridDim.x * blockDim.x) {
        const I deg = indptr[v + 1] - indptr[v];
        if (deg == 0) {
            status[v] = MIS_IN;
            continue;
        }
        // f = d_avg / (d_avg + d(v) - rand(id)), rand in [0, 1): 24 random bits
        const float r = (float)(hash32((unsigned int)v, 0u, seed) >> 8) * (1.0f / 16777216.0f);
        const float f = avg_degree / (avg_degree + (float)deg - r);
        int p = __float2int_rn(f * 126.0f);  // round to nearest (even), like numpy.rint
        p = p < 0 ? 0 : (p > 126 ? 126 : p);
        status[v] = (unsigned char)(2 * p + 1);
    }
}

// skip_decided = 0 is the paper's code (a joining vertex writes "out" to every neighbour);
// skip_decided = 1 first reads the neighbour and writes only undecided ones, which avoids
// many writes to the same byte of a hub in power-law graphs at the price of one read each
// (a tuning knob measured by examples/bench_mis.py; the result is the same).
template <typename I>
__global__ void ecl_mis(const I n, const I* __restrict__ indptr, const I* __restrict__ indices,
                        volatile unsigned char* status, const int skip_decided) {
    const I stride = (I)gridDim.x * blockDim.x;
    bool missing;
    do {
        missing = false;
        for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < n; v += stride) {
            const unsigned char s = status[v];
            if (!(s & 1)) continue;
            bool best = true;
            const I end = indptr[v + 1];
            for (I e = indptr[v]; e < end; ++e) {
                const I u = indices[e];
                const unsigned char su = status[u];
                if (su > s || (su == s && u > v)) {
                    best = false;
                    break;
                }
            }
            if (best) {
                if (skip_decided) {
                    for (I e = indptr[v]; e < end; ++e) {
                        const I u = indices[e];
                        if (status[u] & 1) status[u] = MIS_OUT;
                    }
                } else {
                    for (I e = indptr[v]; e < end; ++e) status[indices[e]] = MIS_OUT;
                }
                __threadfence();
                status[v] = MIS_IN;
            } else {
                missing = true;
            }
        }
    } while (missing);
}

// Luby baseline (random permutation, synchronous rounds): prio is a 32-bit hash; state
// 0 = undecided, 1 = in, 2 = out.
template <typename I>
__global__ void luby_init(const I n, const unsigned int seed, unsigned int* __restrict__ prio) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < n; v += (I)gridDim.x * blockDim.x)
        prio[v] = hash32((unsigned int)v, 1u, seed);
}

template <typename I>
__global__ void luby_select(const I n, const I* __restrict__ indptr, const I* __restrict__ indices,
                            const unsigned int* __restrict__ prio, unsigned char* __restrict__ state,
                            int* __restrict__ undecided) {
    int left = 0;
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < n; v += (I)gridDim.x * blockDim.x) {
        if (state[v] != 0) continue;
        const unsigned int pv = prio[v];
        bool best = true;
        for (I e = indptr[v]; e < indptr[v + 1]; ++e) {
            const I u = indices[e];
            // neighbours selected in this same round count too: they beat v anyway
            if (state[u] != 2 && (prio[u] > pv || (prio[u] == pv && u > v))) {
                best = false;
                break;
            }
        }
        if (best) state[v] = 1;
        else left = 1;
    }
    if (left) *undecided = 1;
}

template <typename I>
__global__ void luby_exclude(const I n, const I* __restrict__ indptr, const I* __restrict__ indices,
                             unsigned char* __restrict__ state) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < n; v += (I)gridDim.x * blockDim.x) {
        if (state[v] != 0) continue;
        for (I e = indptr[v]; e < indptr[v + 1]; ++e) {
            if (state[indices[e]] == 1) {
                state[v] = 2;
                break;
            }
        }
    }
}
