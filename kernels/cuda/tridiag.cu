// Tridiagonal solves on the GPU by a partitioned (SPIKE-like) method.
//
// The N rows (padded to P*C with rows (0, 1, 0), read in place) are cut into P chunks of C rows. Rows 0..C-2 of a chunk are
// its interior, row C-1 its separator. Each thread factorizes one chunk interior (Thomas,
// no pivoting; tiny pivots are boosted and counted) and computes the two spikes v, w
// (interior responses to the separators on the left and right). The separators form a
// tridiagonal system of size P (the next level, solved the same way, recursively); then
// each thread recovers its interior. Per-chunk arrays are stored interleaved (index
// i * P + j) so that neighbouring threads access neighbouring addresses.
// templates: chunk_factor<V,I>, reduced_coeffs<V,I>, chunk_forward<V,I>, reduced_rhs<V,I>, interleave_index<I>, chunk_back<V,I>, thomas_factor<V,I>, thomas_solve<V,I>, extract_tridiagonal<V,I>

// A pivot is tiny when |den| <= eps * (|dl| + |d| + |du|) of its own row (1 for a zero row).
template <typename V>
__device__ __forceinline__ V boost(V den, V local, int* boosted) {
    const V eps = sizeof(V) == 4 ? V(1e-6) : V(1e-13);
    const V scale = local > V(0) ? local : V(1);
    if (fabs(den) <= eps * scale) {
        atomicAdd(boosted, 1);
        return den < V(0) ? -eps * scale : eps * scale;
    }
    return den;
}

// Coefficient of row r of a level with N rows, read in place: rows beyond N are padding
// (0, 1, 0), and nothing couples into row 0 or out of row N - 1.
template <typename V, typename I>
__device__ __forceinline__ V lower_at(const V* dl, size_t r, I N) { return r > 0 && r < (size_t)N ? dl[r] : V(0); }
template <typename V, typename I>
__device__ __forceinline__ V diag_at(const V* d, size_t r, I N) { return r < (size_t)N ? d[r] : V(1); }
template <typename V, typename I>
__device__ __forceinline__ V upper_at(const V* du, size_t r, I N) { return r + 1 < (size_t)N ? du[r] : V(0); }

// dl, d, du: level coefficients in natural (row) order, length N <= P*C.
template <typename V, typename I>
__global__ void chunk_factor(const I P, const int C, const I N, const V* __restrict__ dl, const V* __restrict__ d,
                             const V* __restrict__ du, V* __restrict__ inv_den, V* __restrict__ cp,
                             V* __restrict__ ldl, V* __restrict__ v, V* __restrict__ w,
                             int* __restrict__ boosted) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t base = (size_t)j * C;
    const int n = C - 1;
    V prev_cp = 0, zv = 0, zw = 0;
    for (int i = 0; i < n; ++i) {
        const size_t t = (size_t)i * P + j;
        const V di = diag_at(d, base + i, N), ui = upper_at(du, base + i, N);
        const V a = i > 0 ? lower_at(dl, base + i, N) : V(0);
        const V den = boost(di - a * prev_cp, fabs(di) + fabs(a) + fabs(ui), boosted);
        const V inv = V(1) / den;
        prev_cp = ui * inv;
        if (i == n - 1) prev_cp = 0;  // the last interior row couples to the separator (spike w)
        inv_den[t] = inv;
        cp[t] = prev_cp;
        ldl[t] = a;
        // forward sweeps of the spikes: v from dl[base] at row 0, w from du[base+n-1] at row n-1
        zv = ((i == 0 ? lower_at(dl, base, N) : V(0)) - a * zv) * inv;
        zw = ((i == n - 1 ? ui : V(0)) - a * zw) * inv;
        v[t] = zv;
        w[t] = zw;
    }
    V nv = 0, nw = 0;
    for (int i = n - 1; i >= 0; --i) {
        const size_t t = (size_t)i * P + j;
        nv = v[t] - cp[t] * nv;
        nw = w[t] - cp[t] * nw;
        v[t] = nv;
        w[t] = nw;
    }
}

// Separator system: a_j L_{j-1} + b_j L_j + c_j L_{j+1} = g_j. The separator rows' own
// off-diagonal coefficients are kept (sep_lo, sep_hi) for the right-hand side at apply time.
template <typename V, typename I>
__global__ void reduced_coeffs(const I P, const int C, const I N, const V* __restrict__ dl, const V* __restrict__ d,
                               const V* __restrict__ du, const V* __restrict__ v, const V* __restrict__ w,
                               V* __restrict__ ra, V* __restrict__ rb, V* __restrict__ rc,
                               V* __restrict__ sep_lo, V* __restrict__ sep_hi) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t s = (size_t)j * C + C - 1;
    const int n = C - 1;
    const V lo = n > 0 ? lower_at(dl, s, N) : V(0), hi = upper_at(du, s, N);
    V a = 0, b = diag_at(d, s, N), c = 0;
    if (n > 0) {
        a = -lo * v[(size_t)(n - 1) * P + j];
        b -= lo * w[(size_t)(n - 1) * P + j];
    } else {
        a = lo;
    }
    if (j + 1 < P) {
        if (n > 0) {
            b -= hi * v[j + 1];
            c = -hi * w[j + 1];
        } else {
            c = hi;
        }
    }
    ra[j] = j > 0 ? a : V(0);
    rb[j] = b;
    rc[j] = c;
    sep_lo[j] = lo;
    sep_hi[j] = hi;
}

// Forward/backward sweep of each chunk interior: y = T_int^{-1} b. With `gather`, the
// right-hand side of row r is x[gather[r]] (gather < 0: padding, zero).
template <typename V, typename I>
__global__ void chunk_forward(const I P, const int C, const I N, const V* __restrict__ x, const I* __restrict__ gather,
                              const V* __restrict__ inv_den, const V* __restrict__ cp, const V* __restrict__ ldl,
                              V* __restrict__ y, V* __restrict__ sep_b) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const int n = C - 1;
    V z = 0;
    for (int i = 0; i < C; ++i) {
        const size_t r = (size_t)j * C + i;
        V b = 0;
        if (gather) {
            const I g = gather[(size_t)i * P + j];
            b = g >= 0 ? x[g] : V(0);
        } else if (r < (size_t)N) {
            b = x[r];
        }
        if (i == n) {
            sep_b[j] = b;
            break;
        }
        const size_t t = (size_t)i * P + j;
        z = (b - ldl[t] * z) * inv_den[t];
        y[t] = z;
    }
    V next = 0;
    for (int i = n - 1; i >= 0; --i) {
        const size_t t = (size_t)i * P + j;
        next = y[t] - cp[t] * next;
        y[t] = next;
    }
}

template <typename V, typename I>
__global__ void reduced_rhs(const I P, const int C, const V* __restrict__ sep_lo, const V* __restrict__ sep_hi,
                            const V* __restrict__ y, const V* __restrict__ sep_b, V* __restrict__ g) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const int n = C - 1;
    V val = sep_b[j];
    if (n > 0) val -= sep_lo[j] * y[(size_t)(n - 1) * P + j];
    if (n > 0 && j + 1 < P) val -= sep_hi[j] * y[j + 1];
    g[j] = val;
}

// Level-0 gather/scatter index in the interleaved layout: out[i * P + j] = perm[j * C + i]
// (-1 for padding rows).
template <typename I>
__global__ void interleave_index(const I P, const int C, const I N, const I* __restrict__ perm, I* __restrict__ out) {
    const size_t total = (size_t)P * C;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total; t += (size_t)gridDim.x * blockDim.x) {
        const size_t r = (t % P) * C + t / P;
        out[t] = r < (size_t)N ? perm[r] : (I)-1;
    }
}

// x_interior = y - L_{j-1} v - L_j w; separators are L. With `scatter`, row r goes to
// out[scatter[r]] (scatter < 0: padding, dropped), else to out[r] for r < N.
template <typename V, typename I>
__global__ void chunk_back(const I P, const int C, const I N, const V* __restrict__ y, const V* __restrict__ v,
                           const V* __restrict__ w, const V* __restrict__ L, const I* __restrict__ scatter,
                           V* __restrict__ out) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const V left = j > 0 ? L[j - 1] : V(0);
    const V right = L[j];
    for (int i = 0; i < C; ++i) {
        const size_t t = (size_t)i * P + j;
        const V val = i == C - 1 ? right : y[t] - left * v[t] - right * w[t];
        if (scatter) {
            const I s = scatter[t];
            if (s >= 0) out[s] = val;
        } else {
            const size_t r = (size_t)j * C + i;
            if (r < (size_t)N) out[r] = val;
        }
    }
}

// Plain Thomas for the small bottom level (one thread).
template <typename V, typename I>
__global__ void thomas_factor(const I n, const V* __restrict__ dl, const V* __restrict__ d, const V* __restrict__ du,
                              V* __restrict__ inv_den, V* __restrict__ cp, int* __restrict__ boosted) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    V prev = 0;
    for (I i = 0; i < n; ++i) {
        const V a = i > 0 ? dl[i] : V(0);
        const V den = boost(d[i] - a * prev, fabs(d[i]) + fabs(a) + fabs(du[i]), boosted);
        inv_den[i] = V(1) / den;
        prev = du[i] * inv_den[i];
        cp[i] = prev;
    }
}

template <typename V, typename I>
__global__ void thomas_solve(const I n, const V* __restrict__ dl, const V* __restrict__ inv_den, const V* __restrict__ cp,
                             const V* __restrict__ b, V* __restrict__ x) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    V z = 0;
    for (I i = 0; i < n; ++i) {
        z = (b[i] - (i > 0 ? dl[i] : V(0)) * z) * inv_den[i];
        x[i] = z;
    }
    V next = 0;
    for (I i = n - 1; i >= 0; --i) {
        next = x[i] - cp[i] * next;
        x[i] = next;
    }
}

// One pass over the CSR entries of A: the tridiagonal coefficients in the permuted order,
// one thread per new row k (coalesced writes) reading old row i = perm[k]. Its neighbours
// in the new order are perm[k - 1] and perm[k + 1]; with partners (N x 2 forest) an entry
// enters an off-diagonal only along a forest edge (consecutive vertices of one path), so
// no inverse permutation is needed. Without perm: the original ordering's neighbours.
template <typename V, typename I>
__global__ void extract_tridiagonal(const I N, const I* __restrict__ indptr, const I* __restrict__ indices,
                                    const V* __restrict__ data, const I* __restrict__ perm,
                                    const I* __restrict__ partners, V* __restrict__ dl, V* __restrict__ d,
                                    V* __restrict__ du) {
    for (I k = blockIdx.x * (I)blockDim.x + threadIdx.x; k < N; k += (I)gridDim.x * blockDim.x) {
        const I i = perm ? perm[k] : k;
        const I lo = k > 0 ? (perm ? perm[k - 1] : k - 1) : (I)-1;
        const I hi = k + 1 < N ? (perm ? perm[k + 1] : k + 1) : (I)-1;
        V diag = 0, lower = 0, upper = 0;
        const I p0 = partners ? partners[2 * (size_t)i] : (I)-1, p1 = partners ? partners[2 * (size_t)i + 1] : (I)-1;
        for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
            const I j = indices[e];
            if (j == i) {
                diag += data[e];
                continue;
            }
            if (partners && j != p0 && j != p1) continue;
            if (j == lo) lower += data[e];
            else if (j == hi) upper += data[e];
        }
        d[k] = diag;
        dl[k] = lower;
        du[k] = upper;
    }
}

// ---------------------------------------------------------------------------------------
// 2x2 block tridiagonal systems (AlgTriBlock), the same partitioned scheme with 2x2
// blocks: a block row k is L_k x_{k-1} + D_k x_k + U_k x_{k+1} = b_k. Matrices are stored
// as 4 values (row-major), vectors as 2. Per-chunk interior arrays are interleaved
// (block index t = i * P + j). The level-0 right-hand side is gathered through `gather`
// (2 entries per block row; < 0: ghost unknown with right-hand side 1) and the solution
// scattered through the same array (ghosts dropped).
// templates: block_chunk_factor<V,I>, block_reduced_coeffs<V,I>, block_chunk_forward<V,I>, block_reduced_rhs<V,I>, block_chunk_back<V,I>, block_thomas_factor<V,I>, block_thomas_solve<V,I>, extract_blocks<V,I>

template <typename V>
struct M2 {
    V a, b, c, d;  // [[a, b], [c, d]]
};
template <typename V>
struct V2 {
    V x, y;
};

template <typename V>
__device__ __forceinline__ M2<V> m2_load(const V* p, size_t t) {
    return M2<V>{p[4 * t], p[4 * t + 1], p[4 * t + 2], p[4 * t + 3]};
}
template <typename V>
__device__ __forceinline__ void m2_store(V* p, size_t t, const M2<V>& m) {
    p[4 * t] = m.a;
    p[4 * t + 1] = m.b;
    p[4 * t + 2] = m.c;
    p[4 * t + 3] = m.d;
}
template <typename V>
__device__ __forceinline__ V2<V> v2_load(const V* p, size_t t) {
    return V2<V>{p[2 * t], p[2 * t + 1]};
}
template <typename V>
__device__ __forceinline__ void v2_store(V* p, size_t t, const V2<V>& v) {
    p[2 * t] = v.x;
    p[2 * t + 1] = v.y;
}
template <typename V>
__device__ __forceinline__ M2<V> m2_mul(const M2<V>& p, const M2<V>& q) {
    return M2<V>{p.a * q.a + p.b * q.c, p.a * q.b + p.b * q.d, p.c * q.a + p.d * q.c, p.c * q.b + p.d * q.d};
}
template <typename V>
__device__ __forceinline__ M2<V> m2_sub(const M2<V>& p, const M2<V>& q) {
    return M2<V>{p.a - q.a, p.b - q.b, p.c - q.c, p.d - q.d};
}
template <typename V>
__device__ __forceinline__ V2<V> mv(const M2<V>& p, const V2<V>& v) {
    return V2<V>{p.a * v.x + p.b * v.y, p.c * v.x + p.d * v.y};
}
template <typename V>
__device__ __forceinline__ V2<V> v2_sub(const V2<V>& p, const V2<V>& q) {
    return V2<V>{p.x - q.x, p.y - q.y};
}
template <typename V>
__device__ __forceinline__ V m2_abs(const M2<V>& p) {
    return fabs(p.a) + fabs(p.b) + fabs(p.c) + fabs(p.d);
}

// Inverse of a pivot block; a (near-)singular block is boosted on its diagonal by
// eps * |row block| (then its off-diagonal dropped if still singular) and counted.
template <typename V>
__device__ __forceinline__ M2<V> m2_inverse_boosted(M2<V> p, V local, int* boosted) {
    const V eps = sizeof(V) == 4 ? V(1e-6) : V(1e-13);
    const V scale = local > V(0) ? local : V(1);
    V det = p.a * p.d - p.b * p.c;
    if (fabs(det) <= eps * scale * scale) {
        atomicAdd(boosted, 1);
        p.a += eps * scale;
        p.d += eps * scale;
        det = p.a * p.d - p.b * p.c;
        if (fabs(det) <= eps * scale * scale) {
            p.b = V(0);
            p.c = V(0);
            det = p.a * p.d;
        }
    }
    const V r = V(1) / det;
    return M2<V>{p.d * r, -p.b * r, -p.c * r, p.a * r};
}

// L, D, U: (P*C) x 4 level coefficients in block-row order (padded; L[0] = 0, U beyond the
// last row = 0). Outputs per interior block t = i * P + j: Inv (pivot inverses), Cp
// (Inv U), Lint (the interior coupling), V and W (spikes for the left/right separators).
template <typename V, typename I>
__global__ void block_chunk_factor(const I P, const int C, const V* __restrict__ L, const V* __restrict__ D,
                                   const V* __restrict__ U, V* __restrict__ inv, V* __restrict__ cp,
                                   V* __restrict__ lint, V* __restrict__ v, V* __restrict__ w,
                                   int* __restrict__ boosted) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t base = (size_t)j * C;
    const int n = C - 1;
    const M2<V> zero{0, 0, 0, 0};
    M2<V> prev_cp = zero, zv = zero, zw = zero;
    for (int i = 0; i < n; ++i) {
        const size_t t = (size_t)i * P + j;
        const M2<V> a = i > 0 ? m2_load(L, base + i) : zero;
        const M2<V> d = m2_load(D, base + i);
        const M2<V> u = m2_load(U, base + i);
        const M2<V> piv = m2_sub(d, m2_mul(a, prev_cp));
        const M2<V> iv = m2_inverse_boosted(piv, m2_abs(d) + m2_abs(a) + m2_abs(u), boosted);
        prev_cp = i == n - 1 ? zero : m2_mul(iv, u);  // the last interior row couples to the separator
        m2_store(inv, t, iv);
        m2_store(cp, t, prev_cp);
        m2_store(lint, t, a);
        const M2<V> rv = i == 0 ? m2_load(L, base) : zero;
        const M2<V> rw = i == n - 1 ? u : zero;
        zv = m2_mul(iv, m2_sub(rv, m2_mul(a, zv)));
        zw = m2_mul(iv, m2_sub(rw, m2_mul(a, zw)));
        m2_store(v, t, zv);
        m2_store(w, t, zw);
    }
    M2<V> nv = zero, nw = zero;
    for (int i = n - 1; i >= 0; --i) {
        const size_t t = (size_t)i * P + j;
        const M2<V> c = m2_load(cp, t);
        nv = m2_sub(m2_load(v, t), m2_mul(c, nv));
        nw = m2_sub(m2_load(w, t), m2_mul(c, nw));
        m2_store(v, t, nv);
        m2_store(w, t, nw);
    }
}

// Separator system: ra_j S_{j-1} + rb_j S_j + rc_j S_{j+1} = g_j (2x2 blocks).
template <typename V, typename I>
__global__ void block_reduced_coeffs(const I P, const int C, const V* __restrict__ L, const V* __restrict__ D,
                                    const V* __restrict__ U, const V* __restrict__ v, const V* __restrict__ w,
                                    V* __restrict__ ra, V* __restrict__ rb, V* __restrict__ rc) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t s = (size_t)j * C + C - 1;
    const int n = C - 1;
    const M2<V> zero{0, 0, 0, 0};
    const M2<V> lo = m2_load(L, s), hi = m2_load(U, s);
    const size_t last = (size_t)(n - 1) * P + j;
    M2<V> a = m2_sub(zero, m2_mul(lo, m2_load(v, last)));
    M2<V> b = m2_sub(m2_load(D, s), m2_mul(lo, m2_load(w, last)));
    M2<V> c = zero;
    if (j + 1 < P) {
        b = m2_sub(b, m2_mul(hi, m2_load(v, (size_t)(j + 1))));
        c = m2_sub(zero, m2_mul(hi, m2_load(w, (size_t)(j + 1))));
    }
    m2_store(ra, (size_t)j, j > 0 ? a : zero);
    m2_store(rb, (size_t)j, b);
    m2_store(rc, (size_t)j, c);
}

// y = T_int^{-1} b per chunk; the separator's right-hand side goes to sep_b. Level 0
// gathers b through `gather` (ghost: 1); deeper levels read x in block-row order (rows
// >= N are padding, 0).
template <typename V, typename I>
__global__ void block_chunk_forward(const I P, const int C, const I N, const V* __restrict__ x,
                                    const I* __restrict__ gather, const V* __restrict__ inv,
                                    const V* __restrict__ cp, const V* __restrict__ lint, V* __restrict__ y,
                                    V* __restrict__ sep_b) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const int n = C - 1;
    V2<V> z{0, 0};
    for (int i = 0; i < C; ++i) {
        const size_t r = (size_t)j * C + i;
        V2<V> b{0, 0};
        if (gather) {
            const I g0 = gather[2 * r], g1 = gather[2 * r + 1];
            b.x = g0 >= 0 ? x[g0] : V(1);
            b.y = g1 >= 0 ? x[g1] : V(1);
        } else if (r < (size_t)N) {
            b = v2_load(x, r);
        }
        if (i == n) {
            v2_store(sep_b, (size_t)j, b);
            break;
        }
        const size_t t = (size_t)i * P + j;
        z = mv(m2_load(inv, t), v2_sub(b, mv(m2_load(lint, t), z)));
        v2_store(y, t, z);
    }
    V2<V> next{0, 0};
    for (int i = n - 1; i >= 0; --i) {
        const size_t t = (size_t)i * P + j;
        next = v2_sub(v2_load(y, t), mv(m2_load(cp, t), next));
        v2_store(y, t, next);
    }
}

template <typename V, typename I>
__global__ void block_reduced_rhs(const I P, const int C, const V* __restrict__ L, const V* __restrict__ U,
                                  const V* __restrict__ y, const V* __restrict__ sep_b, V* __restrict__ g) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t s = (size_t)j * C + C - 1;
    const int n = C - 1;
    V2<V> val = v2_sub(v2_load(sep_b, (size_t)j), mv(m2_load(L, s), v2_load(y, (size_t)(n - 1) * P + j)));
    if (j + 1 < P) val = v2_sub(val, mv(m2_load(U, s), v2_load(y, (size_t)(j + 1))));
    v2_store(g, (size_t)j, val);
}

// x_interior = y - V S_{j-1} - W S_j; separators are S. With `scatter`, unknown (r, c)
// goes to out[scatter[2r + c]] (< 0 dropped), else to out[2r + c] for rows r < N.
template <typename V, typename I>
__global__ void block_chunk_back(const I P, const int C, const I N, const V* __restrict__ y, const V* __restrict__ v,
                                 const V* __restrict__ w, const V* __restrict__ S, const I* __restrict__ scatter,
                                 V* __restrict__ out) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const V2<V> left = j > 0 ? v2_load(S, (size_t)(j - 1)) : V2<V>{0, 0};
    const V2<V> right = v2_load(S, (size_t)j);
    for (int i = 0; i < C; ++i) {
        const size_t t = (size_t)i * P + j;
        const size_t r = (size_t)j * C + i;
        V2<V> val = right;
        if (i < C - 1) val = v2_sub(v2_sub(v2_load(y, t), mv(m2_load(v, t), left)), mv(m2_load(w, t), right));
        if (scatter) {
            const I s0 = scatter[2 * r], s1 = scatter[2 * r + 1];
            if (s0 >= 0) out[s0] = val.x;
            if (s1 >= 0) out[s1] = val.y;
        } else if (r < (size_t)N) {
            v2_store(out, r, val);
        }
    }
}

// Block Thomas for the small bottom level (one thread).
template <typename V, typename I>
__global__ void block_thomas_factor(const I n, const V* __restrict__ L, const V* __restrict__ D,
                                    const V* __restrict__ U, V* __restrict__ inv, V* __restrict__ cp,
                                    int* __restrict__ boosted) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    const M2<V> zero{0, 0, 0, 0};
    M2<V> prev = zero;
    for (I i = 0; i < n; ++i) {
        const M2<V> a = i > 0 ? m2_load(L, (size_t)i) : zero;
        const M2<V> d = m2_load(D, (size_t)i);
        const M2<V> u = i + 1 < n ? m2_load(U, (size_t)i) : zero;
        const M2<V> iv = m2_inverse_boosted(m2_sub(d, m2_mul(a, prev)), m2_abs(d) + m2_abs(a) + m2_abs(u), boosted);
        prev = m2_mul(iv, u);
        m2_store(inv, (size_t)i, iv);
        m2_store(cp, (size_t)i, prev);
    }
}

template <typename V, typename I>
__global__ void block_thomas_solve(const I n, const V* __restrict__ L, const V* __restrict__ inv,
                                   const V* __restrict__ cp, const V* __restrict__ b, V* __restrict__ x) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    V2<V> z{0, 0};
    for (I i = 0; i < n; ++i) {
        const V2<V> a = i > 0 ? mv(m2_load(L, (size_t)i), z) : V2<V>{0, 0};
        z = mv(m2_load(inv, (size_t)i), v2_sub(v2_load(b, (size_t)i), a));
        v2_store(x, (size_t)i, z);
    }
    V2<V> next{0, 0};
    for (I i = n - 1; i >= 0; --i) {
        next = v2_sub(v2_load(x, (size_t)i), mv(m2_load(cp, (size_t)i), next));
        v2_store(x, (size_t)i, next);
    }
}

// One pass over the CSR entries of A: the 2x2 blocks of block row k (rows index[2k] and
// index[2k + 1]; -1 is a ghost, whose equation is 1 * x = 1). One thread per block row
// writes all 12 values of L_k, D_k, U_k; `slot[j] = 2 * block + position` places column j.
// Only neighbouring blocks of one path couple. covered[k] and total[k]: the off-diagonal
// absolute weight of the block row's entries that the blocks hold, and all of it (the
// twin of kernels.tridiag._extract_blocks_cpu, which sums in the same order per row).
template <typename V, typename I>
__global__ void extract_blocks(const I m, const I* __restrict__ indptr, const I* __restrict__ indices,
                               const V* __restrict__ data, const I* __restrict__ index, const I* __restrict__ slot,
                               const I* __restrict__ path_of, V* __restrict__ L, V* __restrict__ D,
                               V* __restrict__ U, double* __restrict__ covered, double* __restrict__ total) {
    for (I k = blockIdx.x * (I)blockDim.x + threadIdx.x; k < m; k += (I)gridDim.x * blockDim.x) {
        const I path = path_of[k];
        double cov = 0, tot = 0;
        for (int s = 0; s < 2; ++s) {
            const I i = index[2 * (size_t)k + s];
            V l[2] = {0, 0}, d[2] = {0, 0}, u[2] = {0, 0};
            if (i < 0) {
                d[s] = 1;  // ghost: uncoupled, diagonal 1
            } else {
                for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
                    const I j = indices[e];
                    const V a = data[e];
                    const double w = j != i ? (double)(a < V(0) ? -a : a) : 0.0;
                    tot += w;
                    const I bj = slot[j] >> 1;
                    const int t = (int)(slot[j] & 1);
                    if (bj == k) {
                        d[t] += a;
                        cov += w;
                    } else if (path_of[bj] == path) {
                        if (bj == k - 1) {
                            l[t] += a;
                            cov += w;
                        } else if (bj == k + 1) {
                            u[t] += a;
                            cov += w;
                        }
                    }
                }
            }
            const size_t at = 4 * (size_t)k + 2 * s;
            L[at] = l[0];
            L[at + 1] = l[1];
            D[at] = d[0];
            D[at + 1] = d[1];
            U[at] = u[0];
            U[at + 1] = u[1];
        }
        covered[k] = cov;
        total[k] = tot;
    }
}
