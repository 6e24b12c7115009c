/*
 * block_merge.cuh - merge path and serial merges over sorted ranges.
 *
 * The block sort and the global merge passes both merge sorted ranges held
 * in shared memory: every thread finds where its ITEMS outputs start with a
 * binary search along the cross diagonal ("merge path"), then merges ITEMS
 * outputs serially, keeping the two head keys in registers so each output
 * costs one shared-memory load. A merge takes from A on ties, so merging the
 * runs of a stable order keeps it stable.
 *
 * Shared-memory ranges are addressed by item index through the padding of
 * ws_smem_index, which keeps both the blocked writes of a warp and the
 * lockstep reads of structured input (threads ITEMS apart) off shared
 * banks.
 */
#ifndef WARPSORT_CUDA_BLOCK_MERGE_CUH
#define WARPSORT_CUDA_BLOCK_MERGE_CUH

#include <type_traits>

#include "keys.cuh"

/* Number of items from A among the first `diag` outputs of merging sorted A
 * (a_len) and B (b_len), A winning ties. Src is any indexable source; I is
 * the index type (int for shared memory, size_t for global arrays). */
template <typename KB, typename I, typename Src>
__device__ __forceinline__ I ws_merge_path(Src a, I a_len, Src b, I b_len, I diag) {
    using U = typename std::make_unsigned<I>::type;
    I lo = diag > b_len ? diag - b_len : 0;
    I hi = diag < a_len ? diag : a_len;
    while (lo < hi) {
        const I mid = (I)(((U)lo + (U)hi) >> 1); /* lo, hi >= 0: a shift, not a signed division */
        const KB ka = a(mid);
        const KB kb = b(diag - 1 - mid);
        if (!(kb < ka)) lo = mid + 1; /* A[mid] goes before B[diag-1-mid] */
        else hi = mid;
    }
    return lo;
}

/* A sorted range of a shared-memory array, by item index. */
template <typename KB>
struct ws_smem_reader {
    const KB *p;
    int base;
    __device__ __forceinline__ KB operator()(int i) const { return p[ws_smem_index<KB>(base + i)]; }
};

/* Two sorted ranges of one shared-memory array to be merged. */
struct ws_merge_src {
    int a, a_len; /* first item and length of A */
    int b, b_len; /* ... and of B */
};

template <typename KB>
__device__ __forceinline__ int ws_smem_merge_path(const KB *sk, ws_merge_src m, int diag) {
    return ws_merge_path<KB, int>(ws_smem_reader<KB>{sk, m.a}, m.a_len,
                                  ws_smem_reader<KB>{sk, m.b}, m.b_len, diag);
}

/* A serial merge in progress: the next item index on each side, where each
 * side ends, and the two head keys (meaningless once a side is used up). */
template <typename KB>
struct ws_merge_cursor {
    int ai, bi;
    int a_end, b_end;
    KB ka, kb;
};

/* Starts merging m at output diag <= a_len + b_len. Reading one item past
 * either side must stay inside the array: A is followed by more of the
 * array, and B's end is at most the array's item count (slack follows). */
template <typename KB>
__device__ __forceinline__ ws_merge_cursor<KB> ws_merge_start(const KB *sk, ws_merge_src m,
                                                              int diag) {
    ws_merge_cursor<KB> c;
    const int i = ws_smem_merge_path<KB>(sk, m, diag);
    c.ai = m.a + i;
    c.bi = m.b + (diag - i);
    c.a_end = m.a + m.a_len;
    c.b_end = m.b + m.b_len;
    c.ka = sk[ws_smem_index<KB>(c.ai)];
    c.kb = sk[ws_smem_index<KB>(c.bi)];
    return c;
}

/* Takes the next output: its key and item index. Bitwise logic, selects
 * and predicated increments only, so the step compiles to straight-line
 * code (one shared-memory load, no branch). Steps past a_len + b_len yield
 * garbage taken from past A's end and read one item further each time: a
 * caller that takes them needs that much slack after its arrays. */
template <typename KB>
__device__ __forceinline__ void ws_merge_step(const KB *sk, ws_merge_cursor<KB> &c, KB &key,
                                              int &src) {
    const bool take_b = (c.bi < c.b_end) & ((c.ai >= c.a_end) | (c.kb < c.ka));
    key = take_b ? c.kb : c.ka;
    /* Advance the side taken; its new index is the item to refill from. */
    if (take_b) c.bi++;
    else c.ai++;
    const int next = take_b ? c.bi : c.ai;
    src = next - 1;
    const KB head = sk[ws_smem_index<KB>(next)];
    c.ka = take_b ? c.ka : head;
    c.kb = take_b ? head : c.kb;
}

/* Outputs diag .. diag+ITEMS-1 of merging m (all inside a_len + b_len)
 * into registers: k[i] is the key of output diag+i and src[i] its item
 * index. */
template <typename KB, int ITEMS>
__device__ __forceinline__ void ws_serial_merge(const KB *sk, ws_merge_src m, int diag,
                                                KB (&k)[ITEMS], int (&src)[ITEMS]) {
    ws_merge_cursor<KB> c = ws_merge_start<KB>(sk, m, diag);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) ws_merge_step<KB>(sk, c, k[i], src[i]);
}

/* First padded slot of a thread's ITEMS blocked items from item `first` on,
 * when they share one padding period (so slot(first + i) = base + i). */
template <typename T, int ITEMS>
__device__ __forceinline__ int ws_blocked_base(int first) {
    static_assert((128 / sizeof(T)) % ITEMS == 0, "a thread's items share one padding period");
    return ws_smem_index<T>(first);
}

#endif /* WARPSORT_CUDA_BLOCK_MERGE_CUH */
