/*
 * order.h - the key order and the multiset hash the verifier uses, for the
 * host and the device. Restated from the library's definition (not shared
 * with it) so the checker shares no code with what it checks.
 */
#ifndef WSB_CORE_ORDER_H
#define WSB_CORE_ORDER_H

#include <cstdint>

#include "core/keygen.h" /* keygen_mix: splitmix64's finaliser */

namespace wsb {

/* warpsort's total order as unsigned bits: floats are flipped so that
 * -inf < ... < -0 < +0 < ... < +inf, then rotated so that every NaN, of
 * either sign, lands above +inf. */
template <class Bits>
__host__ __device__ inline Bits ordered_bits(Bits b, bool is_float) {
    const Bits sign = Bits(1) << (sizeof(Bits) * 8 - 1);
    const Bits neg_nans = sizeof(Bits) == 4 ? Bits(0x007FFFFFu) : Bits(0x000FFFFFFFFFFFFFull);
    if (!is_float) return b;
    Bits t = (b & sign) ? Bits(~b) : Bits(b | sign);
    return Bits(t - neg_nans);
}

/* Two independent 64-bit mixes of one key's bits; summed over a segment
 * they give an order-independent 128-bit hash of its multiset. */
__host__ __device__ inline void mix_pair(uint64_t bits, uint64_t *h1, uint64_t *h2) {
    *h1 = keygen_mix(bits ^ 0xA0761D6478BD642Full);
    uint64_t r = (bits << 17) | (bits >> 47);
    *h2 = keygen_mix(r + 0xE7037ED1A0B428DBull) * 0x8EBC6AF09C88C6E3ull;
}

} // namespace wsb

#endif /* WSB_CORE_ORDER_H */
