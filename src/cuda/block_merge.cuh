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
 * Shared-memory ranges are addressed by item index through ws_smem_index,
 * whose padding keeps the blocked writes of a warp free of bank conflicts.
 */
#ifndef WARPSORT_CUDA_BLOCK_MERGE_CUH
#define WARPSORT_CUDA_BLOCK_MERGE_CUH

#include "keys.cuh"

/* Number of items from A among the first `diag` outputs of merging sorted A
 * (a_len) and B (b_len), A winning ties. Src is any indexable source; I is
 * the index type (int for shared memory, size_t for global arrays). */
template <typename KB, typename I, typename Src>
__device__ __forceinline__ I ws_merge_path(Src a, I a_len, Src b, I b_len, I diag) {
    I lo = diag > b_len ? diag - b_len : 0;
    I hi = diag < a_len ? diag : a_len;
    while (lo < hi) {
        const I mid = (lo + hi) / 2;
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

/* A serial merge in progress: items taken from A and B, and their heads. */
template <typename KB>
struct ws_merge_cursor {
    int ai, bi;
    KB ka, kb; /* next items of A and B (meaningless once a side is used up) */
};

/* Starts merging m at output diag <= a_len + b_len. B must follow A in the
 * array, and B's end must be at most the array's item count, so reading one
 * past either side stays inside the array's slack. */
template <typename KB>
__device__ __forceinline__ ws_merge_cursor<KB> ws_merge_start(const KB *sk, ws_merge_src m,
                                                              int diag) {
    ws_merge_cursor<KB> c;
    c.ai = ws_smem_merge_path(sk, m, diag);
    c.bi = diag - c.ai;
    c.ka = sk[ws_smem_index<KB>(m.a + c.ai)];
    c.kb = sk[ws_smem_index<KB>(m.b + c.bi)];
    return c;
}

/* Takes the next output: its key and shared-memory item index. Branch free:
 * the refill load is unconditional and clamped to B's end. */
template <typename KB>
__device__ __forceinline__ void ws_merge_step(const KB *sk, ws_merge_src m, ws_merge_cursor<KB> &c,
                                              KB &key, int &src) {
    const bool take_a = c.bi >= m.b_len || (c.ai < m.a_len && !(c.kb < c.ka));
    key = take_a ? c.ka : c.kb;
    src = take_a ? m.a + c.ai : m.b + c.bi;
    c.ai += take_a;
    c.bi += !take_a;
    const int next = min(take_a ? m.a + c.ai : m.b + c.bi, m.b + m.b_len);
    const KB head = sk[ws_smem_index<KB>(next)];
    c.ka = take_a ? head : c.ka;
    c.kb = take_a ? c.kb : head;
}

/* Outputs diag .. diag+ITEMS-1 of merging m into registers: k[i] is the key
 * of output diag+i and src[i] its item index. Outputs past a_len + b_len
 * are garbage (their src stays inside the array). */
template <typename KB, int ITEMS>
__device__ __forceinline__ void ws_serial_merge(const KB *sk, ws_merge_src m, int diag,
                                                KB (&k)[ITEMS], int (&src)[ITEMS]) {
    ws_merge_cursor<KB> c = ws_merge_start(sk, m, diag);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) ws_merge_step(sk, m, c, k[i], src[i]);
}

#endif /* WARPSORT_CUDA_BLOCK_MERGE_CUH */
