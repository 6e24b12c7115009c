/*
 * block_sort.cuh - a thread block sorts a tile of THREADS * ITEMS items.
 *
 * Each warp first sorts its 32*ITEMS items in registers (warp_sort.cuh).
 * For every larger merge size k the strides that cross warps go through
 * shared memory: the block stores its items, then each thread gathers
 * "rows" of up to ITEMS items whose tile indices differ only in the next
 * log2(ITEMS) stride bits, runs those strides in registers, and scatters the
 * rows back. One gather handles log2(ITEMS) strides with two barriers,
 * instead of one barrier per stride. The strides left inside a warp run on
 * registers and shuffles again.
 *
 * Shared memory is padded one slot per 128 bytes (ws_smem_index), which
 * keeps blocked, striped and row accesses free of bank conflicts.
 *
 * Preconditions: every thread of the block calls block_sort_tile; the block
 * has exactly THREADS threads; ITEMS is a power of two and THREADS a
 * multiple of 32 and a power of two.
 */
#ifndef WARPSORT_CUDA_BLOCK_SORT_CUH
#define WARPSORT_CUDA_BLOCK_SORT_CUH

#include "warp_sort.cuh"

/* Shared-memory arrays of one tile; vals/pos are unused for ws_no_value. */
template <typename KB, typename V, typename P>
struct ws_tile_smem {
    KB *keys;
    V *vals;
    P *pos;
};

template <typename T>
__device__ __forceinline__ void ws_smem_put(T *a, int e, T x) {
    if constexpr (ws_is_value<T>::value) a[ws_smem_index<T>(e)] = x;
}
template <typename T>
__device__ __forceinline__ T ws_smem_get(const T *a, int e) {
    if constexpr (ws_is_value<T>::value) return a[ws_smem_index<T>(e)];
    else return T{};
}

template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void ws_store_item(ws_tile_smem<KB, V, P> s, int e,
                                              const ws_items<KB, V, P, ITEMS> &it, int i) {
    ws_smem_put(s.keys, e, it.k[i]);
    ws_smem_put(s.vals, e, it.v[i]);
    ws_smem_put(s.pos, e, it.p[i]);
}
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void ws_load_item(ws_tile_smem<KB, V, P> s, int e,
                                             ws_items<KB, V, P, ITEMS> &it, int i) {
    it.k[i] = ws_smem_get(s.keys, e);
    it.v[i] = ws_smem_get(s.vals, e);
    it.p[i] = ws_smem_get(s.pos, e);
}

/* Tile index of element m of row r when the row spans NB index bits starting
 * at bit lo: the row's own bits are split around the inserted bits. */
__device__ __forceinline__ int ws_row_index(int r, int m, int lo, int nb) {
    const int low = r & ((1 << lo) - 1);
    const int high = r >> lo;
    return (high << (lo + nb)) | (m << lo) | low;
}

/* Runs strides 2^(lo+NB-1) .. 2^lo of merge size k on rows gathered from
 * shared memory. Items must be in shared memory; they are put back there. */
template <int NB, typename KB, typename V, typename P, int THREADS, int ITEMS>
__device__ __forceinline__ void ws_block_row_strides(ws_tile_smem<KB, V, P> s, int lo, int k) {
    constexpr int ROW = 1 << NB;
    constexpr int ROWS_PER_THREAD = ITEMS / ROW;
    ws_items<KB, V, P, ITEMS> it;
#pragma unroll
    for (int q = 0; q < ROWS_PER_THREAD; q++) {
        const int r = q * THREADS + (int)threadIdx.x;
#pragma unroll
        for (int m = 0; m < ROW; m++) ws_load_item(s, ws_row_index(r, m, lo, NB), it, q * ROW + m);
    }
#pragma unroll
    for (int b = NB - 1; b >= 0; b--) {
#pragma unroll
        for (int q = 0; q < ROWS_PER_THREAD; q++) {
            const int r = q * THREADS + (int)threadIdx.x;
#pragma unroll
            for (int m = 0; m < ROW; m++) {
                if ((m & (1 << b)) == 0) {
                    const bool asc = (ws_row_index(r, m, lo, NB) & k) == 0;
                    ws_exchange_registers(it, q * ROW + m, q * ROW + (m | (1 << b)), asc);
                }
            }
        }
    }
#pragma unroll
    for (int q = 0; q < ROWS_PER_THREAD; q++) {
        const int r = q * THREADS + (int)threadIdx.x;
#pragma unroll
        for (int m = 0; m < ROW; m++) ws_store_item(s, ws_row_index(r, m, lo, NB), it, q * ROW + m);
    }
}

template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void ws_store_blocked(ws_tile_smem<KB, V, P> s, int first,
                                                 const ws_items<KB, V, P, ITEMS> &it) {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) ws_store_item(s, first + i, it, i);
}
template <typename KB, typename V, typename P, int ITEMS>
__device__ __forceinline__ void ws_load_blocked(ws_tile_smem<KB, V, P> s, int first,
                                                ws_items<KB, V, P, ITEMS> &it) {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) ws_load_item(s, first + i, it, i);
}

__host__ __device__ constexpr int ws_log2(int x) { return x <= 1 ? 0 : 1 + ws_log2(x / 2); }

/* Sorts the tile held in registers (blocked: thread t holds tile items
 * t*ITEMS + i) into ascending order, leaving it in registers, blocked.
 * s must hold THREADS*ITEMS padded slots per array. */
template <typename KB, typename V, typename P, int THREADS, int ITEMS>
__device__ __forceinline__ void block_sort_tile(ws_items<KB, V, P, ITEMS> &it,
                                                ws_tile_smem<KB, V, P> s) {
    constexpr int TILE = THREADS * ITEMS;
    constexpr int WARP_SPAN = 32 * ITEMS;
    constexpr int LOG_ITEMS = ws_log2(ITEMS);
    const int first = (int)threadIdx.x * ITEMS;

    warp_sort_registers(it, first);
#pragma unroll
    for (int k = 2 * WARP_SPAN; k <= TILE; k *= 2) {
        /* Strides k/2 .. WARP_SPAN cross warps: index bits log2(WARP_SPAN) ..
         * log2(k)-1, taken LOG_ITEMS bits at a time from the top. */
        ws_store_blocked(s, first, it);
        __syncthreads();
        int hi = ws_log2(k); /* one past the top stride bit */
        const int bottom = ws_log2(WARP_SPAN);
#pragma unroll
        for (int g = 0; g < 32; g++) {
            if (hi <= bottom) break;
            const int nb = (hi - bottom < LOG_ITEMS) ? hi - bottom : LOG_ITEMS;
            const int lo = hi - nb;
            switch (nb) {
            case 1: ws_block_row_strides<1, KB, V, P, THREADS, ITEMS>(s, lo, k); break;
            case 2: if constexpr (LOG_ITEMS >= 2) ws_block_row_strides<2, KB, V, P, THREADS, ITEMS>(s, lo, k); break;
            case 3: if constexpr (LOG_ITEMS >= 3) ws_block_row_strides<3, KB, V, P, THREADS, ITEMS>(s, lo, k); break;
            case 4: if constexpr (LOG_ITEMS >= 4) ws_block_row_strides<4, KB, V, P, THREADS, ITEMS>(s, lo, k); break;
            case 5: if constexpr (LOG_ITEMS >= 5) ws_block_row_strides<5, KB, V, P, THREADS, ITEMS>(s, lo, k); break;
            default: break;
            }
            __syncthreads();
            hi = lo;
        }
        /* Each thread reloads the slots it will store to next: no barrier is
         * needed before that store. */
        ws_load_blocked(s, first, it);
        warp_merge_registers(it, first, k);
    }
}

#endif /* WARPSORT_CUDA_BLOCK_SORT_CUH */
