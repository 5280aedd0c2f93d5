// Exact minimum / parameterized vertex cover on the GPU (paper 000).
//
// Persistent kernels, one thread block per worker. The intermediate graph of a tree node
// is a degree array (int per vertex: current degree, or negative once the vertex is in
// the cover) plus the count of removed vertices. The block's threads apply the reduction
// rules, find the max-degree vertex and build the children cooperatively. Beyond the
// paper, a node is also cut by the degree-sequence bound (vc_degree_bound).
//
//   vc_hybrid_{shared,global}:    local stack per block + global worklist (Broker-queue
//                                 style ring with tickets); a block adds the "take N(v)"
//                                 child to the worklist when it holds fewer than
//                                 `threshold` entries, else pushes it on its stack.
//                                 Termination: `pending` counts worklist entries plus
//                                 blocks holding a sub-tree; all done when it hits 0.
//   vc_stackonly_{shared,global}: every block walks from the root down to sub-tree t at
//                                 depth `start_depth` (bits of t choose the branches), then
//                                 traverses it with its local stack.
// `_shared` keeps the current degree array in dynamic shared memory, `_global` in a
// per-block global scratch row. With `adj` (bitset rows of wn 32-bit words, dense graphs
// of at most 8192 vertices) the degrees are recounted by popcount after each batch of
// deletions instead of decremented edge by edge. Global degree arrays are read through L2
// (__ldcg) since other threads update them with atomics.
//
// ctl[]: 0 limit (best-1 for MVC, k for PVC), 1 best size found (-1 none), 2 found (PVC),
//        3 pending, 4 head, 5 tail, 6 available, 7 cover lock, 8 overflow, 9 next sub-tree
//        (StackOnly), 10 stop (host time limit), 11 queue size (reserved entries).
//
// templates:

#define VC_MARK 0x40000000
#define VC_BITSET_WORDS 256  // bitset mode: at most 8192 vertices
#define VC_HIST_BINS 1024    // degree histogram of the degree-sequence bound (>= VC_BITSET_WORDS)
#define VC_DMASK 0x3fffffff

#define CTL_LIMIT 0
#define CTL_BEST 1
#define CTL_FOUND 2
#define CTL_PENDING 3
#define CTL_HEAD 4
#define CTL_TAIL 5
#define CTL_AVAIL 6
#define CTL_LOCK 7
#define CTL_OVERFLOW 8
#define CTL_NEXT 9
#define CTL_STOP 10
#define CTL_QSIZE 11

struct VcBlock {
    int count;      // removed vertices of the current node
    int limit;      // cover sizes above this are of no interest
    int flag;
    int vmax;
    int dmax;
    long long edges;
    int sp;         // local stack depth
    int holding;    // the block holds a sub-tree taken from the worklist
    int done;
    int kind;       // branch destination: 0 stack, 1 worklist, 2 none
    int slot;
    unsigned round;
    int task;
    long long wkey[32];
    long long wsum[32];
};

__device__ __forceinline__ int vc_vload(const int* p) { return *(volatile const int*)p; }
__device__ __forceinline__ unsigned vc_vloadu(const unsigned* p) { return *(volatile const unsigned*)p; }

template <bool G>
__device__ __forceinline__ int vc_rd(const int* p)
{
    if constexpr (G) {
        return __ldcg(p);
    } else {
        return *(volatile const int*)p;
    }
}

__device__ __forceinline__ void vc_sleep()
{
#if __CUDA_ARCH__ >= 700
    __nanosleep(200);
#endif
}

template <bool GD, bool GS>
__device__ void vc_copy(int* dst, const int* src, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = vc_rd<GS>(src + i);
    if constexpr (GD) {
        __threadfence();
    } else {
        __threadfence_block();
    }
    __syncthreads();
}

__device__ bool vc_adjacent(const int* indptr, const int* indices, int a, int b)
{
    int lo = indptr[a], hi = indptr[a + 1];
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int w = indices[mid];
        if (w == b) return true;
        if (w < b) lo = mid + 1; else hi = mid;
    }
    return false;
}

// Delete v (add it to the cover).
template <bool G>
__device__ void vc_take(const int* indptr, const int* indices, int* deg, int v)
{
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(deg + v, -1);
    for (int p = indptr[v] + threadIdx.x; p < indptr[v + 1]; p += blockDim.x) {
        int u = indices[p];
        if (vc_rd<G>(deg + u) >= 0) atomicSub(deg + u, 1);
    }
    __threadfence_block();
    __syncthreads();
}

// The warp decrements the degree of every live neighbour of x, lanes over N(x).
template <bool G>
__device__ __forceinline__ void vc_warp_unlink(const int* indptr, const int* indices, int* deg, int x, int lane)
{
    for (int p = indptr[x] + lane; p < indptr[x + 1]; p += 32) {
        int u = indices[p];
        if (vc_rd<G>(deg + u) >= 0) atomicSub(deg + u, 1);
    }
}

// The first two live neighbours of x (a, b; -1 when absent), found by the warp 32 at a time.
template <bool G>
__device__ __forceinline__ void vc_warp_live2(const int* indptr, const int* indices, const int* deg, int x, int lane,
                                              int& a, int& b)
{
    a = -1;
    b = -1;
    const int hi = indptr[x + 1];
    for (int p0 = indptr[x]; p0 < hi; p0 += 32) {
        int p = p0 + lane;
        int u = p < hi ? indices[p] : -1;
        unsigned m = __ballot_sync(0xffffffffu, u >= 0 && vc_rd<G>(deg + u) >= 0);
        while (m) {
            int src = __ffs(m) - 1;
            m &= m - 1;
            int w = __shfl_sync(0xffffffffu, u, src);
            if (a < 0) {
                a = w;
            } else {
                b = w;
                return;
            }
        }
    }
}

// Bitset mode (dense graphs, adj != nullptr): after a batch of deletions every live degree
// is recounted as popcount(adj[v] & live), n * wn word operations instead of one atomic
// per deleted edge end. `live` is block-shared scratch of wn words.
template <bool G>
__device__ void vc_recount(const unsigned* adj, int wn, int* deg, int n, unsigned* live)
{
    __syncthreads();
    const int lane = threadIdx.x & 31;
    for (int v0 = threadIdx.x - lane; v0 < n; v0 += blockDim.x) {
        int v = v0 + lane;
        unsigned m = __ballot_sync(0xffffffffu, v < n && vc_rd<G>(deg + v) >= 0);
        if (lane == 0) live[v0 >> 5] = m;
    }
    __syncthreads();
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        if (vc_rd<G>(deg + v) < 0) continue;
        const unsigned* row = adj + (size_t)v * wn;
        int c = 0;
        for (int w = 0; w < wn; ++w) c += __popc(__ldg(row + w) & live[w]);
        deg[v] = c;
    }
    if constexpr (G) {
        __threadfence();
    } else {
        __threadfence_block();
    }
    __syncthreads();
}

// Delete every live neighbour of v (add N(v) to the cover).
template <bool G>
__device__ void vc_take_neighbors(const int* indptr, const int* indices, int* deg, int n, int v,
                                  const unsigned* adj, int wn, unsigned* live)
{
    __syncthreads();
    if (adj != nullptr) {
        for (int p = indptr[v] + threadIdx.x; p < indptr[v + 1]; p += blockDim.x) {
            int u = indices[p];
            if (vc_rd<G>(deg + u) >= 0) atomicExch(deg + u, -1);
        }
        vc_recount<G>(adj, wn, deg, n, live);
        return;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int p = indptr[v] + warp; p < indptr[v + 1]; p += nwarps) {
        int u = indices[p];
        int du = lane == 0 ? vc_rd<G>(deg + u) : 0;
        if (__shfl_sync(0xffffffffu, du, 0) < 0) continue;
        if (lane == 0) atomicExch(deg + u, -1);
        vc_warp_unlink<G>(indptr, indices, deg, u, lane);
    }
    __threadfence_block();
    __syncthreads();
}

// Degree-one, degree-two-triangle and high-degree rules until nothing changes. Each round
// marks (phase A, on an unchanged graph) then deletes the marked vertices (phase B).
template <bool G>
__device__ void vc_reduce(const int* indptr, const int* indices, int* deg, int n, VcBlock& sh, const unsigned* adj,
                          int wn, unsigned* live)
{
    while (true) {
        __syncthreads();
        if (threadIdx.x == 0) sh.flag = 0;
        __syncthreads();
        if (sh.count > sh.limit) break;
        const int budget = sh.limit - sh.count;
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
        bool any = false;
        // phase A, 32 vertices per warp step: the high-degree rule per lane, the degree-one
        // and degree-two-triangle rules with the warp scanning the vertex's adjacency
        for (int base = warp << 5; base < n; base += nwarps << 5) {
            const int v = base + lane;
            int d = v < n ? vc_rd<G>(deg + v) : -1;
            d = d > 0 ? (d & VC_DMASK) : 0;
            if (d > budget) {  // high degree
                atomicOr(deg + v, VC_MARK);
                any = true;
            }
            unsigned m = __ballot_sync(0xffffffffu, d > 0 && d <= budget && d <= 2);
            while (m) {
                const int src = __ffs(m) - 1;
                m &= m - 1;
                const int x = base + src;
                const int dx = __shfl_sync(0xffffffffu, d, src);
                int ua, ub;
                vc_warp_live2<G>(indptr, indices, deg, x, lane, ua, ub);
                if (lane == 0) {
                    if (dx == 1 && ua >= 0) {
                        // an isolated edge: only the smaller endpoint is taken
                        int du = vc_rd<G>(deg + ua);
                        if (!((du & VC_DMASK) == 1 && ua > x)) {
                            atomicOr(deg + ua, VC_MARK);
                            any = true;
                        }
                    } else if (dx == 2 && ub >= 0 && vc_adjacent(indptr, indices, ua, ub)) {
                        // a triangle with several degree-two vertices: the smallest id acts
                        int da = vc_rd<G>(deg + ua) & VC_DMASK;
                        int db = vc_rd<G>(deg + ub) & VC_DMASK;
                        if (!((da == 2 && ua < x) || (db == 2 && ub < x))) {
                            atomicOr(deg + ua, VC_MARK);
                            atomicOr(deg + ub, VC_MARK);
                            any = true;
                        }
                    }
                }
                __syncwarp();
            }
        }
        if (any) sh.flag = 1;
        __syncthreads();
        if (!sh.flag) break;
        // phase B: delete the marked vertices, the warp unlinking each one's adjacency
        int local = 0;
        for (int base = warp << 5; base < n; base += nwarps << 5) {
            const int v = base + lane;
            const int d = v < n ? vc_rd<G>(deg + v) : -1;
            const bool marked = d >= 0 && (d & VC_MARK);
            if (marked) {
                atomicExch(deg + v, -1);
                ++local;
            }
            unsigned m = __ballot_sync(0xffffffffu, marked);
            if (adj != nullptr) continue;  // recounted below
            while (m) {
                const int src = __ffs(m) - 1;
                m &= m - 1;
                vc_warp_unlink<G>(indptr, indices, deg, base + src, lane);
            }
        }
        if (local) atomicAdd(&sh.count, local);
        if (adj != nullptr) {
            vc_recount<G>(adj, wn, deg, n, live);
        } else {
            __threadfence_block();
        }
    }
    __syncthreads();
}

// Max-degree vertex (smallest id among ties) and edge count.
template <bool G>
__device__ void vc_stats(const int* deg, int n, VcBlock& sh)
{
    long long key = -1;
    long long sum = 0;
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        int d = vc_rd<G>(deg + v);
        if (d > 0) {
            sum += d;
            long long k = ((long long)d << 32) | (long long)(0x7fffffff - v);
            if (k > key) key = k;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        long long ok = __shfl_down_sync(0xffffffffu, key, off);
        long long os = __shfl_down_sync(0xffffffffu, sum, off);
        if (ok > key) key = ok;
        sum += os;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sh.wkey[warp] = key; sh.wsum[warp] = sum; }
    __syncthreads();
    if (threadIdx.x == 0) {
        const int nw = (blockDim.x + 31) >> 5;
        long long bk = -1, bs = 0;
        for (int w = 0; w < nw; ++w) {
            if (sh.wkey[w] > bk) bk = sh.wkey[w];
            bs += sh.wsum[w];
        }
        sh.edges = bs / 2;
        if (bk < 0) { sh.dmax = 0; sh.vmax = -1; }
        else { sh.dmax = (int)(bk >> 32); sh.vmax = 0x7fffffff - (int)(bk & 0xffffffffLL); }
    }
    __syncthreads();
}

// Degree-sequence bound (beyond the paper): k more vertices cover at most the sum of the
// k largest degrees, so a node whose budget k = limit - count falls short of the edge count
// cannot lead to a cover within the limit. The paper's rule (edges > k * dmax) is the
// special case that takes every degree as dmax. A shared histogram of the degrees (bins
// above VC_HIST_BINS - 2 merged and valued at dmax, which keeps the bound valid), then
// warp 0 sums the k largest from the top bin down. True when the node survives.
template <bool G>
__device__ bool vc_degree_bound(const int* deg, int n, VcBlock& sh, int* hist)
{
    const int top = min(sh.dmax, VC_HIST_BINS - 1);
    for (int i = threadIdx.x; i <= top; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        const int d = vc_rd<G>(deg + v);
        if (d > 0) atomicAdd(hist + min(d, top), 1);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        long long sum = 0;
        int left = sh.limit - sh.count;
        for (int b0 = top; b0 > 0 && left > 0; b0 -= 32) {
            const int b = b0 - lane;  // lane 0 holds the highest bin of the chunk
            const int c = b > 0 ? hist[b] : 0;
            int upto = c;             // vertices in this lane's bin and the higher ones
            for (int off = 1; off < 32; off <<= 1) {
                const int t = __shfl_up_sync(0xffffffffu, upto, off);
                if (lane >= off) upto += t;
            }
            const int take = max(0, min(c, left - (upto - c)));
            long long s = (long long)take * (b == top ? sh.dmax : b);
            for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
            sum += s;
            left -= __shfl_sync(0xffffffffu, upto, 31);
        }
        if (lane == 0) sh.flag = sum >= sh.edges ? 1 : 0;
    }
    __syncthreads();
    return sh.flag != 0;
}

// Record a cover (all edges gone) if it beats the best one: lock, copy, publish.
template <bool G>
__device__ void vc_record(const int* cur, int n, int* best_deg, int* ctl, int pvc, VcBlock& sh)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        while (atomicCAS(ctl + CTL_LOCK, 0, 1) != 0) vc_sleep();
        __threadfence();
        int b = vc_vload(ctl + CTL_BEST);
        sh.flag = (b < 0 || sh.count < b) ? 1 : 0;
    }
    __syncthreads();
    if (sh.flag) {
        for (int i = threadIdx.x; i < n; i += blockDim.x) best_deg[i] = vc_rd<G>(cur + i);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        if (sh.flag) {
            atomicExch(ctl + CTL_BEST, sh.count);
            atomicMin(ctl + CTL_LIMIT, sh.count - 1);
            if (pvc) atomicExch(ctl + CTL_FOUND, 1);
        }
        __threadfence();
        atomicExch(ctl + CTL_LOCK, 0);
    }
    __syncthreads();
}

// Visit the node in `cur`: reduce, check the stopping conditions, record a cover.
// Returns true when the node must branch on sh.vmax.
template <bool G>
__device__ bool vc_visit(const int* indptr, const int* indices, int* cur, int n, int* best_deg, int* ctl,
                         int pvc, VcBlock& sh, long long& nodes, const unsigned* adj, int wn, unsigned* live)
{
    // `live` (VC_HIST_BINS words) doubles as the histogram of the degree bound
    __syncthreads();
    if (threadIdx.x == 0) {
        sh.limit = vc_vload(ctl + CTL_LIMIT);
        ++nodes;
    }
    __syncthreads();
    if (sh.count > sh.limit) return false;
    vc_reduce<G>(indptr, indices, cur, n, sh, adj, wn, live);
    if (sh.count > sh.limit) return false;
    vc_stats<G>(cur, n, sh);
    if (sh.edges == 0) {
        vc_record<G>(cur, n, best_deg, ctl, pvc, sh);
        return false;
    }
    if (sh.edges > (long long)(sh.limit - sh.count) * (long long)sh.dmax) return false;
    return vc_degree_bound<G>(cur, n, sh, reinterpret_cast<int*>(live));
}

__device__ __forceinline__ bool vc_should_stop(const int* ctl)
{
    return vc_vload(ctl + CTL_FOUND) || vc_vload(ctl + CTL_STOP) || vc_vload(ctl + CTL_OVERFLOW);
}

// Block-uniform read of the stop flags (thread 0 reads, everyone sees the same answer).
__device__ __forceinline__ bool vc_stop_uniform(const int* ctl, VcBlock& sh)
{
    __syncthreads();
    if (threadIdx.x == 0) sh.done = vc_should_stop(ctl) ? 1 : 0;
    __syncthreads();
    return sh.done != 0;
}

__device__ __forceinline__ int vc_smid()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return (int)r;
}

template <bool SH>
__device__ void vc_hybrid(const int* __restrict__ indptr, const int* __restrict__ indices, int n,
                          const int* root, int root_count, int* stacks, int* stack_cnt, int S,
                          int* work, int* work_cnt, unsigned* ticket, int W, int threshold,
                          int* scratch, int* best_deg, int* ctl, long long* nodes_out, int* smid_out,
                          int pvc, int start_depth, const unsigned* adj, int wn)
{
    constexpr bool G = !SH;
    extern __shared__ int vc_dyn[];
    __shared__ VcBlock sh;
    __shared__ unsigned vc_live[VC_HIST_BINS];  // bitset live mask, degree histogram
    int* cur = SH ? vc_dyn : scratch + (size_t)blockIdx.x * n;
    int* mystack = stacks + (size_t)blockIdx.x * S * n;
    int* mycnt = stack_cnt + (size_t)blockIdx.x * S;
    long long nodes = 0;
    if (threadIdx.x == 0) {
        sh.sp = 0;
        sh.holding = 0;
        smid_out[blockIdx.x] = vc_smid();
    }
    __syncthreads();
    bool need = true;
    while (true) {
        if (need) {
            if (sh.sp > 0) {
                vc_copy<G, true>(cur, mystack + (size_t)(sh.sp - 1) * n, n);
                __syncthreads();
                if (threadIdx.x == 0) {
                    sh.count = mycnt[sh.sp - 1];
                    sh.sp -= 1;
                }
                __syncthreads();
            } else {
                if (threadIdx.x == 0) {
                    if (sh.holding) {
                        __threadfence();
                        atomicSub(ctl + CTL_PENDING, 1);
                        sh.holding = 0;
                    }
                    sh.done = 0;
                    while (true) {
                        if (vc_should_stop(ctl)) { sh.done = 1; break; }
                        if (vc_vload(ctl + CTL_AVAIL) > 0) {
                            if (atomicSub(ctl + CTL_AVAIL, 1) > 0) {
                                unsigned pos = (unsigned)atomicAdd(ctl + CTL_HEAD, 1);
                                sh.slot = (int)(pos % (unsigned)W);
                                sh.round = pos / (unsigned)W;
                                while (vc_vloadu(ticket + sh.slot) != 2u * sh.round + 1u) vc_sleep();
                                break;
                            }
                            atomicAdd(ctl + CTL_AVAIL, 1);
                        }
                        if (vc_vload(ctl + CTL_PENDING) == 0) { sh.done = 1; break; }
                        vc_sleep();
                    }
                    __threadfence();
                }
                __syncthreads();
                if (sh.done) break;
                vc_copy<G, true>(cur, work + (size_t)sh.slot * n, n);
                __threadfence();
                __syncthreads();
                if (threadIdx.x == 0) {
                    sh.count = __ldcg(work_cnt + sh.slot);
                    __threadfence();
                    atomicExch(ticket + sh.slot, 2u * sh.round + 2u);
                    atomicSub(ctl + CTL_QSIZE, 1);
                    sh.holding = 1;
                }
                __syncthreads();
            }
        }
        if (vc_stop_uniform(ctl, sh)) break;
        if (!vc_visit<G>(indptr, indices, cur, n, best_deg, ctl, pvc, sh, nodes, adj, wn, vc_live)) {
            need = true;
            continue;
        }
        // branch on vmax: child "take N(vmax)" goes to the worklist or the stack,
        // the block continues with child "take vmax"
        if (threadIdx.x == 0) {
            sh.kind = 2;
            if (sh.count + sh.dmax <= sh.limit) {
                sh.kind = 0;
                if (vc_vload(ctl + CTL_QSIZE) < threshold) {
                    atomicAdd(ctl + CTL_PENDING, 1);
                    if (atomicAdd(ctl + CTL_QSIZE, 1) < W) {
                        unsigned pos = (unsigned)atomicAdd(ctl + CTL_TAIL, 1);
                        sh.slot = (int)(pos % (unsigned)W);
                        sh.round = pos / (unsigned)W;
                        while (vc_vloadu(ticket + sh.slot) != 2u * sh.round) vc_sleep();
                        sh.kind = 1;
                    } else {
                        atomicSub(ctl + CTL_QSIZE, 1);
                        atomicSub(ctl + CTL_PENDING, 1);
                    }
                }
                if (sh.kind == 0 && sh.sp >= S) {
                    atomicExch(ctl + CTL_OVERFLOW, 1);
                    sh.kind = 2;
                }
            }
        }
        __syncthreads();
        if (sh.kind != 2) {
            int* dst = sh.kind == 1 ? work + (size_t)sh.slot * n : mystack + (size_t)sh.sp * n;
            vc_copy<true, G>(dst, cur, n);
            vc_take_neighbors<true>(indptr, indices, dst, n, sh.vmax, adj, wn, vc_live);
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) {
                if (sh.kind == 1) {
                    work_cnt[sh.slot] = sh.count + sh.dmax;
                    __threadfence();
                    atomicExch(ticket + sh.slot, 2u * sh.round + 1u);
                    atomicAdd(ctl + CTL_AVAIL, 1);
                } else {
                    mycnt[sh.sp] = sh.count + sh.dmax;
                    sh.sp += 1;
                }
            }
        }
        vc_take<G>(indptr, indices, cur, sh.vmax);
        if (threadIdx.x == 0) sh.count += 1;
        __syncthreads();
        need = false;
    }
    if (threadIdx.x == 0) nodes_out[blockIdx.x] = nodes;
}

template <bool SH>
__device__ void vc_stackonly(const int* __restrict__ indptr, const int* __restrict__ indices, int n,
                             const int* root, int root_count, int* stacks, int* stack_cnt, int S,
                             int* work, int* work_cnt, unsigned* ticket, int W, int threshold,
                             int* scratch, int* best_deg, int* ctl, long long* nodes_out, int* smid_out,
                             int pvc, int start_depth, const unsigned* adj, int wn)
{
    constexpr bool G = !SH;
    extern __shared__ int vc_dyn[];
    __shared__ VcBlock sh;
    __shared__ unsigned vc_live[VC_HIST_BINS];  // bitset live mask, degree histogram
    int* cur = SH ? vc_dyn : scratch + (size_t)blockIdx.x * n;
    int* mystack = stacks + (size_t)blockIdx.x * S * n;
    int* mycnt = stack_cnt + (size_t)blockIdx.x * S;
    long long nodes = 0;
    const int D = start_depth;
    const long long ntasks = 1LL << D;
    if (threadIdx.x == 0) smid_out[blockIdx.x] = vc_smid();
    while (true) {
        if (threadIdx.x == 0) {
            sh.done = 0;
            if (vc_should_stop(ctl)) {
                sh.done = 1;
            } else {
                sh.task = atomicAdd(ctl + CTL_NEXT, 1);
                if ((long long)sh.task >= ntasks) sh.done = 1;
            }
            sh.count = root_count;
            sh.sp = 0;
        }
        __syncthreads();
        if (sh.done) break;
        vc_copy<G, true>(cur, root, n);
        // walk down from the root to sub-tree `task` (redundantly, as in prior work)
        bool alive = true;
        for (int level = 0; level < D; ++level) {
            if (!vc_visit<G>(indptr, indices, cur, n, best_deg, ctl, pvc, sh, nodes, adj, wn, vc_live)) { alive = false; break; }
            const int bit = (sh.task >> (D - 1 - level)) & 1;
            if (bit == 0) {
                vc_take<G>(indptr, indices, cur, sh.vmax);
                if (threadIdx.x == 0) sh.count += 1;
            } else {
                if (sh.count + sh.dmax > sh.limit) { alive = false; break; }
                vc_take_neighbors<G>(indptr, indices, cur, n, sh.vmax, adj, wn, vc_live);
                if (threadIdx.x == 0) sh.count += sh.dmax;
            }
            __syncthreads();
        }
        __syncthreads();
        if (!alive) continue;
        // depth-first traversal of the sub-tree with the local stack
        while (true) {
            if (vc_stop_uniform(ctl, sh)) break;
            if (vc_visit<G>(indptr, indices, cur, n, best_deg, ctl, pvc, sh, nodes, adj, wn, vc_live)) {
                if (threadIdx.x == 0) {
                    sh.kind = 2;
                    if (sh.count + sh.dmax <= sh.limit) {
                        sh.kind = 0;
                        if (sh.sp >= S) { atomicExch(ctl + CTL_OVERFLOW, 1); sh.kind = 2; }
                    }
                }
                __syncthreads();
                if (sh.kind == 0) {
                    int* dst = mystack + (size_t)sh.sp * n;
                    vc_copy<true, G>(dst, cur, n);
                    vc_take_neighbors<true>(indptr, indices, dst, n, sh.vmax, adj, wn, vc_live);
                    __threadfence_block();
                    __syncthreads();
                    if (threadIdx.x == 0) {
                        mycnt[sh.sp] = sh.count + sh.dmax;
                        sh.sp += 1;
                    }
                }
                vc_take<G>(indptr, indices, cur, sh.vmax);
                if (threadIdx.x == 0) sh.count += 1;
                __syncthreads();
                continue;
            }
            __syncthreads();
            if (sh.sp == 0) break;
            vc_copy<G, true>(cur, mystack + (size_t)(sh.sp - 1) * n, n);
            if (threadIdx.x == 0) {
                sh.count = mycnt[sh.sp - 1];
                sh.sp -= 1;
            }
            __syncthreads();
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) nodes_out[blockIdx.x] = nodes;
}

#define VC_ARGS                                                                                        \
    const int* __restrict__ indptr, const int* __restrict__ indices, int n, const int* root, int root_count, \
        int* stacks, int* stack_cnt, int S, int* work, int* work_cnt, unsigned* ticket, int W,            \
        int threshold, int* scratch, int* best_deg, int* ctl, long long* nodes_out, int* smid_out, int pvc, \
        int start_depth, const unsigned* adj, int wn
#define VC_PASS                                                                                        \
    indptr, indices, n, root, root_count, stacks, stack_cnt, S, work, work_cnt, ticket, W, threshold,     \
        scratch, best_deg, ctl, nodes_out, smid_out, pvc, start_depth, adj, wn

extern "C" __global__ void vc_hybrid_shared(VC_ARGS) { vc_hybrid<true>(VC_PASS); }
extern "C" __global__ void vc_hybrid_global(VC_ARGS) { vc_hybrid<false>(VC_PASS); }
extern "C" __global__ void vc_stackonly_shared(VC_ARGS) { vc_stackonly<true>(VC_PASS); }
extern "C" __global__ void vc_stackonly_global(VC_ARGS) { vc_stackonly<false>(VC_PASS); }
