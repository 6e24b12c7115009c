/*
 * sample_sort.cu - the sample-sort path of the device sort (leaf).
 *
 * plan.levels distribution levels (distribute.cuh) cut the keys into
 * buckets small enough for the on-chip sort; then every bucket is sorted on
 * chip in size classes (plan.cuh) by radix passes over the bucket's range
 * (radix_tile.cuh), equality buckets are copied, and the rare bucket too
 * big after the last level is sorted by one block (tile_sort.cuh).
 * Level 0 (its sample, count and scatter) reads the input, keys_in, which
 * is the output array itself or one apart from it, and scatters into the
 * workspace; no later launch reads keys_in, so every level after it and the
 * bucket sorts ping-pong between the workspace and the output exactly as
 * in place (plan.cuh), and the input needs no copy.
 * Every launch is enqueued on the stream: nothing waits for the GPU. Grids
 * and list capacities come from the plan; grids are sized for the worst
 * case and blocks past the counts the previous launch wrote return at once.
 * Every launch after the first (ws_dist_init) is a dependent one where the
 * plan says so (pdl.cuh), so its launch gap overlaps the kernel before.
 */
#include "device_sort.h"
#include "dispatch.cuh"
#include "distribute.cuh"
#include "kernel_shapes.cuh"
#include "radix_tile.cuh"

static size_t ws_min(size_t a, size_t b) { return a < b ? a : b; }

/* Names the launch for the caller's message; returns its error if it failed. */
#define WS_STEP(what_, launch)            \
    do {                                  \
        *what = (what_);                  \
        const cudaError_t e_ = (launch);  \
        if (e_ != cudaSuccess) return e_; \
    } while (0)

/* Sets a kernel's dynamic shared memory and returns how many blocks fill
 * the GPU with it (for grid-stride kernels). */
template <typename K>
static cudaError_t ws_prepare_kernel(K kernel, int threads, size_t smem, int sm_count,
                                     unsigned *grid) {
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return err;
    int per_sm = 0;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
    if (err != cudaSuccess) return err;
    *grid = (unsigned)((per_sm > 0 ? per_sm : 1) * sm_count);
    return cudaSuccess;
}

/* Launches a bucket-sort kernel of `threads` threads and `smem` bytes over
 * job list c: as many blocks as fill the GPU, no more than the list holds. */
template <typename K, typename KB, typename V>
static cudaError_t ws_launch_bucket_jobs(K kernel, int threads, size_t smem, const ws_plan_t &p,
                                         unsigned char *ws, int c, KB *keys, V *vals, KB *ktmp,
                                         V *vtmp, ws_final_ctl *fin, key_codec codec,
                                         cudaStream_t stream) {
    unsigned grid = 0;
    cudaError_t err = ws_prepare_kernel(kernel, threads, smem, p.sm_count, &grid);
    if (err != cudaSuccess) return err;
    grid = (unsigned)ws_min(grid, p.sort_list_cap[c]);
    return ws_launch(kernel, grid, (unsigned)threads, smem, stream, p.pdl, keys, vals, ktmp, vtmp,
                     (const ws_bucket *)(ws + p.lay.sort_list[c]), &fin->sort_count[c],
                     &fin->sort_next[c], codec);
}

/* Bucket-sort class c: radix passes over each job's range (radix_tile.cuh,
 * a block of the class's capacity / WS_RX_ITEMS threads), with a counter a
 * warp: packed ones ran these jobs slower (bench/NOTES.md, thirty-fourth
 * session). */
template <typename KB, typename V, bool STABLE, int C>
static cudaError_t ws_launch_bucket_class(const ws_plan_t &p, unsigned char *ws, KB *keys, V *vals,
                                          KB *ktmp, V *vtmp, ws_final_ctl *fin, key_codec codec,
                                          cudaStream_t stream) {
    using S = ws_shapes<KB, V>;
    constexpr int CAP = S::TILE << C;
    static_assert(ws_radix_buckets(CAP), "every class fits a radix bucket block");
    constexpr int THREADS = CAP / WS_RX_ITEMS;
    static_assert(sizeof(ws_rx_smem<KB, V, THREADS, false>) + sizeof(unsigned) <=
                      ws_family_of(WS_FAMILY_SM90).smem_block,
                  "a radix bucket block (and its next job's index) fits the sm_90 row's "
                  "shared memory");
    return ws_launch_bucket_jobs(ws_bucket_radix_kernel<KB, V, STABLE, THREADS, false>, THREADS,
                                 sizeof(ws_rx_smem<KB, V, THREADS, false>), p, ws, C, keys, vals,
                                 ktmp, vtmp, fin, codec, stream);
}

/* What a level's finalize writes for the next level and the bucket sorts. */
static ws_level_out ws_level_out_for(const ws_plan_t &p, unsigned char *ws, int l,
                                     ws_level_ctl *ctl, ws_final_ctl *fin) {
    const ws_layout &L = p.lay;
    ws_level_out out = {};
    if (l + 1 < p.levels) {
        out.segs = (ws_dist_seg *)(ws + L.segs[l + 1]);
        out.blockseg = (unsigned *)(ws + L.blockseg[l + 1]);
        out.ctl = &ctl[l + 1];
        out.chunk = p.chunk[l + 1];
    }
    for (int c = 0; c < WS_SORT_CLASSES; c++) {
        out.sort[c] = (ws_bucket *)(ws + L.sort_list[c]);
        out.class_cap[c] = p.class_cap[c];
    }
    out.copy = (ws_bucket *)(ws + L.copy_list);
    out.big = (ws_big_bucket *)(ws + L.big_list);
    out.fin = fin;
    return out;
}

/* A sample kernel instance and the dynamic shared memory it needs, paired
 * once from the same template arguments. */
template <typename KB, int TL>
struct ws_sample_kernel {
    decltype(&ws_dist_sample<KB, TL, 256>) fn;
    size_t smem;
};
template <typename KB, int TL, int THREADS, int ITEMS = WS_SAMPLE_ITEMS>
static ws_sample_kernel<KB, TL> ws_sample_kernel_of() {
    return {ws_dist_sample<KB, TL, THREADS, ITEMS>, sizeof(ws_sample_smem<KB, TL, THREADS, ITEMS>)};
}

/* The distribution levels: sample, count, scan, scatter, finalize each,
 * over splitter trees of 2^TL slots. */
template <typename KB, typename V, bool STABLE, int TL>
static cudaError_t ws_distribute(const ws_plan_t &p, unsigned char *ws, const KB *keys_in,
                                 const V *vals_in, KB *keys, V *vals, key_codec codec,
                                 cudaStream_t stream, const char **what) {
    using S = ws_shapes<KB, V>;
    constexpr int DI = ws_dist_items(S::KEY_BYTES, S::VALUE_BYTES);
    const ws_layout &L = p.lay;
    KB *ktmp = (KB *)ws;
    V *vtmp = is_value<V>::value ? (V *)(ws + L.vals_tmp) : nullptr;
    unsigned long long *cnt = (unsigned long long *)(ws + L.cnt);
    unsigned long long *scan_tiles = (unsigned long long *)(ws + L.scan_tiles);
    ws_level_ctl *ctl = (ws_level_ctl *)(ws + L.ctl);
    ws_final_ctl *fin = (ws_final_ctl *)(ctl + WS_MAX_LEVELS);
    /* Argsort and stable sorts need a stable distribution; the rest rank
     * with atomics on one set of block counters instead of counters and
     * lane masks per warp (ws_dist_smem). */
    constexpr int SCATTER_THREADS = ws_scatter_threads(STABLE, S::KEY_BYTES + S::VALUE_BYTES);
    /* Blocks that sample for 256 buckets or fewer, and for more (wide trees). */
    constexpr int WIDE_THREADS =
        TL > WS_TREE_LOG_NARROW ? ws_sample_threads(WS_TREE_SLOTS_MAX - 1) : 256;
    const ws_sample_kernel<KB, TL> sample = ws_sample_kernel_of<KB, TL, 256>();
    const ws_sample_kernel<KB, TL> sample_wide = ws_sample_kernel_of<KB, TL, WIDE_THREADS>();
    const ws_sample_kernel<KB, TL> sample_small = ws_sample_kernel_of<KB, TL, 64>();
    /* Level 0 is one block a row (one for one array), alone on its SM: the
     * same sample (and so the same splitters) drawn and sorted by 1024
     * threads of fewer keys each, not 256 or WIDE_THREADS of 16. 8-byte
     * keys' sorts ran faster so; 4-byte keys' level 0 took as long as
     * before (bench/NOTES.md, forty-second session). */
    constexpr int ITEMS0 = WS_SAMPLE_ITEMS * 256 / 1024;
    constexpr int WIDE_ITEMS0 = WS_SAMPLE_ITEMS * WIDE_THREADS / 1024;
    const ws_sample_kernel<KB, TL> sample0 = ws_sample_kernel_of<KB, TL, 1024, ITEMS0>();
    const ws_sample_kernel<KB, TL> sample0_wide = ws_sample_kernel_of<KB, TL, 1024, WIDE_ITEMS0>();
    static_assert(ws_sample_smem<KB, TL, 1024, ITEMS0>::S == ws_sample_smem<KB, TL, 256>::S &&
                      ws_sample_smem<KB, TL, 1024, WIDE_ITEMS0>::S ==
                          ws_sample_smem<KB, TL, WIDE_THREADS>::S,
                  "level 0 draws the sample of the same size");
    auto count = ws_dist_count<KB, DI, TL>;
    auto scatter = ws_dist_scatter<KB, V, DI, STABLE, SCATTER_THREADS, TL>;
    const size_t count_smem = sizeof(ws_count_smem<KB, DI, TL>);
    const size_t scatter_smem = sizeof(ws_dist_smem<KB, V, DI, STABLE, SCATTER_THREADS, TL>);
    /* The sample path runs on the sm_90 row only (plan.cu). */
    static_assert(sizeof(ws_dist_smem<KB, V, DI, STABLE, SCATTER_THREADS, TL>) <=
                      ws_family_of(WS_FAMILY_SM90).smem_block,
                  "a scatter block fits the sm_90 row's shared memory");
    /* Every instance this sort may launch, with its dynamic shared memory. */
    const struct {
        const void *fn;
        size_t smem;
    } kernels[] = {{(const void *)sample.fn, sample.smem},
                   {(const void *)sample_wide.fn, sample_wide.smem},
                   {(const void *)sample_small.fn, sample_small.smem},
                   {(const void *)sample0.fn, sample0.smem},
                   {(const void *)sample0_wide.fn, sample0_wide.smem},
                   {(const void *)count, count_smem},
                   {(const void *)scatter, scatter_smem}};
    *what = "cudaFuncSetAttribute (distribution)";
    for (const auto &k : kernels) {
        const cudaError_t err =
            cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)k.smem);
        if (err != cudaSuccess) return err;
    }

    ws_level_nb nbuckets = {};
    for (int l = 0; l < p.levels; l++) nbuckets.nb[l] = ws_level_buckets(p.splitters[l]);
    /* The call's first launch, an ordinary one; the rest depend on it. */
    unsigned *blockseg0 = ws_plan_blockseg(&p, 0) ? (unsigned *)(ws + L.blockseg[0]) : nullptr;
    WS_STEP("ws_dist_init",
            ws_launch(ws_dist_init, 1, 256, 0, stream, 0, (ws_dist_seg *)(ws + L.segs[0]),
                      blockseg0, ctl, fin, p.n, (unsigned)p.rows, p.chunk[0], nbuckets));
    const unsigned scan_blocks = (unsigned)(p.max_cnt / WS_SCAN_TILE + 1);
    for (int l = 0; l < p.levels; l++) {
        const bool even = l % 2 == 0;
        /* Level 0 reads the input; even levels after it the output array,
         * which level 1 (odd) wrote. */
        const KB *src = l == 0 ? keys_in : even ? keys : ktmp;
        KB *dst = even ? ktmp : keys;
        const V *vsrc = l == 0 ? vals_in : even ? vals : vtmp;
        V *vdst = even ? vtmp : vals;
        const int raw = l == 0;
        ws_dist_seg *segs = (ws_dist_seg *)(ws + L.segs[l]);
        KB *splits = (KB *)(ws + L.splits[l]);
        const unsigned *blockseg =
            ws_plan_blockseg(&p, l) ? (const unsigned *)(ws + L.blockseg[l]) : nullptr;
        /* A wide level samples twice the keys, a last level of few
         * splitters a quarter (ws_sample_threads): a block per segment of
         * that many threads, but level 0's blocks with 1024. */
        const int sthreads = ws_sample_threads(p.splitters[l]);
        ws_sample_kernel<KB, TL> sk = sample;
        unsigned sblocks = p.max_segs[l], sblock_threads = (unsigned)sthreads;
        if (sthreads < 256) {
            sk = sample_small;
        } else if (l == 0) { /* a block a row */
            sk = sthreads > 256 ? sample0_wide : sample0;
            sblock_threads = 1024;
        } else if (sthreads > 256) {
            sk = sample_wide;
        }
        WS_STEP("ws_dist_sample",
                ws_launch(sk.fn, sblocks, sblock_threads, sk.smem, stream, p.pdl, src, raw, codec,
                          segs, &ctl[l], splits, p.splitters[l]));
        WS_STEP("ws_dist_count", ws_launch(count, p.max_blocks[l], WS_DIST_THREADS, count_smem,
                                           stream, p.pdl, src, raw, codec, segs, blockseg, &ctl[l],
                                           splits, p.chunk[l], cnt, scan_tiles, scan_blocks));
        WS_STEP("ws_scan_counts", ws_launch(ws_scan_counts, scan_blocks, WS_SCAN_THREADS, 0, stream,
                                            p.pdl, cnt, &ctl[l], scan_tiles));
        WS_STEP("ws_dist_scatter",
                ws_launch(scatter, p.max_blocks[l], SCATTER_THREADS, scatter_smem, stream, p.pdl,
                          src, vsrc, dst, vdst, raw, codec, segs, blockseg, &ctl[l], splits,
                          p.chunk[l], cnt));
        /* A block per segment. */
        const ws_level_out out = ws_level_out_for(p, ws, l, ctl, fin);
        const unsigned fgrid = (unsigned)ws_min((size_t)p.max_segs[l], (size_t)p.sm_count * 8);
        WS_STEP("ws_dist_finalize", ws_launch(ws_dist_finalize, fgrid, WS_FIN_THREADS, 0, stream,
                                              p.pdl, segs, &ctl[l], cnt, even ? 1u : 0u, out));
    }
    return cudaSuccess;
}

/* The plan's tree: wide ones only for keys alone of the widths that take
 * them (ws_wide_tree_ok), so no other kernel is built for it. */
template <typename KB, typename V, bool STABLE>
static cudaError_t ws_distribute_plan(const ws_plan_t &p, unsigned char *ws, const KB *keys_in,
                                      const V *vals_in, KB *keys, V *vals, key_codec codec,
                                      cudaStream_t stream, const char **what) {
    if constexpr (!STABLE && ws_wide_tree_ok((int)sizeof(KB), is_value<V>::value ? 1 : 0)) {
        if (p.tree_log == WS_TREE_LOG_WIDE)
            return ws_distribute<KB, V, false, WS_TREE_LOG_WIDE>(p, ws, keys_in, vals_in, keys,
                                                                 vals, codec, stream, what);
    }
    if (p.tree_log != WS_TREE_LOG_NARROW) return cudaErrorInvalidValue;
    return ws_distribute<KB, V, STABLE, WS_TREE_LOG_NARROW>(p, ws, keys_in, vals_in, keys, vals,
                                                            codec, stream, what);
}

/* The buckets the levels left: sorted on chip by size class, equality
 * buckets decoded and copied, oversized ones sorted by one block each. */
template <typename KB, typename V, bool STABLE>
static cudaError_t ws_sort_buckets(const ws_plan_t &p, unsigned char *ws, KB *keys, V *vals,
                                   key_codec codec, cudaStream_t stream, const char **what) {
    using S = ws_shapes<KB, V>;
    const ws_layout &L = p.lay;
    KB *ktmp = (KB *)ws;
    V *vtmp = is_value<V>::value ? (V *)(ws + L.vals_tmp) : nullptr;
    ws_final_ctl *fin = (ws_final_ctl *)((ws_level_ctl *)(ws + L.ctl) + WS_MAX_LEVELS);
    cudaError_t err;
    *what = "ws_bucket_radix_kernel";
    /* The biggest class first: the longest jobs start early. */
    if constexpr (ws_sort_classes(sizeof(KB), S::VALUE_BYTES) > 2) {
        if ((err = ws_launch_bucket_class<KB, V, STABLE, 2>(p, ws, keys, vals, ktmp, vtmp, fin,
                                                            codec, stream)) != cudaSuccess)
            return err;
    }
    if ((err = ws_launch_bucket_class<KB, V, STABLE, 1>(p, ws, keys, vals, ktmp, vtmp, fin, codec,
                                                        stream)) != cudaSuccess ||
        (err = ws_launch_bucket_class<KB, V, STABLE, 0>(p, ws, keys, vals, ktmp, vtmp, fin, codec,
                                                        stream)) != cudaSuccess)
        return err;
    const unsigned copy_grid = (unsigned)ws_min(p.copy_list_cap, (size_t)p.sm_count * 8);
    WS_STEP("ws_bucket_copy_kernel",
            ws_launch(ws_bucket_copy_kernel<KB, V>, copy_grid, 256, 0, stream, p.pdl, keys, vals,
                      ktmp, vtmp, (const ws_bucket *)(ws + L.copy_list), &fin->copy_count, codec));
    constexpr int THREADS = S::SHAPE.tile_threads, ITEMS = S::SHAPE.tile_items;
    auto big = ws_big_bucket_kernel<KB, V, THREADS, ITEMS, S::SHAPE.tile_run>;
    const size_t smem = ws_big_smem_bytes<KB, V, THREADS, ITEMS>();
    *what = "ws_big_bucket_kernel";
    if ((err = cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) !=
        cudaSuccess)
        return err;
    WS_STEP("ws_big_bucket_kernel",
            ws_launch(big, (unsigned)ws_min(p.big_list_cap, (size_t)p.sm_count), THREADS, smem,
                      stream, p.pdl, keys, vals, ktmp, vtmp,
                      (const ws_big_bucket *)(ws + L.big_list), &fin->big_count, codec));
    return cudaSuccess;
}

struct ws_sample_sort_op {
    template <typename KB, typename V>
    static cudaError_t run(const ws_plan_t *p, const void *keys_in, const void *vals_in, void *keys,
                           void *vals, key_codec codec, bool stable, unsigned char *ws,
                           cudaStream_t s, const char **what) {
        const KB *ki = (const KB *)keys_in;
        const V *vi = (const V *)vals_in;
        KB *k = (KB *)keys;
        V *v = (V *)vals;
        /* Every bucket lives in the workspace or the output after level 0:
         * a plan without levels would leave the input unsorted. */
        if (p->levels < 1) return cudaErrorInvalidValue;
        /* Keys alone are never stable (device_sort.cu). */
        if constexpr (is_value<V>::value) {
            if (stable) {
                cudaError_t err =
                    ws_distribute_plan<KB, V, true>(*p, ws, ki, vi, k, v, codec, s, what);
                if (err != cudaSuccess) return err;
                return ws_sort_buckets<KB, V, true>(*p, ws, k, v, codec, s, what);
            }
        }
        cudaError_t err = ws_distribute_plan<KB, V, false>(*p, ws, ki, vi, k, v, codec, s, what);
        if (err != cudaSuccess) return err;
        return ws_sort_buckets<KB, V, false>(*p, ws, k, v, codec, s, what);
    }
};

cudaError_t ws_sample_sort_run(const ws_plan_t *p, const void *keys_in, const void *vals_in,
                               void *keys, void *vals, key_codec codec, bool stable,
                               unsigned char *ws, cudaStream_t stream, const char **what) {
    return ws_dispatch_kv<ws_sample_sort_op>(p->key_bytes, p->value_bytes, p, keys_in, vals_in,
                                             keys, vals, codec, stable, ws, stream, what);
}

/* The sample kernels carry code for Hopper and newer only (WS_SAMPLE_ARCH):
 * a device running them from older PTX (a JIT build) keeps the merge path. */
int ws_sample_kernels_ok(void) {
    cudaFuncAttributes fa;
    const int ok = cudaFuncGetAttributes(&fa, ws_dist_count<uint32_t, 16, WS_TREE_LOG_NARROW>) ==
                       cudaSuccess &&
                   fa.ptxVersion >= 90;
    (void)cudaGetLastError();
    return ok;
}
