/*
 * merge2.cu - merges two sorted device runs into one (the pipeline's merge
 * tree over pieces). A partition launch finds, with the public merge path
 * (warpsort/block_merge.cuh), where every output tile of WS_MERGE_TILE
 * starts in a and b; one block per tile then loads its slices of a and b
 * into shared memory as ordered bits (coalesced), each thread merges
 * WS_MERGE_ITEMS outputs from its own split, and the tile goes back through
 * shared memory, decoded. Ties take a everywhere, so the merge is stable.
 */
#include "cuda/dispatch.cuh"
#include "pipe.h"
#include "warpsort/block_merge.cuh"

using warpsort::decode;
using warpsort::encode;
using warpsort::is_value;
using warpsort::key_codec;

/* Ordered bits of a global run, for the merge path. */
template <typename KB>
struct ws_codec_reader {
    const KB *p;
    key_codec c;
    __device__ __forceinline__ KB operator()(size_t i) const { return encode(p[i], c); }
};
template <typename KB>
struct ws_smem_reader {
    const KB *p;
    __device__ __forceinline__ KB operator()(int i) const { return p[i]; }
};

/* bounds[i] = items of a among the first i * WS_MERGE_TILE outputs. */
template <typename KB>
__global__ void ws_merge2_partition(const KB *a, size_t na, const KB *b, size_t nb, size_t nbounds,
                                    size_t *bounds, key_codec c) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nbounds) return;
    size_t d = i * (size_t)WS_MERGE_TILE;
    if (d > na + nb) d = na + nb;
    bounds[i] = warpsort::merge_path<KB, size_t>(ws_codec_reader<KB>{a, c}, na,
                                                 ws_codec_reader<KB>{b, c}, nb, d);
}

template <typename KB, typename V>
__global__ void __launch_bounds__(WS_MERGE_THREADS)
    ws_merge2_tile(const KB *a, const V *av, size_t na, const KB *b, const V *bv, size_t nb,
                   const size_t *bounds, KB *out, V *outv, key_codec c) {
    constexpr bool HAS_V = is_value<V>::value;
    __shared__ KB sk[WS_MERGE_TILE];
    __shared__ V sv[HAS_V ? WS_MERGE_TILE : 1];
    const size_t o0 = (size_t)blockIdx.x * WS_MERGE_TILE;
    const size_t total = na + nb;
    const size_t o1 = total - o0 < (size_t)WS_MERGE_TILE ? total : o0 + WS_MERGE_TILE;
    const size_t a0 = bounds[blockIdx.x], a1 = bounds[blockIdx.x + 1];
    const size_t b0 = o0 - a0;
    const int la = (int)(a1 - a0);
    const int count = (int)(o1 - o0);
    const int lb = count - la;
    const int t = (int)threadIdx.x;
    for (int e = t; e < count; e += WS_MERGE_THREADS) {
        const bool from_a = e < la;
        sk[e] = encode(from_a ? a[a0 + e] : b[b0 + (e - la)], c);
        if constexpr (HAS_V) sv[e] = from_a ? av[a0 + e] : bv[b0 + (e - la)];
    }
    __syncthreads();
    /* This thread's split inside the tile: b's slice starts at sk[la]. */
    const int d = t * WS_MERGE_ITEMS < count ? t * WS_MERGE_ITEMS : count;
    const int lo = warpsort::merge_path<KB, int>(ws_smem_reader<KB>{sk}, la,
                                                 ws_smem_reader<KB>{sk + la}, lb, d);
    int ia = lo, ib = la + (d - lo);
    KB rk[WS_MERGE_ITEMS];
    V rv[WS_MERGE_ITEMS];
#pragma unroll
    for (int i = 0; i < WS_MERGE_ITEMS; i++) {
        if (d + i < count) {
            const bool take_a = ia < la && (ib >= count || !(sk[ib] < sk[ia]));
            const int src = take_a ? ia : ib;
            rk[i] = sk[src];
            if constexpr (HAS_V) rv[i] = sv[src];
            ia += take_a;
            ib += !take_a;
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < WS_MERGE_ITEMS; i++) {
        if (d + i < count) {
            sk[d + i] = rk[i];
            if constexpr (HAS_V) sv[d + i] = rv[i];
        }
    }
    __syncthreads();
    for (int e = t; e < count; e += WS_MERGE_THREADS) {
        out[o0 + e] = decode(sk[e], c);
        if constexpr (HAS_V) outv[o0 + e] = sv[e];
    }
}

struct ws_merge2_op {
    template <typename KB, typename V>
    static cudaError_t run(key_codec c, const void *ak, const void *av, size_t na, const void *bk,
                           const void *bv, size_t nb, void *ok, void *ov, size_t *bounds,
                           cudaStream_t s) {
        const size_t blocks = (na + nb + WS_MERGE_TILE - 1) / WS_MERGE_TILE;
        if (!blocks) return cudaSuccess;
        const size_t nbounds = blocks + 1;
        ws_merge2_partition<KB><<<(unsigned)((nbounds + 255) / 256), 256, 0, s>>>(
            (const KB *)ak, na, (const KB *)bk, nb, nbounds, bounds, c);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) return err;
        ws_merge2_tile<KB, V><<<(unsigned)blocks, WS_MERGE_THREADS, 0, s>>>(
            (const KB *)ak, (const V *)av, na, (const KB *)bk, (const V *)bv, nb, bounds, (KB *)ok,
            (V *)ov, c);
        return cudaGetLastError();
    }
};

cudaError_t ws_merge2(size_t kb, size_t vb, key_codec c, const void *ak, const void *av, size_t na,
                      const void *bk, const void *bv, size_t nb, void *ok, void *ov, size_t *bounds,
                      cudaStream_t s) {
    return ws_dispatch_kv<ws_merge2_op>(kb, vb, c, ak, av, na, bk, bv, nb, ok, ov, bounds, s);
}
