/*
 * warpsort/block_merge.cuh - merge path and serial merges over sorted
 * ranges (public device API).
 *
 * Public collectives (see docs/device-api.md):
 *   block_merge_keys<ORDER>(a, a_len, b, b_len, keys)
 *   block_merge_pairs<ORDER>(a, a_vals, a_len, b, b_vals, b_len, keys, vals)
 * Thread t of the block produces outputs t*K .. t*K+K-1 of the merge of two
 * sorted ranges (in global or shared memory) into registers.
 *
 * Below them, the primitives the library's kernels merge with: every thread
 * finds where its ITEMS outputs start with a binary search along the cross
 * diagonal ("merge path"), then merges ITEMS outputs serially, keeping the
 * two head keys in registers so each output costs one shared-memory load.
 * A merge takes from A on ties, so merging the runs of a stable order keeps
 * it stable. Shared-memory ranges are padded arrays of ordered bits
 * (smem_layout.cuh), addressed by item index.
 */
#ifndef WARPSORT_BLOCK_MERGE_CUH
#define WARPSORT_BLOCK_MERGE_CUH

#include "key_traits.cuh"
#include "smem_layout.cuh"

namespace warpsort {

namespace detail {
template <typename I>
struct unsigned_of;
template <>
struct unsigned_of<int> {
    using type = unsigned;
};
template <>
struct unsigned_of<long> {
    using type = unsigned long;
};
template <>
struct unsigned_of<unsigned long> {
    using type = unsigned long;
};
template <>
struct unsigned_of<long long> {
    using type = unsigned long long;
};
template <>
struct unsigned_of<unsigned long long> {
    using type = unsigned long long;
};
} // namespace detail

/* Number of items from A among the first `diag` outputs of merging sorted A
 * (a_len) and B (b_len), A winning ties. Src is any callable src(i) -> key
 * bits; I is the index type (int for shared memory, size_t for global
 * arrays). 0 <= diag <= a_len + b_len. */
template <typename KB, typename I, typename Src>
__device__ __forceinline__ I merge_path(Src a, I a_len, Src b, I b_len, I diag) {
    using U = typename detail::unsigned_of<I>::type;
    I lo = diag > b_len ? diag - b_len : 0;
    I hi = diag < a_len ? diag : a_len;
    while (lo < hi) {
        const I mid = (I)(((U)lo + (U)hi) >> 1); /* lo, hi >= 0: a shift, not a signed division */
        const KB ka = a(mid);
        const KB kb = b(diag - 1 - mid);
        if (!(kb < ka))
            lo = mid + 1; /* A[mid] goes before B[diag-1-mid] */
        else
            hi = mid;
    }
    return lo;
}

/* A sorted range of a padded shared-memory array, by item index. */
template <typename KB>
struct smem_reader {
    const KB *p;
    int base;
    __device__ __forceinline__ KB operator()(int i) const { return p[smem_index<KB>(base + i)]; }
};

/* Two sorted ranges of one padded shared-memory array to be merged. */
struct merge_src {
    int a, a_len; /* first item and length of A */
    int b, b_len; /* ... and of B */
};

template <typename KB>
__device__ __forceinline__ int smem_merge_path(const KB *sk, merge_src m, int diag) {
    return merge_path<KB, int>(smem_reader<KB>{sk, m.a}, m.a_len, smem_reader<KB>{sk, m.b}, m.b_len,
                               diag);
}

/* A serial merge in progress: the next item index on each side, where each
 * side ends, and the two head keys (meaningless once a side is used up). */
template <typename KB>
struct merge_cursor {
    int ai, bi;
    int a_end, b_end;
    KB ka, kb;
};

/* Starts merging m at output diag <= a_len + b_len. Reading one item past
 * either side must stay inside the array: A is followed by more of the
 * array, and B's end is at most the array's item count (slack follows). */
template <typename KB>
__device__ __forceinline__ merge_cursor<KB> merge_start(const KB *sk, merge_src m, int diag) {
    merge_cursor<KB> c;
    const int i = smem_merge_path<KB>(sk, m, diag);
    c.ai = m.a + i;
    c.bi = m.b + (diag - i);
    c.a_end = m.a + m.a_len;
    c.b_end = m.b + m.b_len;
    c.ka = sk[smem_index<KB>(c.ai)];
    c.kb = sk[smem_index<KB>(c.bi)];
    return c;
}

/* Takes the next output: its key and item index. Bitwise logic, selects
 * and predicated increments only, so the step compiles to straight-line
 * code (one shared-memory load, no branch). Steps past a_len + b_len yield
 * garbage taken from past A's end and read one item further each time: a
 * caller that takes them needs that much slack after its arrays. */
template <typename KB>
__device__ __forceinline__ void merge_step(const KB *sk, merge_cursor<KB> &c, KB &key, int &src) {
    const bool take_b = (c.bi < c.b_end) & ((c.ai >= c.a_end) | (c.kb < c.ka));
    key = take_b ? c.kb : c.ka;
    /* Advance the side taken; its new index is the item to refill from. */
    if (take_b)
        c.bi++;
    else
        c.ai++;
    const int next = take_b ? c.bi : c.ai;
    src = next - 1;
    const KB head = sk[smem_index<KB>(next)];
    c.ka = take_b ? c.ka : head;
    c.kb = take_b ? head : c.kb;
}

/* Outputs diag .. diag+ITEMS-1 of merging m (all inside a_len + b_len)
 * into registers: k[i] is the key of output diag+i and src[i] its item
 * index. */
template <typename KB, int ITEMS>
__device__ __forceinline__ void serial_merge(const KB *sk, merge_src m, int diag, KB (&k)[ITEMS],
                                             int (&src)[ITEMS]) {
    merge_cursor<KB> c = merge_start<KB>(sk, m, diag);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) merge_step<KB>(sk, c, k[i], src[i]);
}

/* Outputs diag .. diag+ITEMS-1 of merging m into registers: keys, and the
 * values (padded array sv, no_value for none) that go with them. */
template <typename KB, typename V, int ITEMS>
__device__ __forceinline__ void merge_items_to_registers(const KB *sk, const V *sv, merge_src m,
                                                         int diag, KB (&k)[ITEMS], V (&v)[ITEMS]) {
    int src[ITEMS];
    serial_merge<KB, ITEMS>(sk, m, diag, k, src);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) v[i] = smem_get(sv, src[i]);
}

/* ITEMS outputs of m from output diag <= a_len + b_len on, written blocked
 * to padded arrays from slots kw (keys) and vw (values) on; values follow
 * their key's item index. Outputs past the end of m are garbage (taken
 * from past A's end): the arrays need ITEMS items of slack, and the caller
 * lays out its ranges so garbage lands where no one reads it. */
template <typename KB, typename V, int ITEMS>
__device__ __forceinline__ void merge_items_to_smem(const KB *sk, const V *sv, merge_src m,
                                                    int diag, KB *dk, V *dv, int kw, int vw) {
    merge_cursor<KB> c = merge_start<KB>(sk, m, diag);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        KB key;
        int src;
        merge_step<KB>(sk, c, key, src);
        dk[kw + i] = key;
        if constexpr (is_value<V>::value) dv[vw + i] = sv[smem_index<V>(src)];
    }
}

/*=== the public collectives ===*/

namespace detail {
/* A user's sorted range of keys, read as ordered bits. */
template <typename T, sort_order ORDER>
struct ordered_reader {
    const T *p;
    __device__ __forceinline__ ordered_bits<T> operator()(int i) const {
        return to_ordered<ORDER>(p[i]);
    }
};

template <sort_order ORDER, typename T, typename V, int K>
__device__ __forceinline__ void block_merge(const T *a, const V *av, int a_len, const T *b,
                                            const V *bv, int b_len, T (&keys)[K], V (&vals)[K]) {
    using KB = ordered_bits<T>;
    const int total = a_len + b_len;
    const int first = (int)threadIdx.x * K;
    const int diag = first < total ? first : total;
    const int i = merge_path<KB, int>(ordered_reader<T, ORDER>{a}, a_len,
                                      ordered_reader<T, ORDER>{b}, b_len, diag);
    int ai = i, bi = diag - i;
#pragma unroll
    for (int r = 0; r < K; r++) {
        if (first + r >= total) break;
        /* A wins ties: B is taken only when strictly smaller. */
        const bool take_b =
            bi < b_len && (ai >= a_len || to_ordered<ORDER>(b[bi]) < to_ordered<ORDER>(a[ai]));
        if (take_b) {
            keys[r] = b[bi];
            if constexpr (is_value<V>::value) vals[r] = bv[bi];
            bi++;
        } else {
            keys[r] = a[ai];
            if constexpr (is_value<V>::value) vals[r] = av[ai];
            ai++;
        }
    }
}
} // namespace detail

/* Thread t (threadIdx.x; 1-D block) gets outputs t*K .. t*K+K-1 of the
 * merge of sorted a[0, a_len) and b[0, b_len) (both in direction ORDER),
 * ties taken from a first (stable). Outputs past a_len + b_len are not
 * produced: those registers are left unchanged. The ranges may be in global
 * or shared memory and are only read; threads need no barrier among
 * themselves, but shared-memory inputs must be complete (a __syncthreads()
 * after writing them). Any number of threads may call it; each call costs
 * one binary search (log2(min(a_len, b_len)) reads) and about 2K reads. */
template <sort_order ORDER = ascending, typename T, int K>
__device__ __forceinline__ void block_merge_keys(const T *a, int a_len, const T *b, int b_len,
                                                 T (&keys)[K]) {
    no_value none[K];
    detail::block_merge<ORDER>(a, (const no_value *)nullptr, a_len, b, (const no_value *)nullptr,
                               b_len, keys, none);
}
/* As block_merge_keys, values a_vals[i] / b_vals[i] following their keys. */
template <sort_order ORDER = ascending, typename T, typename V, int K>
__device__ __forceinline__ void block_merge_pairs(const T *a, const V *a_vals, int a_len,
                                                  const T *b, const V *b_vals, int b_len,
                                                  T (&keys)[K], V (&vals)[K]) {
    detail::block_merge<ORDER>(a, a_vals, a_len, b, b_vals, b_len, keys, vals);
}

} // namespace warpsort

#endif /* WARPSORT_BLOCK_MERGE_CUH */
