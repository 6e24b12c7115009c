/*
 * plan.cu - builds the one plan of a device sort (plan.cuh) and reports its
 * passes (plan_report.h). Host code only: no CUDA call, no allocation.
 */
#include <stdint.h>
#include <stdio.h>

#include "plan.cuh"
#include "plan_report.h"
#include "state.h"

static size_t ws_min(size_t a, size_t b) { return a < b ? a : b; }
static size_t ws_max(size_t a, size_t b) { return a > b ? a : b; }
static unsigned ws_log2(size_t x) {
    unsigned l = 0;
    while (((size_t)1 << l) < x) l++;
    return l;
}
static size_t ws_pow2_at_least(size_t x) {
    size_t p = 1;
    while (p < x) p *= 2;
    return p;
}

/* Segment slots of a merge pass (= merge blocks, = cut threads): a power of
 * two per full group, then the short last group's segments. */
static size_t ws_pass_slots(ws_pass_shape p) {
    const size_t full = p.n >> (p.run_shift + 2);
    size_t slots = full << ws_slot_shift(p);
    if (p.n & (((size_t)1 << (p.run_shift + 2)) - 1))
        slots += ws_group_segments(ws_group_span(full, p), p);
    return slots;
}

/* Tile sort and merge passes of runs of `tile` (sub tiles a tile-sort
 * block) cut every `chunk`: the passes' shapes and the workspace (the
 * ping-pong copy of keys at 0 and of values, and the cuts of the largest
 * pass, 4 per segment). One tile sorts in place: no workspace. */
static void ws_plan_passes_of(ws_plan_t *p, size_t tile, int sub, size_t chunk) {
    p->tile = tile;
    p->sub = sub;
    p->full_tiles = p->n / p->tile;
    p->rem = p->n % p->tile;
    p->passes = ws_merge_passes(p->n, p->tile);
    if (!p->passes) return;
    size_t slots = 0, run = p->tile;
    for (int i = 0; i < p->passes; i++, run *= 4) {
        ws_pass_shape s;
        s.n = p->n;
        s.run_shift = ws_log2(run);
        s.chunk_shift = ws_log2(chunk);
        p->pass[i] = s;
        p->pass_blocks[i] = ws_pass_slots(s);
        slots = ws_max(slots, p->pass_blocks[i]);
    }
    p->lay.vals_tmp = ws_align256(p->n * p->key_bytes);
    p->lay.cuts = p->lay.vals_tmp + ws_align256(p->n * p->value_bytes);
    p->lay.total = p->lay.cuts + ws_align256(4 * slots * sizeof(size_t));
}

/* Whether Hopper's radix tiles sort n 4-byte keys alone on dev, and
 * which (WS_TILES_RADIX: 16384 items a block, WS_TILES_PAIR: 32768 a
 * cluster pair; else WS_TILES_BLOCK): where their runs save a merge pass
 * over the block sort's `tile` and their blocks cover at least three
 * quarters of the SMs. A pass (its cuts and its merge) then costs more
 * than their slower tile sort; with fewer blocks (2^18..2^20 on 132 SMs)
 * the idle SMs cost more than the pass (bench/NOTES.md, forty-fifth
 * session). */
static int ws_plan_radix_tiles(const ws_device_info *dev, size_t n, int kb, int vb, size_t tile) {
    if (kb != 4 || vb != 0 || dev->family != WS_FAMILY_SM90 || !dev->sample_ok ||
        dev->merge_no_radix)
        return WS_TILES_BLOCK;
    const int now = ws_merge_passes(n, tile);
    const int one = ws_merge_passes(n, WS_RADIX_TILE);
    const int two = ws_merge_passes(n, 2 * (size_t)WS_RADIX_TILE);
    if (one >= now && two >= now) return WS_TILES_BLOCK;
    const unsigned pair = two < one;
    const size_t units =
        (n + ((size_t)WS_RADIX_TILE << pair) - 1) / ((size_t)WS_RADIX_TILE << pair);
    if ((units << pair) * 4 < (size_t)dev->sm_count * 3) return WS_TILES_BLOCK;
    return pair ? WS_TILES_PAIR : WS_TILES_RADIX;
}

/* The merge path: the family's tiles (two merged on chip where that saves
 * a pass), or Hopper's radix tiles (ws_plan_radix_tiles), and merge
 * blocks. */
static void ws_plan_merge(ws_plan_t *p, const ws_device_info *dev) {
    const int kb = (int)p->key_bytes, vb = (int)p->value_bytes;
    const size_t tile = ws_sort_tile_for(p->n, kb, vb, p->family);
    const size_t chunk = (size_t)ws_cut_chunk(kb, vb, p->family);
    const int tiles = ws_plan_radix_tiles(dev, p->n, kb, vb, tile);
    if (tiles != WS_TILES_BLOCK) {
        ws_plan_passes_of(p, (size_t)WS_RADIX_TILE << (tiles == WS_TILES_PAIR), 1, chunk);
        p->tiles = tiles;
        return;
    }
    ws_plan_passes_of(p, tile, (int)(tile / (size_t)ws_tile_items_total(kb, vb, p->family)), chunk);
}

/* The tile of the one-launch path of a small array (coop_sort.cu), or 0
 * where it does not take n: tiles and merge blocks of WS_COOP_THREADS x
 * ws_coop_items, cut every half tile; for n above one tile up to
 * WS_COOP_MAX, on Hopper (its grid barriers run where the sample sort's
 * kernels do; measured there), unless a test hook turns it off. 4-byte
 * keys alone up to the family's tile keep the one tile-sort block
 * (256 x 16), which beats two tiles and a pass there (bench/NOTES.md). */
static size_t ws_coop_tile(const ws_plan_t *p, const ws_device_info *dev) {
    const int kb = (int)p->key_bytes, vb = (int)p->value_bytes;
    const size_t tile = (size_t)WS_COOP_THREADS * (size_t)ws_coop_items(kb, vb, p->n);
    const size_t one_block =
        kb == 4 && vb == 0 ? (size_t)ws_tile_items_total(kb, vb, p->family) : 0;
    if (p->n <= WS_SMALL_MAX || p->n <= tile || p->n <= one_block || p->n > WS_COOP_MAX ||
        dev->family != WS_FAMILY_SM90 || !dev->sample_ok || dev->no_coop)
        return 0;
    return tile;
}

/* Splitters per level: buckets of about half a tile (the spread of an
 * oversampled split stays inside one tile, and two tiles take the tail).
 * Each level draws what is left to cut, at most the tree's fan-out; a wide
 * tree spreads its fan-out evenly over the levels that leave buckets of at
 * most a tile, but draws no fewer than a narrow tree's 256 buckets while
 * more are needed: a level of 1024 buckets writes runs a quarter as long
 * as one of 256, so 2^28 keys take 512 x 256 rather than 1024 x 128. */
static void ws_plan_levels(ws_plan_t *p, const ws_sample_limits *lim, unsigned tile) {
    const size_t target = tile / 2, seg = p->n / p->rows; /* level 0's segments */
    size_t r = (seg + target - 1) / target;
    const size_t fan = ws_min((size_t)1 << p->tree_log, (size_t)lim->splitters + 1);
    const int cap = lim->levels < WS_MAX_LEVELS ? lim->levels : WS_MAX_LEVELS;
    const size_t r_tile = (seg + tile - 1) / tile;
    int want = 1;
    for (size_t reach = fan; reach < r_tile && want < cap; reach *= fan) want++;
    while (r > 1 && p->levels < cap) {
        const int left = want > p->levels + 1 ? want - p->levels : 1;
        const unsigned spread_log = (ws_log2(r) + (unsigned)left - 1) / (unsigned)left;
        size_t b = ws_max((size_t)1 << spread_log, (size_t)1 << WS_TREE_LOG_NARROW);
        b = ws_min(ws_min(b, ws_pow2_at_least(r)), fan);
        p->splitters[p->levels++] = (unsigned)(b - 1);
        r = (r + b - 1) / b;
    }
    /* A last level after the first takes only the buckets the level before
     * left bigger than cap, up to a few times cap: sized for n / target it
     * would draw 1-7 splitters and leave buckets still over cap for the
     * one-block fallback; 31 splitters bring them below a tile. */
    if (p->levels >= 2) {
        unsigned *last = &p->splitters[p->levels - 1];
        const unsigned floor_s = lim->splitters < 31u ? lim->splitters : 31u;
        *last = *last > floor_s ? *last : floor_s;
    }
}

/* The sample sort's grids, list capacities and workspace. */
static void ws_plan_sample(ws_plan_t *p, const ws_sample_limits *lim) {
    const int kb = (int)p->key_bytes, vb = (int)p->value_bytes;
    const unsigned T = (unsigned)ws_tile_items_total(kb, vb);
    const int classes = ws_sort_classes(kb, vb);
    for (int c = 0; c < WS_SORT_CLASSES; c++)
        p->class_cap[c] = T << (c < classes ? c : classes - 1);
    p->cap = p->class_cap[WS_SORT_CLASSES - 1];
    p->tree_log = WS_TREE_LOG_NARROW;
    ws_plan_levels(p, lim, T);
    /* Wide trees where they save a level (or a test hook asks for them),
     * unless the wide plan draws no more than a narrow tree holds anyway:
     * then the narrow one's kernels are cheaper. */
    if (ws_wide_tree_ok(kb, vb) && lim->splitters >= (1u << WS_TREE_LOG_NARROW) &&
        (p->levels > 2 || lim->wide)) {
        ws_plan_t w = *p;
        w.levels = 0;
        w.tree_log = WS_TREE_LOG_WIDE;
        ws_plan_levels(&w, lim, T);
        bool over = lim->wide != 0;
        for (int l = 0; l < w.levels; l++) over |= w.splitters[l] >= (1u << WS_TREE_LOG_NARROW);
        if (over) *p = w;
    }
    /* Level 0's blocks fill whole waves: WS_DIST_BLOCKS_PER_SM per SM, as
     * few as that allows, so few count entries too. */
    /* Chunks are whole tiles of the count and of either scatter. */
    size_t threads = WS_DIST_THREADS;
    threads = ws_max(threads, (size_t)ws_scatter_threads(false, kb + vb));
    threads = ws_max(threads, (size_t)ws_scatter_threads(true, kb + vb));
    const size_t D = threads * (size_t)ws_dist_items(kb, vb);
    const size_t slots =
        (size_t)WS_DIST_BLOCKS_PER_SM * (size_t)(p->sm_count > 0 ? p->sm_count : 1);
    const size_t tiles = ((p->n + D - 1) / D + slots - 1) / slots;
    const size_t base_blocks = (p->n + D * tiles - 1) / (D * tiles);
    size_t buckets_total = 0;
    for (int l = 0; l < p->levels; l++) {
        p->chunk[l] = (unsigned)(D * tiles);
        p->max_segs[l] = l == 0 ? (unsigned)p->rows
                                : (unsigned)ws_min((size_t)p->max_segs[l - 1] *
                                                       ws_level_buckets(p->splitters[l - 1]),
                                                   p->n / (p->cap + 1) + 1);
        /* A segment's partial last chunk is one block more. */
        p->max_blocks[l] = (unsigned)(base_blocks + (ws_plan_blockseg(p, l) ? p->max_segs[l] : 0));
        /* Count entries per block: the level's own bucket bound. */
        const size_t entries = (size_t)p->max_blocks[l] * ws_level_buckets(p->splitters[l]);
        p->max_cnt = ws_max(p->max_cnt, entries);
        buckets_total += ws_min(p->n, (size_t)p->max_segs[l] * ws_level_buckets(p->splitters[l]));
    }
    for (int c = 0; c < WS_SORT_CLASSES; c++)
        p->sort_list_cap[c] = ws_min(buckets_total, p->n / (c ? p->class_cap[c - 1] + 1 : 1) + 1);
    p->copy_list_cap = buckets_total + p->n / WS_COPY_PIECE + 1;
    p->big_list_cap = p->n / (p->cap + 1) + 1;

    ws_layout *L = &p->lay;
    size_t off = ws_align256(p->n * p->key_bytes);
    L->vals_tmp = off;
    off += ws_align256(p->n * p->value_bytes);
    L->cnt = off;
    off += ws_align256((p->max_cnt + 1) * sizeof(unsigned long long));
    L->scan_tiles = off;
    off += ws_align256((p->max_cnt / WS_SCAN_TILE + 2) * sizeof(unsigned long long));
    L->ctl = off;
    off += ws_align256(WS_MAX_LEVELS * sizeof(ws_level_ctl) + sizeof(ws_final_ctl));
    for (int l = 0; l < p->levels; l++) {
        L->segs[l] = off;
        off += ws_align256(p->max_segs[l] * sizeof(ws_dist_seg));
        L->splits[l] = off;
        off += ws_align256((size_t)p->max_segs[l] * ((size_t)1 << p->tree_log) * p->key_bytes);
        L->blockseg[l] = off;
        off += ws_plan_blockseg(p, l) ? ws_align256(p->max_blocks[l] * sizeof(unsigned)) : 0;
    }
    for (int c = 0; c < WS_SORT_CLASSES; c++) {
        L->sort_list[c] = off;
        off += ws_align256(p->sort_list_cap[c] * sizeof(ws_bucket));
    }
    L->copy_list = off;
    off += ws_align256(p->copy_list_cap * sizeof(ws_bucket));
    L->big_list = off;
    off += ws_align256(p->big_list_cap * sizeof(ws_big_bucket));
    L->total = off;
}

/* What every plan of n items on dev starts from. */
static ws_plan_t ws_plan_base(const ws_device_info *dev, size_t n, size_t key_bytes,
                              size_t value_bytes) {
    ws_plan_t p = {};
    p.n = n;
    p.rows = 1;
    p.key_bytes = key_bytes;
    p.value_bytes = value_bytes;
    p.family = dev->family;
    p.sm_count = dev->sm_count;
    p.pdl = dev->pdl;
    return p;
}

/* Whether the sample sort takes one array of n items on dev. Its shapes
 * are Hopper's (measured there); other families keep the merge passes,
 * whose rows tuning.cuh has for them. */
static bool ws_plan_takes_sample(const ws_device_info *dev, size_t n, size_t key_bytes,
                                 size_t value_bytes) {
    const size_t tile = ws_sort_tile_for(n, (int)key_bytes, (int)value_bytes, dev->family);
    return n > tile && n >= ws_sample_min_n_for(&dev->sample, key_bytes, value_bytes) &&
           dev->family == WS_FAMILY_SM90 && dev->sample_ok;
}

ws_plan_t ws_plan_make(const ws_device_info *dev, size_t n, size_t key_bytes, size_t value_bytes) {
    ws_plan_t p = ws_plan_base(dev, n, key_bytes, value_bytes);
    if (!ws_plan_takes_sample(dev, n, key_bytes, value_bytes)) {
        const size_t tile = ws_sort_tile_for(n, (int)key_bytes, (int)value_bytes, dev->family);
        const size_t coop = ws_coop_tile(&p, dev);
        if (coop) {
            p.path = WS_PATH_COOP;
            ws_plan_passes_of(&p, coop, 1, coop / 2);
            return p;
        }
        p.path = n <= tile ? WS_PATH_TILE : WS_PATH_MERGE;
        ws_plan_merge(&p, dev);
        /* Sizes and passes as one tile; the launch fitted to n. */
        if (n <= WS_SMALL_MAX) p.path = WS_PATH_SMALL;
        return p;
    }
    p.path = WS_PATH_SAMPLE;
    ws_plan_sample(&p, &dev->sample);
    return p;
}

ws_plan_t ws_plan_rows(const ws_device_info *dev, size_t rows, size_t row_len, size_t key_bytes,
                       size_t value_bytes) {
    const ws_plan_t row = ws_plan_make(dev, row_len, key_bytes, value_bytes);
    if (rows < 2 || row.path == WS_PATH_SMALL || row.path == WS_PATH_TILE ||
        row.path == WS_PATH_COOP || rows > UINT32_MAX / 2 || row_len > SIZE_MAX / rows)
        return row;
    if (!ws_plan_takes_sample(dev, rows * row_len, key_bytes, value_bytes)) return row;
    ws_plan_t p = ws_plan_base(dev, rows * row_len, key_bytes, value_bytes);
    p.rows = rows;
    p.path = WS_PATH_SAMPLE;
    ws_plan_sample(&p, &dev->sample);
    return p;
}

/*=== the bench's byte report (plan_report.h) ===*/

struct ws_pass_list {
    ws_pass_bytes *out;
    size_t cap, count;
};
static void ws_pass_add(ws_pass_list *l, const char *what, int i, unsigned long long read,
                        unsigned long long written) {
    if (l->count < l->cap) {
        ws_pass_bytes *b = &l->out[l->count];
        if (i >= 0)
            snprintf(b->name, sizeof b->name, "%s %d", what, i);
        else
            snprintf(b->name, sizeof b->name, "%s", what);
        b->read = read;
        b->written = written;
    }
    l->count++;
}

extern "C" size_t ws_plan_passes(const warpsort_context_t *ctx, size_t n, size_t key_bytes,
                                 size_t value_bytes, ws_pass_bytes *out, size_t cap) {
    const ws_cuda_state *st = ws_state(ctx);
    if (!st) return 0;
    const ws_plan_t p = ws_plan_make(&st->dev, n, key_bytes, value_bytes);
    const unsigned long long keys = (unsigned long long)n * key_bytes;
    const unsigned long long all = (unsigned long long)n * (key_bytes + value_bytes);
    ws_pass_list l = {out, cap, 0};
    if (p.path == WS_PATH_SAMPLE) {
        for (int i = 0; i < p.levels; i++) {
            ws_pass_add(&l, "count, level", i, keys, 0);
            ws_pass_add(&l, "scatter, level", i, all, all);
        }
        ws_pass_add(&l, "bucket sort", -1, all, all);
    } else {
        ws_pass_add(&l, "tile sort", -1, all, all);
        for (int i = 0; i < p.passes; i++) ws_pass_add(&l, "merge pass", i + 1, all, all);
    }
    return l.count;
}
