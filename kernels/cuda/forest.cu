// Linear forest from a [0,2]-factor: bidirectional scans (paper 001, Alg. 3, Sec. 4.2).
// Pointers q(v) = (q0, q1) point 2^s steps along the path in both directions; a path end
// is marked by the negative value -(end + 1). One launch per step, ping-pong buffers.
// templates: cycle_init<V,I>, cycle_step<V,I>, cycle_break<V,I>, rank_init<V,I>, rank_step<V,I>, rank_finish<V,I>, scatter_permutation<V,I>, ruler_mark<V,I>, ruler_walk<V,I>, ruler_step<V,I>, ruler_finish<V,I>
#include "hashing.cuh"

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

// ---------------------------------------------------------------------------------------
// Work-efficient variant: sparse ruling set (list ranking with O(N) work).
// Rulers: path ends, isolated vertices and a hashed sample (about 1 in `spacing`). Each
// ruler walks both ways to the next ruler, writing into every vertex it passes the ruler's
// compact slot and the distance; the reduced lists of rulers (compact arrays, small enough
// for L2) get the bidirectional scan (min edge and + distance); every vertex then combines
// its two rulers' results. Vertices on cycles without any ruler walk their cycle alone.
// Compact scan state per ruler slot t = 2 * rank + i: q[t] = 2 * rank(target) + entry slot
// (>= 0, continue through q[t] ^ 1) or -(end + 1) once the path end is reached.
// (kernels ruler_mark, ruler_walk, ruler_step, ruler_finish: templates listed at the top)

template <typename V, typename I>
__global__ void ruler_mark(const I count, const I* __restrict__ list, const int use_list, const I* __restrict__ P,
                           const unsigned int seed, const unsigned long long threshold,
                           unsigned char* __restrict__ is_ruler) {
    for (I t = blockIdx.x * (I)blockDim.x + threadIdx.x; t < count; t += (I)gridDim.x * blockDim.x) {
        const I v = use_list ? list[t] : t;
        const bool end = P[2 * (size_t)v] < 0 || P[2 * (size_t)v + 1] < 0;
        is_ruler[v] = (end || (unsigned long long)hash32((unsigned int)v, 0x51u, seed) < threshold) ? 1 : 0;
    }
}

template <typename V, typename I>
__global__ void ruler_walk(const I n_rulers, const I N, const I* __restrict__ rulers, const I* __restrict__ rank,
                           const I* __restrict__ P, const V* __restrict__ Wt,
                           const unsigned char* __restrict__ is_ruler, I* __restrict__ rinfo, I* __restrict__ q,
                           I* __restrict__ r, V* __restrict__ mw, I* __restrict__ ma, I* __restrict__ mb) {
    for (I t = blockIdx.x * (I)blockDim.x + threadIdx.x; t < 2 * n_rulers; t += (I)gridDim.x * blockDim.x) {
        const I R = rulers[t >> 1];
        const int d = (int)(t & 1);
        const size_t k = 2 * (size_t)R + d;
        I cur = P[k];
        if (cur < 0) {
            q[t] = -(R + 1);
            r[t] = 0;
            mw[t] = V(__longlong_as_double(0x7ff0000000000000ULL));
            ma[t] = N;
            mb[t] = N;
            continue;
        }
        I prev = R, dist = 1;
        V bw = Wt[k];
        I ba = min(R, cur), bb = max(R, cur);
        while (!is_ruler[cur]) {
            const size_t c0 = 2 * (size_t)cur;
            const int s_in = P[c0] == prev ? 0 : 1;
            rinfo[2 * (c0 + s_in)] = t;  // compact slot of the walk (away = t ^ 1)
            rinfo[2 * (c0 + s_in) + 1] = dist;
            const I nxt = P[c0 + 1 - s_in];
            const V w = Wt[c0 + 1 - s_in];
            const I a = min(cur, nxt), b = max(cur, nxt);
            if (edge_less(w, a, b, bw, ba, bb)) {
                bw = w;
                ba = a;
                bb = b;
            }
            prev = cur;
            cur = nxt;
            ++dist;
        }
        const int entry = P[2 * (size_t)cur] == prev ? 0 : 1;
        q[t] = 2 * rank[cur] + entry;
        r[t] = dist;
        mw[t] = bw;
        ma[t] = ba;
        mb[t] = bb;
    }
}

template <typename V, typename I>
__global__ void ruler_step(const I n_slots, const I* __restrict__ q, const I* __restrict__ r, const V* __restrict__ mw,
                           const I* __restrict__ ma, const I* __restrict__ mb, I* __restrict__ q2, I* __restrict__ r2,
                           V* __restrict__ mw2, I* __restrict__ ma2, I* __restrict__ mb2) {
    for (I t = blockIdx.x * (I)blockDim.x + threadIdx.x; t < n_slots; t += (I)gridDim.x * blockDim.x) {
        I x = q[t], d = r[t];
        V bw = mw[t];
        I ba = ma[t], bb = mb[t];
        if (x >= 0) {
            const I kw = x ^ 1;
            d += r[kw];
            if (edge_less(mw[kw], ma[kw], mb[kw], bw, ba, bb)) {
                bw = mw[kw];
                ba = ma[kw];
                bb = mb[kw];
            }
            x = q[kw];
        }
        q2[t] = x;
        r2[t] = d;
        mw2[t] = bw;
        ma2[t] = ba;
        mb2[t] = bb;
    }
}

// flag: 0 path vertex (done), 1 on a cycle with rulers (edge dropped, needs a second pass),
// 2 on a cycle without rulers (handled here by walking the cycle).
template <typename V, typename I>
__global__ void ruler_finish(const I count, const I* __restrict__ list, const int use_list,
                             const I* __restrict__ P, const V* __restrict__ Wt,
                             const unsigned char* __restrict__ is_ruler, const I* __restrict__ rank,
                             const I* __restrict__ rinfo, const I* __restrict__ q, const I* __restrict__ r,
                             const V* __restrict__ mw, const I* __restrict__ ma, const I* __restrict__ mb,
                             I* __restrict__ P_out, I* __restrict__ path_id, I* __restrict__ position,
                             I* __restrict__ length, I* __restrict__ removed_lo, unsigned char* __restrict__ flag) {
    for (I t = blockIdx.x * (I)blockDim.x + threadIdx.x; t < count; t += (I)gridDim.x * blockDim.x) {
        const I v = use_list ? list[t] : t;
        const size_t v0 = 2 * (size_t)v;
        I e[2], dd[2];
        I cyc_slot = -1;
        if (is_ruler[v]) {
            for (int i = 0; i < 2; ++i) {
                const I s = 2 * rank[v] + i;
                if (q[s] >= 0) cyc_slot = s;
                e[i] = -q[s] - 1;
                dd[i] = r[s];
            }
        } else if (rinfo[2 * v0] < 0) {
            // cycle without a ruler: walk it (twice) from v
            I prev = v, cur = P[v0], L = 1;
            V bw = Wt[v0];
            I a = min(v, cur), b = max(v, cur);
            while (cur != v) {
                const size_t c0 = 2 * (size_t)cur;
                const int s_in = P[c0] == prev ? 0 : 1;
                const I nxt = P[c0 + 1 - s_in];
                const V w = Wt[c0 + 1 - s_in];
                const I x = min(cur, nxt), y = max(cur, nxt);
                if (edge_less(w, x, y, bw, a, b)) {
                    bw = w;
                    a = x;
                    b = y;
                }
                prev = cur;
                cur = nxt;
                ++L;
            }
            I ta = 0, tb = 0, step = 1;
            prev = v;
            cur = P[v0];
            while (cur != v) {
                if (cur == a) ta = step;
                if (cur == b) tb = step;
                const size_t c0 = 2 * (size_t)cur;
                const int s_in = P[c0] == prev ? 0 : 1;
                prev = cur;
                cur = P[c0 + 1 - s_in];
                ++step;
            }
            path_id[v] = a;
            position[v] = v == a ? 0 : (v == b ? L - 1 : (ta < tb ? ta : L - ta));
            if (v == a || v == b) {
                const I other = v == a ? b : a;
                for (int s = 0; s < 2; ++s)
                    if (P_out[v0 + s] == other) P_out[v0 + s] = -1;
            }
            if (v == a) {
                length[v] = L;
                removed_lo[v] = b;
            }
            flag[v] = 2;
            continue;
        } else {
            for (int i = 0; i < 2; ++i) {
                const I slot = rinfo[2 * (v0 + i)], dist = rinfo[2 * (v0 + i) + 1];
                const I s = slot ^ 1;
                if (q[s] >= 0) cyc_slot = s;
                e[i] = -q[s] - 1;
                dd[i] = dist + r[s];
            }
        }
        if (cyc_slot >= 0) {
            // both slots of a cycle ruler cover the whole cycle: the weakest edge is their min
            const I s0 = cyc_slot & ~(I)1, s1 = s0 + 1;
            const I s = edge_less(mw[s1], ma[s1], mb[s1], mw[s0], ma[s0], mb[s0]) ? s1 : s0;
            const I a = ma[s], b = mb[s];
            if (v == a || v == b) {
                const I other = v == a ? b : a;
                for (int i = 0; i < 2; ++i)
                    if (P_out[v0 + i] == other) P_out[v0 + i] = -1;
            }
            if (v == a) removed_lo[v] = b;
            flag[v] = 1;
            continue;
        }
        const I pid = min(e[0], e[1]);
        path_id[v] = pid;
        position[v] = e[0] < e[1] ? dd[0] : (e[1] < e[0] ? dd[1] : 0);
        if (pid == v) length[v] = dd[0] + dd[1] + 1;
        flag[v] = 0;
    }
}
