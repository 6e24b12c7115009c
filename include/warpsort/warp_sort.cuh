/*
 * warpsort/warp_sort.cuh - a warp (or groups of 2..32 of its lanes) sorts
 * keys held in registers with a bitonic network (public device API).
 *
 * Public collectives (see docs/device-api.md):
 *   warp_sort_keys<WIDTH, ORDER, STABLE>(keys)            keys[K] per lane
 *   warp_sort_keys<WIDTH, ORDER, STABLE>(keys, valid)     partial group
 *   warp_sort_pairs<WIDTH, ORDER, STABLE>(keys, vals)     values follow keys
 *   warp_sort_pairs<WIDTH, ORDER, STABLE>(keys, vals, valid)
 * Each group of WIDTH consecutive lanes (WIDTH = 2, 4, 8, 16 or 32) sorts
 * its WIDTH * K items, K = 1..16 per lane, "blocked": lane l of the group
 * holds items l*K .. l*K+K-1 before and after.
 *
 * Below them, the network the library's own kernels run: items are (key,
 * value, position) triples of ordered bits (key_traits.cuh) in register
 * arrays (warp_items); V and P may be no_value, which costs nothing.
 * warp_sort_registers sorts runs of a power-of-two number of items,
 * ascending by item_less. Strides below ITEMS are compare-exchanges inside
 * a lane; strides ITEMS .. 16*ITEMS pair lane l with lane l ^ (stride /
 * ITEMS) through __shfl_xor_sync.
 *
 * Preconditions of everything here: all 32 lanes of the warp call it
 * together, converged (full-mask shuffles), with the same template
 * arguments; register arrays are indexed only with constants (the loops
 * are unrolled), so nothing spills to local memory.
 */
#ifndef WARPSORT_WARP_SORT_CUH
#define WARPSORT_WARP_SORT_CUH

#include "key_traits.cuh"

namespace warpsort {

/*=== the network (what the library's kernels call) ===*/

/* Order of two items. With positions (stable sorts, partial tiles) equal
 * keys are ordered by their original position, making the order total. */
template <typename KB>
__device__ __forceinline__ bool item_less(KB a, no_value, KB b, no_value) {
    return a < b;
}
template <typename KB>
__device__ __forceinline__ bool item_less(KB a, uint32_t pa, KB b, uint32_t pb) {
    return a < b || (a == b && pa < pb);
}

/* Full-warp butterfly shuffles for every payload type; the empty one costs
 * nothing. */
__device__ __forceinline__ uint32_t shfl_xor(uint32_t x, int mask) {
    return __shfl_xor_sync(0xFFFFFFFFu, x, mask);
}
__device__ __forceinline__ uint64_t shfl_xor(uint64_t x, int mask) {
    return (uint64_t)__shfl_xor_sync(0xFFFFFFFFu, (unsigned long long)x, mask);
}
__device__ __forceinline__ no_value shfl_xor(no_value x, int) { return x; }

/* ITEMS items of one lane: ordered key bits, values, positions. */
template <typename KB, typename V, typename P, int ITEMS>
struct warp_items {
    KB k[ITEMS];
    V v[ITEMS];
    P p[ITEMS];
};

namespace detail {
/* Lane-dependent directions. A stage whose direction depends on the lane
 * must not be written as a ?: or a branch on that bool: the compiler then
 * unswitches the stage into two divergent copies, duplicating its shuffles
 * into both arms, and divergent shuffles run serialized (measured: the
 * warp sort of 32 x 2..16 keys ran 3-8x slower). The two helpers below make
 * the choice in PTX the compiler cannot see into.
 *
 * keep_min ? min(a, b) : max(a, b): a min and a predicated max that
 * overwrites it, two instructions (ptxas shares the setp across a stage). */
template <typename KB>
__device__ __forceinline__ KB keep_min_or_max(bool keep_min, KB a, KB b) {
    static_assert(sizeof(KB) == 4 || sizeof(KB) == 8, "ordered bits are 4 or 8 bytes");
    if constexpr (sizeof(KB) == 4) {
        uint32_t r;
        asm("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %3, 0;\n\tmin.u32 %0, %1, %2;\n\t"
            "@p max.u32 %0, %1, %2;\n\t}"
            : "=&r"(r)
            : "r"((uint32_t)a), "r"((uint32_t)b), "r"((uint32_t)keep_min));
        return (KB)r;
    } else {
        unsigned long long r;
        asm("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %3, 0;\n\tmin.u64 %0, %1, %2;\n\t"
            "@p max.u64 %0, %1, %2;\n\t}"
            : "=&l"(r)
            : "l"((unsigned long long)a), "l"((unsigned long long)b), "r"((uint32_t)keep_min));
        return (KB)r;
    }
}

/* c ? a : b for two predicates, one selp. */
__device__ __forceinline__ bool select_opaque(bool c, bool a, bool b) {
    uint32_t r;
    asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\tselp.b32 %0, %1, %2, p;\n\t}"
        : "=r"(r)
        : "r"((uint32_t)a), "r"((uint32_t)b), "r"((uint32_t)c));
    return r != 0;
}

/* Compare-exchange of registers lo < hi: after it, item lo precedes item hi
 * in direction asc (ascending when true). Keys alone take a min/max pair,
 * which folds to two instructions when asc is a compile-time constant. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void exchange_registers(warp_items<KB, V, P, ITEMS> &it, int lo, int hi,
                                                   bool asc, bool lane_dir) {
    if constexpr (!is_value<P>::value) {
        /* Keys by min/max; values (if any) follow when the key moved. Equal
         * keys stay put, so no value is lost or doubled. A direction that
         * depends on the lane (lane_dir, known once the network is
         * unrolled) goes through keep_min_or_max, so the compiler cannot
         * split the stage into divergent copies. */
        const KB a = it.k[lo], b = it.k[hi];
        if (lane_dir) {
            it.k[lo] = keep_min_or_max(asc, a, b);
            it.k[hi] = keep_min_or_max(!asc, a, b);
        } else {
            const KB mn = a < b ? a : b, mx = a < b ? b : a;
            it.k[lo] = asc ? mn : mx;
            it.k[hi] = asc ? mx : mn;
        }
        if constexpr (is_value<V>::value) {
            const bool moved = it.k[lo] != a;
            const V va = it.v[lo], vb = it.v[hi];
            it.v[lo] = moved ? vb : va;
            it.v[hi] = moved ? va : vb;
        }
    } else {
        /* Both orders computed, the lane's picked by selp: a lane-dependent
         * ?: here made the compiler split every shuffle stage in two
         * divergent arms (docs/device-api.md, warp sort, "Cost"). */
        const bool fwd = item_less(it.k[hi], it.p[hi], it.k[lo], it.p[lo]);
        const bool bwd = item_less(it.k[lo], it.p[lo], it.k[hi], it.p[hi]);
        const bool out_of_order = lane_dir ? select_opaque(asc, fwd, bwd) : (asc ? fwd : bwd);
        if (out_of_order) {
            KB tk = it.k[lo];
            it.k[lo] = it.k[hi];
            it.k[hi] = tk;
            V tv = it.v[lo];
            it.v[lo] = it.v[hi];
            it.v[hi] = tv;
            P tp = it.p[lo];
            it.p[lo] = it.p[hi];
            it.p[hi] = tp;
        }
    }
}

/* One bitonic stage of merge size k at stride j < 32*ITEMS over a warp's
 * registers. first is the index of this lane's register 0 within its run
 * (a multiple of ITEMS); the direction of an item pair comes from bit k of
 * the lower index. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void warp_stage(warp_items<KB, V, P, ITEMS> &it, int first, int k,
                                           int j) {
    if (j < ITEMS) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            /* first is a multiple of ITEMS: below ITEMS the direction bit is
             * i's (a constant), above it the lane's. */
            const bool asc = k < ITEMS ? (i & k) == 0 : (first & k) == 0;
            if ((i & j) == 0) exchange_registers(it, i, i + j, asc, k >= ITEMS);
        }
    } else {
        /* j >= ITEMS >= 1 and k > j, so bit k of the index lies above the
         * register bits: the direction is the same for all of a lane's items. */
        const int lane_mask = j / ITEMS;
        const bool asc = (first & k) == 0;
        const bool lower = ((first / ITEMS) & lane_mask) == 0;
        const bool keep_min = lower == asc;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            KB ok = shfl_xor(it.k[i], lane_mask);
            if constexpr (!is_value<P>::value) {
                /* The partner keeps the other end of the pair; on equal keys
                 * both keep their own item. */
                const KB mine = it.k[i];
                it.k[i] = keep_min_or_max(keep_min, mine, ok);
                if constexpr (is_value<V>::value) {
                    const V ov = shfl_xor(it.v[i], lane_mask);
                    it.v[i] = it.k[i] != mine ? ov : it.v[i];
                }
            } else {
                V ov = shfl_xor(it.v[i], lane_mask);
                P op = shfl_xor(it.p[i], lane_mask);
                /* Both partners evaluate the same predicate on (upper, lower),
                 * so exactly one copy of each item survives even on ties. */
                const bool take = select_opaque(keep_min, item_less(ok, op, it.k[i], it.p[i]),
                                                item_less(it.k[i], it.p[i], ok, op));
                if (take) {
                    it.k[i] = ok;
                    it.v[i] = ov;
                    it.p[i] = op;
                }
            }
        }
    }
}
} // namespace detail

/* The strides of merge size k that stay inside the warp: from
 * min(k/2, 16*ITEMS) down to 1. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void warp_merge_registers(warp_items<KB, V, P, ITEMS> &it, int first,
                                                     int k) {
    const int top = (k / 2 < 16 * ITEMS) ? k / 2 : 16 * ITEMS;
#pragma unroll
    for (int j = top; j >= 1; j /= 2) detail::warp_stage(it, first, k, j);
}

/* Sorts every run of RUN consecutive items (RUN / ITEMS lanes, RUN a power
 * of two from ITEMS to 32 * ITEMS, ITEMS a power of two) into ascending
 * order of item_less. first is the lane's register-0 index within its run:
 * (lane * ITEMS) % RUN. Inside the network the direction of merge size k
 * comes from bit k of the index, so neighbouring halves form the bitonic
 * sequences the next size needs; at k = RUN that bit is zero and every run
 * ends ascending. Not stable unless P carries positions. */
template <int RUN, typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void warp_sort_registers(warp_items<KB, V, P, ITEMS> &it, int first) {
    static_assert(RUN >= ITEMS && RUN <= 32 * ITEMS, "a run spans lanes of one warp");
#pragma unroll
    for (int k = 2; k <= RUN; k *= 2) warp_merge_registers(it, first, k);
}

/*=== the public collectives ===*/

namespace detail {
/* This thread's lane in its warp (right for any block shape). */
__device__ __forceinline__ int lane_id() {
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return (int)l;
}
__host__ __device__ constexpr int pow2_ceil(int k) {
    return k <= 1 ? 1 : 2 * pow2_ceil((k + 1) / 2);
}
__host__ __device__ constexpr int log2_of(int k) { return k <= 1 ? 0 : 1 + log2_of(k / 2); }

/* A user value as the unsigned word the network moves (no_value stays). */
template <typename V>
struct value_word {
    static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values are 4- or 8-byte types");
    using type = typename word_of<(int)sizeof(V)>::type;
};
template <>
struct value_word<no_value> {
    using type = no_value;
};
template <typename W, typename V>
__device__ __forceinline__ W to_word(const V &v) {
    if constexpr (is_value<V>::value)
        return bit_cast<W>(v);
    else
        return W{};
}
template <typename V, typename W>
__device__ __forceinline__ V from_word(const W &w) {
    if constexpr (is_value<V>::value)
        return bit_cast<V>(w);
    else
        return V{};
}

__device__ __forceinline__ uint32_t shfl_idx(uint32_t x, int src, int width) {
    return __shfl_sync(0xFFFFFFFFu, x, src, width);
}
__device__ __forceinline__ uint64_t shfl_idx(uint64_t x, int src, int width) {
    return (uint64_t)__shfl_sync(0xFFFFFFFFu, (unsigned long long)x, src, width);
}
__device__ __forceinline__ no_value shfl_idx(no_value x, int, int) { return x; }

/* After a network over P registers per lane (P > K, the extra registers
 * padding), sorted item s of the group sits in lane s / P, register s % P;
 * lane l wants items l*K .. l*K+K-1. They lie in lanes a = l*K / P and a+1
 * from register o = l*K % P on: fetch both lanes' registers, then rotate the
 * 2P words left by o with a log2(P)-stage barrel shifter (constant
 * indices, selects only). */
template <int K, int P, int WIDTH, typename W>
__device__ __forceinline__ void gather_blocked(const W (&in)[P], W (&out)[K], int glane) {
    const int a = glane * K / P, o = glane * K % P;
    W c[2 * P];
#pragma unroll
    for (int q = 0; q < P; q++) {
        c[q] = shfl_idx(in[q], a, WIDTH);
        c[P + q] = shfl_idx(in[q], a + 1, WIDTH); /* wraps inside the group when unused */
    }
#pragma unroll
    for (int b = 0; b < log2_of(P); b++) {
        const int sh = 1 << b;
        const bool move = (o & sh) != 0;
#pragma unroll
        for (int j = 0; j + sh < 2 * P; j++) c[j] = move ? c[j + sh] : c[j];
    }
#pragma unroll
    for (int r = 0; r < K; r++) out[r] = c[r];
}

/* The warp sort behind the four public entries: HAS_VALID selects the
 * partial form (items at group index >= valid are ignored and their
 * registers left as they were). */
template <int WIDTH, sort_order ORDER, bool STABLE, bool HAS_VALID, typename T, typename V, int K>
__device__ __forceinline__ void warp_sort(T (&keys)[K], V (&vals)[K], int valid) {
    static_assert(K >= 1 && K <= 16, "K = 1..16 keys per lane");
    static_assert(WIDTH >= 2 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
                  "groups of 2, 4, 8, 16 or 32 lanes");
    constexpr int P = pow2_ceil(K);
    using KB = ordered_bits<T>;
    using VW = typename value_word<V>::type;
    /* Positions break ties for stability, and keep real items ahead of
     * sentinels (which tie with real all-ones keys) whenever values would
     * otherwise be lost. Keys alone need neither: ordered bits are a
     * bijection of the key's bits, so equal keys are identical and any order
     * of them is the stable one, and a sentinel and a real all-ones key are
     * the same key. */
    constexpr bool POSITIONS = is_value<V>::value && (STABLE || HAS_VALID || P != K);
    using PW = typename select_type<POSITIONS, uint32_t, no_value>::type;

    const int glane = lane_id() & (WIDTH - 1);
    warp_items<KB, VW, PW, P> it;
#pragma unroll
    for (int i = 0; i < P; i++) {
        const int idx = glane * K + i; /* group index of item i (i < K) */
        const bool real = i < K && (!HAS_VALID || idx < valid);
        it.k[i] = real ? to_ordered<ORDER>(keys[i < K ? i : 0]) : sentinel<KB>();
        it.v[i] = to_word<VW>(vals[i < K ? i : 0]);
        if constexpr (POSITIONS) {
            /* sentinels after every real item: idx >= valid, or past WIDTH*K */
            it.p[i] = (uint32_t)(i < K ? idx : WIDTH * K + glane * P + i);
        }
    }
    warp_sort_registers<WIDTH * P>(it, glane * P);

    KB kout[K];
    VW vout[K];
    if constexpr (P == K) {
#pragma unroll
        for (int r = 0; r < K; r++) {
            kout[r] = it.k[r];
            vout[r] = it.v[r];
        }
    } else {
        gather_blocked<K, P, WIDTH>(it.k, kout, glane);
        gather_blocked<K, P, WIDTH>(it.v, vout, glane);
    }
#pragma unroll
    for (int r = 0; r < K; r++) {
        if (!HAS_VALID || glane * K + r < valid) {
            keys[r] = from_ordered<T, ORDER>(kout[r]);
            vals[r] = from_word<V>(vout[r]);
        }
    }
}
} // namespace detail

/* Sorts each group's WIDTH * K keys in direction ORDER; lane l of a group
 * (l = lane % WIDTH) holds group items l*K .. l*K+K-1 before and after.
 * STABLE keeps equal keys (identical ordered bits) in their input order.
 * All 32 lanes call it together; no shared memory, no barrier. */
template <int WIDTH = 32, sort_order ORDER = ascending, bool STABLE = false, typename T, int K>
__device__ __forceinline__ void warp_sort_keys(T (&keys)[K]) {
    no_value none[K];
    detail::warp_sort<WIDTH, ORDER, STABLE, false>(keys, none, WIDTH * K);
}
/* Partial group: only group items 0 .. valid-1 take part (0 <= valid <=
 * WIDTH * K, per group: each lane passes its own group's count); they end
 * sorted in items 0 .. valid-1, and registers of items >= valid are left
 * unchanged, so storing only items < valid writes nothing past the count. */
template <int WIDTH = 32, sort_order ORDER = ascending, bool STABLE = false, typename T, int K>
__device__ __forceinline__ void warp_sort_keys(T (&keys)[K], int valid) {
    no_value none[K];
    detail::warp_sort<WIDTH, ORDER, STABLE, true>(keys, none, valid);
}
/* As warp_sort_keys, each value (any 4- or 8-byte type) moving with its key. */
template <int WIDTH = 32, sort_order ORDER = ascending, bool STABLE = false, typename T, typename V,
          int K>
__device__ __forceinline__ void warp_sort_pairs(T (&keys)[K], V (&vals)[K]) {
    detail::warp_sort<WIDTH, ORDER, STABLE, false>(keys, vals, WIDTH * K);
}
template <int WIDTH = 32, sort_order ORDER = ascending, bool STABLE = false, typename T, typename V,
          int K>
__device__ __forceinline__ void warp_sort_pairs(T (&keys)[K], V (&vals)[K], int valid) {
    detail::warp_sort<WIDTH, ORDER, STABLE, true>(keys, vals, valid);
}

} // namespace warpsort

#endif /* WARPSORT_WARP_SORT_CUH */
