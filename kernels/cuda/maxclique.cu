// Maximum clique: colouring branch and bound (MCQ/BBMC style), one warp per work item.
//
// The host splits the search two levels deep (kernels/cliques/, _bb_gpu_plan):
// sub-problem s is a vertex v with its candidate set P (later neighbours in the
// degeneracy order), relabelled so that local index = position in the greedy colouring
// of P; item (s, j) is the branch {v, P[j]} whose candidates are P[0..j) & N(P[j]) and
// whose colour bound is col[j]. Items come in the order the sequential search would visit
// them (sub-problems in reverse degeneracy order, j descending), so large cliques are
// found early; warps take them from a shared counter.
//
// Inside an item the warp runs the sequential algorithm with an explicit stack, the
// lanes working over bitset words (copy/AND/popcount, first-set-bit by ballot, colour
// class elimination). The best size is shared by all warps (packed with the winning
// warp's id in one 64-bit word, raised by compare-and-swap only when strictly larger);
// each warp keeps its own best clique in a slot that the host reads at the end.
//
// Per-warp scratch (global memory): SP[(K+3) x Wm] candidate bitsets per depth,
// L/C[(K+3) x K] colour order and colours per depth, idx/clq[(K+3)].
// Dynamic shared memory: two Wm-word bitsets (U, Q) per warp for the colouring.

typedef unsigned long long u64;

#define FULL 0xffffffffu
#define HOST_CLIQUE 0xffffffffull

__device__ __forceinline__ int warp_sum(int x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(FULL, x, o);
    return x;
}

__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ int shared_best(const u64 *best_packed) {
    return (int)(*(volatile const u64 *)best_packed >> 32);
}

// Greedy sequential colouring of P (W words): L lists the vertices by colour class, C
// holds their colours (1-based); returns the number of vertices.
__device__ int colour_sort(const u64 *rows, int W, const u64 *P, int *L, int *C, u64 *U, u64 *Q, int lane) {
    int rem = 0;
    for (int w = lane; w < W; w += 32) {
        U[w] = P[w];
        rem += __popcll(P[w]);
    }
    rem = warp_sum(rem);
    __syncwarp();
    int cnt = 0, col = 0;
    int first = 0;  // words of U below `first` are empty
    while (rem > 0) {
        ++col;
        for (int w = first + lane; w < W; w += 32) Q[w] = U[w];
        __syncwarp();
        int w0 = first;
        bool first_known = false;
        while (true) {
            int found = -1;
            u64 x = 0;
            for (int base = w0; base < W; base += 32) {
                int w = base + lane;
                u64 q = w < W ? Q[w] : 0ull;
                unsigned m = __ballot_sync(FULL, q != 0ull);
                if (m) {
                    int src = __ffs(m) - 1;
                    found = base + src;
                    x = __shfl_sync(FULL, q, src);
                    break;
                }
            }
            if (found < 0) break;
            if (!first_known) {  // the first vertex of a class is the first of U
                first = found;
                first_known = true;
            }
            int b = __ffsll((long long)x) - 1;
            int i = (found << 6) + b;
            const u64 *row = rows + (long long)i * W;
            u64 bit = 1ull << b;
            __syncwarp();
            for (int w = found + lane; w < W; w += 32) {
                u64 q = Q[w] & ~row[w];
                if (w == found) {
                    q &= ~bit;
                    U[w] &= ~bit;
                    L[cnt] = i;
                    C[cnt] = col;
                }
                Q[w] = q;
            }
            __syncwarp();
            ++cnt;
            --rem;
            w0 = found;
        }
    }
    return cnt;
}

// Raise the shared best to `size` if larger; the winner writes its clique into its slot.
__device__ void record(u64 *best_packed, int *slot, long long gw, int size, int v, const int *pv, const int *clq,
                       int lane) {
    if (lane == 0) {
        u64 mine = ((u64)size << 32) | (u64)gw;
        u64 old = *(volatile u64 *)best_packed;
        while ((int)(old >> 32) < size) {
            u64 prev = atomicCAS(best_packed, old, mine);
            if (prev == old) {
                slot[0] = v;
                for (int t = 2; t <= size; ++t) slot[t - 1] = pv[clq[t]];
                break;
            }
            old = prev;
        }
    }
    __syncwarp();
}

extern "C" __global__ void max_clique_kernel(
    const u64 *rows_all, const int *pv_all, const int *sub_v, const int *sub_k, const long long *sub_row_off,
    const long long *sub_pv_off, const int *item_sub, const int *item_j, const int *item_col, long long nitems,
    unsigned long long *queue, u64 *best_packed, int *slots, u64 *wbits, int *wints, int Wm, int K, int nwarps,
    unsigned long long *nodes_total, int *stop, long long budget_ns) {
    extern __shared__ u64 smem[];
    int lane = threadIdx.x & 31;
    int wib = threadIdx.x >> 5;
    long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (gw >= nwarps) return;
    u64 *U = smem + (long long)wib * 2 * Wm;
    u64 *Q = U + Wm;
    const long long depths = K + 3;
    u64 *SP = wbits + gw * depths * Wm;
    int *L = wints + gw * (2 * depths * K + 2 * depths);
    int *C = L + depths * K;
    int *idx = C + depths * K;
    int *clq = idx + depths;
    int *slot = slots + gw * (K + 2);
    u64 start = global_ns();
    long long nodes = 0;
    bool halted = false;
    while (!halted) {
        unsigned long long t = 0;
        if (lane == 0) t = atomicAdd(queue, 1ull);
        t = __shfl_sync(FULL, t, 0);
        if ((long long)t >= nitems || *(volatile int *)stop) break;
        int s = item_sub[t], j0 = item_j[t];
        int best = shared_best(best_packed);
        if (1 + item_col[t] <= best) continue;
        int k = sub_k[s], v = sub_v[s];
        int W = (k + 63) >> 6;
        const u64 *rows = rows_all + sub_row_off[s];
        const int *pv = pv_all + sub_pv_off[s];
        // depth 2: clique {v, P[j0]}, candidates P[0..j0) & N(P[j0])
        int pc = 0;
        const u64 *r0 = rows + (long long)j0 * W;
        for (int w = lane; w < W; w += 32) {
            int jw = j0 >> 6;
            u64 pre = w < jw ? ~0ull : (w == jw ? ((1ull << (j0 & 63)) - 1ull) : 0ull);
            u64 a = r0[w] & pre;
            SP[2 * Wm + w] = a;
            pc += __popcll(a);
        }
        pc = warp_sum(pc);
        clq[2] = j0;
        ++nodes;
        if (pc == 0) {
            if (2 > best) record(best_packed, slot, gw, 2, v, pv, clq, lane);
            continue;
        }
        if (2 + pc <= best) continue;
        __syncwarp();
        idx[2] = colour_sort(rows, W, SP + 2 * Wm, L + 2 * K, C + 2 * K, U, Q, lane);
        __syncwarp();
        int d = 2;
        while (d >= 2) {
            int j = idx[d];
            if (j == 0) {
                --d;
                continue;
            }
            --j;
            __syncwarp();
            idx[d] = j;
            best = shared_best(best_packed);
            if (d + C[d * K + j] <= best) {  // the remaining colours cannot beat best
                __syncwarp();
                idx[d] = 0;
                --d;
                continue;
            }
            int i = L[d * K + j];
            const u64 *row = rows + (long long)i * W;
            u64 *cur = SP + (long long)d * Wm;
            u64 *nxt = cur + Wm;
            pc = 0;
            for (int w = lane; w < W; w += 32) {
                u64 a = cur[w] & row[w];
                nxt[w] = a;
                pc += __popcll(a);
                if (w == (i >> 6)) cur[w] &= ~(1ull << (i & 63));
            }
            pc = warp_sum(pc);
            clq[d + 1] = i;
            ++nodes;
            if ((nodes & 255) == 0 && budget_ns > 0) {
                int h = 0;
                if (lane == 0) {
                    if ((long long)(global_ns() - start) > budget_ns) atomicExch(stop, 1);
                    h = *(volatile int *)stop;
                }
                if (__shfl_sync(FULL, h, 0)) {
                    halted = true;
                    break;
                }
            }
            if (pc == 0) {
                if (d + 1 > best) record(best_packed, slot, gw, d + 1, v, pv, clq, lane);
                continue;
            }
            if (d + 1 + pc <= best) continue;
            __syncwarp();
            idx[d + 1] = colour_sort(rows, W, nxt, L + (d + 1) * K, C + (d + 1) * K, U, Q, lane);
            __syncwarp();
            ++d;
        }
    }
    if (lane == 0) atomicAdd(nodes_total, (unsigned long long)nodes);
}
