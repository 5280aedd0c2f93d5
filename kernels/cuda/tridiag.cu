// Tridiagonal solves on the GPU by a partitioned (SPIKE-like) method.
//
// The N rows (padded to P*C) are cut into P chunks of C rows. Rows 0..C-2 of a chunk are
// its interior, row C-1 its separator. Each thread factorizes one chunk interior (Thomas,
// no pivoting; tiny pivots are boosted and counted) and computes the two spikes v, w
// (interior responses to the separators on the left and right). The separators form a
// tridiagonal system of size P (the next level, solved the same way, recursively); then
// each thread recovers its interior. Per-chunk arrays are stored interleaved (index
// i * P + j) so that neighbouring threads access neighbouring addresses.
// templates: chunk_factor<V,I>, reduced_coeffs<V,I>, chunk_forward<V,I>, reduced_rhs<V,I>, chunk_back<V,I>, thomas_factor<V,I>, thomas_solve<V,I>, extract_tridiagonal<V,I>

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

// dl, d, du: level coefficients in natural (row) order, length P*C (padded).
template <typename V, typename I>
__global__ void chunk_factor(const I P, const int C, const V* __restrict__ dl, const V* __restrict__ d,
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
        const V a = i > 0 ? dl[base + i] : V(0);
        const V den = boost(d[base + i] - a * prev_cp, fabs(d[base + i]) + fabs(a) + fabs(du[base + i]), boosted);
        const V inv = V(1) / den;
        prev_cp = du[base + i] * inv;
        if (i == n - 1) prev_cp = 0;  // the last interior row couples to the separator (spike w)
        inv_den[t] = inv;
        cp[t] = prev_cp;
        ldl[t] = a;
        // forward sweeps of the spikes: v from dl[base] at row 0, w from du[base+n-1] at row n-1
        zv = ((i == 0 ? dl[base] : V(0)) - a * zv) * inv;
        zw = ((i == n - 1 ? du[base + n - 1] : V(0)) - a * zw) * inv;
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

// Separator system: a_j L_{j-1} + b_j L_j + c_j L_{j+1} = g_j.
template <typename V, typename I>
__global__ void reduced_coeffs(const I P, const int C, const V* __restrict__ dl, const V* __restrict__ d,
                               const V* __restrict__ du, const V* __restrict__ v, const V* __restrict__ w,
                               V* __restrict__ ra, V* __restrict__ rb, V* __restrict__ rc) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t s = (size_t)j * C + C - 1;
    const int n = C - 1;
    const V lo = n > 0 ? dl[s] : V(0), hi = du[s];
    V a = 0, b = d[s], c = 0;
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
__global__ void reduced_rhs(const I P, const int C, const V* __restrict__ dl, const V* __restrict__ du,
                            const V* __restrict__ y, const V* __restrict__ sep_b, V* __restrict__ g) {
    const I j = blockIdx.x * (I)blockDim.x + threadIdx.x;
    if (j >= P) return;
    const size_t s = (size_t)j * C + C - 1;
    const int n = C - 1;
    V val = sep_b[j];
    if (n > 0) val -= dl[s] * y[(size_t)(n - 1) * P + j];
    if (n > 0 && j + 1 < P) val -= du[s] * y[j + 1];
    g[j] = val;
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

// One pass over the CSR entries of A: the tridiagonal coefficients in the permuted order.
// With partners (N x 2 forest), only forest edges enter the off-diagonals; without, the
// neighbours |i - j| = 1 of the original ordering (inv_perm is then the identity).
template <typename V, typename I>
__global__ void extract_tridiagonal(const I N, const I* __restrict__ indptr, const I* __restrict__ indices,
                                    const V* __restrict__ data, const I* __restrict__ inv_perm,
                                    const I* __restrict__ partners, V* __restrict__ dl, V* __restrict__ d,
                                    V* __restrict__ du) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < N; i += (I)gridDim.x * blockDim.x) {
        const I k = inv_perm ? inv_perm[i] : i;
        V diag = 0, lower = 0, upper = 0;
        const I p0 = partners ? partners[2 * (size_t)i] : (I)-1, p1 = partners ? partners[2 * (size_t)i + 1] : (I)-1;
        for (I e = indptr[i]; e < indptr[i + 1]; ++e) {
            const I j = indices[e];
            if (j == i) {
                diag += data[e];
                continue;
            }
            if (partners && j != p0 && j != p1) continue;
            const I kj = inv_perm ? inv_perm[j] : j;
            if (kj == k - 1) lower += data[e];
            else if (kj == k + 1) upper += data[e];
        }
        d[k] = diag;
        dl[k] = lower;
        du[k] = upper;
    }
}
