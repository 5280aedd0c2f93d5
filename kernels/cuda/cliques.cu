// Maximal clique enumeration (Jenkins et al., Euro-Par 2011): Bron-Kerbosch with pivoting, one warp per
// sub-problem taken from a shared queue, warp-parallel bitset operations inside a node,
// output reserved in a preallocated buffer with an atomic counter (flushed by the host).
//
// Task t = (vertex v, child c). c < 0: the whole sub-problem of v (candidates P = later
// neighbours in the degeneracy order, not X = earlier ones). c >= 0: only the c-th
// top-level branch (split of a large sub-problem).
//
// Local graph of a sub-problem (per-warp scratch, global memory):
//   rows[u][0..W)   bits over P of local vertex u (u < k: P vertex, k <= u < k + r: X vertex)
//   cols[i][0..WX)  bits over X of P vertex i
// Search stack at depth d: SP (candidate), SXP (not, P part), SXX (not, X part), SB (branches).
// Warp state (8 long long): task, depth, k, r, pending, v, nodes, -.
//
// Output record: [size, v_1, ..., v_size] (int). A failed reservation (past the end)
// records its start in fail_pos with atomicMin; the valid data is [0, min(head, fail_pos)).

typedef unsigned long long u64;

#define FULL 0xffffffffu

struct Scratch {
    u64 *rows, *cols, *SP, *SXP, *SXX, *SB;
    int *Pv, *Xv, *clq;
};

__device__ __forceinline__ Scratch scratch_of(u64 *wbits, int *wints, long long gw, int Wm, int WXm, int D,
                                              int XCAP) {
    Scratch s;
    long long rows_sz = (long long)(D + XCAP) * Wm;
    long long cols_sz = (long long)D * WXm;
    long long stk = (long long)(D + 3) * Wm;
    long long stkx = (long long)(D + 3) * WXm;
    long long per = rows_sz + cols_sz + 3 * stk + stkx;
    u64 *b = wbits + gw * per;
    s.rows = b;
    s.cols = b + rows_sz;
    s.SP = s.cols + cols_sz;
    s.SXP = s.SP + stk;
    s.SB = s.SXP + stk;
    s.SXX = s.SB + stk;
    long long iper = (long long)D + XCAP + D + 3;
    int *q = wints + gw * iper;
    s.Pv = q;
    s.Xv = q + D;
    s.clq = q + D + XCAP;
    return s;
}

__device__ __forceinline__ long long lower_bound(const int *a, long long lo, long long hi, int x) {
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// row of vertex u over the local P (Pv sorted by id); returns whether any bit is set
__device__ bool build_row(const long long *indptr, const int *indices, int u, const int *Pv, int k, u64 *row,
                          int W) {
    for (int w = 0; w < W; ++w) row[w] = 0ull;
    long long lo = indptr[u], hi = indptr[u + 1];
    long long du = hi - lo;
    bool any = false;
    if (du <= 4LL * k) {
        for (long long e = lo; e < hi; ++e) {
            int x = indices[e];
            long long j = lower_bound(Pv, 0, k, x);
            if (j < k && Pv[j] == x) { row[j >> 6] |= 1ull << (j & 63); any = true; }
        }
    } else {
        long long p = lo;
        for (int j = 0; j < k; ++j) {
            p = lower_bound(indices, p, hi, Pv[j]);
            if (p < hi && indices[p] == Pv[j]) { row[j >> 6] |= 1ull << (j & 63); any = true; }
        }
    }
    return any;
}

__device__ __forceinline__ int warp_sum(int x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(FULL, x, o);
    return x;
}

// pivot maximizing |P & N(u)| over P | X; writes SB[d] = P \ N(pivot); returns #branches
__device__ int pivot_branches(const Scratch &s, int d, int k, int r, int W, int WX, int Wm, int WXm, int lane) {
    const u64 *P = s.SP + (long long)d * Wm;
    const u64 *XP = s.SXP + (long long)d * Wm;
    const u64 *XX = s.SXX + (long long)d * WXm;
    int best = -1, bu = 0x7fffffff;
    for (int u = lane; u < k; u += 32) {
        u64 bit = 1ull << (u & 63);
        if ((P[u >> 6] | XP[u >> 6]) & bit) {
            const u64 *row = s.rows + (long long)u * Wm;
            int c = 0;
            for (int t = 0; t < W; ++t) c += __popcll(P[t] & row[t]);
            if (c > best) { best = c; bu = u; }
        }
    }
    for (int w = lane; w < WX; w += 32) {
        u64 x = XX[w];
        while (x) {
            int j = (w << 6) + __ffsll((long long)x) - 1;
            x &= x - 1;
            const u64 *row = s.rows + (long long)(k + j) * Wm;
            int c = 0;
            for (int t = 0; t < W; ++t) c += __popcll(P[t] & row[t]);
            if (c > best || (c == best && k + j < bu)) { best = c; bu = k + j; }
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        int ob = __shfl_xor_sync(FULL, best, o);
        int ou = __shfl_xor_sync(FULL, bu, o);
        if (ob > best || (ob == best && ou < bu)) { best = ob; bu = ou; }
    }
    const u64 *row = s.rows + (long long)bu * Wm;
    u64 *B = s.SB + (long long)d * Wm;
    int nb = 0;
    for (int w = lane; w < W; w += 32) {
        u64 b = P[w] & ~row[w];
        B[w] = b;
        nb += __popcll(b);
    }
    __syncwarp();
    return warp_sum(nb);
}

// emit the clique of frame d; returns false (all lanes) when the buffer has no room
__device__ bool emit(const Scratch &s, int v, int d, int lane, int count_only, unsigned long long *hist,
                     int *out, unsigned long long *head, unsigned long long *fail_pos, long long cap) {
    int ok = 1;
    if (lane == 0) {
        if (count_only) {
            atomicAdd(hist + d, 1ull);
        } else {
            unsigned long long pos = atomicAdd(head, (unsigned long long)(d + 1));
            if ((long long)(pos + d + 1) > cap) {
                atomicMin(fail_pos, pos);
                ok = 0;
            } else {
                out[pos] = d;
                out[pos + 1] = v;
                for (int t = 2; t <= d; ++t) out[pos + t] = s.Pv[s.clq[t]];
            }
        }
    }
    return __shfl_sync(FULL, ok, 0) != 0;
}

extern "C" __global__ void mce_kernel(const long long *indptr, const int *indices, const long long *rank,
                                      const int *task_v, const int *task_c, long long ntasks,
                                      unsigned long long *queue, long long *wstate, u64 *wbits, int *wints,
                                      int Wm, int WXm, int D, int XCAP, int min_size, int count_only,
                                      unsigned long long *hist, int *out, unsigned long long *head,
                                      unsigned long long *fail_pos, long long cap, int nwarps) {
    int lane = threadIdx.x & 31;
    long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (gw >= nwarps) return;
    Scratch s = scratch_of(wbits, wints, gw, Wm, WXm, D, XCAP);
    long long *st = wstate + gw * 8;
    int depth = (int)st[1], k = (int)st[2], r = (int)st[3], v = (int)st[5];
    long long nodes = st[6];
    int W = (k + 63) >> 6, WX = (r + 63) >> 6;
    if (st[4]) {  // pending clique from before the flush
        if (!emit(s, v, depth, lane, count_only, hist, out, head, fail_pos, cap)) return;
        if (lane == 0) st[4] = 0;
        depth -= 1;
    }
    while (true) {
        if (depth == 0) {
            unsigned long long t = 0;
            if (lane == 0) t = atomicAdd(queue, 1ull);
            t = __shfl_sync(FULL, t, 0);
            if ((long long)t >= ntasks) break;
            v = task_v[t];
            int child = task_c[t];
            long long lo = indptr[v], hi = indptr[v + 1];
            int dv = (int)(hi - lo);
            long long rv = rank[v];
            if (dv == 0) {
                if (min_size <= 1) {
                    if (!emit(s, v, 1, lane, count_only, hist, out, head, fail_pos, cap)) {
                        // retry this task after the flush: keep it as a pending single vertex
                        if (lane == 0) { st[1] = 1; st[2] = 0; st[3] = 0; st[4] = 1; st[5] = v; st[6] = nodes; }
                        return;
                    }
                }
                continue;
            }
            // P = later neighbours, X = earlier ones (both sorted by id)
            int kk = 0, rr = 0;
            for (long long e0 = lo; e0 < hi; e0 += 32) {
                long long e = e0 + lane;
                bool in = e < hi;
                bool later = in && rank[indices[e]] > rv;
                unsigned mp = __ballot_sync(FULL, later);
                unsigned mx = __ballot_sync(FULL, in && !later);
                unsigned lt = (1u << lane) - 1u;
                if (later) s.Pv[kk + __popc(mp & lt)] = indices[e];
                else if (in) s.Xv[rr + __popc(mx & lt)] = indices[e];
                kk += __popc(mp);
                rr += __popc(mx);
            }
            __syncwarp();
            k = kk;
            r = rr;
            if (k == 0 || 1 + k < min_size) continue;
            W = (k + 63) >> 6;
            WX = (r + 63) >> 6;
            // rows of all local vertices (a lane per vertex)
            for (int u = lane; u < k + r; u += 32) {
                int g = u < k ? s.Pv[u] : s.Xv[u - k];
                build_row(indptr, indices, g, s.Pv, k, s.rows + (long long)u * Wm, W);
            }
            for (long long q = lane; q < (long long)k * WX; q += 32) s.cols[(q / WX) * WXm + q % WX] = 0ull;
            u64 *P1 = s.SP + Wm, *XP1 = s.SXP + Wm, *XX1 = s.SXX + WXm;
            for (int w = lane; w < W; w += 32) {
                int bits = k - (w << 6);
                P1[w] = bits >= 64 ? ~0ull : ((1ull << bits) - 1ull);
                XP1[w] = 0ull;
            }
            for (int w = lane; w < WX; w += 32) XX1[w] = 0ull;
            __syncwarp();
            // X part of the root not-set: X vertices with a neighbour in P; columns
            for (int j = lane; j < r; j += 32) {
                const u64 *row = s.rows + (long long)(k + j) * Wm;
                bool a = false;
                for (int w = 0; w < W; ++w) {
                    u64 x = row[w];
                    if (x) a = true;
                    while (x) {
                        int i = (w << 6) + __ffsll((long long)x) - 1;
                        x &= x - 1;
                        atomicOr(s.cols + (long long)i * WXm + (j >> 6), 1ull << (j & 63));
                    }
                }
                if (a) atomicOr(XX1 + (j >> 6), 1ull << (j & 63));
            }
            __syncwarp();
            nodes += 1;
            int nb = pivot_branches(s, 1, k, r, W, WX, Wm, WXm, lane);
            if (nb == 0) continue;
            if (child >= 0) {
                // keep only the child-th branch vertex; earlier branches move from P to X
                if (child >= nb) continue;
                if (lane == 0) {
                    u64 *B = s.SB + Wm;
                    int seen = 0;
                    for (int w = 0; w < W; ++w) {
                        u64 b = B[w];
                        int c = __popcll(b);
                        if (seen + c <= child) {
                            P1[w] &= ~b;
                            XP1[w] |= b;
                            B[w] = 0ull;
                            seen += c;
                        } else if (seen <= child) {
                            u64 keep = 0ull;
                            while (b) {
                                u64 low = b & (~b + 1ull);
                                b &= b - 1;
                                if (seen < child) { P1[w] &= ~low; XP1[w] |= low; }
                                else if (seen == child) keep = low;
                                ++seen;
                            }
                            B[w] = keep;
                        } else {
                            B[w] = 0ull;
                        }
                    }
                }
                __syncwarp();
            }
            depth = 1;
            continue;
        }
        int d = depth;
        u64 *B = s.SB + (long long)d * Wm;
        // next branch vertex: lowest set bit of B
        int i = -1;
        for (int w0 = 0; w0 < W && i < 0; w0 += 32) {
            int w = w0 + lane;
            u64 b = w < W ? B[w] : 0ull;
            unsigned m = __ballot_sync(FULL, b != 0ull);
            if (m) {
                int src = __ffs(m) - 1;
                u64 bb = __shfl_sync(FULL, b, src);
                i = ((w0 + src) << 6) + __ffsll((long long)bb) - 1;
            }
        }
        if (i < 0) { depth -= 1; continue; }
        const u64 *row = s.rows + (long long)i * Wm;
        const u64 *col = s.cols + (long long)i * WXm;
        u64 *Pd = s.SP + (long long)d * Wm, *Pn = Pd + Wm;
        u64 *XPd = s.SXP + (long long)d * Wm, *XPn = XPd + Wm;
        u64 *XXd = s.SXX + (long long)d * WXm, *XXn = XXd + WXm;
        int pc = 0, xn = 0;
        for (int w = lane; w < W; w += 32) {
            u64 a = Pd[w] & row[w];
            Pn[w] = a;
            pc += __popcll(a);
            u64 b = XPd[w] & row[w];
            XPn[w] = b;
            xn |= (b != 0ull);
        }
        for (int w = lane; w < WX; w += 32) {
            u64 c = XXd[w] & col[w];
            XXn[w] = c;
            xn |= (c != 0ull);
        }
        __syncwarp();
        if (lane == 0) {
            u64 bi = 1ull << (i & 63);
            B[i >> 6] &= ~bi;
            Pd[i >> 6] &= ~bi;
            XPd[i >> 6] |= bi;
            s.clq[d + 1] = i;
        }
        pc = warp_sum(pc);
        xn = __any_sync(FULL, xn);
        __syncwarp();
        nodes += 1;
        if (pc == 0) {
            if (!xn && d + 1 >= min_size) {
                if (!emit(s, v, d + 1, lane, count_only, hist, out, head, fail_pos, cap)) {
                    if (lane == 0) {
                        st[1] = d + 1; st[2] = k; st[3] = r; st[4] = 1; st[5] = v; st[6] = nodes;
                    }
                    return;
                }
            }
            continue;
        }
        if (d + 1 + pc < min_size) continue;
        if (pivot_branches(s, d + 1, k, r, W, WX, Wm, WXm, lane) > 0) depth = d + 1;
    }
    if (lane == 0) { st[1] = 0; st[4] = 0; st[6] = nodes; }
}
