/*
 * topk.cu - CUDA backend: top-k of an array or of every row.
 *
 * Items are (ordered key, index) pairs, the key in "smaller is better"
 * orientation (descending bits for the largest), compared
 * lexicographically: the lower index wins ties and the order is total.
 *
 * Six paths, chosen per call from k, the rows and the row length
 * (ws_tk_plan_for):
 *  - best path, k = 1 on rows of WS_TK_BEST_MIN_LEN or more: one launch
 *    (after a memset of the rows' counters). Each block keeps the best
 *    (key, index) of its chunk of a row, one read of the keys, then the
 *    last block of the row to finish (a ticket counter) picks the best of
 *    the row's blocks and writes the result.
 *  - short rows, rows of at most 64 keys: one launch, a group of 8 or
 *    16 lanes a row sorts it whole in registers as (ordered key, index)
 *    items (warp_sort.cuh's network, the index breaking ties) and writes
 *    the first k.
 *  - row blocks, k <= 1024 (64-bit keys: 256) on rows of up to 32768
 *    (16384) keys, any number of rows, one array included: one launch, a
 *    block per row. The block reads its row once into registers, narrows
 *    it on chip by a radix select over (ordered key, index) words
 *    (ws_tk_narrow: digits below the bits every word shares, until at
 *    most 256 .. 2048, at least 2k, can still be among the best k) and
 *    sorts those (32-bit keys: as one block tile; 64-bit keys: one warp,
 *    or on rows of 4096 or more every thread ranks them).
 *    For k at most a quarter of the threads a cheaper limit comes first,
 *    from the threads' best keys (ws_tk_thread_bar); the narrowing runs
 *    only when more keys than the block's room are within it. Those
 *    blocks keep the row in shared memory instead of registers (rows of
 *    up to 64 KB): half the registers, so more blocks an SM overlap
 *    their chains of load, bound, collect and sort.
 *  - filter path, 65 <= k <= 4096 on long rows (k <= 256 for at most 4
 *    rows, from 3 rows only for k > 128 or for k >= 16 on rows of 2^19
 *    keys or more; from k = 2 when one block takes the candidates),
 *    row by row: one block radix-selects a threshold from a sample at
 *    fixed positions (gathered by a few blocks), one read of the row keeps
 *    every key not above it as a candidate, and the best k candidates by
 *    (key, index) are kept. With a few thousand candidates, a threshold
 *    of rank at most 64 in the sample and 64-bit keys or k of a sample
 *    gap or more: the read puts each candidate in one of up to 16
 *    consecutive key ranges cut at the sample's best keys (about a sample
 *    gap each) and, after a grid barrier, the same launch ranks the
 *    candidates of the ranges that start before rank k, each among its
 *    own range's, and writes those of rank below k. Else one block
 *    narrows them on chip, as the row blocks do, to a few k and sorts
 *    those, a dependent launch (pdl.cuh) that starts as the read ends.
 *    More candidates: the leaf sorts them all. When fewer than k or more than
 *    the buffer holds pass, the read's launch runs the radix select below
 *    after its grid barrier, writing the k instead.
 *  - warp path, k <= 256 on longer rows (shorter than 2^32 - 1), and
 *    where measured faster than the row blocks (many rows of 65..256
 *    keys; 64-bit rows too long to stage with k <= 32): every warp owns a
 *    chunk of one row (about one wave of warps in all, several per row when
 *    rows are few) and keeps the best k of it as a sorted run of 32 x ITEMS
 *    items in registers (ITEMS = 1..8). The chunk's first 32 x ITEMS items
 *    are sorted straight into the run; then each key is compared with two
 *    bars: the run's k-th item, and the row's shared bar, the smallest k-th
 *    key any warp of the row has published (atomicMin in the workspace; a
 *    key above it has k better items elsewhere). The few keys that pass
 *    both are appended to a per-warp buffer in shared memory, and each full
 *    batch is sorted by the warp's bitonic network (warp_sort.cuh) and
 *    merged into the run: the elementwise better of the run and the
 *    reversed batch is bitonic and one merge pass sorts it. Raw keys are
 *    read once, with 16-byte vector loads, the next step's loads in flight
 *    while this step is filtered. The runs of a row's chunks (k each) form
 *    a shorter row for the next level, filtered by the same shared bar,
 *    until one warp holds the row and writes the results: one launch when
 *    every row gets one warp, a few small ones otherwise.
 *  - radix path (the rest), row by row: an exact radix select of the k-th
 *    key (11-bit digits from the top: one histogram pass over the row per
 *    digit, the last block of each pass picks the digit), then a count
 *    pass and an ordered compaction of the keys better than it plus the
 *    lowest-indexed keys equal to it (counts per segment of 512 keys, a
 *    scan of the blocks' totals, ballots inside a segment), exactly k
 *    survivors in index order, sorted stably by the device sort. The
 *    select is one cooperative launch, its phases separated by grid
 *    barriers.
 * Everything runs on the context's stream from host-known sizes, so with a
 * caller-set workspace a call on device memory neither allocates nor waits:
 * it can be captured in a CUDA graph. Host arrays are staged through the
 * workspace and copied back after a synchronisation.
 *
 * This file plans, sizes and stages a call; the paths it then queues are
 * topk_paths.cuh's, stamped out once for each key width in topk/.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "topk_paths.cuh"

/*=== device side: the one kernel that does not depend on the key width ===*/

/* Pads the candidates to cap with the largest item (ordered key and index
 * all ones: after every real one, as the row is shorter than 2^32 - 1),
 * from count when the filter hit, else from k (the radix select wrote k). */
__global__ void ws_tk_pad_kernel(const ws_tk_filter *fl, unsigned long long *ck, uint32_t *ci) {
    const unsigned long long from = ws_tk_filter_hit(fl) ? fl->count : fl->k, cap = fl->cap;
    for (unsigned long long j = from + (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < cap;
         j += (size_t)gridDim.x * blockDim.x) {
        ck[j] = ~0ull;
        if (ci) ci[j] = ~0u;
    }
}

cudaError_t ws_tk_pad(const ws_tk_filter *fl, unsigned long long *ck, uint32_t *ci, unsigned grid,
                      cudaStream_t stream) {
    ws_tk_pad_kernel<<<grid, 256, 0, stream>>>(fl, ck, ci);
    return cudaGetLastError();
}

/*=== host side ===*/

/* Warps per segment for a level of segs segments of len items whose chunks
 * hold at least min_chunk items, and the chunk (a whole number of steps). */
static void ws_tk_split(size_t segs, size_t len, size_t min_chunk, size_t step, size_t target,
                        size_t *wps, size_t *chunk) {
    size_t want = (target + segs / 2) / segs;
    const size_t most = ws_tk_div_up(len, min_chunk);
    size_t w = want < most ? want : most;
    if (w < 1) w = 1;
    size_t c = ws_tk_div_up(ws_tk_div_up(len, w), step) * step;
    *chunk = c;
    *wps = ws_tk_div_up(len, c);
}

/* The filter path's sample rank and capacity for rows of n and this k.
 * With lambda = k * S / n (the sample keys expected among the top k), the
 * rank lambda + 3 sqrt(lambda) + 3 leaves fewer than k keys below the
 * threshold rarely (the count below the r-th sample key is about
 * n / S x Gamma(r)); the capacity holds r + 3 sqrt(r) + 3 sample gaps and
 * at least 2k. Either miss only costs the radix select. */
static void ws_tk_filter_size(size_t n, size_t k, unsigned *rank, size_t *cap) {
    const double S = WS_TK_SAMPLE, lambda = (double)k * S / (double)n;
    double r = ceil(lambda + 3.0 * sqrt(lambda)) + 3.0;
    if (r > S) r = S;
    size_t c = (size_t)ceil((r + 3.0 * sqrt(r) + 3.0) * (double)n / S);
    if (c < 2 * k) c = 2 * k;
    *rank = (unsigned)r;
    *cap = ws_tk_div_up(c, 256) * 256;
}

ws_tk_plan ws_tk_plan_for(const ws_device_info *dev, int force, size_t rows, size_t row_len,
                          size_t kb, size_t vb, size_t k, size_t ib, ws_tk_staging sg) {
    ws_tk_plan p;
    memset(&p, 0, sizeof p);
    size_t at = 0;
    const auto take = [&at](size_t bytes) {
        const size_t off = at;
        at += ws_align256(bytes);
        return off;
    };
    const size_t n = rows * row_len, m = rows * k;
    p.keys_in = sg.keys_in ? take(n * kb) : 0;
    p.vals_in = sg.vals_in ? take(n * vb) : 0;
    p.out_keys = sg.out_keys ? take(m * kb) : 0;
    p.out_idx = sg.out_idx ? take(m * ib) : 0;
    p.out_vals = sg.out_vals ? take(m * vb) : 0;
    p.best = k == 1 && row_len >= WS_TK_BEST_MIN_LEN;
    if (p.best) {
        const size_t T = WS_TK_BEST_THREADS;
        const size_t target = (size_t)dev->sm_count * WS_TK_BEST_BLOCKS_PER_SM;
        size_t cpr = ws_tk_div_up(target, rows);
        const size_t most = ws_tk_div_up(row_len, T * WS_TK_BEST_UNROLL);
        if (cpr > most) cpr = most;
        p.best_chunk = ws_tk_div_up(ws_tk_div_up(row_len, cpr), T) * T;
        p.best_cpr = (unsigned)ws_tk_div_up(row_len, p.best_chunk);
        p.best_part = take(rows * p.best_cpr * 2 * sizeof(unsigned long long));
        p.best_done = take(rows * sizeof(unsigned));
        p.total = at;
        return p;
    }
    /* Short rows: a group of lanes sorts each whole (a block of 128
     * threads or more a row is mostly fixed cost there: bench/NOTES.md,
     * forty-seventh session). Forced paths skip it. */
    p.short_rows = row_len <= WS_TK_SHORT_MAX && force == WS_TOPK_PATH_PLAN;
    if (p.short_rows) {
        p.total = at;
        return p;
    }
    /* Rows that a few blocks' registers hold: one block each. */
    const size_t per_thread = WS_TK_ROWS_ITEMS / kb;
    p.rows_block = k <= WS_TK_ROWS_MAX_K && rows <= 0x7FFFFFFFull &&
                   row_len <= (size_t)WS_TK_ROWS_MAX_PASSES * WS_TK_ROWS_MAX_THREADS * per_thread &&
                   (force == WS_TOPK_PATH_PLAN || force == WS_TOPK_PATH_ROWS ||
                    force == WS_TOPK_PATH_ROWS_NARROW || force == WS_TOPK_PATH_ROWS_L2);
    if (p.rows_block) {
        /* survivors: at least 2k, 32 x rows_si of them; 64-bit keys
         * narrow k <= 256 to 256 (ws_tk_rows_keep), which room for 256
         * holds at half the registers and twice the blocks an SM of room
         * for 512 (bench/NOTES.md, forty-ninth session) */
        p.rows_si = k <= 128 ? 8 : k <= 256 ? 16 : k <= 512 ? 32 : 64;
        if (kb == 8 && k <= 256) p.rows_si = 8;
        /* Threads for keys_per items a thread (the row in registers:
         * per_thread), and a tile of survivors at most 8 items a thread. */
        const auto threads_for = [&](size_t keys_per) {
            size_t t = WS_TK_ROWS_MIN_THREADS;
            while (t < WS_TK_ROWS_MAX_THREADS &&
                   (t * keys_per < row_len || t * WS_TK_ROWS_TILE_ITEMS(kb) < 32u * p.rows_si))
                t *= 2;
            return t;
        };
        /* The threads' bar (ws_tk_thread_bar) for k at most a quarter of
         * the threads (above, its larger survivor sort cost more than the
         * narrowing saved: bench/NOTES.md); it keeps up to about 3.3k
         * survivors, so 32-bit keys get room for 4k, 64-bit keys take it
         * where the room is there already. Its keys are staged in shared
         * memory: at most WS_TK_ROWS_STAGE_MAX (a few blocks an SM), within
         * what a block may have. */
        const int bar_si = k <= 64 ? 8 : 16;
        const auto bar_at = [&](size_t t) {
            const size_t stage = ws_tk_rows_stage_bytes(row_len, kb, t);
            return 4 * k <= t && row_len >= t && force != WS_TOPK_PATH_ROWS_NARROW &&
                   force != WS_TOPK_PATH_ROWS_L2 && (kb == 4 || bar_si <= p.rows_si) &&
                   stage <= WS_TK_ROWS_STAGE_MAX &&
                   stage + WS_TK_ROWS_STATIC_SMEM <= ws_family_of(dev->family).smem_block;
        };
        size_t t = threads_for(per_thread);
        /* A staged row needs no registers: 64-bit keys take the threads of
         * 32-bit keys (16 a thread), half as many or fewer, where the bar
         * allows it. Blocks sized for registers left most of their threads
         * waiting on the one warp that sorts the survivors (bench/NOTES.md,
         * forty-sixth session). */
        if (kb == 8) {
            const size_t ts = threads_for(WS_TK_ROWS_ITEMS / 4);
            if (ts < t && bar_at(ts)) t = ts;
        }
        p.rows_threads = (int)t;
        p.rows_bar = bar_at(t);
        if (p.rows_bar && kb == 4) p.rows_si = bar_si;
        /* Without the bar, a row longer than the registers' pass keeps
         * the rest in shared memory, read once, where two blocks an SM
         * still fit (the passes over it from L2 were the blocks' main
         * stall: bench/NOTES.md, forty-eighth and forty-ninth sessions). */
        const size_t rest = ws_tk_rows_rest_bytes(row_len, kb, t);
        const ws_family_info fam = ws_family_of(dev->family);
        p.rows_rest = !p.rows_bar && rest > 0 && t == WS_TK_ROWS_MAX_THREADS && p.rows_si <= 16 &&
                      force != WS_TOPK_PATH_ROWS_L2 &&
                      2 * (rest + WS_TK_ROWS_REST_SLACK) <= fam.smem_sm &&
                      rest + WS_TK_ROWS_REST_SLACK <= fam.smem_block;
        /* The warp path (below) instead, where it measured faster
         * (bench/NOTES.md, forty-sixth to forty-eighth sessions); with
         * fewer rows the blocks stay faster. Forced row blocks stay.
         *  - 64-bit keys the blocks cannot stage, k <= 32, rows enough for
         *    a few blocks an SM: a warp's run of 32 in registers over its
         *    chunk beats the block's narrowing passes over the row in L2;
         *  - short rows, many of them: a block of 128 threads or more a
         *    row of 65..256 keys (512 for k <= 8) is mostly fixed cost;
         *    sorting such rows whole (the short path) lost for small k;
         *  - 64-bit rows of 2049..4096 keys, many of them, or fewer with k
         *    over 128 (WS_TK_WIDE_WARP_*): the blocks' narrowing and
         *    ranking of 128-bit words cost more than the warps' runs
         *    there. */
        const size_t sms = (size_t)dev->sm_count;
        /* (rows of up to WS_TK_SHORT_MAX keys took the short path above) */
        const bool some = rows >= WS_TK_SHORT_ROWS_PER_SM * sms;
        const bool many_short = some && (row_len <= WS_TK_SHORT_ROW_MAX ||
                                         (row_len <= 2 * WS_TK_SHORT_ROW_MAX && k <= 8));
        const bool many_wide =
            kb == 8 && row_len > WS_TK_WIDE_WARP_MAX_LEN / 2 &&
            row_len <= WS_TK_WIDE_WARP_MAX_LEN &&
            (rows >= WS_TK_WIDE_WARP_ROWS_PER_SM * sms || (k > WS_TK_WIDE_WARP_BIG_K && some));
        const bool to_warps =
            force == WS_TOPK_PATH_PLAN && k <= WS_TK_WARP_MAX_K &&
            (many_short || many_wide || (kb == 8 && !p.rows_bar && k <= 32 && rows >= 4 * sms));
        if (!to_warps) {
            p.total = at;
            return p;
        }
        p.rows_block = 0;
        p.rows_threads = 0;
        p.rows_si = 0;
        p.rows_rest = 0;
    }
    const size_t filter_min_k = WS_TK_FILTER_MIN_K_BLOCK;
    if (k >= filter_min_k && k <= WS_TK_FILTER_MAX_K && row_len >= WS_TK_FILTER_MIN_LEN &&
        row_len < 0xFFFFFFFFull && (k > WS_TK_WARP_MAX_K || rows <= WS_TK_FILTER_MAX_ROWS) &&
        (rows <= WS_TK_FILTER_FEW_ROWS ||
         (k >= WS_TK_FILTER_SMALL_K &&
          (row_len >= WS_TK_FILTER_ROWS_LEN || k > WS_TK_FILTER_ROWS_K)))) {
        ws_tk_filter_size(row_len, k, &p.rank, &p.cap);
        p.filter = 4 * p.cap <= row_len;
        /* When about rank x n / S pass (what the filter keeps on
         * average) are at most WS_TK_CAND_EXPECTED, the read's own grid
         * ranks them (a bucket of about a sample gap each) for 64-bit keys
         * and for k of at least WS_TK_BUCKET_MIN_GAPS sample gaps, where
         * the threshold's rank makes buckets (at most BUCKET_SAMPLE: past
         * it one bucket holds them all, each ranked against all, several
         * times slower than one block: bench/NOTES.md); else one block
         * takes them, where the device gives a
         * block its shared memory (about 78 KB for 32-bit keys) and
         * (64-bit keys) one warp sorts the survivors. More go to the
         * leaf, all SMs. Below
         * WS_TK_FILTER_MIN_K only the former two beat the warp path. */
        const double expected = (double)p.rank * (double)row_len / WS_TK_SAMPLE;
        const bool few = expected <= (double)WS_TK_CAND_EXPECTED;
        const bool wide_k =
            kb == 8 || (double)k * WS_TK_SAMPLE >= WS_TK_BUCKET_MIN_GAPS * (double)row_len;
        p.ranked = few && wide_k && p.rank <= WS_TK_BUCKET_SAMPLE &&
                   force != WS_TOPK_PATH_FILTER_NARROW && force != WS_TOPK_PATH_FILTER_SINGLE;
        p.cand_block = few && !p.ranked &&
                       ws_tk_cand_smem_bytes(kb, k) <= ws_family_of(dev->family).smem_block &&
                       (kb == 4 || k <= WS_TK_CAND_TILE64);
        if (k < WS_TK_FILTER_MIN_K && !p.cand_block && !p.ranked) p.filter = 0;
        if (force == WS_TOPK_PATH_WARP || force == WS_TOPK_PATH_RADIX) p.filter = 0;
        /* that block takes the threads' bar first where the row blocks
         * would (32-bit keys) */
        p.cand_bar = p.cand_block && kb == 4 && 4 * k <= WS_TK_CAND_THREADS &&
                     force != WS_TOPK_PATH_FILTER_NARROW;
    }
    p.warp_path = !p.filter && k <= WS_TK_WARP_MAX_K && row_len < 0xFFFFFFFFull &&
                  force != WS_TOPK_PATH_RADIX && force != WS_TOPK_PATH_FILTER &&
                  force != WS_TOPK_PATH_FILTER_NARROW && force != WS_TOPK_PATH_FILTER_SINGLE;
    if (p.filter) {
        p.tiles = ws_tk_div_up(row_len, WS_TK_TILE);
        p.fl = take(sizeof(ws_tk_filter));
        p.samp = take(WS_TK_SAMPLE * kb);
        p.select = take(sizeof(ws_tk_select));
        p.hist = take(sizeof(unsigned long long) * WS_TK_BINS);
        p.seg_cnt = take(2 * p.tiles * WS_TK_SELECT_WARPS * sizeof(unsigned));
        p.blk_base = take(2 * p.tiles * sizeof(unsigned long long)); /* grid <= tiles */
        /* ranked: cap for each bucket */
        const size_t caps = p.ranked ? WS_TK_CAND_BUCKETS : 1;
        p.surv_keys = take(caps * p.cap * sizeof(unsigned long long));
        if (kb == 8) p.surv_idx = take(caps * p.cap * sizeof(uint32_t));
        const bool leaf = !p.ranked && !p.cand_block; /* the leaf sorts the candidates */
        if (kb == 8 && leaf) {
            /* by index, then stably by key: (key, index) order */
            p.sort_plan = ws_plan_make(dev, p.cap, 4, 8);
            p.sort_plan2 = ws_plan_make(dev, p.cap, 8, 4);
            const size_t a = p.sort_plan.lay.total, b = p.sort_plan2.lay.total;
            p.sort = take(a > b ? a : b);
        } else if (leaf) {
            p.sort_plan = ws_plan_make(dev, p.cap, 8, 0);
            p.sort = take(p.sort_plan.lay.total);
        }
    } else if (p.warp_path) {
        p.items = k <= 32 ? 1 : k <= 64 ? 2 : k <= 128 ? 4 : 8;
        const size_t batch = 32 * (size_t)p.items;
        const size_t step = 32 * (32 / kb); /* ws_tk_warp::STEP */
        const size_t target = (size_t)dev->sm_count * WS_TK_WAVE_WARPS;
        size_t len = row_len, first_out = 0;
        for (int lev = 0; lev < WS_TK_MAX_LEVELS; lev++) {
            size_t min_chunk = (size_t)WS_TK_MIN_CHUNK_RUNS * batch;
            if (lev > 0 && min_chunk < WS_TK_LEVEL_MIN_CHUNK) min_chunk = WS_TK_LEVEL_MIN_CHUNK;
            size_t wps, chunk;
            ws_tk_split(rows, len, min_chunk, step, target, &wps, &chunk);
            if (lev == WS_TK_MAX_LEVELS - 1) {
                wps = 1;
                chunk = len;
            }
            p.seg_len[lev] = len;
            p.chunk[lev] = chunk;
            p.wps[lev] = wps;
            p.levels = lev + 1;
            if (lev == 0) first_out = rows * wps * k;
            if (wps == 1) break;
            len = wps * k;
        }
        p.bar = take(rows * kb);
        /* level outputs shrink: the first is the largest; the last level
         * writes the results */
        if (p.levels > 1)
            for (int b = 0; b < 2; b++) {
                p.cand_keys[b] = take(first_out * kb);
                p.cand_pos[b] = take(first_out * sizeof(uint32_t));
            }
    } else {
        p.tiles = ws_tk_div_up(row_len, WS_TK_TILE);
        p.select = take(sizeof(ws_tk_select));
        p.hist = take(sizeof(unsigned long long) * WS_TK_BINS);
        p.seg_cnt = take(2 * p.tiles * WS_TK_SELECT_WARPS * sizeof(unsigned));
        p.blk_base = take(2 * p.tiles * sizeof(unsigned long long)); /* grid <= tiles */
        p.surv_keys = take(k * kb);
        p.surv_idx = take(k * sizeof(unsigned long long));
        p.sort_plan = ws_plan_make(dev, k, kb, sizeof(unsigned long long));
        p.sort = take(p.sort_plan.lay.total);
    }
    p.total = at;
    return p;
}

static ws_tk_staging ws_tk_staging_of(const ws_topk_args_t *a) {
    ws_tk_staging sg;
    sg.keys_in = !ws_cuda_device_pointer(a->keys);
    sg.vals_in = a->values && !ws_cuda_device_pointer(a->values);
    sg.out_keys = a->out_keys && !ws_cuda_device_pointer(a->out_keys);
    sg.out_idx = a->out_indices && !ws_cuda_device_pointer(a->out_indices);
    sg.out_vals = a->out_values && !ws_cuda_device_pointer(a->out_values);
    return sg;
}

static warpsort_status_t ws_tk_run(warpsort_context_t *ctx, const ws_topk_args_t *a) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t kb = warpsort_dtype_size(a->dtype), vb = a->value_bytes, ib = a->index_bytes;
    const size_t n = a->rows * a->row_len, m = a->rows * a->k;
    const ws_tk_staging sg = ws_tk_staging_of(a);
    const ws_tk_plan p =
        ws_tk_plan_for(&st->dev, ctx->hooks.topk_path, a->rows, a->row_len, kb, vb, a->k, ib, sg);
    unsigned char *ws = NULL;
    warpsort_status_t s = ws_acquire(ctx, p.total, &ws);
    if (s != WARPSORT_OK) return s;
    cudaStream_t stream = st->stream;

    const void *keys = sg.keys_in ? (const void *)(ws + p.keys_in) : a->keys;
    const void *values = sg.vals_in ? (const void *)(ws + p.vals_in) : a->values;
    if (sg.keys_in)
        WS_CUDA_TRY(ctx,
                    cudaMemcpyAsync(ws + p.keys_in, a->keys, n * kb, cudaMemcpyDefault, stream));
    if (sg.vals_in)
        WS_CUDA_TRY(ctx,
                    cudaMemcpyAsync(ws + p.vals_in, a->values, n * vb, cudaMemcpyDefault, stream));
    ws_tk_outputs out;
    out.keys = sg.out_keys ? (void *)(ws + p.out_keys) : a->out_keys;
    out.indices = sg.out_idx ? (void *)(ws + p.out_idx) : a->out_indices;
    out.values = sg.out_vals ? (void *)(ws + p.out_vals) : a->out_values;
    out.index_bytes = (int)ib;
    out.value_bytes = (int)vb;
    out.in_values = values;
    out.k = a->k;
    out.row_len = a->row_len;
    /* smaller is better: the largest are best in descending bits */
    const key_codec codec = {ws_dtype_kind(a->dtype), a->smallest ? 0 : 1};
    s = (kb == 4 ? ws_tk_paths_k4 : ws_tk_paths_k8)(ctx, p, a, keys, codec, ws, out, stream);
    if (s != WARPSORT_OK) return s;
    if (!(sg.keys_in || sg.vals_in || sg.out_keys || sg.out_idx || sg.out_vals))
        return WARPSORT_OK; /* asynchronous */
    /* Host arrays: wait for the result before writing any of them, so a
     * failure leaves them as they were. */
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    if (sg.out_keys)
        WS_CUDA_TRY(ctx, cudaMemcpyAsync(a->out_keys, out.keys, m * kb, cudaMemcpyDefault, stream));
    if (sg.out_idx)
        WS_CUDA_TRY(
            ctx, cudaMemcpyAsync(a->out_indices, out.indices, m * ib, cudaMemcpyDefault, stream));
    if (sg.out_vals)
        WS_CUDA_TRY(ctx,
                    cudaMemcpyAsync(a->out_values, out.values, m * vb, cudaMemcpyDefault, stream));
    WS_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    return WARPSORT_OK;
}

extern "C" {

warpsort_status_t ws_cuda_topk(warpsort_context_t *ctx, const ws_topk_args_t *a) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s = ws_tk_run(ctx, a);
    ws_leave_device(&g);
    return s;
}

warpsort_status_t ws_cuda_topk_workspace_size(const warpsort_context_t *ctx, size_t rows,
                                              size_t row_len, warpsort_dtype_t dtype,
                                              size_t value_bytes, size_t k, size_t *bytes) {
    const ws_tk_staging none = {0, 0, 0, 0, 0};
    *bytes = ws_tk_plan_for(&ws_state(ctx)->dev, ctx->hooks.topk_path, rows, row_len,
                            warpsort_dtype_size(dtype), value_bytes, k, 8, none)
                 .total;
    return WARPSORT_OK;
}

} /* extern "C" */
