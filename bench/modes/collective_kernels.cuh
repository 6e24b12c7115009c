/*
 * collective_kernels.cuh - the kernels of the collectives mode: the public
 * device API (include/warpsort/) against CUB's collectives at equal work per
 * block, in-kernel. Every block loops kIters times over its tile held in
 * registers (and shared memory for the block sorts), scrambling the keys
 * with one multiply-add per key between iterations, so DRAM plays no part.
 * Both sides run the same loop and the same scramble; only the collective
 * differs. Keys start distinct and the scramble is a bijection, so every
 * sorted tile is unique: each thread's sink word must be bit for bit the
 * same for every implementation of a case (the mode checks that).
 */
#ifndef WSB_MODES_COLLECTIVE_KERNELS_CUH
#define WSB_MODES_COLLECTIVE_KERNELS_CUH

#include <cstdint>
#include <type_traits>

#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <warpsort/block_sort.cuh>
#include <warpsort/warp_ops.cuh>
#include <warpsort/warp_sort.cuh>

namespace wsb {

constexpr int kIters = 64; /* tiles each block sorts per launch */

struct LessU32 {
    __device__ bool operator()(uint32_t a, uint32_t b) const { return a < b; }
};

/* Per-key scramble between iterations: a bijection, the same on both sides. */
__device__ __forceinline__ uint32_t scramble(uint32_t x) { return x * 1664525u + 1013904223u; }

template <int K>
__device__ __forceinline__ void load_seed(uint32_t (&k)[K]) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < K; i++) k[i] = (t * K + i) * 2654435761u;
}

enum Impl { WS, CUB_MERGE, CUB_RADIX };

template <int K, Impl I>
__global__ void __launch_bounds__(256) warp_sort_bench(uint32_t *sink) {
    using wms = cub::WarpMergeSort<uint32_t, K, 32>;
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t k[K];
    load_seed(k);
    uint32_t acc = 0;
    for (int it = 0; it < kIters; it++) {
#pragma unroll
        for (int i = 0; i < K; i++) k[i] = scramble(k[i]);
        if constexpr (I == WS) {
            warpsort::warp_sort_keys(k);
        } else {
            auto *temp = reinterpret_cast<typename wms::TempStorage *>(smem);
            wms(temp[threadIdx.x / 32]).Sort(k, LessU32{});
            __syncwarp();
        }
        acc ^= k[0] + k[K - 1];
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int K, Impl I>
size_t warp_sort_smem() {
    return I == WS ? 0 : 8 * sizeof(typename cub::WarpMergeSort<uint32_t, K, 32>::TempStorage);
}

template <int THREADS, int K, bool PAIRS, Impl I>
struct BlockBench {
    using value = typename std::conditional<PAIRS, uint32_t, warpsort::no_value>::type;
    using ws_storage = warpsort::block_sort_storage<uint32_t, value, THREADS, K>;
    using cub_v = typename std::conditional<PAIRS, uint32_t, cub::NullType>::type;
    using bms = cub::BlockMergeSort<uint32_t, THREADS, K, cub_v>;
    using brs = cub::BlockRadixSort<uint32_t, THREADS, K, cub_v>;
    static size_t smem() {
        return I == WS          ? sizeof(ws_storage)
               : I == CUB_MERGE ? sizeof(typename bms::TempStorage)
                                : sizeof(typename brs::TempStorage);
    }
};

template <int THREADS, int K, bool PAIRS, Impl I>
__global__ void __launch_bounds__(THREADS) block_sort_bench(uint32_t *sink) {
    using B = BlockBench<THREADS, K, PAIRS, I>;
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t k[K], v[K];
    load_seed(k);
#pragma unroll
    for (int i = 0; i < K; i++) v[i] = threadIdx.x * K + i;
    uint32_t acc = 0;
    for (int it = 0; it < kIters; it++) {
#pragma unroll
        for (int i = 0; i < K; i++) k[i] = scramble(k[i]);
        if constexpr (I == WS) {
            auto &st = *reinterpret_cast<typename B::ws_storage *>(smem);
            if constexpr (PAIRS)
                warpsort::block_sort_pairs(k, v, st);
            else
                warpsort::block_sort_keys(k, st);
        } else if constexpr (I == CUB_MERGE) {
            auto &st = *reinterpret_cast<typename B::bms::TempStorage *>(smem);
            if constexpr (PAIRS)
                typename B::bms(st).Sort(k, v, LessU32{});
            else
                typename B::bms(st).Sort(k, LessU32{});
            __syncthreads(); /* CUB: temp storage reused next iteration */
        } else {
            auto &st = *reinterpret_cast<typename B::brs::TempStorage *>(smem);
            if constexpr (PAIRS)
                typename B::brs(st).Sort(k, v);
            else
                typename B::brs(st).Sort(k);
            __syncthreads();
        }
        acc ^= k[0] + k[K - 1] + (PAIRS ? v[0] : 0u);
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

enum OpKind { REDUCE, SCAN };

template <OpKind OP, bool CUB>
__global__ void __launch_bounds__(256) warp_op_bench(uint32_t *sink) {
    using wr = cub::WarpReduce<int>;
    using wsc = cub::WarpScan<int>;
    __shared__ typename wr::TempStorage rtemp[8];
    __shared__ typename wsc::TempStorage stemp[8];
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int acc = 0;
    for (int it = 0; it < kIters * 16; it++) {
        x = x * 3 + it;
        int r;
        if constexpr (OP == REDUCE) {
            /* CUB's sum lands in lane 0 only; warpsort's in every lane */
            if constexpr (CUB)
                r = wr(rtemp[threadIdx.x / 32]).Sum(x);
            else
                r = warpsort::warp_reduce(x, warpsort::plus_op{});
        } else {
            if constexpr (CUB)
                wsc(stemp[threadIdx.x / 32]).InclusiveSum(x, r);
            else
                r = warpsort::warp_inclusive_scan(x, warpsort::plus_op{});
        }
        acc += r;
    }
    /* Reduce: only lane 0's sum is defined for both, so only it is kept. */
    const bool keep = OP != REDUCE || (threadIdx.x & 31u) == 0;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = keep ? (uint32_t)acc : 0u;
}

} // namespace wsb

#endif /* WSB_MODES_COLLECTIVE_KERNELS_CUH */
