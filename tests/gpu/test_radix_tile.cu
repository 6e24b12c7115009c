/*
 * test_radix_tile.cu - the radix sort of sample-sort bucket jobs
 * (src/cuda/radix_tile.cuh, ws_bucket_radix_kernel) on its own, against a
 * host reference, at every switch its pass count and its blocks have.
 *
 * Jobs of 1, 2, 31..35, 511..513 items and one below and at each class's
 * capacity, whose keys span exactly 0, 1, 8..10, 17..19, 26..28 and 32
 * bits (so one and two passes over every bit, and from 19 bits two passes
 * over the top 18 then runs of equal prefixes; 32 bits with both 0 and
 * 0xFFFFFFFF present), and for 8-byte keys also 29, 36, 48, 63 and 64 bits;
 * keys distinct, from five values (ties), in five clusters
 * narrower than the prefix's resolution, or in one (runs of equal prefixes
 * up to the whole job, so runs of 32 and 33 and the passes over every bit
 * after a longer one). Half of the jobs live in the workspace copy, half in
 * the output (sorted in place); many jobs per block, so shared memory is
 * reused after jobs of every kind. Keys alone of 4 and 8 bytes, unstable and
 * stable pairs with 4- and 8-byte values, and descending float codecs (the
 * kernel decodes while it stores); every width also with the packed
 * counters of the segments' radix blocks (ws_rx_smem's PACK). Stable pairs
 * must keep each key's values in input order; unstable ones must hold each
 * input value once, beside its own key.
 *
 * Standalone: copy the binary to a GPU machine and run it (--quick: fewer
 * seeds; --case S: only the cases whose name contains S). Without a device
 * of compute capability 9.0 or more (the sample sort's kernels carry code
 * for Hopper and newer only) it prints SKIPPED and exits 77 (ctest:
 * SKIP_RETURN_CODE).
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

static uint64_t next_rand64(void) { return (uint64_t)next_rand() << 32 ^ next_rand(); }

/* Ordered keys for a job of `size` items spanning exactly `bits` bits (when
 * size > 1): mode 0 distinct-ish, 1 five values, 2 five clusters of keys
 * that differ in their low 10 bits only, 3 one such cluster between the two
 * ends of the range. */
template <typename KB>
static void make_job(KB *k, unsigned size, int bits, int mode) {
    const uint64_t span = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    const uint64_t room = (uint64_t)(KB)~0ull - span; /* lo + span fits KB */
    const uint64_t lo = room == ~0ull ? next_rand64() : next_rand64() % (room + 1);
    const uint64_t fine = bits > 12 ? 1023u : 0u;
    /* A multiple of a large power of two: the cluster shares one prefix. */
    const uint64_t mid = bits > 12 ? span / 4 + 1 : span / 2;
    for (unsigned i = 0; i < size; i++) {
        uint64_t r = next_rand64() & span;
        if (mode == 1) r = span / 4 * (r % 5);
        if (mode == 2) r = span / 8 * 2 * (next_rand() % 5) + (next_rand() & fine);
        if (r > span) r = span;
        if (mode == 3) r = mid + (next_rand() & fine);
        k[i] = (KB)(lo + r);
    }
    if (size > 1) { /* the range is exactly `bits` wide, its ends anywhere */
        k[0] = (KB)lo;
        k[1] = (KB)(lo + span);
        for (int e = 0; e < 2; e++) {
            const unsigned j = next_rand() % size;
            const KB x = k[e];
            k[e] = k[j];
            k[j] = x;
        }
    }
}

template <typename KB>
struct order_item {
    KB key;
    uint32_t pos;
};
template <typename KB>
static int cmp_item(const void *a, const void *b) {
    const order_item<KB> *x = (const order_item<KB> *)a, *y = (const order_item<KB> *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The value of the item at `global`: its position plus an offset, so a
 * value names the input item it came from. */
template <typename V>
static V value_of(size_t global) {
    return (V)(global + (sizeof(V) == 8 ? 0xABCD00000000ull : 12345ull));
}

/* --case: only the cases whose name contains this (sanitizer runs). */
static const char *g_only = NULL;
static int g_cases = 0; /* cases run */

/* One launch over every job of the table, then a check of each. Returns the
 * number of failed jobs. */
template <typename KB, typename V, bool STABLE, int THREADS, bool PACK = false>
static int run_case(const char *name, key_codec codec, int ties) {
    if (g_only && !strstr(name, g_only)) return 0;
    g_cases++;
    constexpr int CAP = THREADS * WS_RX_ITEMS;
    constexpr bool VALS = is_value<V>::value;
    using VS = typename std::conditional<VALS, V, uint32_t>::type;
    const unsigned sizes[] = {1, 2, 31, 32, 33, 34, 35, 511, 512, 513, CAP - 1, CAP, CAP / 2 + 1};
    const int bits[] = {0, 1, 8, 9, 10, 17, 18, 19, 26, 27, 28, 32, 29, 36, 48, 63, 64};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    const int nbits = sizeof(KB) == 8 ? (int)(sizeof(bits) / sizeof(bits[0])) : 12;
    const int njobs = nsizes * nbits;
    ws_bucket *jobs = (ws_bucket *)calloc((size_t)njobs, sizeof(ws_bucket));
    size_t total = 0;
    for (int j = 0; j < njobs; j++) {
        jobs[j].begin = total;
        jobs[j].size = sizes[j % nsizes];
        jobs[j].in_tmp = (unsigned)(j % 2);
        total += jobs[j].size + (unsigned)(next_rand() % 7); /* gaps between jobs */
    }
    KB *in = (KB *)calloc(total, sizeof(KB));
    VS *vin = (VS *)calloc(total, sizeof(VS));
    for (int j = 0; j < njobs; j++) {
        make_job(in + jobs[j].begin, jobs[j].size, bits[j / nsizes], ties);
        for (unsigned i = 0; i < jobs[j].size; i++)
            vin[jobs[j].begin + i] = value_of<VS>(jobs[j].begin + i);
    }
    /* Gaps hold a marker the kernel must leave alone. */
    const KB marker = (KB)0x5EEDF00D5EEDF00Dull;
    KB *keys_h = (KB *)malloc(total * sizeof(KB)), *tmp_h = (KB *)malloc(total * sizeof(KB));
    VS *vals_h = (VS *)malloc(total * sizeof(VS)), *vtmp_h = (VS *)malloc(total * sizeof(VS));
    for (size_t i = 0; i < total; i++) keys_h[i] = tmp_h[i] = marker, vals_h[i] = vtmp_h[i] = 0;
    for (int j = 0; j < njobs; j++) {
        KB *kd = jobs[j].in_tmp ? tmp_h : keys_h;
        VS *vd = jobs[j].in_tmp ? vtmp_h : vals_h;
        memcpy(kd + jobs[j].begin, in + jobs[j].begin, jobs[j].size * sizeof(KB));
        memcpy(vd + jobs[j].begin, vin + jobs[j].begin, jobs[j].size * sizeof(VS));
    }
    KB *dk, *dt;
    VS *dv, *dvt;
    ws_bucket *dj;
    unsigned *dcount;
    DT_CUDA(cudaMalloc(&dk, total * sizeof(KB)));
    DT_CUDA(cudaMalloc(&dt, total * sizeof(KB)));
    DT_CUDA(cudaMalloc(&dv, total * sizeof(VS)));
    DT_CUDA(cudaMalloc(&dvt, total * sizeof(VS)));
    DT_CUDA(cudaMalloc(&dj, njobs * sizeof(ws_bucket)));
    DT_CUDA(cudaMalloc(&dcount, 2 * sizeof(unsigned))); /* the count, the claims */
    DT_CUDA(cudaMemset(dcount, 0, 2 * sizeof(unsigned)));
    DT_CUDA(cudaMemcpy(dk, keys_h, total * sizeof(KB), cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dt, tmp_h, total * sizeof(KB), cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dv, vals_h, total * sizeof(VS), cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dvt, vtmp_h, total * sizeof(VS), cudaMemcpyHostToDevice));
    DT_CUDA(cudaMemcpy(dj, jobs, njobs * sizeof(ws_bucket), cudaMemcpyHostToDevice));
    const unsigned count = (unsigned)njobs;
    DT_CUDA(cudaMemcpy(dcount, &count, sizeof(unsigned), cudaMemcpyHostToDevice));
    auto kernel = ws_bucket_radix_kernel<KB, V, STABLE, THREADS, PACK>;
    const size_t smem = sizeof(ws_rx_smem<KB, V, THREADS, PACK>);
    DT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    /* Few blocks: each sorts many jobs of every pass count in turn. */
    kernel<<<5, THREADS, smem>>>(dk, (V *)dv, dt, (const V *)dvt, dj, dcount, dcount + 1, codec);
    DT_CUDA(cudaGetLastError());
    DT_CUDA(cudaDeviceSynchronize());
    DT_CUDA(cudaMemcpy(keys_h, dk, total * sizeof(KB), cudaMemcpyDeviceToHost));
    DT_CUDA(cudaMemcpy(vals_h, dv, total * sizeof(VS), cudaMemcpyDeviceToHost));
    DT_CUDA(cudaMemcpy(tmp_h, dt, total * sizeof(KB), cudaMemcpyDeviceToHost));

    int failed = 0;
    order_item<KB> *want = (order_item<KB> *)malloc(CAP * sizeof(order_item<KB>));
    unsigned char *seen = (unsigned char *)malloc(CAP);
    for (int j = 0; j < njobs; j++) {
        const ws_bucket &b = jobs[j];
        for (unsigned i = 0; i < b.size; i++) want[i] = {in[b.begin + i], i};
        qsort(want, b.size, sizeof(order_item<KB>), cmp_item<KB>);
        memset(seen, 0, b.size);
        const char *why = NULL;
        unsigned at = 0;
        for (unsigned i = 0; i < b.size && !why; i++) {
            at = i;
            const KB got = keys_h[b.begin + i];
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
            if (keys_h[g] != marker || tmp_h[g] != marker) why = "gap written";
        if (why) {
            if (failed < 5)
                fprintf(stderr, "%s: job of %u keys over %d bits (%s, mode %d): %s wrong at %u\n",
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
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            g_only = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--quick] [--case SUBSTRING]\n", argv[0]);
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
    const key_codec raw = {0, 0}, float_desc = {2, 1};
    int failed = 0;
    for (int seed = 0; seed < (quick ? 1 : 3); seed++) {
        for (int mode = 0; mode < 4; mode++) {
            /* Keys alone are never sorted stably by the library. The
             * capacities are the classes' (4-byte keys: tiles of 4096, and
             * four tiles for keys alone; u64 keys 4096; pairs of 12 and 16
             * bytes 2048). */
            failed += run_case<uint32_t, no_value, false, 256>("keys 4096", raw, mode) != 0;
            failed += run_case<uint32_t, no_value, false, 512>("keys 8192", float_desc, mode) != 0;
            failed += run_case<uint32_t, no_value, false, 1024>("keys 16384", raw, mode) != 0;
            failed += run_case<uint32_t, uint32_t, false, 256>("u32 pairs 4096", raw, mode) != 0;
            failed += run_case<uint32_t, uint32_t, true, 256>("stable u32 pairs 4096", float_desc,
                                                              mode) != 0;
            failed +=
                run_case<uint32_t, uint32_t, true, 512>("stable u32 pairs 8192", raw, mode) != 0;
            failed += run_case<uint32_t, uint64_t, false, 128>("u64 pairs 2048", raw, mode) != 0;
            failed +=
                run_case<uint32_t, uint64_t, true, 256>("stable u64 pairs 4096", raw, mode) != 0;
            failed += run_case<uint64_t, no_value, false, 256>("u64 keys 4096", raw, mode) != 0;
            failed +=
                run_case<uint64_t, no_value, false, 512>("f64 keys 8192", float_desc, mode) != 0;
            failed +=
                run_case<uint64_t, uint32_t, false, 128>("u64 + u32 pairs 2048", raw, mode) != 0;
            failed += run_case<uint64_t, uint32_t, true, 256>("stable u64 + u32 pairs 4096",
                                                              float_desc, mode) != 0;
            failed +=
                run_case<uint64_t, uint64_t, false, 256>("u64 + u64 pairs 4096", raw, mode) != 0;
            failed += run_case<uint64_t, uint64_t, true, 128>("stable u64 + u64 pairs 2048", raw,
                                                              mode) != 0;
            /* Packed counters (the segments' radix blocks, up to 16384
             * items for every width that fits). */
            failed +=
                run_case<uint32_t, no_value, false, 256, true>("packed keys 4096", raw, mode) != 0;
            failed += run_case<uint32_t, no_value, false, 1024, true>("packed keys 16384",
                                                                      float_desc, mode) != 0;
            failed += run_case<uint32_t, uint32_t, true, 1024, true>(
                          "packed stable u32 pairs 16384", raw, mode) != 0;
            failed += run_case<uint32_t, uint32_t, false, 512, true>("packed u32 pairs 8192", raw,
                                                                     mode) != 0;
            failed += run_case<uint32_t, uint64_t, true, 256, true>("packed stable u64 pairs 4096",
                                                                    raw, mode) != 0;
            failed += run_case<uint64_t, no_value, false, 1024, true>("packed u64 keys 16384",
                                                                      float_desc, mode) != 0;
            failed += run_case<uint64_t, uint32_t, true, 512, true>(
                          "packed stable u64 + u32 pairs 8192", raw, mode) != 0;
            failed += run_case<uint64_t, uint64_t, false, 128, true>("packed u64 + u64 pairs 2048",
                                                                     raw, mode) != 0;
        }
    }
    printf("%d cases, %d failed\n", g_cases, failed);
    return failed ? 1 : 0;
}
