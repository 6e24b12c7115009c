/*
 * warpsort/key_traits.cuh - keys as ordered unsigned bits (public device API).
 *
 * Every collective of the device API sorts ordered bits: a key is mapped to
 * an unsigned integer of its width whose unsigned order is warpsort's key
 * order, the same map the library's C API and CPU backend use
 * (warpsort/keybits.h, the single definition):
 *   - unsigned and signed integers by value;
 *   - floats by value, -0.0 before +0.0, every NaN after +inf (ascending);
 *     distinct NaN patterns keep a fixed order among themselves;
 *   - descending is the bitwise complement of ascending, so equal keys stay
 *     equal and a stable sort stays stable in both orders.
 * The map is a bijection: decoding gives back the input bits unchanged.
 *
 * Key types: the six dtypes of the C API (uint32_t, int32_t, float,
 * uint64_t, int64_t, double) under any of their C++ spellings (unsigned,
 * int, long, long long and their unsigned forms).
 *
 * CUDA C++17, header-only, no STL, no dynamic allocation.
 */
#ifndef WARPSORT_KEY_TRAITS_CUH
#define WARPSORT_KEY_TRAITS_CUH

#include <stdint.h>
#include <string.h>

#include "keybits.h"

namespace warpsort {

/* Sort direction, a template argument of every collective. */
enum sort_order : int { ascending = 0, descending = 1 };

/* Stand-in for a missing value or position: occupies no registers, and
 * code paths that carry it compile to nothing. */
struct no_value {};

/* is_value<T>::value: false for no_value only. */
template <typename T>
struct is_value {
    static constexpr bool value = true;
};
template <>
struct is_value<no_value> {
    static constexpr bool value = false;
};

namespace detail {
template <bool C, typename A, typename B>
struct select_type {
    using type = A;
};
template <typename A, typename B>
struct select_type<false, A, B> {
    using type = B;
};
/* Unsigned word of BYTES (4 or 8) bytes. */
template <int BYTES>
struct word_of;
template <>
struct word_of<4> {
    using type = uint32_t;
};
template <>
struct word_of<8> {
    using type = uint64_t;
};
/* The bits of x as a To of the same size (memcpy folds to a move). */
template <typename To, typename From>
__host__ __device__ __forceinline__ To bit_cast(const From &x) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between types of one size");
    To y;
    memcpy(&y, &x, sizeof y);
    return y;
}
template <int BYTES, int KIND>
struct traits_of {
    using bits = typename word_of<BYTES>::type;
    static constexpr int kind = KIND; /* 0 unsigned, 1 signed, 2 float (ws_dtype_kind) */
    /* The matching warpsort_dtype_t value (WARPSORT_U32 .. WARPSORT_F64). */
    static constexpr int dtype = KIND + (BYTES == 8 ? 3 : 0);
};
} // namespace detail

/* key_traits<T>: bits (the ordered-bits type), kind, dtype. Undefined for
 * types that are not keys, so a wrong key type fails to compile. */
template <typename T>
struct key_traits;
template <>
struct key_traits<unsigned int> : detail::traits_of<4, 0> {};
template <>
struct key_traits<int> : detail::traits_of<4, 1> {};
template <>
struct key_traits<float> : detail::traits_of<4, 2> {};
template <>
struct key_traits<unsigned long> : detail::traits_of<(int)sizeof(unsigned long), 0> {};
template <>
struct key_traits<long> : detail::traits_of<(int)sizeof(long), 1> {};
template <>
struct key_traits<unsigned long long> : detail::traits_of<8, 0> {};
template <>
struct key_traits<long long> : detail::traits_of<8, 1> {};
template <>
struct key_traits<double> : detail::traits_of<8, 2> {};

/* The ordered-bits type of key type T: uint32_t or uint64_t. */
template <typename T>
using ordered_bits = typename key_traits<T>::bits;

/* The largest ordered key: what the collectives put in place of missing
 * keys (partial warps and tiles), so they sort after every real key. */
template <typename KB>
__host__ __device__ __forceinline__ KB sentinel() {
    return (KB) ~(KB)0;
}

/* A run-time key order (kind and direction), for kernels that serve every
 * dtype with one instantiation per key width, as the library's do:
 * kind 0 unsigned, 1 signed, 2 float (ws_dtype_kind); desc 0 or 1. */
struct key_codec {
    int kind;
    int desc;
};
/* The codec of key type T in direction order. */
template <typename T>
__host__ __device__ __forceinline__ key_codec codec_for(sort_order order) {
    return key_codec{key_traits<T>::kind, order == descending ? 1 : 0};
}

/* Raw key bits -> ordered bits, and back, under a run-time codec. */
__host__ __device__ __forceinline__ uint32_t encode(uint32_t x, key_codec c) {
    return ws_to_ordered32(x, c.kind, c.desc);
}
__host__ __device__ __forceinline__ uint64_t encode(uint64_t x, key_codec c) {
    return ws_to_ordered64(x, c.kind, c.desc);
}
__host__ __device__ __forceinline__ uint32_t decode(uint32_t o, key_codec c) {
    return ws_from_ordered32(o, c.kind, c.desc);
}
__host__ __device__ __forceinline__ uint64_t decode(uint64_t o, key_codec c) {
    return ws_from_ordered64(o, c.kind, c.desc);
}

/* A key -> its ordered bits in direction ORDER, and back; compile-time
 * codec, so the map folds to one or two instructions. */
template <sort_order ORDER = ascending, typename T>
__host__ __device__ __forceinline__ ordered_bits<T> to_ordered(T key) {
    return encode(detail::bit_cast<ordered_bits<T>>(key),
                  key_codec{key_traits<T>::kind, ORDER == descending ? 1 : 0});
}
template <typename T, sort_order ORDER = ascending>
__host__ __device__ __forceinline__ T from_ordered(ordered_bits<T> o) {
    return detail::bit_cast<T>(
        decode(o, key_codec{key_traits<T>::kind, ORDER == descending ? 1 : 0}));
}

} // namespace warpsort

#endif /* WARPSORT_KEY_TRAITS_CUH */
