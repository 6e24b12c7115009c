/*
 * small_sort.cu - the leaf's small path (plan WS_PATH_SMALL): an array of
 * at most WS_SMALL_MAX items sorted by one launch of one warp or one block
 * whose shape fits n, on the public segment sorts (warpsort/segment_sort.cuh).
 *
 * Why a path of its own: the tile path sorts a whole tile (4096 or 8192
 * items, mostly sentinels for a small n) with a block of 256 threads and a
 * dynamic shared-memory attribute set on every call; for a few hundred keys
 * that is several times the work and a host call more than needed. Here a
 * warp sorts up to 32 x K items in registers (no shared memory, no barrier)
 * and a block of 64 to 256 threads up to 2048 items in static shared
 * memory. Padding is at most 2x (n just above a power of two).
 *
 * Stability: keys alone need none (equal keys are equal bits); with values
 * the segment sorts keep equal keys in input order when the call asks
 * (stable), else they may take the cheaper network's order.
 * In place or not: every item is read (from keys_in) before any is written
 * (to keys), so the two may be the same array.
 */
#include "device_sort.h"
#include "dispatch.cuh"
#include "warpsort/segment_sort.cuh"

using warpsort::key_codec;

template <int K, typename KB, typename V>
__global__ void __launch_bounds__(32)
    ws_small_warp_kernel(const KB *keys_in, const V *vals_in, KB *keys, V *vals, int n,
                         key_codec codec, bool stable) {
    warpsort::detail::warp_sort_segment_run<32, K>(keys_in, vals_in, keys, vals, n, codec, 0,
                                                   stable);
}

template <int THREADS, int K, typename KB, typename V>
__global__ void __launch_bounds__(THREADS)
    ws_small_block_kernel(const KB *keys_in, const V *vals_in, KB *keys, V *vals, int n,
                          key_codec codec, bool stable) {
    __shared__ warpsort::segment_sort_storage<KB, V, THREADS, K> storage;
    warpsort::detail::block_sort_segment_run<THREADS, K>(keys_in, vals_in, keys, vals, n, codec,
                                                         codec, storage, 0, stable);
}

struct ws_small_sort_op {
    template <typename KB, typename V>
    static cudaError_t run(size_t n, const void *keys_in, const void *vals_in, void *keys,
                           void *vals, key_codec codec, bool st, cudaStream_t s) {
        const KB *ki = (const KB *)keys_in;
        const V *vi = (const V *)vals_in;
        KB *k = (KB *)keys;
        V *v = (V *)vals;
        const int m = (int)n;
        /* The smallest shape that holds n: K doubles per step. With values,
         * 16 keys, values and positions a lane make one warp's network far
         * slower than two warps of 8 (bench/NOTES.md): pairs of 129..512 go
         * to a block of 64 threads x 8. */
        constexpr bool PAIRS = warpsort::is_value<V>::value;
        if (m <= 32)
            ws_small_warp_kernel<1, KB, V><<<1, 32, 0, s>>>(ki, vi, k, v, m, codec, st);
        else if (m <= 128)
            ws_small_warp_kernel<4, KB, V><<<1, 32, 0, s>>>(ki, vi, k, v, m, codec, st);
        else if (m <= 512) {
            /* if constexpr: the shape a width never takes is not compiled
             * (the warp of 16 with values was most of this file's build) */
            if constexpr (PAIRS)
                ws_small_block_kernel<64, 8, KB, V><<<1, 64, 0, s>>>(ki, vi, k, v, m, codec, st);
            else
                ws_small_warp_kernel<16, KB, V><<<1, 32, 0, s>>>(ki, vi, k, v, m, codec, st);
        } else if (m <= 1024)
            ws_small_block_kernel<128, 8, KB, V><<<1, 128, 0, s>>>(ki, vi, k, v, m, codec, st);
        else
            ws_small_block_kernel<256, 8, KB, V><<<1, 256, 0, s>>>(ki, vi, k, v, m, codec, st);
        return cudaGetLastError();
    }
};

cudaError_t ws_small_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                              void *keys, void *vals, key_codec codec, bool stable,
                              cudaStream_t stream, const char **what) {
    *what = "small sort";
    return ws_dispatch_kv<ws_small_sort_op>(p->key_bytes, p->value_bytes, p->n, keys_in, vals_in,
                                            keys, vals, codec, stable, stream);
}
