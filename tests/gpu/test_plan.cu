/*
 * test_plan.cu - the device sort's plan (src/cuda/plan.cu) checked on the
 * host: ws_plan_make is host code with no CUDA call, so these run with or
 * without a GPU, in CI too. Over sizes from one tile to 2^36, every key and
 * value width, SM counts of several chips and the test hooks' limits, every
 * plan must hold what its launchers and the workspace rely on:
 *   - the path: the sample sort exactly when n passes one tile and the
 *     sample threshold on a device with the sample kernels, else the tile or
 *     merge path, whose passes reach n;
 *   - the levels: 1..the limit, each drawing 1..min(limit, tree slots - 1)
 *     splitters; the wide tree only for the keys that take it
 *     (ws_wide_tree_ok) and only where a level draws more than 255 or the
 *     hook asks for it; with the default limits, enough fan-out that the
 *     buckets average at most half a tile, and 8-byte keys alone on the wide
 *     tree exactly where two levels of 255 would not do;
 *   - the grids and lists: chunks of whole scatter tiles, count entries for
 *     every block's buckets, list capacities for the worst case;
 *   - the workspace: 256-byte aligned pieces in order, none overlapping,
 *     the ping-pong copy at 0, splitter slots for the plan's tree.
 */
/* cmocka.h (included by wt_cmocka.h) declares C functions without
 * extern "C" */
extern "C" {
#include "wt_cmocka.h"
}
#include <stdio.h>
#include <string.h>

#include "cuda/plan.cuh"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int g_quick;

/* A device like an H100 (132 SMs) or another sm_90 part. */
static ws_device_info device_of(int sm_count, ws_sample_limits lim) {
    ws_device_info d = {};
    d.family = WS_FAMILY_SM90;
    d.sm_count = sm_count;
    d.sample_ok = 1;
    d.pdl = 1;
    d.sample = lim;
    return d;
}
static ws_sample_limits default_limits(void) {
    ws_sample_limits l = {
        WS_SAMPLE_MIN_N, WS_SAMPLE_MIN_N_KEYS, WS_TREE_SLOTS_MAX - 1, WS_MAX_LEVELS, 0, 0};
    return l;
}

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond))                                                                            \
            fail_msg("n=%zu kb=%zu vb=%zu sms=%d lim(%u splitters, %d levels, wide %d): %s", n, \
                     kb, vb, dev->sm_count, dev->sample.splitters, dev->sample.levels,          \
                     dev->sample.wide, #cond);                                                  \
    } while (0)

static void check_layout(const ws_plan_t &p, const ws_device_info *dev, size_t n, size_t kb,
                         size_t vb) {
    const ws_layout &L = p.lay;
    /* In the order plan.cu lays them out: each aligned, none before the last. */
    size_t at[4 + 3 * WS_MAX_LEVELS + WS_SORT_CLASSES + 2];
    size_t k = 0;
    at[k++] = L.vals_tmp;
    at[k++] = L.cnt;
    at[k++] = L.scan_tiles;
    at[k++] = L.ctl;
    for (int l = 0; l < p.levels; l++) {
        at[k++] = L.segs[l];
        at[k++] = L.splits[l];
        at[k++] = L.blockseg[l];
    }
    for (int c = 0; c < WS_SORT_CLASSES; c++) at[k++] = L.sort_list[c];
    at[k++] = L.copy_list;
    at[k++] = L.big_list;
    CHECK(L.vals_tmp >= n * kb); /* the keys' ping-pong copy at 0 */
    for (size_t i = 0; i < k; i++) {
        CHECK(at[i] % 256 == 0);
        CHECK(at[i] <= L.total);
        if (i) CHECK(at[i] >= at[i - 1]);
    }
    CHECK(L.cnt - L.vals_tmp >= n * vb);
    CHECK(L.scan_tiles - L.cnt >= (p.max_cnt + 1) * sizeof(unsigned long long));
    for (int l = 0; l < p.levels; l++) {
        CHECK(L.splits[l] - L.segs[l] >= p.max_segs[l] * sizeof(ws_dist_seg));
        CHECK(L.blockseg[l] - L.splits[l] >=
              (size_t)p.max_segs[l] * ((size_t)1 << p.tree_log) * kb);
    }
    CHECK(L.copy_list - L.sort_list[WS_SORT_CLASSES - 1] >=
          p.sort_list_cap[WS_SORT_CLASSES - 1] * sizeof(ws_bucket));
    CHECK(L.total - L.big_list >= p.big_list_cap * sizeof(ws_big_bucket));
}

static void check_sample_plan(const ws_plan_t &p, const ws_device_info *dev, size_t n, size_t kb,
                              size_t vb) {
    const ws_sample_limits &lim = dev->sample;
    const int ikb = (int)kb, ivb = (int)vb;
    const unsigned T = (unsigned)ws_tile_items_total(ikb, ivb);
    /* Level 0 cuts p.rows equal rows (1: the one array). */
    CHECK(p.rows >= 1 && n % p.rows == 0);
    const size_t seg = n / p.rows;
    CHECK(p.tree_log == WS_TREE_LOG_NARROW || p.tree_log == WS_TREE_LOG_WIDE);
    CHECK(p.tree_log == WS_TREE_LOG_NARROW || ws_wide_tree_ok(ikb, ivb));
    CHECK(p.levels >= 1 && p.levels <= lim.levels && p.levels <= WS_MAX_LEVELS);
    bool over_narrow = false;
    size_t reach = 1;
    for (int l = 0; l < p.levels; l++) {
        const unsigned s = p.splitters[l];
        CHECK(s >= 1 && s <= lim.splitters && s < (1u << p.tree_log));
        over_narrow |= s >= (1u << WS_TREE_LOG_NARROW);
        if (reach < ((size_t)1 << 40)) reach *= (size_t)s + 1;
    }
    if (p.tree_log == WS_TREE_LOG_WIDE) CHECK(over_narrow || lim.wide);
    /* Default limits: fan-out enough for buckets of half a tile on average. */
    if (lim.splitters == WS_TREE_SLOTS_MAX - 1 && lim.levels == WS_MAX_LEVELS && !lim.wide) {
        CHECK(reach * (T / 2) >= seg);
        /* 8-byte keys alone: the narrow tree while two of its levels leave
         * buckets of half a tile on average, then the wide one in two levels
         * up to 2^31 keys (past that, whichever tree draws the plan). */
        const size_t narrow2 = (size_t)1 << (2 * WS_TREE_LOG_NARROW);
        if (ws_wide_tree_ok(ikb, ivb)) {
            if (seg <= narrow2 * (T / 2)) CHECK(p.tree_log == WS_TREE_LOG_NARROW);
            if (seg > narrow2 * (T / 2) && seg <= (size_t)1 << 31)
                CHECK(p.tree_log == WS_TREE_LOG_WIDE && p.levels == 2);
        } else {
            CHECK(p.tree_log == WS_TREE_LOG_NARROW);
        }
    }
    /* Bucket classes: one tile, two tiles and, for 4-byte keys alone, four;
     * a type of fewer repeats its largest; that is the on-chip cap. */
    const int classes = ws_sort_classes(ikb, ivb);
    CHECK(classes == (ikb == 4 && ivb == 0 ? 3 : 2));
    for (int c = 0; c < WS_SORT_CLASSES; c++) {
        CHECK(p.class_cap[c] == T << (c < classes ? c : classes - 1));
        CHECK(p.sort_list_cap[c] >= 1);
    }
    CHECK(p.cap == p.class_cap[WS_SORT_CLASSES - 1]);
    CHECK(p.big_list_cap >= n / (p.cap + 1));
    /* Grids: chunks of whole count and scatter tiles; count entries for
     * every block's buckets at every level. */
    for (int l = 0; l < p.levels; l++) {
        CHECK(p.chunk[l] > 0);
        CHECK(p.chunk[l] % (WS_DIST_THREADS * ws_dist_items(ikb, ivb)) == 0);
        CHECK(p.chunk[l] % (ws_scatter_threads(false, ikb + ivb) * ws_dist_items(ikb, ivb)) == 0);
        CHECK(p.chunk[l] % (ws_scatter_threads(true, ikb + ivb) * ws_dist_items(ikb, ivb)) == 0);
        if (l == 0) /* each row's chunks, its last one partial */
            CHECK((size_t)p.max_blocks[0] >= p.rows * ((seg + p.chunk[0] - 1) / p.chunk[0]));
        CHECK(p.max_cnt >= (size_t)p.max_blocks[l] * ws_level_buckets(p.splitters[l]));
        CHECK(p.max_segs[l] >= 1);
    }
    CHECK(p.max_segs[0] == p.rows);
    check_layout(p, dev, n, kb, vb);
    for (int l = 0; l < p.levels; l++) /* a table maps blocks to segments */
        if (ws_plan_blockseg(&p, l))
            CHECK(p.lay.splits[l] + (size_t)p.max_segs[l] * ((size_t)1 << p.tree_log) * kb <=
                      p.lay.blockseg[l] &&
                  p.lay.blockseg[l] + p.max_blocks[l] * sizeof(unsigned) <=
                      (l + 1 < p.levels ? p.lay.segs[l + 1] : p.lay.sort_list[0]));
}

static void check_plan(const ws_device_info *dev, size_t n, size_t kb, size_t vb) {
    const ws_plan_t p = ws_plan_make(dev, n, kb, vb);
    CHECK(p.n == n && p.key_bytes == kb && p.value_bytes == vb);
    const size_t tile = ws_sort_tile_for(n, (int)kb, (int)vb, dev->family);
    /* 8-byte keys alone from half the 4-byte threshold, unless a hook set
     * them: by default keys alone 2^24 / 2^23, pairs 2^22 for both. */
    const int wide_shift =
        kb == 8 && !vb && !dev->sample.min_n_exact ? WS_SAMPLE_MIN_N_WIDE_SHIFT : 0;
    const size_t min_n = (vb ? dev->sample.min_n : dev->sample.min_n_keys) >> wide_shift;
    CHECK(ws_sample_min_n_for(&dev->sample, kb, vb) == min_n);
    const bool sample = n > tile && n >= min_n;
    if (sample) {
        CHECK(p.path == WS_PATH_SAMPLE);
        check_sample_plan(p, dev, n, kb, vb);
        return;
    }
    CHECK(p.path != WS_PATH_SAMPLE);
    /* Above one of its tiles and up to WS_COOP_MAX, the one-launch path. */
    const size_t coop_tile = (size_t)WS_COOP_THREADS * (size_t)ws_coop_items((int)kb, (int)vb, n);
    const size_t one_block =
        kb == 4 && vb == 0 ? (size_t)ws_tile_items_total(4, 0, dev->family) : 0;
    const bool coop = n > WS_SMALL_MAX && n > coop_tile && n > one_block && n <= WS_COOP_MAX;
    CHECK(p.path == (n <= WS_SMALL_MAX ? WS_PATH_SMALL
                     : coop            ? WS_PATH_COOP
                     : n <= tile       ? WS_PATH_TILE
                                       : WS_PATH_MERGE));
    if (coop) CHECK(p.tile == coop_tile && p.sub == 1);
    /* The tiles: Hopper's radix blocks (16384) or their pairs (32768) for
     * 4-byte keys alone where their runs take fewer passes than the block
     * sort's, the pair only where it saves a pass over the single block;
     * else the block sort's. */
    if (!coop && p.path != WS_PATH_SMALL) {
        const int now = ws_merge_passes(n, tile);
        const int one = ws_merge_passes(n, WS_RADIX_TILE);
        const int two = ws_merge_passes(n, 2 * (size_t)WS_RADIX_TILE);
        const size_t blocks = two < one ? (n + 32767) / 32768 * 2 : (n + 16383) / 16384;
        const bool radix = kb == 4 && vb == 0 && dev->family == WS_FAMILY_SM90 && dev->sample_ok &&
                           !dev->merge_no_radix && (one < now || two < now) &&
                           4 * blocks >= 3 * (size_t)dev->sm_count;
        if (!radix) {
            CHECK(p.tiles == WS_TILES_BLOCK && p.tile == tile && p.passes == now);
        } else if (two < one) {
            CHECK(p.tiles == WS_TILES_PAIR && p.tile == 2 * (size_t)WS_RADIX_TILE);
            CHECK(p.passes == two && p.sub == 1);
        } else {
            CHECK(p.tiles == WS_TILES_RADIX && p.tile == WS_RADIX_TILE);
            CHECK(p.passes == one && p.sub == 1);
        }
    }
    /* Merge passes grow runs of the tile 4x each until one run holds n. */
    size_t run = p.tile;
    for (int i = 0; i < p.passes; i++) run *= 4;
    CHECK(run >= n);
    CHECK(p.passes == 0 || run / 4 < n);
    CHECK(p.full_tiles * p.tile + p.rem == n && p.rem < p.tile);
    if (!p.passes) return;
    /* The ping-pong copies, then the cuts of the largest pass. */
    size_t slots = 0;
    for (int i = 0; i < p.passes; i++) {
        CHECK(p.pass[i].n == n);
        CHECK(((size_t)p.tile << (2 * i)) == ((size_t)1 << p.pass[i].run_shift));
        /* a segment between cuts (at most two chunks) fits one merge block */
        const size_t merge_tile =
            coop ? coop_tile : (size_t)ws_merge_items_total((int)kb, (int)vb, dev->family);
        CHECK(((size_t)2 << p.pass[i].chunk_shift) == merge_tile);
        slots = p.pass_blocks[i] > slots ? p.pass_blocks[i] : slots;
    }
    CHECK(p.lay.vals_tmp >= n * kb && p.lay.vals_tmp % 256 == 0);
    CHECK(p.lay.cuts - p.lay.vals_tmp >= n * vb && p.lay.cuts % 256 == 0);
    CHECK(p.lay.total - p.lay.cuts >= 4 * slots * sizeof(size_t));
}

/* A choice only Hopper's kernels make: on(plan) on d, and off(plan) when
 * its test hook (d.*hook) is set, without the sample kernels' code, and on
 * the sm_80 family (d comes back with that family). */
static void check_hopper_gates(ws_device_info &d, int ws_device_info::*hook, size_t n, size_t kb,
                               size_t vb, bool (*on)(const ws_plan_t &),
                               bool (*off)(const ws_plan_t &)) {
    const ws_device_info *dev = &d; /* for CHECK's message */
    CHECK(on(ws_plan_make(dev, n, kb, vb)));
    d.*hook = 1;
    CHECK(off(ws_plan_make(dev, n, kb, vb)));
    d.*hook = 0;
    d.sample_ok = 0;
    CHECK(off(ws_plan_make(dev, n, kb, vb)));
    d.sample_ok = 1;
    d.family = WS_FAMILY_SM80;
    CHECK(off(ws_plan_make(dev, n, kb, vb)));
}

/* The one-launch path needs Hopper's kernels (sample_ok) and may be
 * switched off (WARPSORT_NO_COOP): then the merge path. */
static bool takes_coop(const ws_plan_t &p) { return p.path == WS_PATH_COOP; }
static bool takes_merge(const ws_plan_t &p) { return p.path == WS_PATH_MERGE; }
static void test_coop_gates(void **state) {
    (void)state;
    ws_device_info d = device_of(132, default_limits());
    const ws_device_info *dev = &d;
    const size_t n = (size_t)1 << 16, kb = 4, vb = 0;
    CHECK(ws_plan_make(dev, WS_COOP_MAX + 1, kb, vb).path == WS_PATH_MERGE);
    check_hopper_gates(d, &ws_device_info::no_coop, n, kb, vb, takes_coop, takes_merge);
}

static const size_t k_widths[][2] = {{4, 0}, {8, 0}, {4, 4}, {4, 8}, {8, 4}, {8, 8}};
static const int k_sms[] = {132, 114, 78, 16};

/* Sizes: powers of two and their neighbours from 2^10 to 2^36 (plans only:
 * nothing is allocated), and the sample threshold's. */
static size_t sizes(size_t *out, size_t cap) {
    size_t k = 0;
    for (int e = 10; e <= 36 && k + 3 <= cap; e++) {
        const size_t p = (size_t)1 << e;
        out[k++] = p - 1;
        out[k++] = p;
        out[k++] = p + 1 + (size_t)e * 977;
    }
    if (k + 6 <= cap) {
        out[k++] = WS_SAMPLE_MIN_N - 1;
        out[k++] = WS_SAMPLE_MIN_N;
        out[k++] = WS_SAMPLE_MIN_N_KEYS - 1;
        out[k++] = WS_SAMPLE_MIN_N_KEYS;
        out[k++] = (WS_SAMPLE_MIN_N_KEYS >> WS_SAMPLE_MIN_N_WIDE_SHIFT) - 1;
        out[k++] = WS_SAMPLE_MIN_N_KEYS >> WS_SAMPLE_MIN_N_WIDE_SHIFT;
    }
    return k;
}

static void test_default_limits(void **state) {
    (void)state;
    size_t ns[128];
    const size_t count = sizes(ns, COUNT(ns));
    for (size_t s = 0; s < COUNT(k_sms); s++) {
        if (g_quick && s > 0) break;
        const ws_device_info dev = device_of(k_sms[s], default_limits());
        for (size_t w = 0; w < COUNT(k_widths); w++)
            for (size_t i = 0; i < count; i++)
                check_plan(&dev, ns[i], k_widths[w][0], k_widths[w][1]);
    }
}

/* The test hooks' limits (WARPSORT_SAMPLE_*, the sample plans of
 * test_gpu_props): every size on the sample path, few splitters, few
 * levels, the wide tree asked for. */
static void test_hook_limits(void **state) {
    (void)state;
    static const unsigned splitters[] = {1, 3, 15, 255, 511, 1023};
    size_t ns[128];
    const size_t count = sizes(ns, COUNT(ns));
    for (size_t sp = 0; sp < COUNT(splitters); sp++)
        for (int levels = 1; levels <= WS_MAX_LEVELS; levels++) {
            if (g_quick && levels != 1 && levels != WS_MAX_LEVELS) continue;
            ws_sample_limits lim = {1, 1, splitters[sp], levels, splitters[sp] >= 256 ? 1 : 0, 1};
            const ws_device_info dev = device_of(132, lim);
            for (size_t w = 0; w < COUNT(k_widths); w++)
                for (size_t i = 0; i < count; i++) {
                    if (ns[i] > ((size_t)1 << 32)) continue; /* deep trees are the point */
                    check_plan(&dev, ns[i], k_widths[w][0], k_widths[w][1]);
                }
        }
}

/* Equal rows in one sample sort (ws_plan_rows): where the sample sort
 * takes them as one array and a row is over a tile, a plan of level-0
 * segments whose levels are those of one row; otherwise one row's plan.
 * Default limits on each SM count, and the hooks' few splitters. */
static void test_rows_plans(void **state) {
    (void)state;
    static const size_t rows[] = {2, 3, 4, 8, 64, 1000};
    static const size_t lens[] = {(size_t)1 << 12, 12289,           (size_t)1 << 21, 3145735,
                                  (size_t)1 << 22, (size_t)1 << 23, (size_t)1 << 26};
    ws_sample_limits hook = {1, 1, 15, WS_MAX_LEVELS, 0, 1};
    for (int h = 0; h < 2; h++)
        for (size_t s = 0; s < COUNT(k_sms); s++) {
            const ws_device_info d = device_of(k_sms[s], h ? hook : default_limits());
            const ws_device_info *dev = &d;
            for (size_t w = 0; w < COUNT(k_widths); w++)
                for (size_t r = 0; r < COUNT(rows); r++)
                    for (size_t i = 0; i < COUNT(lens); i++) {
                        const size_t kb = k_widths[w][0], vb = k_widths[w][1];
                        const size_t n = rows[r] * lens[i];
                        if (n > ((size_t)1 << 34)) continue;
                        const ws_plan_t p = ws_plan_rows(dev, rows[r], lens[i], kb, vb);
                        const ws_plan_t one = ws_plan_make(dev, lens[i], kb, vb);
                        const bool all = ws_plan_make(dev, n, kb, vb).path == WS_PATH_SAMPLE &&
                                         (one.path == WS_PATH_MERGE || one.path == WS_PATH_SAMPLE);
                        if (!all) {
                            CHECK(p.rows == 1 && p.n == lens[i] && p.path == one.path);
                            continue;
                        }
                        CHECK(p.path == WS_PATH_SAMPLE && p.rows == rows[r] && p.n == n);
                        check_sample_plan(p, dev, n, kb, vb);
                        /* the levels one row's sample plan would draw */
                        if (one.path == WS_PATH_SAMPLE) {
                            CHECK(p.levels == one.levels && p.tree_log == one.tree_log);
                            for (int l = 0; l < p.levels; l++)
                                CHECK(p.splitters[l] == one.splitters[l]);
                        }
                    }
        }
}

/* The rows bench/NOTES.md measured, pinned: 2^27 u32 keys take 255 x 255
 * splitters; 2^29 u64 keys two levels of 511 (three of 255 before), 2^30
 * two of 1023 and 511. */
static void test_measured_plans(void **state) {
    (void)state;
    const ws_device_info d = device_of(132, default_limits());
    const ws_device_info *dev = &d;
    size_t n = (size_t)1 << 27, kb = 4, vb = 0;
    ws_plan_t p = ws_plan_make(dev, n, kb, vb);
    CHECK(p.path == WS_PATH_SAMPLE && p.tree_log == WS_TREE_LOG_NARROW && p.levels == 2);
    CHECK(p.splitters[0] == 255 && p.splitters[1] == 255);
    n = (size_t)1 << 29;
    kb = 8;
    p = ws_plan_make(dev, n, kb, vb);
    CHECK(p.path == WS_PATH_SAMPLE && p.tree_log == WS_TREE_LOG_WIDE && p.levels == 2);
    CHECK(p.splitters[0] == 511 && p.splitters[1] == 511);
    n = (size_t)1 << 30;
    p = ws_plan_make(dev, n, kb, vb);
    CHECK(p.levels == 2 && p.splitters[0] == 1023 && p.splitters[1] == 511);
    /* Pairs of the same width stay narrow (stable scatter): three levels. */
    n = (size_t)1 << 29;
    kb = 4;
    vb = 4;
    p = ws_plan_make(dev, n, kb, vb);
    CHECK(p.tree_log == WS_TREE_LOG_NARROW && p.levels == 3);
}

static bool takes_radix_tiles(const ws_plan_t &p) { return p.tiles != WS_TILES_BLOCK; }
static bool takes_block_tiles(const ws_plan_t &p) { return p.tiles == WS_TILES_BLOCK; }
/* The merge path's radix tiles (radix_tiles.cuh) at the sizes measured
 * for them: every power of two from 2^18 to 2^23 would save one pass, by
 * the single block at even powers and by the pair at odd ones, but on 132
 * SMs only 2^21 .. 2^23 have blocks enough; never for other widths, other
 * families, without Hopper's kernels or with the test hook. */
static void test_radix_tiles(void **state) {
    (void)state;
    ws_device_info d = device_of(132, default_limits());
    const ws_device_info *dev = &d;
    size_t n = 0, kb = 4, vb = 0;
    for (int e = 18; e <= 23; e++) {
        n = (size_t)1 << e;
        const ws_plan_t p = ws_plan_make(dev, n, kb, vb);
        const int block_passes =
            ws_merge_passes(n, ws_sort_tile_for(n, (int)kb, (int)vb, dev->family));
        if (e < 21) {
            CHECK(p.path == WS_PATH_MERGE && p.tiles == WS_TILES_BLOCK);
            CHECK(p.passes == block_passes);
            continue;
        }
        CHECK(p.path == WS_PATH_MERGE && p.tiles == (e % 2 ? WS_TILES_PAIR : WS_TILES_RADIX));
        CHECK(p.passes == block_passes - 1);
    }
    n = (size_t)1 << 22;
    static const size_t others[][2] = {{4, 4}, {8, 0}, {4, 8}};
    for (size_t w = 0; w < COUNT(others); w++)
        CHECK(ws_plan_make(dev, n, others[w][0], others[w][1]).tiles == WS_TILES_BLOCK);
    check_hopper_gates(d, &ws_device_info::merge_no_radix, n, kb, vb, takes_radix_tiles,
                       takes_block_tiles);
}

int main(int argc, char **argv) {
    g_quick = wt_cmocka_options(argc, argv);
    if (g_quick < 0) return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_limits), cmocka_unit_test(test_hook_limits),
        cmocka_unit_test(test_measured_plans), cmocka_unit_test(test_rows_plans),
        cmocka_unit_test(test_coop_gates),     cmocka_unit_test(test_radix_tiles),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
