/*
 * keys.cuh - key traits for the CUDA backend.
 *
 * Every dtype is sorted as ordered unsigned bits (src/core/keybits.h): keys
 * are encoded on load and decoded on store, so one network serves all six
 * dtypes and both orders. Descending is the complement of the ascending
 * bits, which keeps equal keys equal (stability survives the flip).
 *
 * Values travel as opaque 4- or 8-byte words; keys-only sorts use the empty
 * ws_no_value so the same code path carries "nothing" for free.
 */
#ifndef WARPSORT_CUDA_KEYS_CUH
#define WARPSORT_CUDA_KEYS_CUH

#include <stdint.h>

#include "core/keybits.h"

/* Stand-in for a missing value or position: occupies no registers. */
struct ws_no_value {};

/* How a kernel turns raw words into ordered bits: kind 0 unsigned, 1 signed,
 * 2 float (see ws_dtype_kind), desc 0/1. Uniform across a launch. */
struct ws_key_codec {
    int kind;
    int desc;
};

__device__ __forceinline__ uint32_t ws_encode(uint32_t x, ws_key_codec c) {
    return ws_to_ordered32(x, c.kind, c.desc);
}
__device__ __forceinline__ uint64_t ws_encode(uint64_t x, ws_key_codec c) {
    return ws_to_ordered64(x, c.kind, c.desc);
}
__device__ __forceinline__ uint32_t ws_decode(uint32_t o, ws_key_codec c) {
    return ws_from_ordered32(o, c.kind, c.desc);
}
__device__ __forceinline__ uint64_t ws_decode(uint64_t o, ws_key_codec c) {
    return ws_from_ordered64(o, c.kind, c.desc);
}

/* The largest ordered key: stands in for keys past the end of the array. */
template <typename KB>
__device__ __forceinline__ KB ws_sentinel() {
    return (KB)~(KB)0;
}

/* Order of two items. With positions (stable sorts, partial tiles) equal
 * keys are ordered by their original position, making the order total. */
template <typename KB>
__device__ __forceinline__ bool ws_less(KB a, ws_no_value, KB b, ws_no_value) {
    return a < b;
}
template <typename KB>
__device__ __forceinline__ bool ws_less(KB a, uint32_t pa, KB b, uint32_t pb) {
    return a < b || (a == b && pa < pb);
}

/* Shuffles for every payload type; the empty one costs nothing. */
__device__ __forceinline__ uint32_t ws_shfl_xor(uint32_t x, int mask) {
    return __shfl_xor_sync(0xFFFFFFFFu, x, mask);
}
__device__ __forceinline__ uint64_t ws_shfl_xor(uint64_t x, int mask) {
    return (uint64_t)__shfl_xor_sync(0xFFFFFFFFu, (unsigned long long)x, mask);
}
__device__ __forceinline__ ws_no_value ws_shfl_xor(ws_no_value x, int) { return x; }

/* Shared-memory index with one pad slot per 128 bytes, so blocked (thread *
 * ITEMS + i) and striped (i * THREADS + thread) accesses of a warp both hit
 * distinct banks for 4- and 8-byte elements. Unsigned, so the division is a
 * shift. Arrays get 16 bytes of slack past n items: branch-free merges may
 * read (and ignore) the item one past the end. */
template <typename T>
__device__ __forceinline__ int ws_smem_index(int e) {
    return (int)((unsigned)e + (unsigned)e / (unsigned)(128 / sizeof(T)));
}
template <typename T>
__host__ __device__ constexpr int ws_smem_slots(int n) {
    return n + n / (int)(128 / sizeof(T)) + (int)(16 / sizeof(T));
}

template <typename T>
struct ws_is_value {
    static constexpr bool value = true;
};
template <>
struct ws_is_value<ws_no_value> {
    static constexpr bool value = false;
};

#endif /* WARPSORT_CUDA_KEYS_CUH */
