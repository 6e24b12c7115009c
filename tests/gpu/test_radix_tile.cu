/*
 * test_radix_tile.cu - the radix sort of sample-sort bucket jobs
 * (src/cuda/radix_tile.cuh, ws_bucket_radix_kernel) on its own, against a
 * host reference, at every switch its pass count and its blocks have.
 *
 * Jobs of 1, 2, 31..33, 511..513 items and one below and at each class's
 * capacity (4096 and 8192 items), whose keys span exactly 0, 1, 8..10,
 * 17..19, 26..28 and 32 bits (so one, two, three and four passes and every
 * width change are crossed; 32 bits with both 0 and 0xFFFFFFFF present), with
 * distinct keys and with a handful of values (ties); half of the jobs live in
 * the workspace copy, half in the output (sorted in place); many jobs per
 * block, so shared memory is reused after jobs of every pass count. Keys
 * alone, unstable and stable pairs with 4- and 8-byte values, and a
 * descending float codec (the kernel decodes while it stores). Stable pairs
 * must keep each key's values in input order; unstable ones must hold each
 * input value once, beside its own key.
 *
 * Standalone: copy the binary to a GPU machine and run it (--quick: fewer
 * seeds). Without a device of compute capability 9.0 or more (the sample
 * sort's kernels carry code for Hopper and newer only) it prints SKIPPED and
 * exits 77 (ctest: SKIP_RETURN_CODE).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/radix_tile.cuh"
#include "device_test.h" /* DT_CUDA */

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_rand(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

/* A job's input: size ordered keys spanning exactly `bits` bits (when size >
 * 1), distinct-ish or from five values. */
static void make_job(uint32_t *k, unsigned size, int bits, int ties) {
    const uint32_t span = bits >= 32 ? 0xFFFFFFFFu : (uint32_t)((1ull << bits) - 1);
    const uint32_t lo = (uint32_t)(next_rand() % (0x100000000ull - span)); /* lo + span fits */
    for (unsigned i = 0; i < size; i++) {
        uint32_t r = next_rand();
        if (bits < 32) r = (uint32_t)(((uint64_t)r * ((uint64_t)span + 1)) >> 32);
        if (ties) r = (uint32_t)((uint64_t)span * (r % 5) / 4);
        k[i] = lo + r;
    }
    if (size > 1) { /* the range is exactly `bits` wide, its ends anywhere */
        k[0] = lo;
        k[1] = lo + span;
        for (int e = 0; e < 2; e++) {
            const unsigned j = next_rand() % size;
            const uint32_t x = k[e];
            k[e] = k[j];
            k[j] = x;
        }
    }
}

struct order_item {
    uint32_t key;
    uint32_t pos;
};
static int cmp_item(const void *a, const void *b) {
    const order_item *x = (const order_item *)a, *y = (const order_item *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The value of the item at `global`: its position plus an offset, so a
 * value names the input item it came from. */
template <typename V>
static V value_of(size_t global) {
    return (V)(global + (sizeof(V) == 8 ? 0xABCD00000000ull : 12345ull));
}

/* One launch over every job of the table, then a check of each. Returns the
 * number of failed jobs. */
template <typename V, bool STABLE, int THREADS>
static int run_case(const char *name, key_codec codec, int ties) {
    constexpr int CAP = THREADS * WS_RX_ITEMS;
    constexpr bool VALS = is_value<V>::value;
    using VS = typename std::conditional<VALS, V, uint32_t>::type;
    const unsigned sizes[] = {1, 2, 31, 32, 33, 511, 512, 513, CAP - 1, CAP, CAP / 2 + 1};
    const int bits[] = {0, 1, 8, 9, 10, 17, 18, 19, 26, 27, 28, 32};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    const int nbits = (int)(sizeof(bits) / sizeof(bits[0]));
    const int njobs = nsizes * nbits;
    ws_bucket *jobs = (ws_bucket *)calloc((size_t)njobs, sizeof(ws_bucket));
    size_t total = 0;
    for (int j = 0; j < njobs; j++) {
        jobs[j].begin = total;
        jobs[j].size = sizes[j % nsizes];
        jobs[j].in_tmp = (unsigned)(j % 2);
        total += jobs[j].size + (unsigned)(next_rand() % 7); /* gaps between jobs */
    }
    uint32_t *in = (uint32_t *)calloc(total, 4);
    VS *vin = (VS *)calloc(total, sizeof(VS));
    for (int j = 0; j < njobs; j++) {
        make_job(in + jobs[j].begin, jobs[j].size, bits[j / nsizes], ties);
        for (unsigned i = 0; i < jobs[j].size; i++)
            vin[jobs[j].begin + i] = value_of<VS>(jobs[j].begin + i);
    }
    /* Gaps hold a marker the kernel must leave alone. */
    uint32_t *keys_h = (uint32_t *)malloc(total * 4), *tmp_h = (uint32_t *)malloc(total * 4);
    VS *vals_h = (VS *)malloc(total * sizeof(VS)), *vtmp_h = (VS *)malloc(total * sizeof(VS));
    for (size_t i = 0; i < total; i++)
        keys_h[i] = tmp_h[i] = 0x5EEDF00Du, vals_h[i] = vtmp_h[i] = 0;
    for (int j = 0; j < njobs; j++) {
        uint32_t *kd = jobs[j].in_tmp ? tmp_h : keys_h;
        VS *vd = jobs[j].in_tmp ? vtmp_h : vals_h;
        memcpy(kd + jobs[j].begin, in + jobs[j].begin, jobs[j].size * 4);
        memcpy(vd + jobs[j].begin, vin + jobs[j].begin, jobs[j].size * sizeof(VS));
    }
    uint32_t *dk, *dt;
    VS *dv, *dvt;
    ws_bucket *dj;
    unsigned *dcount;
    DT_CUDA(cudaMalloc(&dk, total * 4));
    DT_CUDA(cudaMalloc(&dt, total * 4));
    DT_CUDA(cudaMalloc(&dv, total * sizeof(VS)));
    DT_CUDA(cudaMalloc(&dvt, total * sizeof(VS)));
    DT_CUDA(cudaMalloc(&dj, njobs * sizeof(ws_bucket)));
    DT_CUDA(cudaMalloc(&dcount, sizeof(unsigned)));
    DT_CUDA(cudaMemcpy(dk, keys_h, total * 4, cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dt, tmp_h, total * 4, cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dv, vals_h, total * sizeof(VS), cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dvt, vtmp_h, total * sizeof(VS), cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dj, jobs, njobs * sizeof(ws_bucket), cudaMemcpyHostToDevice));
    const unsigned count = (unsigned)njobs;
    DT_CUDA(cudaMemcpy(dcount, &count, sizeof(unsigned), cudaMemcpyHostToDevice));
    auto kernel = ws_bucket_radix_kernel<V, STABLE, THREADS>;
    const size_t smem = sizeof(ws_rx_smem<V, THREADS>);
    DT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    /* Few blocks: each sorts many jobs of every pass count in turn. */
    kernel<<<5, THREADS, smem>>>(dk, (V *)dv, dt, (const V *)dvt, dj, dcount, codec);
    DT_CUDA(cudaGetLastError());
    DT_CUDA(cudaDeviceSynchronize());
    DT_CUDA(cudaMemcpy(keys_h, dk, total * 4, cudaMemcpyDeviceToHost));
    DT_CUDA(cudaMemcpy(vals_h, dv, total * sizeof(VS), cudaMemcpyDeviceToHost));
    DT_CUDA(cudaMemcpy(tmp_h, dt, total * 4, cudaMemcpyDeviceToHost));

    int failed = 0;
    order_item *want = (order_item *)malloc(CAP * sizeof(order_item));
    unsigned char *seen = (unsigned char *)malloc(CAP);
    for (int j = 0; j < njobs; j++) {
        const ws_bucket &b = jobs[j];
        for (unsigned i = 0; i < b.size; i++) want[i] = {in[b.begin + i], i};
        qsort(want, b.size, sizeof(order_item), cmp_item);
        memset(seen, 0, b.size);
        const char *why = NULL;
        unsigned at = 0;
        for (unsigned i = 0; i < b.size && !why; i++) {
            at = i;
            const uint32_t got = keys_h[b.begin + i];
            if (got != decode(want[i].key, codec)) {
                why = "key";
                break;
            }
            if (VALS) {
                const VS gv = vals_h[b.begin + i];
                if (STABLE) {
                    if (gv != value_of<VS>(b.begin + want[i].pos)) why = "stable value";
                } else {
                    /* Which input item it came from: same key, not seen. */
                    const unsigned long long src = (unsigned long long)(gv - value_of<VS>(b.begin));
                    if (src >= b.size || seen[src] || in[b.begin + src] != want[i].key)
                        why = "value";
                    else
                        seen[src] = 1;
                }
            }
        }
        /* The marker after the job is untouched in both buffers. */
        const size_t after = b.begin + b.size;
        const size_t next = j + 1 < njobs ? jobs[j + 1].begin : total;
        for (size_t g = after; g < next && !why; g++)
            if (keys_h[g] != 0x5EEDF00Du || tmp_h[g] != 0x5EEDF00Du) why = "gap written";
        if (why) {
            if (failed < 5)
                fprintf(stderr, "%s: job of %u keys over %d bits (%s, ties %d): %s wrong at %u\n",
                        name, b.size, bits[j / nsizes], b.in_tmp ? "workspace" : "in place", ties,
                        why, at);
            failed++;
        }
    }
    free(want);
    free(seen);
    free(jobs);
    free(in);
    free(vin);
    free(keys_h);
    free(tmp_h);
    free(vals_h);
    free(vtmp_h);
    DT_CUDA(cudaFree(dk));
    DT_CUDA(cudaFree(dt));
    DT_CUDA(cudaFree(dv));
    DT_CUDA(cudaFree(dvt));
    DT_CUDA(cudaFree(dj));
    DT_CUDA(cudaFree(dcount));
    return failed;
}

int main(int argc, char **argv) {
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 2;
        }
    }
    int devices = 0, major = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: SKIPPED\n");
        return 77;
    }
    DT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 9) {
        printf("compute capability %d.x: the sample sort's kernels need 9.0: SKIPPED\n", major);
        return 77;
    }
    const key_codec u32 = {0, 0}, f32_desc = {2, 1};
    int cases = 0, failed = 0;
    for (int seed = 0; seed < (quick ? 1 : 3); seed++) {
        for (int ties = 0; ties < 2; ties++) {
            /* Keys alone are never sorted stably by the library. */
            failed += run_case<no_value, false, 256>("keys 4096", u32, ties) != 0;
            failed += run_case<no_value, false, 512>("keys 8192", f32_desc, ties) != 0;
            failed += run_case<uint32_t, false, 256>("u32 pairs 4096", u32, ties) != 0;
            failed += run_case<uint32_t, true, 256>("stable u32 pairs 4096", f32_desc, ties) != 0;
            failed += run_case<uint32_t, true, 512>("stable u32 pairs 8192", u32, ties) != 0;
            failed += run_case<uint64_t, false, 128>("u64 pairs 2048", u32, ties) != 0;
            failed += run_case<uint64_t, true, 256>("stable u64 pairs 4096", u32, ties) != 0;
            cases += 7;
        }
    }
    printf("%d cases, %d failed\n", cases, failed);
    return failed ? 1 : 0;
}
