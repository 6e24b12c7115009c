/*
 * warpsort/segment_sort.cuh - sorts of whole segments held in global memory
 * (public device API): many short segments per warp, one per block.
 *
 * Public collectives (see docs/device-api.md):
 *   warp_sort_segment<WIDTH, K [, STABLE]>(in_keys, in_vals, out_keys, out_vals, len, codec
 *                                          [, iota_base])
 *       each group of WIDTH lanes (1, 2, 4, 8, 16 or 32) sorts one segment
 *       of up to WIDTH * K items: 32 / WIDTH segments per warp;
 *   block_sort_segment<THREADS, K [, STABLE]>(in_keys, ..., len, codec, storage [, iota_base])
 *       the block sorts one segment of up to THREADS * K items.
 * Keys are raw key bits (uint32_t / uint64_t words: any dtype of that
 * width) ordered by a run-time key_codec (kind and direction, as the C API
 * does), so one instantiation serves every dtype of a width and both
 * orders. Values move with their keys: V is uint32_t, uint64_t, or
 * no_value for keys alone. With in_vals == nullptr (and V a value type)
 * the values are generated as each item's index in the segment plus
 * iota_base: a segment-local argsort.
 *
 * With values, STABLE (the default) keeps equal keys in input order; with
 * STABLE = false equal keys may come out in any order. Keys alone need no
 * stability (equal keys are identical bits). in and out may be the same
 * arrays (in place): every item is read before any is written.
 *
 * How values travel: first through the network without positions (keys
 * and values only: half the shuffles and selects of key, value and
 * position). That result is kept unless it could be wrong:
 *   - a real key equal to the padding sentinel (all-ones ordered bits) in
 *     a partial segment would tie with the padding and could swap values
 *     with it (checked before the sort);
 *   - STABLE and two equal real keys anywhere in the segment (checked
 *     after the sort, on the sorted neighbours): without positions their
 *     order is arbitrary.
 * Then the group (warp form, per warp) or the block sorts again from the
 * input, which nothing has written yet: keys and positions alone, the
 * positions breaking ties and, in the block form, riding the merges as
 * values; the keys are stored, each item's value is read back from the
 * input at its position (or generated from it), and only once the whole
 * group or block has read its values are they stored. So no network ever
 * holds keys, values and positions together (at 1024 x 16 that spilled),
 * distinct keys cost the keys-and-values network once, and inputs with
 * equal keys cost both networks when stability is asked for.
 */
#ifndef WARPSORT_SEGMENT_SORT_CUH
#define WARPSORT_SEGMENT_SORT_CUH

#include "block_sort.cuh"
#include "key_traits.cuh"
#include "smem_layout.cuh"
#include "warp_sort.cuh"

namespace warpsort {

namespace detail {
/* Item idx of a segment into registers: key bits (a sentinel past len),
 * value (read, or idx + iota_base), position. */
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void segment_load(warp_items<KB, V, P, ITEMS> &it, int i, int idx,
                                             int len, const KB *keys, const V *vals,
                                             unsigned long long iota_base, key_codec codec) {
    const bool real = idx < len;
    it.k[i] = real ? encode(keys[idx], codec) : sentinel<KB>();
    if constexpr (is_value<V>::value)
        it.v[i] = !real ? V{} : vals ? vals[idx] : (V)(iota_base + (unsigned long long)idx);
    if constexpr (is_value<P>::value)
        it.p[i] = (uint32_t)idx; /* sentinels (idx >= len) after every real item */
}

/* Whether a real item of this thread holds the sentinel key (item i at
 * segment index idx(i)), which only positions keep apart from padding. */
template <typename KB, typename V, typename P, int K, typename IDX>
__device__ __forceinline__ bool segment_sentinel_key(const warp_items<KB, V, P, K> &it, int len,
                                                     IDX idx) {
    bool any = false;
#pragma unroll
    for (int i = 0; i < K; i++) any |= idx(i) < len && it.k[i] == sentinel<KB>();
    return any;
}

/* Whether this thread's K sorted (blocked) items, followed by `next` (the
 * first item of the next thread, has_next false for the last), hold two
 * equal keys other than sentinels. */
template <typename KB, typename V, typename P, int K>
__device__ __forceinline__ bool segment_equal_neighbours(const warp_items<KB, V, P, K> &it, KB next,
                                                         bool has_next) {
    bool tie = has_next && it.k[K - 1] == next && next != sentinel<KB>();
#pragma unroll
    for (int i = 0; i + 1 < K; i++) tie |= it.k[i] == it.k[i + 1] && it.k[i] != sentinel<KB>();
    return tie;
}
/* K consecutive words to p (16-byte aligned) in 16-byte stores. */
template <int K, typename W>
__device__ __forceinline__ void store_vec16(W *p, const W (&w)[K]) {
    constexpr int PER = 16 / (int)sizeof(W);
#pragma unroll
    for (int q = 0; q < K / PER; q++) {
        uint4 v;
        memcpy(&v, &w[q * PER], 16);
        reinterpret_cast<uint4 *>(p)[q] = v;
    }
}

/* A lane's K blocked words for items idx0 .. idx0+K-1 to p: 16-byte stores
 * when all are real and the words align (a lane's items are contiguous, so
 * a scalar store per item would touch as many cache lines per instruction
 * as the warp has lanes), else one store per real item. */
template <int K, typename W>
__device__ __forceinline__ void segment_store_words(const W (&w)[K], int idx0, int len, W *p) {
    if constexpr ((K * (int)sizeof(W)) % 16 == 0) {
        if (idx0 + K <= len && ((uintptr_t)(p + idx0) & 15) == 0) {
            store_vec16<K>(p + idx0, w);
            return;
        }
    }
#pragma unroll
    for (int i = 0; i < K; i++)
        if (idx0 + i < len) p[idx0 + i] = w[i];
}

/* A lane's K blocked keys (ordered bits) to memory, decoded. */
template <int K, typename KB>
__device__ __forceinline__ void segment_store_keys(const KB (&k)[K], int idx0, int len, KB *keys,
                                                   key_codec codec) {
    KB kw[K];
#pragma unroll
    for (int i = 0; i < K; i++) kw[i] = decode(k[i], codec);
    segment_store_words<K>(kw, idx0, len, keys);
}

/* A lane's K blocked items (keys and values) to memory. */
template <int K, typename KB, typename V, typename P>
__device__ __forceinline__ void segment_store_lane(const warp_items<KB, V, P, K> &it, int idx0,
                                                   int len, KB *keys, V *vals, key_codec codec) {
    segment_store_keys<K>(it.k, idx0, len, keys, codec);
    if constexpr (is_value<V>::value) segment_store_words<K>(it.v, idx0, len, vals);
}

/* The second sort's output: a lane's K blocked keys and the positions
 * their items had in the segment. Stores the keys, reads each real item's
 * value from in_vals at its position (in_vals NULL: iota_base + position),
 * waits at `sync` until every lane that shares the segment has read its
 * values (in place, the stores overwrite the input), then stores them. */
template <int K, typename KB, typename V, typename SYNC>
__device__ __forceinline__ void
segment_store_by_position(const KB (&k)[K], const uint32_t (&pos)[K], int idx0, int len,
                          const V *in_vals, KB *out_keys, V *out_vals, key_codec codec,
                          unsigned long long iota_base, SYNC sync) {
    segment_store_keys<K>(k, idx0, len, out_keys, codec);
    V w[K];
#pragma unroll
    for (int i = 0; i < K; i++)
        w[i] = idx0 + i >= len ? V{}
               : in_vals       ? in_vals[pos[i]]
                               : (V)(iota_base + (unsigned long long)pos[i]);
    sync();
    segment_store_words<K>(w, idx0, len, out_vals);
}

/* warp_sort_segment with stability a run-time flag (the same in every
 * lane), so the library's kernels serve both with one instantiation. */
template <int WIDTH, int K, typename KB, typename V>
__device__ __forceinline__ void
warp_sort_segment_run(const KB *in_keys, const V *in_vals, KB *out_keys, V *out_vals, int len,
                      key_codec codec, unsigned long long iota_base, bool stable) {
    const int glane = lane_id() & (WIDTH - 1);
    if constexpr (is_value<V>::value) {
        warp_items<KB, V, no_value, K> it;
#pragma unroll
        for (int i = 0; i < K; i++)
            segment_load(it, i, i * WIDTH + glane, len, in_keys, in_vals, iota_base, codec);
        const bool risk = (stable || len < WIDTH * K) &&
                          segment_sentinel_key(it, len, [&](int i) { return i * WIDTH + glane; });
        if (!__any_sync(0xFFFFFFFFu, risk)) {
            warp_sort_registers<WIDTH * K>(it, glane * K);
            bool tie = false;
            if (stable) {
                /* lane glane + 1 of the group; the last lane's read wraps, unused */
                const KB next = shfl_idx(it.k[0], (glane + 1) & (WIDTH - 1), WIDTH);
                tie = segment_equal_neighbours(it, next, glane + 1 < WIDTH);
            }
            if (!__any_sync(0xFFFFFFFFu, tie)) {
                segment_store_lane<K>(it, glane * K, len, out_keys, out_vals, codec);
                return;
            }
        }
    }
    if constexpr (!is_value<V>::value) {
        warp_items<KB, no_value, no_value, K> it;
#pragma unroll
        for (int i = 0; i < K; i++)
            segment_load(it, i, i * WIDTH + glane, len, in_keys, in_vals, iota_base, codec);
        warp_sort_registers<WIDTH * K>(it, glane * K);
        segment_store_lane<K>(it, glane * K, len, out_keys, out_vals, codec);
    } else {
        /* Values whose order only positions can settle: keys and positions,
         * then the values by position (the whole warp reads before any
         * lane stores). */
        warp_items<KB, no_value, uint32_t, K> it;
#pragma unroll
        for (int i = 0; i < K; i++)
            segment_load(it, i, i * WIDTH + glane, len, in_keys, (const no_value *)nullptr, 0,
                         codec);
        warp_sort_registers<WIDTH * K>(it, glane * K);
        segment_store_by_position<K>(it.k, it.p, glane * K, len, in_vals, out_keys, out_vals, codec,
                                     iota_base, [] { __syncwarp(); });
    }
}
} // namespace detail

/* Each group of WIDTH consecutive lanes sorts its own segment: items
 * 0 .. len-1 of in_keys (and in_vals) into out_keys (and out_vals), in the
 * order of codec. Every lane passes its group's pointers and len
 * (0 <= len <= WIDTH * K; len <= 0: the group has no segment and touches
 * no memory). Lane l of a group loads items l, l + WIDTH, ... (striped:
 * each load instruction reads consecutive words) and stores sorted items
 * l*K .. l*K+K-1 (blocked, in 16-byte stores where they align): a sort
 * may start from any arrangement, and positions, not registers, break
 * ties, so the result is the same.
 * Preconditions: all 32 lanes of the warp call it together, converged;
 * WIDTH a power of two from 1 to 32, K a power of two from 1 to 16.
 * Registers only: no shared memory, no barrier (a __syncwarp before the
 * values of a second sort are stored). Cost: one bitonic network of
 * WIDTH * K items (strides below K in a lane, others by shuffles); with
 * values, when the segment needs it (above), a second one of keys and
 * positions, and each value read back from in_vals at its position. */
template <int WIDTH, int K, bool STABLE = true, typename KB, typename V>
__device__ __forceinline__ void warp_sort_segment(const KB *in_keys, const V *in_vals, KB *out_keys,
                                                  V *out_vals, int len, key_codec codec,
                                                  unsigned long long iota_base = 0) {
    static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
                  "WIDTH 1..32, a power of two");
    static_assert(K >= 1 && K <= 16 && (K & (K - 1)) == 0, "K 1..16, a power of two");
    detail::warp_sort_segment_run<WIDTH, K>(in_keys, in_vals, out_keys, out_vals, len, codec,
                                            iota_base, STABLE);
}

/* Shared memory of block_sort_segment: padded arrays of THREADS * K key
 * bits and values (one slot for no_value); the second sort (positions
 * instead of values) uses the values' space for the positions. */
template <typename KB, typename V, int THREADS, int K>
struct segment_sort_storage {
    KB keys[smem_slots<KB>(THREADS * K)];
    union {
        V vals[is_value<V>::value ? smem_slots<V>(THREADS * K) : 1];
        uint32_t pos[is_value<V>::value ? smem_slots<uint32_t>(THREADS * K) : 1];
    };
};

namespace detail {
/* The second sort of block_sort_segment: the segment's keys (a sentinel
 * past len) sorted by key, then position, into registers, blocked; it.v
 * holds each item's position in the segment. Each warp loads its 32 * K
 * items striped and sorts them with positions breaking ties; the merges
 * then move the positions as values (block_sort_tile's rounds; ties from
 * the earlier run, which holds the earlier positions, so the order stays
 * the one of (key, position)). A network of key and position, never key,
 * value and position. Barriers: two per merge round; s is free again on
 * return. */
template <int THREADS, int K, typename KB>
__device__ __forceinline__ void segment_sort_positions(warp_items<KB, uint32_t, no_value, K> &out,
                                                       const KB *in_keys, int len, key_codec codec,
                                                       tile_smem<KB, uint32_t> s) {
    constexpr int RUN = 32 * K;
    const int first = (int)threadIdx.x * K;
    const int warp_first = first & ~(RUN - 1), lane = lane_id();
    {
        warp_items<KB, no_value, uint32_t, K> it;
#pragma unroll
        for (int i = 0; i < K; i++)
            segment_load(it, i, warp_first + i * 32 + lane, len, in_keys, (const no_value *)nullptr,
                         0, codec);
        /* a warp of padding alone is in order already (as block_sort_tile) */
        if (warp_first < len) warp_sort_registers<RUN>(it, first & (RUN - 1));
#pragma unroll
        for (int i = 0; i < K; i++) {
            out.k[i] = it.k[i];
            out.v[i] = it.p[i];
        }
    }
    /* outputs from len on are padding, which these registers hold */
    block_merge_runs<RUN, KB, uint32_t, no_value, THREADS, K>(out, s, len);
}

/* A block's sorted items (blocked, K a thread; the tile sort is done with
 * storage) to out_keys / out_vals. Keys alone, and 4-byte keys with 4-byte
 * values in blocks under 1024 threads, whose arrays are not 16-byte
 * aligned go through storage, so that each store instruction of a warp
 * writes consecutive words: blocked scalar stores would touch a cache line
 * a lane, and segments at arbitrary offsets are mostly misaligned. Wider
 * items and bigger blocks store blocked: there the extra path cost
 * registers and spills (bench/NOTES.md, twenty-sixth session). Every
 * thread calls it; the shared-memory path passes two barriers, the last
 * after its last read of storage. */
template <int THREADS, int K, typename KB, typename V>
__device__ __forceinline__ void
block_store_segment(const warp_items<KB, V, no_value, K> &it, int len, KB *out_keys, V *out_vals,
                    key_codec codec, segment_sort_storage<KB, V, THREADS, K> &storage) {
    const int first = (int)threadIdx.x * K;
    /* wide items or a block of 1024: blocked stores whatever the alignment */
    constexpr bool ALWAYS_BLOCKED =
        is_value<V>::value && (sizeof(KB) > 4 || sizeof(V) > 4 || THREADS >= 1024);
    bool aligned = ((uintptr_t)out_keys & 15) == 0;
    if constexpr (is_value<V>::value) aligned = aligned && ((uintptr_t)out_vals & 15) == 0;
    if (ALWAYS_BLOCKED || aligned) {
        segment_store_lane<K>(it, first, len, out_keys, out_vals, codec);
        return;
    }
    const int kslot = blocked_base<KB, K>(first);
#pragma unroll
    for (int i = 0; i < K; i++) storage.keys[kslot + i] = decode(it.k[i], codec);
    if constexpr (is_value<V>::value) {
        const int vslot = blocked_base<V, K>(first);
#pragma unroll
        for (int i = 0; i < K; i++) storage.vals[vslot + i] = it.v[i];
    }
    __syncthreads();
    for (int j = (int)threadIdx.x; j < len; j += THREADS) {
        out_keys[j] = storage.keys[smem_index<KB>(j)];
        if constexpr (is_value<V>::value) out_vals[j] = storage.vals[smem_index<V>(j)];
    }
    __syncthreads();
}

/* block_sort_segment with stability a run-time flag (the same in every
 * thread), keys read under codec and stored under out_codec (the same
 * codec for a plain sort; key_codec{0, 0} stores the ordered bits, for
 * merges that follow). */
template <int THREADS, int K, typename KB, typename V>
__device__ __forceinline__ void
block_sort_segment_run(const KB *in_keys, const V *in_vals, KB *out_keys, V *out_vals, int len,
                       key_codec codec, key_codec out_codec,
                       segment_sort_storage<KB, V, THREADS, K> &storage,
                       unsigned long long iota_base, bool stable) {
    const int first = (int)threadIdx.x * K;
    /* Each warp loads its own 32 * K items striped (as warp_sort_segment
     * does): the same items per warp as blocked, so padding-only warps
     * stay padding-only, and the warp sort leaves them blocked. */
    const int warp_first = first & ~(32 * K - 1), lane = lane_id();
    const tile_smem<KB, V> sm{storage.keys, storage.vals};
    if constexpr (is_value<V>::value) {
        warp_items<KB, V, no_value, K> it;
#pragma unroll
        for (int i = 0; i < K; i++)
            segment_load(it, i, warp_first + i * 32 + lane, len, in_keys, in_vals, iota_base,
                         codec);
        const bool risk =
            (stable || len < THREADS * K) &&
            segment_sentinel_key(it, len, [&](int i) { return warp_first + i * 32 + lane; });
        if (!__syncthreads_or(risk)) {
            block_sort_tile<32 * K, KB, V, no_value, THREADS, K>(it, sm, len);
            bool tie = false;
            if (stable) { /* the tile sort is done with storage: borrow a word a thread */
                storage.keys[threadIdx.x] = it.k[0];
                __syncthreads();
                const bool has_next = (int)threadIdx.x + 1 < THREADS;
                tie = segment_equal_neighbours(it, has_next ? storage.keys[threadIdx.x + 1] : KB(0),
                                               has_next);
            }
            if (!__syncthreads_or(tie)) {
                block_store_segment<THREADS, K>(it, len, out_keys, out_vals, out_codec, storage);
                return;
            }
        }
    }
    if constexpr (!is_value<V>::value) {
        warp_items<KB, no_value, no_value, K> it;
#pragma unroll
        for (int i = 0; i < K; i++)
            segment_load(it, i, warp_first + i * 32 + lane, len, in_keys, in_vals, iota_base,
                         codec);
        block_sort_tile<32 * K, KB, no_value, no_value, THREADS, K>(it, sm, len);
        block_store_segment<THREADS, K>(it, len, out_keys, out_vals, out_codec, storage);
    } else {
        warp_items<KB, uint32_t, no_value, K> it;
        segment_sort_positions<THREADS, K>(it, in_keys, len, codec,
                                           tile_smem<KB, uint32_t>{storage.keys, storage.pos});
        segment_store_by_position<K>(it.k, it.v, first, len, in_vals, out_keys, out_vals, out_codec,
                                     iota_base, [] { __syncthreads(); });
    }
}
} // namespace detail

/* The block sorts one segment of 0 <= len <= THREADS * K items from
 * in_keys (in_vals) into out_keys (out_vals), in the order of codec: each
 * warp sorts 32 * K items in registers, then the runs are merged in shared
 * memory (block_sort_tile). Thread t stores sorted items t*K .. t*K+K-1
 * (where the arrays are not 16-byte aligned, keys alone and, below 1024
 * threads, 4-byte keys with 4-byte values are stored striped from storage
 * instead; each warp loads its items striped).
 * With values, as warp_sort_segment: keys and values first; keys and
 * positions, the values then read by position, only when needed.
 * Preconditions: every thread of a 1-D block of exactly THREADS threads
 * calls it with the same arguments (THREADS a power of two, 64 to 1024;
 * K a power of two, 1 to 16).
 * Barriers: two per merge round; with values one more before the sort, two
 * for the STABLE check, and for a second sort its merge rounds and one
 * before the values are stored; two more for a misaligned store. storage
 * is free again on return. */
template <int THREADS, int K, bool STABLE = true, typename KB, typename V>
__device__ __forceinline__ void
block_sort_segment(const KB *in_keys, const V *in_vals, KB *out_keys, V *out_vals, int len,
                   key_codec codec, segment_sort_storage<KB, V, THREADS, K> &storage,
                   unsigned long long iota_base = 0) {
    static_assert(THREADS >= 64 && THREADS <= 1024 && (THREADS & (THREADS - 1)) == 0,
                  "THREADS 64..1024, a power of two");
    detail::block_sort_segment_run<THREADS, K>(in_keys, in_vals, out_keys, out_vals, len, codec,
                                               codec, storage, iota_base, STABLE);
}

} // namespace warpsort

#endif /* WARPSORT_SEGMENT_SORT_CUH */
