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
 * sort.cu), so a newer chip falls into the row its limits fit.
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
    size_t smem_block;  /* opt-in shared memory per block the row needs, bytes */
    size_t smem_sm;     /* ... and per SM */
    int tile_max_sub;   /* 2: a tile-sort block may sort two tiles and merge them (~66 KB) */
};

struct ws_shape {
    int tile_threads;
    int tile_items;
    int tile_run;         /* run length the warp network sorts before merging */
    int tile_min_blocks;  /* __launch_bounds__ occupancy floor of the tile sort */
    int merge_threads;
    int merge_items;
    int merge_min_blocks; /* ... and of a merge pass */
};

/* Per family: what its row needs. Each row's largest block fits its
 * family's smem_block (static_asserts in sort.cu's ws_plan). */
__host__ __device__ constexpr ws_family_info ws_family_of(int family) {
    /* SM75 needs only 48 KB per block (every chip since sm_50 has that):
     * its largest block uses ~35 KB, so the last row fits any device. */
    return family == WS_FAMILY_SM90   ? ws_family_info{"sm_90", 227 << 10, 228 << 10, 2}
           : family == WS_FAMILY_SM80 ? ws_family_info{"sm_80", 163 << 10, 164 << 10, 2}
           : family == WS_FAMILY_SM86 ? ws_family_info{"sm_86", 99 << 10, 100 << 10, 1}
                                      : ws_family_info{"sm_75", 48 << 10, 48 << 10, 1};
}

/* sm_90 rows, measured on an H100 (2^27 random u32 keys, bench/NOTES.md):
 * 512-key warp runs (256 measured the same) and 4096-key tiles, 8192
 * merged on chip, take the tile sort to 1.7 ms at 3 blocks per SM (85
 * registers). The keys-only merge kernel needs ~40 registers and 66 KB of
 * shared memory per 512-thread block (8192-item capacity for 4096-item
 * segments): three blocks, 48 warps per SM. */
/* A tuning run overrides a row from a header force-included into sort.cu
 * (CMake's WARPSORT_TUNING_HEADER, scripts/gpu.sh stage-variant; nvcc splits
 * -D values at commas), without editing this table. */
#ifndef WS_SHAPE_KEYS
#define WS_SHAPE_KEYS {256, 16, 512, 3, 512, 16, 3}
#endif
/* 8-byte keys and 4-byte pairs sort their tiles with 512 threads of 8
 * items (256-item warp runs, four merge rounds): twice the warps per SM of
 * 256 x 16 at two blocks per SM, which hides more of the merges' latency.
 * Measured on an H200 (bench/NOTES.md, tenth session; 256 x 16 -> 512 x 8):
 * 2^26 u64 keys 4.48 -> 4.08 ms, 2^27 u32 pairs 8.75 -> 8.07 ms; u32 keys
 * were slower that way (4.60 -> 4.85 ms) and keep 256 x 16. */
#ifndef WS_SHAPE_KEYS_WIDE
#define WS_SHAPE_KEYS_WIDE {512, 8, 256, 2, 256, 16, 3}
#endif
#ifndef WS_SHAPE_PAIRS_NARROW
#define WS_SHAPE_PAIRS_NARROW {512, 8, 256, 2, 512, 8, 3}
#endif
/* Pairs of 12 or 16 bytes: 512 threads of 4 items (128-item warp runs), the
 * same 2048-item tile as 256 x 8 with twice the warps. H200, 256 x 8 ->
 * 512 x 4 (tenth session): u64 keys + u32 values 1.76 -> 1.63 ms at 2^24,
 * 6.94 -> 6.57 at 2^26, 0.085 -> 0.066 at 2^16; u64 keys + u64 values
 * 1.99 -> 1.82 ms at 2^24. */
#ifndef WS_SHAPE_PAIRS_WIDE
#define WS_SHAPE_PAIRS_WIDE {512, 4, 128, 2, 256, 8, 3}
#endif

/* sm_80 rows: derived, not measured. The sm_90 shapes: 164 KB per SM
 * holds two of their 66-69 KB blocks instead of three, and on the H100
 * halving the merge blocks to fit twice as many per SM measured 3-6 %
 * slower (bench/NOTES.md, "half-size merge blocks"), so the larger blocks
 * stay. Equal rows share their kernels: no extra code in the binary. */

/* sm_86 and sm_75 rows ("compact"): derived, not measured. 100 KB per SM
 * would hold one 66 KB block, so a tile-sort block sorts one tile (17-35
 * KB, tile_max_sub = 1) and the merge tile halves (half the items per
 * thread, the same threads: 33-35 KB, two blocks per SM on sm_86, one on
 * sm_75's 64 KB). The tile shapes are the sm_90 ones (same kernels); only
 * the merge kernels are extra. */
#ifndef WS_SHAPE_KEYS_COMPACT
#define WS_SHAPE_KEYS_COMPACT {256, 16, 512, 3, 512, 8, 2}
#endif
#ifndef WS_SHAPE_KEYS_WIDE_COMPACT
#define WS_SHAPE_KEYS_WIDE_COMPACT {512, 8, 256, 2, 256, 8, 2}
#endif
#ifndef WS_SHAPE_PAIRS_NARROW_COMPACT
#define WS_SHAPE_PAIRS_NARROW_COMPACT {512, 8, 256, 2, 512, 4, 2}
#endif
#ifndef WS_SHAPE_PAIRS_WIDE_COMPACT
#define WS_SHAPE_PAIRS_WIDE_COMPACT {512, 4, 128, 2, 256, 4, 2}
#endif

/* The row of a family for a key and value width (value_bytes 0: keys
 * only). family defaults to sm_90, the measured one (the bench's byte
 * model reads it). */
__host__ __device__ constexpr ws_shape ws_policy(int key_bytes, int value_bytes,
                                                 int family = WS_FAMILY_SM90) {
    return family == WS_FAMILY_SM90 || family == WS_FAMILY_SM80
               ? (value_bytes == 0 ? (key_bytes <= 4 ? ws_shape WS_SHAPE_KEYS
                                                     : ws_shape WS_SHAPE_KEYS_WIDE)
                  : key_bytes + value_bytes <= 8 ? ws_shape WS_SHAPE_PAIRS_NARROW
                                                 : ws_shape WS_SHAPE_PAIRS_WIDE)
               : (value_bytes == 0 ? (key_bytes <= 4 ? ws_shape WS_SHAPE_KEYS_COMPACT
                                                     : ws_shape WS_SHAPE_KEYS_WIDE_COMPACT)
                  : key_bytes + value_bytes <= 8 ? ws_shape WS_SHAPE_PAIRS_NARROW_COMPACT
                                                 : ws_shape WS_SHAPE_PAIRS_WIDE_COMPACT);
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

/* Distribution blocks per SM in level 0 of the sample sort (plan: sort.cu).
 * A count or scatter block walks `chunk` items and holds 2, 3 or 4 blocks
 * per SM (registers, shared memory), so 12 per SM make whole waves of
 * every one; the old grid of ~2048 blocks left the last of 3.65 scatter
 * waves two-thirds full at 2^27 u32 keys on 132 SMs (ncu, tenth session). */
#ifndef WS_DIST_BLOCKS_PER_SM
#define WS_DIST_BLOCKS_PER_SM 12
#endif

/* Smallest n the sample sort takes (plan.cuh); below it the merge passes
 * are cheaper. Measured on an H200 with this table's shapes (bench/NOTES.md,
 * tenth session; merge path / sample sort, ms, two alternating runs): at
 * 2^24 u32 keys 0.78 / 0.72, u32 pairs 1.22 / 1.08, u64 keys 1.39 / 1.23,
 * u64 pairs 1.84 / 1.76; at 2^23 0.428 / 0.420, 0.622 / 0.592, 0.706 /
 * 0.710, 0.982 / 0.997 (8-byte keys a hair slower, 4-byte ones faster); at
 * 2^22 the merge path wins everywhere (u32 keys 0.23 / 0.31). */
#ifndef WS_SAMPLE_MIN_N
#define WS_SAMPLE_MIN_N (((size_t)1 << 23) + 1)
#endif

#endif /* WARPSORT_CUDA_TUNING_CUH */
