/*
 * warp_sort_32x4.cu - every warp of a user kernel sorts 32 x 4 float keys in
 * registers, next to its own work, with warpsort::warp_sort_keys.
 * Self-checking: exit 0 when every warp's 128 keys come out sorted and
 * unchanged as a multiset, 1 otherwise, 77 without a CUDA device.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include <warpsort/warp_sort.cuh>

constexpr int K = 4; /* keys per lane: a warp sorts 128 */

__global__ void sort_each_warp(float *data) {
    const size_t lane = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float keys[K];
    for (int i = 0; i < K; i++) keys[i] = data[lane * K + i] * 2.0f; /* the kernel's own work */
    warpsort::warp_sort_keys(keys); /* ascending; lane l now holds keys 4l .. 4l+3 of its warp */
    for (int i = 0; i < K; i++) data[lane * K + i] = keys[i];
}

int main(void) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    const int blocks = 64, threads = 256, n = blocks * threads * K;
    float *h = (float *)malloc(n * sizeof(float)), *out = (float *)malloc(n * sizeof(float));
    unsigned s = 12345;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (float)(int)(s >> 12) - 524288.0f; /* integers: x * 2 is exact */
    }
    float *d = NULL;
    if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) return 1;
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    sort_each_warp<<<blocks, threads>>>(d);
    if (cudaMemcpy(out, d, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    int bad = 0;
    for (int w = 0; w < n / (32 * K) && !bad; w++) {
        const float *in = h + w * 32 * K, *o = out + w * 32 * K;
        double sum_in = 0, sum_out = 0;
        for (int i = 0; i < 32 * K; i++) {
            sum_in += in[i] * 2.0;
            sum_out += o[i];
            if (i && o[i - 1] > o[i]) bad = 1;
        }
        if (sum_in != sum_out) bad = 1;
        if (bad) printf("warp %d: not sorted or keys changed\n", w);
    }
    cudaFree(d);
    free(h);
    free(out);
    printf("%s: %d warps sorted 32 x %d keys each\n", bad ? "FAILED" : "ok", n / (32 * K), K);
    return bad;
}
