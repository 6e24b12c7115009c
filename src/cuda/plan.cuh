/*
 * plan.cuh - the one plan of a device sort: which path sorts n items, every
 * shape its launches take (tile sort, merge passes, sample levels, bucket
 * lists) and the workspace layout. ws_plan_make (plan.cu) builds it once per
 * call; workspace sizing, the launchers (merge_sort.cu, sample_sort.cu) and
 * the bench's bytes-moved report (ws_plan_passes) read it and derive
 * nothing themselves, so they cannot disagree.
 *
 * Paths:
 *   TILE    n fits one on-chip tile: one block sorts it in place.
 *   MERGE   tile sort + four-way merge passes (merge.cuh): mid-sized n,
 *           where a distribution level would cost more than it saves.
 *   SAMPLE  sample sort: `levels` distribution levels (distribute.cuh) cut
 *           the keys into buckets small enough for the on-chip sort, then
 *           every bucket is sorted on chip (radix_tile.cuh).
 *
 * Sample-sort levels: level l reads from one buffer and writes to the other
 * (level 0 reads the caller's keys, so the ping-pong is caller -> tmp ->
 * caller -> ...). A bucket that is done after level l lives in level l's
 * output buffer; the bucket sort reads it from there and writes the sorted,
 * decoded keys into the caller's array at the same offset.
 */
#ifndef WARPSORT_CUDA_PLAN_CUH
#define WARPSORT_CUDA_PLAN_CUH

#include <stddef.h>
#include <stdint.h>

#include "merge_shape.cuh"
#include "tuning.cuh"

__host__ __device__ constexpr size_t ws_align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* Splitter trees of a segment: at most 2^TL - 1 splitters in a heap of 2^TL
 * slots, a TL-step descent. Levels draw up to 255 splitters (TL 8). Keys
 * alone of at least WS_WIDE_TREE_MIN_KEY_BYTES whose plan would take a
 * third level draw up to 1023 (TL 10) instead, so two levels reach 2^30
 * keys: their scatter ranks with one set of block counters (keys alone
 * never need the stable one, which keeps counters and lane masks per warp
 * per bucket), and the plan does not depend on stability. */
#define WS_TREE_LOG_NARROW 8
#define WS_TREE_LOG_WIDE 10
#define WS_TREE_SLOTS_MAX (1 << WS_TREE_LOG_WIDE)
__host__ __device__ constexpr bool ws_wide_tree_ok(int key_bytes, int value_bytes) {
    return value_bytes == 0 && key_bytes >= WS_WIDE_TREE_MIN_KEY_BYTES;
}
/* Buckets of a segment: a range bucket per splitter gap and, when the
 * sample repeats a splitter, an equality bucket per splitter (2m + 1). */
__host__ __device__ constexpr int ws_max_buckets(int tl) { return 2 << tl; }
#define WS_MAX_LEVELS 4
/* Bucket sort size classes: one tile (jobs of packed buckets, and single
 * buckets up to a tile), two tiles and, for 4-byte keys alone, four (single
 * buckets up to cap = the largest class). Four tiles of 4-byte keys take a
 * 1024-thread radix block (192 KB of shared memory; with values it would
 * not fit), and buckets up to 16384 keys spare 2^29 keys most of a third
 * distribution level. Types of two classes repeat the second's capacity. */
#define WS_SORT_CLASSES 3
__host__ __device__ constexpr int ws_sort_classes(int key_bytes, int value_bytes) {
    return key_bytes == 4 && value_bytes == 0 ? 3 : 2;
}
/* Equality buckets are only decoded and copied, in pieces of this many
 * items so a giant equality bucket spreads over the GPU. */
#define WS_COPY_PIECE 16384
/* Items sampled per segment: one keys-only tile of ws_sample_threads x 16,
 * 16 a bucket up to 256 buckets and 8 a bucket above (the spread of the
 * buckets stays well inside the two-tile class). A level of at most
 * WS_SAMPLE_SMALL_MAX splitters (the last one, which cuts buckets a few
 * times the capacity) samples 1024 keys, 16 a bucket or more: 4096 from a
 * segment of 16384 would gather every sector of it and sort a quarter. */
#define WS_SAMPLE_ITEMS 16
#define WS_SAMPLE_SMALL_MAX 63u
__host__ __device__ constexpr int ws_sample_threads(unsigned splitters) {
    return splitters >= (1u << WS_TREE_LOG_NARROW) ? 512
           : splitters <= WS_SAMPLE_SMALL_MAX      ? 64
                                                   : 256;
}
/* Count blocks: 256 threads (scatter blocks: ws_scatter_threads); a count
 * or scatter block walks a chunk of `chunk` items tile by tile. */
#ifndef WS_DIST_THREADS
#define WS_DIST_THREADS 256
#endif
/* Occupancy floor (__launch_bounds__) of a scatter block of `threads`:
 * its loop waits at barriers and on shared-memory ranking and regrouping
 * (ncu: short-scoreboard and barrier stalls), so resident warps set its
 * speed. It asks for 1024 resident threads an SM for the unstable 4-byte
 * kernel (a 64-register cap it fits with an 8-byte spill) and 768 for the
 * rest (ptxas -v), in whole blocks, one at least. The count kernel is left
 * to ptxas: every floor tried made it spill. */
__host__ __device__ constexpr int ws_scatter_min_blocks(int threads, int item_bytes, bool stable) {
    const int per_sm = !stable && item_bytes <= 4 ? 1024 : 768;
    return per_sm / threads > 0 ? per_sm / threads : 1;
}

/* Threads of a scatter block by stability and bytes per item
 * (WS_SCATTER_THREADS_*, tuning.cuh). */
__host__ __device__ constexpr int ws_scatter_threads(bool stable, int item_bytes) {
    return stable             ? WS_SCATTER_THREADS_STABLE
           : item_bytes >= 12 ? WS_SCATTER_THREADS_WIDE
                              : WS_SCATTER_THREADS_UNSTABLE;
}

__host__ __device__ constexpr int ws_dist_items(int key_bytes, int value_bytes) {
    return key_bytes + value_bytes <= 8 ? 16 : 8;
}

/* One range of a level's input, cut by its own splitters. */
struct ws_dist_seg {
    unsigned long long begin, size;
    unsigned long long cnt_base; /* first of its nbuckets x nblocks counts (bucket-major) */
    unsigned first_block, nblocks;
    unsigned m;  /* distinct splitters (< 2^tree_log) */
    unsigned eq; /* 1: equality buckets */
};

/* Counters a level's bookkeeping fills for the next level. */
struct ws_level_ctl {
    unsigned segs, blocks;
    unsigned long long cnt_entries;
    unsigned nbuckets; /* count entries per block: 2 x splitters + 1 (set at init) */
};
/* The level's nbuckets, for ws_dist_init. */
struct ws_level_nb {
    unsigned nb[WS_MAX_LEVELS];
};
/* Count entries per distribution block of a level that draws s splitters:
 * m + 1 range buckets, or 2m + 1 with equality buckets (m <= s). */
__host__ __device__ constexpr unsigned ws_level_buckets(unsigned splitters) {
    return 2 * splitters + 1;
}

/* A bucket-sort job (one or more consecutive finished buckets) or a piece
 * of an equality bucket to copy. */
struct ws_bucket {
    unsigned long long begin;
    unsigned size;
    unsigned in_tmp; /* 1: lives in the workspace copy, 0: in the caller's array */
};
/* An oversized bucket after the last level: sorted by one block (fallback). */
struct ws_big_bucket {
    unsigned long long begin, size;
    unsigned in_tmp, pad;
};

/* Where the bucket lists stand; zeroed with the level counters. */
struct ws_final_ctl {
    unsigned sort_count[WS_SORT_CLASSES];
    unsigned sort_next[WS_SORT_CLASSES]; /* jobs claimed past each block's first */
    unsigned copy_count;
    unsigned big_count;
};

/* Limits on the sample sort's plan: the tuning table's, narrowed by the
 * test hooks (src/core/test_hooks.h) so tests reach its deep paths with
 * small inputs. */
struct ws_sample_limits {
    size_t min_n;       /* items with values */
    size_t min_n_keys;  /* keys alone */
    unsigned splitters; /* per level, at most (a narrow tree holds 255) */
    int levels;
    int wide;        /* 1: wide trees wherever the keys allow, not only to save a level */
    int min_n_exact; /* 1: min_n / min_n_keys hold for every key width (a test hook) */
};
/* Smallest n the sample sort takes for keys of kb bytes with vb-byte
 * values: the limits' for pairs of every width and for 4-byte keys alone;
 * 8-byte keys alone, whose merge passes move twice the bytes, from
 * WS_SAMPLE_MIN_N_WIDE_SHIFT halvings of it. */
static inline size_t ws_sample_min_n_for(const ws_sample_limits *l, size_t kb, size_t vb) {
    if (vb) return l->min_n;
    return kb == 8 && !l->min_n_exact ? l->min_n_keys >> WS_SAMPLE_MIN_N_WIDE_SHIFT : l->min_n_keys;
}

/* TILE: one tile-sort launch; MERGE: tile sort and merge passes, a launch
 * each; SAMPLE: the sample sort; SMALL: one warp or block (small_sort.cu);
 * COOP: the tile sort and merge passes of a small array in one cooperative
 * launch (coop_sort.cu). */
enum ws_path {
    WS_PATH_TILE = 0,
    WS_PATH_MERGE = 1,
    WS_PATH_SAMPLE = 2,
    WS_PATH_SMALL = 3,
    WS_PATH_COOP = 4
};

/* What sorts the merge path's tiles (ws_plan_t.tiles): the family's block
 * sort (tile_sort.cuh), or on Hopper, for 4-byte keys alone, a radix block
 * of WS_RADIX_TILE items or a cluster pair of two (radix_tiles.cuh), at
 * the sizes where their longer runs save a merge pass. */
enum { WS_TILES_BLOCK = 0, WS_TILES_RADIX = 1, WS_TILES_PAIR = 2 };
/* Items of a radix tile: a block of 1024 threads x WS_RX_ITEMS (16). */
#define WS_RADIX_TILE 16384

/* Largest n of the small path (small_sort.cu): one warp or one block of at
 * most 256 threads x 8 items, whose static shared memory (8-byte keys and
 * values) stays within the 48 KiB every device gives a block. */
#define WS_SMALL_MAX 2048

/* What the plan needs to know of the device (filled once per context). */
struct ws_device_info {
    int family; /* row of tuning.cuh (ws_family) */
    int sm_count;
    int sample_ok;      /* 1: the sample kernels have code for this device */
    int no_coop;        /* 1: no one-launch small merge sort (test hook) */
    int seg_no_radix;   /* 1: segment classes 10..12 by block sorts (test hook) */
    int seg_no_cluster; /* 1: no segment class 13, the cluster pairs (test hook) */
    int merge_no_radix; /* 1: the merge path's tiles by block sorts only (test hook) */
    int pdl;            /* 1: dependent launches (pdl.cuh): 9.0 and up, no WARPSORT_NO_PDL */
    ws_sample_limits sample;
};

/* Most four-way merge passes: runs grow 4x per pass from at least 512. */
#define WS_MAX_PASSES 32

/* Byte offsets of the workspace pieces (from the workspace base, each
 * 256-byte aligned). The ping-pong copy of the keys always sits at 0. */
struct ws_layout {
    size_t vals_tmp;
    /* merge path */
    size_t cuts;
    /* sample path */
    size_t cnt, scan_tiles, ctl; /* counts; a word a scan tile of them (ws_scan_counts) */
    size_t segs[WS_MAX_LEVELS], splits[WS_MAX_LEVELS], blockseg[WS_MAX_LEVELS];
    size_t sort_list[WS_SORT_CLASSES], copy_list, big_list;
    size_t total; /* 0: the path needs no workspace */
};

struct ws_plan_t {
    int path;
    size_t n, key_bytes, value_bytes;
    int family, sm_count;
    int pdl; /* 1: the kernels after a call's first are dependent launches (pdl.cuh) */
    /* tile and merge paths */
    size_t tile;            /* sorted run length the tile sort leaves (ws_sort_tile_for) */
    int sub;                /* tiles per tile-sort block: 1, or 2 merged on chip */
    int tiles;              /* WS_TILES_*: what sorts them */
    size_t full_tiles, rem; /* whole tiles, and items of the partial last one */
    int passes;             /* four-way merge passes */
    ws_pass_shape pass[WS_MAX_PASSES];
    size_t pass_blocks[WS_MAX_PASSES]; /* merge blocks (= cut threads) of each pass */
    /* sample path */
    size_t rows;  /* level 0's segments: equal rows of n / rows items (1: one array) */
    int tree_log; /* splitter tree of every level: WS_TREE_LOG_NARROW or _WIDE */
    int levels;
    unsigned splitters[WS_MAX_LEVELS]; /* drawn per segment at level l (buckets - 1) */
    unsigned chunk[WS_MAX_LEVELS];     /* items per distribution block */
    unsigned max_segs[WS_MAX_LEVELS];
    unsigned max_blocks[WS_MAX_LEVELS];
    size_t max_cnt; /* count entries of the largest level */
    unsigned cap;   /* largest bucket the on-chip sort takes */
    unsigned class_cap[WS_SORT_CLASSES];
    size_t sort_list_cap[WS_SORT_CLASSES], copy_list_cap, big_list_cap;
    ws_layout lay;
};

/* Whether level l of a sample plan maps its blocks to segments through a
 * table (levels after 0, and level 0 of several rows), or every block is
 * a chunk of the one segment. */
static inline int ws_plan_blockseg(const ws_plan_t *p, int l) { return l > 0 || p->rows > 1; }

/* The plan for sorting n device-resident items of key_bytes (+ value_bytes,
 * 0 = keys only) on the device described by dev. Host only; no CUDA call. */
ws_plan_t ws_plan_make(const ws_device_info *dev, size_t n, size_t key_bytes, size_t value_bytes);

/* The sample sort's plan for rows equal rows of row_len items each, sorted
 * in one call: the rows are level 0's segments, so every kernel runs over
 * all of them at once. path is WS_PATH_SAMPLE only where the sample sort
 * would take one array of rows x row_len items and a row is longer than
 * a tile; otherwise the plan is ws_plan_make's for one row. */
ws_plan_t ws_plan_rows(const ws_device_info *dev, size_t rows, size_t row_len, size_t key_bytes,
                       size_t value_bytes);

/* Items per block of the device-wide scan of the counts. */
#define WS_SCAN_THREADS 1024
#define WS_SCAN_ITEMS 4
#define WS_SCAN_TILE (WS_SCAN_THREADS * WS_SCAN_ITEMS)

/* The sample sort's kernels carry code for Hopper and newer only (the plan
 * takes the sample path only there: device.cu checks the kernels' PTX
 * version), so a fat build does not pay for them five times. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define WS_SAMPLE_ARCH 1
#else
#define WS_SAMPLE_ARCH 0
#endif

#endif /* WARPSORT_CUDA_PLAN_CUH */
