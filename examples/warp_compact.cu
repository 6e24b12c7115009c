/*
 * warp_compact.cu - stream compaction with warpsort::warp_compact_rank: each
 * warp keeps its items above a threshold, reserves room in the output with
 * one atomicAdd per warp (its base shared with warpsort::warp_reduce) and
 * writes them there contiguously, in lane order. Self-checking: exit 0
 * when the output holds exactly the kept items, 1 otherwise, 77 without a
 * CUDA device.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include <warpsort/warp_ops.cuh>

__global__ void keep_large(const int *in, int n, int threshold, int *out, int *out_count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x; /* n is a multiple of 32 */
    const int x = in[i];
    const bool keep = x > threshold;
    int kept;
    const int rank = warpsort::warp_compact_rank(keep, kept); /* this lane's slot, warp's count */
    int base = 0;
    if (rank == 0 && kept && keep) base = atomicAdd(out_count, kept); /* first keeper reserves */
    /* every other lane holds 0: the maximum hands the base to the whole warp */
    base = warpsort::warp_reduce(base, warpsort::max_op{});
    if (keep) out[base + rank] = x;
    (void)n;
}

static int cmp_int(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(void) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    const int n = 1 << 20, threshold = 700;
    int *h = (int *)malloc(n * sizeof(int)), *o = (int *)malloc(n * sizeof(int));
    unsigned s = 42;
    int expected = 0;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = (int)(s >> 22); /* 0..1023 */
        expected += h[i] > threshold;
    }
    int *din = NULL, *dout = NULL, *dcount = NULL;
    if (cudaMalloc(&din, n * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&dout, n * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&dcount, sizeof(int)) != cudaSuccess)
        return 1;
    cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(dcount, 0, sizeof(int));
    keep_large<<<n / 256, 256>>>(din, n, threshold, dout, dcount);
    int count = 0;
    if (cudaMemcpy(&count, dcount, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    int bad = count != expected;
    if (!bad) {
        /* warps land in any order: compare the kept multisets */
        cudaMemcpy(o, dout, count * sizeof(int), cudaMemcpyDeviceToHost);
        int m = 0;
        for (int i = 0; i < n; i++)
            if (h[i] > threshold) h[m++] = h[i];
        qsort(h, m, sizeof(int), cmp_int);
        qsort(o, count, sizeof(int), cmp_int);
        for (int i = 0; i < count && !bad; i++) bad = h[i] != o[i];
    }
    cudaFree(din);
    cudaFree(dout);
    cudaFree(dcount);
    free(h);
    free(o);
    printf("%s: kept %d of %d items (expected %d)\n", bad ? "FAILED" : "ok", count, n, expected);
    return bad;
}
