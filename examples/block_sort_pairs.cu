/*
 * block_sort_pairs.cu - a thread block sorts 2048 key/value pairs (256
 * threads x 8) with warpsort::block_sort_pairs and its storage in static
 * shared memory: u32 keys descending, u32 values (the original index),
 * stable. Self-checking: exit 0 when each block's pairs come out in the
 * expected order, 1 otherwise, 77 without a CUDA device.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <warpsort/block_sort.cuh>

constexpr int THREADS = 256, K = 8, TILE = THREADS * K;

__global__ void __launch_bounds__(THREADS) sort_tiles(uint32_t *keys, uint32_t *vals) {
    __shared__ warpsort::block_sort_storage<uint32_t, uint32_t, THREADS, K> storage;
    const size_t base = (size_t)blockIdx.x * TILE + threadIdx.x * K; /* blocked */
    uint32_t k[K], v[K];
    for (int i = 0; i < K; i++) {
        k[i] = keys[base + i];
        v[i] = vals[base + i];
    }
    warpsort::block_sort_pairs<warpsort::descending, true>(k, v, storage);
    for (int i = 0; i < K; i++) {
        keys[base + i] = k[i];
        vals[base + i] = v[i];
    }
}

int main(void) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    const int blocks = 32, n = blocks * TILE;
    uint32_t *hk = (uint32_t *)malloc(n * 4), *hv = (uint32_t *)malloc(n * 4);
    uint32_t *ok = (uint32_t *)malloc(n * 4), *ov = (uint32_t *)malloc(n * 4);
    unsigned s = 777;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        hk[i] = s >> 22; /* 1024 distinct keys: many ties, so stability shows */
        hv[i] = (uint32_t)(i % TILE);
    }
    uint32_t *dk = NULL, *dv = NULL;
    if (cudaMalloc(&dk, n * 4) != cudaSuccess || cudaMalloc(&dv, n * 4) != cudaSuccess) return 1;
    cudaMemcpy(dk, hk, n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, hv, n * 4, cudaMemcpyHostToDevice);
    sort_tiles<<<blocks, THREADS>>>(dk, dv);
    if (cudaMemcpy(ok, dk, n * 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(ov, dv, n * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    int bad = 0;
    for (int b = 0; b < blocks && !bad; b++) {
        const uint32_t *k = ok + b * TILE, *v = ov + b * TILE, *in = hk + b * TILE;
        char *seen = (char *)calloc(TILE, 1);
        for (int i = 0; i < TILE && !bad; i++) {
            /* every value once, with its own key; keys descending; ties by value */
            if (v[i] >= TILE || seen[v[i]] || in[v[i]] != k[i])
                bad = 1;
            else
                seen[v[i]] = 1;
            if (i && (k[i - 1] < k[i] || (k[i - 1] == k[i] && v[i - 1] > v[i]))) bad = 1;
        }
        free(seen);
        if (bad) printf("block %d: wrong order\n", b);
    }
    cudaFree(dk);
    cudaFree(dv);
    free(hk);
    free(hv);
    free(ok);
    free(ov);
    printf("%s: %d blocks sorted %d pairs each\n", bad ? "FAILED" : "ok", blocks, TILE);
    return bad;
}
