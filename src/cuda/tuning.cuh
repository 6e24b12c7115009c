/*
 * tuning.cuh - the one table of tile shapes, per architecture family and
 * key and value width.
 *
 * Tile sort: THREADS x ITEMS items, ITEMS per thread in registers. Warps
 * sort runs of RUN items with the bitonic network, then the block merges
 * the runs in shared memory up to the whole tile.
 *
 * Merge: at most MERGE_THREADS x MERGE_ITEMS outputs per block, four runs
 * merged at once, between cuts every MERGE_TILE / 2 items of each half
 * (merge.cuh); a block's segment is about MERGE_TILE / 2 long for random
 * keys. The cut chunk must divide the sort tile (powers of two) so it
 * divides every run.
 *
 * Families are told apart by shared memory, the resource the shapes are
 * sized against; a device gets its row at run time (ws_select_family in
 * device.cu), so a newer chip falls into the row its limits fit.
 */
#ifndef WARPSORT_CUDA_TUNING_CUH
#define WARPSORT_CUDA_TUNING_CUH

#include <stddef.h>

/* Architecture families, most shared memory first. */
enum ws_family {
    WS_FAMILY_SM90 = 0, /* H100, H200, GH200 (B200 too): 227 KB per block, 228 KB per SM */
    WS_FAMILY_SM80,     /* A100, A30 (Orin too): 163 KB per block, 164 KB per SM */
    WS_FAMILY_SM86,     /* A10, A40, L4, L40S, RTX 30xx/40xx: 99 KB per block, 100 KB per SM */
    WS_FAMILY_SM75,     /* T4, RTX 20xx: 64 KB per block and per SM; any chip with >= 48 KB */
    WS_FAMILY_COUNT
};

/* What a family's row needs of a device, and what it may use. Only the
 * sm_90 rows are measured; the others are derived, not measured (below). */
struct ws_family_info {
    const char *name;
    size_t smem_block; /* opt-in shared memory per block the row needs, bytes */
    size_t smem_sm;    /* ... and per SM */
    int tile_max_sub;  /* 2: a tile-sort block may sort two tiles and merge them (~66 KB) */
};

struct ws_shape {
    int tile_threads;
    int tile_items;
    int tile_run;        /* run length the warp network sorts before merging */
    int tile_min_blocks; /* __launch_bounds__ occupancy floor of the tile sort */
    int merge_threads;
    int merge_items;
    int merge_min_blocks; /* ... and of a merge pass */
};

/* Per family: what its row needs. Each row's largest block fits its
 * family's smem_block (static_asserts in kernel_shapes.cuh). */
__host__ __device__ constexpr ws_family_info ws_family_of(int family) {
    /* SM75 needs only 48 KB per block (every chip since sm_50 has that):
     * its largest block uses ~35 KB, so the last row fits any device. */
    return family == WS_FAMILY_SM90   ? ws_family_info{"sm_90", 227 << 10, 228 << 10, 2}
           : family == WS_FAMILY_SM80 ? ws_family_info{"sm_80", 163 << 10, 164 << 10, 2}
           : family == WS_FAMILY_SM86 ? ws_family_info{"sm_86", 99 << 10, 100 << 10, 1}
                                      : ws_family_info{"sm_75", 48 << 10, 48 << 10, 1};
}

/* A row's occupancy floor for __launch_bounds__, capped by what the
 * architecture being compiled holds per SM: every family's kernels are
 * compiled for every architecture of the build, and the sm_90 rows (512 x 3
 * threads) exceed sm_75's 1024 threads per SM, where they never run. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WS_ARCH_SM_THREADS 1024
#else
#define WS_ARCH_SM_THREADS 2048
#endif
__host__ __device__ constexpr int ws_min_blocks_fit(int threads, int min_blocks) {
    return threads * min_blocks > WS_ARCH_SM_THREADS ? WS_ARCH_SM_THREADS / threads : min_blocks;
}

/* The rows, each a function that sets every field by name; the reason is
 * here, the measurements behind it in bench/NOTES.md. A tuning run may override a row
 * from a header force-included into the kernels (CMake's
 * WARPSORT_TUNING_HEADER, scripts/gpu.sh stage-variant) as a positional
 * WS_SHAPE_<ROW> initialiser, without editing this table. */
#define WS_ROW_OVERRIDE(name, ...) \
    __host__ __device__ constexpr ws_shape name() { return ws_shape __VA_ARGS__; }

/* sm_90 and sm_80, 4-byte keys: 512-key warp runs and 4096-key tiles (8192
 * merged on chip) at 3 blocks per SM (85 registers); the merge block's
 * 8192-item capacity fits 66 KB, three per SM. */
#ifdef WS_SHAPE_KEYS
WS_ROW_OVERRIDE(ws_row_keys, WS_SHAPE_KEYS)
#else
__host__ __device__ constexpr ws_shape ws_row_keys() {
    ws_shape s{};
    s.tile_threads = 256, s.tile_items = 16, s.tile_run = 512, s.tile_min_blocks = 3;
    s.merge_threads = 512, s.merge_items = 16, s.merge_min_blocks = 3;
    return s;
}
#endif
/* 8-byte keys: 512 threads of 8 items, twice the warps of 256 x 16 at two
 * blocks per SM, to hide the merges' latency. */
#ifdef WS_SHAPE_KEYS_WIDE
WS_ROW_OVERRIDE(ws_row_keys_wide, WS_SHAPE_KEYS_WIDE)
#else
__host__ __device__ constexpr ws_shape ws_row_keys_wide() {
    ws_shape s{};
    s.tile_threads = 512, s.tile_items = 8, s.tile_run = 256, s.tile_min_blocks = 2;
    s.merge_threads = 256, s.merge_items = 16, s.merge_min_blocks = 3;
    return s;
}
#endif
/* Pairs of 8 bytes: as 8-byte keys, with a merge of 512 x 8. */
#ifdef WS_SHAPE_PAIRS_NARROW
WS_ROW_OVERRIDE(ws_row_pairs_narrow, WS_SHAPE_PAIRS_NARROW)
#else
__host__ __device__ constexpr ws_shape ws_row_pairs_narrow() {
    ws_shape s{};
    s.tile_threads = 512, s.tile_items = 8, s.tile_run = 256, s.tile_min_blocks = 2;
    s.merge_threads = 512, s.merge_items = 8, s.merge_min_blocks = 3;
    return s;
}
#endif
/* Pairs of 12 or 16 bytes: 512 threads of 4 items, the 2048-item tile of
 * 256 x 8 with twice the warps. */
#ifdef WS_SHAPE_PAIRS_WIDE
WS_ROW_OVERRIDE(ws_row_pairs_wide, WS_SHAPE_PAIRS_WIDE)
#else
__host__ __device__ constexpr ws_shape ws_row_pairs_wide() {
    ws_shape s{};
    s.tile_threads = 512, s.tile_items = 4, s.tile_run = 128, s.tile_min_blocks = 2;
    s.merge_threads = 256, s.merge_items = 8, s.merge_min_blocks = 3;
    return s;
}
#endif

/* sm_86 and sm_75 ("compact", derived, not measured): the sm_90 tiles, one
 * per block (tile_max_sub = 1), and merge tiles of half the items per
 * thread (33-35 KB: two blocks per SM on sm_86, one on sm_75's 64 KB). The
 * tile kernels are shared with sm_90; only the merge kernels are extra. */
__host__ __device__ constexpr ws_shape ws_row_keys_compact() {
    ws_shape s{};
    s.tile_threads = 256, s.tile_items = 16, s.tile_run = 512, s.tile_min_blocks = 3;
    s.merge_threads = 512, s.merge_items = 8, s.merge_min_blocks = 2;
    return s;
}
__host__ __device__ constexpr ws_shape ws_row_keys_wide_compact() {
    ws_shape s{};
    s.tile_threads = 512, s.tile_items = 8, s.tile_run = 256, s.tile_min_blocks = 2;
    s.merge_threads = 256, s.merge_items = 8, s.merge_min_blocks = 2;
    return s;
}
__host__ __device__ constexpr ws_shape ws_row_pairs_narrow_compact() {
    ws_shape s{};
    s.tile_threads = 512, s.tile_items = 8, s.tile_run = 256, s.tile_min_blocks = 2;
    s.merge_threads = 512, s.merge_items = 4, s.merge_min_blocks = 2;
    return s;
}
__host__ __device__ constexpr ws_shape ws_row_pairs_wide_compact() {
    ws_shape s{};
    s.tile_threads = 512, s.tile_items = 4, s.tile_run = 128, s.tile_min_blocks = 2;
    s.merge_threads = 256, s.merge_items = 4, s.merge_min_blocks = 2;
    return s;
}
#undef WS_ROW_OVERRIDE

/* The row of a family for a key and value width (value_bytes 0: keys
 * only). family defaults to sm_90, the measured one (the bench's byte
 * model reads it). */
__host__ __device__ constexpr ws_shape ws_policy(int key_bytes, int value_bytes,
                                                 int family = WS_FAMILY_SM90) {
    return family == WS_FAMILY_SM90 || family == WS_FAMILY_SM80
               ? (value_bytes == 0 ? (key_bytes <= 4 ? ws_row_keys() : ws_row_keys_wide())
                  : key_bytes + value_bytes <= 8 ? ws_row_pairs_narrow()
                                                 : ws_row_pairs_wide())
               : (value_bytes == 0
                      ? (key_bytes <= 4 ? ws_row_keys_compact() : ws_row_keys_wide_compact())
                  : key_bytes + value_bytes <= 8 ? ws_row_pairs_narrow_compact()
                                                 : ws_row_pairs_wide_compact());
}

__host__ __device__ constexpr int ws_tile_items_total(int key_bytes, int value_bytes,
                                                      int family = WS_FAMILY_SM90) {
    return ws_policy(key_bytes, value_bytes, family).tile_threads *
           ws_policy(key_bytes, value_bytes, family).tile_items;
}
__host__ __device__ constexpr int ws_merge_items_total(int key_bytes, int value_bytes,
                                                       int family = WS_FAMILY_SM90) {
    return ws_policy(key_bytes, value_bytes, family).merge_threads *
           ws_policy(key_bytes, value_bytes, family).merge_items;
}

/* Items between the cuts of a merge pass (merge.cuh): half a merge tile, so
 * no segment between two cuts outgrows a block. */
__host__ __device__ constexpr int ws_cut_chunk(int key_bytes, int value_bytes,
                                               int family = WS_FAMILY_SM90) {
    return ws_merge_items_total(key_bytes, value_bytes, family) / 2;
}

/* Four-way merge passes that grow sorted runs of `tile` into one run of n. */
__host__ __device__ inline int ws_merge_passes(size_t n, size_t tile) {
    int p = 0;
    for (size_t run = tile; run < n; run *= 4) p++;
    return p;
}

/* Length of the runs the tile sort leaves for n items: one tile, or two
 * tiles merged on chip when the family allows it and that saves a merge
 * pass (n / tile between 4^k and 2 * 4^k, e.g. 2^27 u32 keys: 7 passes
 * instead of 8). */
__host__ __device__ inline size_t ws_sort_tile_for(size_t n, int key_bytes, int value_bytes,
                                                   int family = WS_FAMILY_SM90) {
    const size_t tile = (size_t)ws_tile_items_total(key_bytes, value_bytes, family);
    if (ws_family_of(family).tile_max_sub < 2) return tile;
    return ws_merge_passes(n, 2 * tile) < ws_merge_passes(n, tile) ? 2 * tile : tile;
}

/* The one-launch merge sort of small arrays (coop_sort.cu): every block
 * is 512 threads, and a tile (= a merge block's outputs) is 512 x 4 items,
 * or 512 x 8 for items of up to 8 bytes where that saves a merge pass
 * (shapes the tile and merge rows already use), so the tile sort and the
 * merges share one launch shape: more and quicker tile sorts pay while
 * the passes stay as many. It takes n above one tile up to WS_COOP_MAX
 * (bench/NOTES.md). */
#define WS_COOP_THREADS 512
#ifndef WS_COOP_MAX
#define WS_COOP_MAX ((size_t)1 << 16)
#endif
__host__ __device__ inline int ws_coop_items(int key_bytes, int value_bytes, size_t n) {
    const int wide = ws_merge_passes(n, (size_t)WS_COOP_THREADS * 8);
    return key_bytes + value_bytes <= 8 && wide > 0 &&
                   ws_merge_passes(n, (size_t)WS_COOP_THREADS * 4) > wide
               ? 8
               : 4;
}

/* Threads of a sample-sort scatter block (distribute.cuh), unstable and
 * stable. A block regroups THREADS x ws_dist_items items at a time, so a
 * bigger block writes longer runs per bucket (fewer sectors written in
 * part, which the L2 must fill from DRAM) and passes fewer barriers per
 * item; a stable block keeps counters and lane masks per warp (4 KiB a
 * warp), which bounds it. bench/NOTES.md has the measurements. */
#ifndef WS_SCATTER_THREADS_UNSTABLE
#define WS_SCATTER_THREADS_UNSTABLE 512
#endif
#ifndef WS_SCATTER_THREADS_STABLE
#define WS_SCATTER_THREADS_STABLE 512
#endif
/* Unstable, 12- and 16-byte items (tiles of 8 items a thread). */
#ifndef WS_SCATTER_THREADS_WIDE
#define WS_SCATTER_THREADS_WIDE 1024
#endif

/* Narrowest keys whose sample-sort levels may draw up to 1023 splitters
 * when sorted alone (plan.cuh, ws_wide_tree_ok). A level of 512-1024
 * buckets writes runs of 16-8 keys a tile, which cost 4-byte keys more
 * than the third level they save; 8-byte keys come out ahead. */
#ifndef WS_WIDE_TREE_MIN_KEY_BYTES
#define WS_WIDE_TREE_MIN_KEY_BYTES 8
#endif

/* Distribution blocks per SM in level 0 of the sample sort (plan.cu):
 * whole waves of both kernels that walk the chunks, four of the unstable
 * scatter, which holds 1024 / WS_SCATTER_THREADS_UNSTABLE blocks an SM,
 * and two of the 4-byte count, which holds four (256 threads of 64
 * registers). Six (three scatter waves) left the count's second wave half
 * empty and ran slower (bench/NOTES.md, forty-second session). */
#ifndef WS_DIST_BLOCKS_PER_SM
#define WS_DIST_BLOCKS_PER_SM (4 * 1024 / WS_SCATTER_THREADS_UNSTABLE)
#endif

/* Smallest n the sample sort takes (plan.cu); below it the merge passes
 * are cheaper. With values the sample sort wins from 2^22, for every key
 * width; 4-byte keys alone, whose merge passes move half the bytes, from
 * 2^24 (bench/NOTES.md). */
#ifndef WS_SAMPLE_MIN_N
#define WS_SAMPLE_MIN_N ((size_t)1 << 22)
#endif
#ifndef WS_SAMPLE_MIN_N_KEYS
#define WS_SAMPLE_MIN_N_KEYS ((size_t)1 << 24)
#endif
/* 8-byte keys alone: from half that size, 2^23 (after the radix bucket
 * sort of 8-byte keys, bench/NOTES.md). */
#ifndef WS_SAMPLE_MIN_N_WIDE_SHIFT
#define WS_SAMPLE_MIN_N_WIDE_SHIFT 1
#endif

#endif /* WARPSORT_CUDA_TUNING_CUH */
