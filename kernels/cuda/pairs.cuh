// Two (or four) consecutive values of a row's slots in one 8- or 16-byte access, for the
// [0,2]-factor's N x 2 arrays and the extraction's 4-value records: a warp's accesses then
// fill whole sectors in one request instead of a part of each sector per scalar access.
// The pointer must be aligned to the access (arrays of CuPy's pool, row-major slots;
// kernels.nvrtc.aligned copies a view that is not).
#pragma once

template <typename T>
struct PairOf;
template <>
struct PairOf<int> {
    typedef int2 type;
};
template <>
struct PairOf<long long> {
    typedef longlong2 type;
};
template <>
struct PairOf<float> {
    typedef float2 type;
};
template <>
struct PairOf<double> {
    typedef double2 type;
};

template <typename T>
__device__ __forceinline__ void store_pair(T* p, const T a, const T b) {
    typename PairOf<T>::type x;
    x.x = a;
    x.y = b;
    *reinterpret_cast<typename PairOf<T>::type*>(p) = x;
}

template <typename T>
__device__ __forceinline__ void load_pair(const T* p, T& a, T& b) {
    const typename PairOf<T>::type x = *reinterpret_cast<const typename PairOf<T>::type*>(p);
    a = x.x;
    b = x.y;
}

// Four values (16-byte aligned): one 16-byte access for float, two for double.
template <typename T>
__device__ __forceinline__ void store_quad(T* p, const T a, const T b, const T c, const T d) {
    store_pair(p, a, b);
    store_pair(p + 2, c, d);
}

template <>
__device__ __forceinline__ void store_quad<float>(float* p, const float a, const float b, const float c,
                                                  const float d) {
    *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
}

template <typename T>
__device__ __forceinline__ void load_quad(const T* p, T& a, T& b, T& c, T& d) {
    load_pair(p, a, b);
    load_pair(p + 2, c, d);
}

template <>
__device__ __forceinline__ void load_quad<float>(const float* p, float& a, float& b, float& c, float& d) {
    const float4 x = *reinterpret_cast<const float4*>(p);
    a = x.x;
    b = x.y;
    c = x.z;
    d = x.w;
}
