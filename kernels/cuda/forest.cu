// Linear forest from a [0,2]-factor: bidirectional scans (paper 001, Alg. 3, Sec. 4.2).
// Pointers q(v) = (q0, q1) point 2^s steps along the path in both directions; a path end
// is marked by the negative value -(end + 1). One launch per step, ping-pong buffers.
// templates: cycle_init<V,I>, cycle_step<V,I>, cycle_break<V,I>, rank_init<V,I>, rank_step<V,I>, rank_finish<V,I>, scatter_permutation<V,I>

template <typename V, typename I>
__device__ __forceinline__ bool edge_less(V w, I a, I b, V w2, I a2, I b2) {
    return w < w2 || (w == w2 && (a < a2 || (a == a2 && b < b2)));
}

// The slot of w's pointer pair that continues away from v.
template <typename I>
__device__ __forceinline__ int away_from(const I* q, I w, I v) {
    return q[2 * (size_t)w] == v ? 1 : 0;
}

template <typename V, typename I>
__global__ void cycle_init(const I N, const I* __restrict__ partners, const V* __restrict__ weights,
                           I* q, V* mw, I* ma, I* mb) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            const I p = partners[k];
            q[k] = p >= 0 ? p : -(v + 1);
            mw[k] = p >= 0 ? weights[k] : V(__longlong_as_double(0x7ff0000000000000ULL));
            ma[k] = p >= 0 ? min(v, p) : N;
            mb[k] = p >= 0 ? max(v, p) : N;
        }
    }
}

template <typename V, typename I>
__global__ void cycle_step(const I N, const I* __restrict__ q, const V* __restrict__ mw,
                           const I* __restrict__ ma, const I* __restrict__ mb, I* __restrict__ q2,
                           V* __restrict__ mw2, I* __restrict__ ma2, I* __restrict__ mb2) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            I w = q[k];
            V bw = mw[k];
            I ba = ma[k], bb = mb[k];
            if (w >= 0) {
                const size_t kw = 2 * (size_t)w + away_from(q, w, v);
                if (edge_less(mw[kw], ma[kw], mb[kw], bw, ba, bb)) {
                    bw = mw[kw];
                    ba = ma[kw];
                    bb = mb[kw];
                }
                w = q[kw];
            }
            q2[k] = w;
            mw2[k] = bw;
            ma2[k] = ba;
            mb2[k] = bb;
        }
    }
}

// Vertices whose pointers never reached a path end lie on a cycle; the two endpoints of
// the cycle's weakest edge drop it. The lower endpoint records the removed edge.
template <typename V, typename I>
__global__ void cycle_break(const I N, const I* __restrict__ q, const V* __restrict__ mw,
                            const I* __restrict__ ma, const I* __restrict__ mb, I* __restrict__ partners,
                            I* __restrict__ removed_lo) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        const size_t k0 = 2 * (size_t)v, k1 = k0 + 1;
        if (q[k0] < 0 || q[k1] < 0) continue;
        size_t k = edge_less(mw[k1], ma[k1], mb[k1], mw[k0], ma[k0], mb[k0]) ? k1 : k0;
        const I a = ma[k], b = mb[k];
        if (v != a && v != b) continue;
        const I other = v == a ? b : a;
        for (int s = 0; s < 2; ++s)
            if (partners[2 * (size_t)v + s] == other) partners[2 * (size_t)v + s] = -1;
        if (v == a) removed_lo[v] = b;
    }
}

template <typename V, typename I>
__global__ void rank_init(const I N, const I* __restrict__ partners, I* __restrict__ q, I* __restrict__ r) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            const I p = partners[k];
            q[k] = p >= 0 ? p : -(v + 1);
            r[k] = p >= 0 ? 1 : 0;
        }
    }
}

template <typename V, typename I>
__global__ void rank_step(const I N, const I* __restrict__ q, const I* __restrict__ r, I* __restrict__ q2,
                          I* __restrict__ r2, int* __restrict__ active) {
    int busy = 0;
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        for (int i = 0; i < 2; ++i) {
            const size_t k = 2 * (size_t)v + i;
            I w = q[k];
            I d = r[k];
            if (w >= 0) {
                const size_t kw = 2 * (size_t)w + away_from(q, w, v);
                d += r[kw];
                w = q[kw];
                busy |= (w >= 0);
            }
            q2[k] = w;
            r2[k] = d;
        }
    }
    if (busy) *active = 1;
}

template <typename V, typename I>
__global__ void rank_finish(const I N, const I* __restrict__ q, const I* __restrict__ r, I* __restrict__ path_id,
                            I* __restrict__ position, I* __restrict__ length) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x) {
        const size_t k = 2 * (size_t)v;
        const I e0 = -q[k] - 1, e1 = -q[k + 1] - 1;
        const I pid = min(e0, e1);
        path_id[v] = pid;
        position[v] = e0 < e1 ? r[k] : (e1 < e0 ? r[k + 1] : 0);
        if (pid == v) length[v] = r[k] + r[k + 1] + 1;
    }
}

template <typename V, typename I>
__global__ void scatter_permutation(const I N, const I* __restrict__ path_id, const I* __restrict__ position,
                                    const I* __restrict__ offsets, I* __restrict__ perm) {
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < N; v += (I)gridDim.x * blockDim.x)
        perm[offsets[path_id[v]] + position[v]] = v;
}
