/*
 * warpsort/keybits.h - every key dtype <-> ordered unsigned bits: the one
 * definition of warpsort's key order, shared by the CPU backend (C), the
 * CUDA backend and the public device API (warpsort/key_traits.cuh), so all
 * of them order keys identically. Plain C, usable from host C and CUDA.
 *
 * ordered(a) < ordered(b) as unsigned integers exactly when a sorts before b
 * ascending. The map is a bijection on bit patterns, so decoding gives back
 * the input bits unchanged (nothing is canonicalised).
 *
 * Floats: the usual flip (negatives: all bits inverted; positives: sign bit
 * set) puts -NaN below -inf and +NaN above +inf. Subtracting the number of
 * negative-NaN patterns (2^23 - 1 for f32) rotates the ring so -inf maps to 0
 * and the negative NaNs wrap around above the positive ones: every NaN lands
 * after +inf, -0.0 stays just below +0.0, and the map stays a bijection.
 * Descending order is the bitwise complement of the ascending bits.
 */
#ifndef WARPSORT_KEYBITS_H
#define WARPSORT_KEYBITS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define WARPSORT_KEYBITS_FN __host__ __device__ __forceinline__
#else
#define WARPSORT_KEYBITS_FN static inline
#endif

#define WS_F32_NEG_NANS 0x007FFFFFu
#define WS_F64_NEG_NANS 0x000FFFFFFFFFFFFFull

WARPSORT_KEYBITS_FN uint32_t ws_f32_to_ordered(uint32_t x) {
    uint32_t t = (x & 0x80000000u) ? ~x : (x | 0x80000000u);
    return t - WS_F32_NEG_NANS;
}
WARPSORT_KEYBITS_FN uint32_t ws_f32_from_ordered(uint32_t o) {
    uint32_t t = o + WS_F32_NEG_NANS;
    return (t & 0x80000000u) ? (t & 0x7FFFFFFFu) : ~t;
}
WARPSORT_KEYBITS_FN uint64_t ws_f64_to_ordered(uint64_t x) {
    uint64_t t = (x & 0x8000000000000000ull) ? ~x : (x | 0x8000000000000000ull);
    return t - WS_F64_NEG_NANS;
}
WARPSORT_KEYBITS_FN uint64_t ws_f64_from_ordered(uint64_t o) {
    uint64_t t = o + WS_F64_NEG_NANS;
    return (t & 0x8000000000000000ull) ? (t & 0x7FFFFFFFFFFFFFFFull) : ~t;
}

/* Kind of a warpsort_dtype_t (U32, I32, F32, U64, I64, F64 = 0..5):
 * 0 unsigned, 1 signed, 2 float. */
WARPSORT_KEYBITS_FN int ws_dtype_kind(int dtype) { return dtype % 3; }

/* kind as above; desc: 0 ascending, 1 descending. */
WARPSORT_KEYBITS_FN uint32_t ws_to_ordered32(uint32_t x, int kind, int desc) {
    uint32_t o = kind == 0 ? x : kind == 1 ? (x ^ 0x80000000u) : ws_f32_to_ordered(x);
    return desc ? ~o : o;
}
WARPSORT_KEYBITS_FN uint32_t ws_from_ordered32(uint32_t o, int kind, int desc) {
    if (desc) o = ~o;
    return kind == 0 ? o : kind == 1 ? (o ^ 0x80000000u) : ws_f32_from_ordered(o);
}
WARPSORT_KEYBITS_FN uint64_t ws_to_ordered64(uint64_t x, int kind, int desc) {
    uint64_t o = kind == 0 ? x : kind == 1 ? (x ^ 0x8000000000000000ull) : ws_f64_to_ordered(x);
    return desc ? ~o : o;
}
WARPSORT_KEYBITS_FN uint64_t ws_from_ordered64(uint64_t o, int kind, int desc) {
    if (desc) o = ~o;
    return kind == 0 ? o : kind == 1 ? (o ^ 0x8000000000000000ull) : ws_f64_from_ordered(o);
}

/* Either width (key_bytes 4 or 8; a 4-byte key in the low 32 bits). These are
 * the one host-side way to read keys in order: the CPU backend, the CLI's
 * checks and the keybits test all use them. */
WARPSORT_KEYBITS_FN uint64_t ws_to_ordered(uint64_t x, unsigned key_bytes, int kind, int desc) {
    return key_bytes == 4 ? ws_to_ordered32((uint32_t)x, kind, desc)
                          : ws_to_ordered64(x, kind, desc);
}
WARPSORT_KEYBITS_FN uint64_t ws_from_ordered(uint64_t o, unsigned key_bytes, int kind, int desc) {
    return key_bytes == 4 ? ws_from_ordered32((uint32_t)o, kind, desc)
                          : ws_from_ordered64(o, kind, desc);
}
/* Ordered bits of keys[i], an array of key_bytes-wide keys. */
WARPSORT_KEYBITS_FN uint64_t ws_load_ordered(const void *keys, size_t i, unsigned key_bytes,
                                             int kind, int desc) {
    return key_bytes == 4 ? ws_to_ordered32(((const uint32_t *)keys)[i], kind, desc)
                          : ws_to_ordered64(((const uint64_t *)keys)[i], kind, desc);
}

#endif /* WARPSORT_KEYBITS_H */
