/*
 * segmented.h - the CUDA backend's batched rows and segments
 * (segmented.cu, the sorts in segmented_sorts.cuh): the per-call plan
 * shared by sizing and launching.
 * Internal; C++ (nvcc) translation units only. The entry points the core
 * calls (ws_cuda_segmented, ws_cuda_segmented_workspace_size,
 * ws_cuda_segments_check) are declared in core/internal.h.
 *
 * One design for every length, chosen per segment on the device: a
 * classify kernel checks the offsets (device offsets: the first bad index
 * goes to the workspace header, every later kernel of the call reads it
 * first and writes nothing if set) and bins the segments by length into
 * lists in the workspace; one kernel per class then takes its list with
 * a grid sized on the host from bounds (n, number of segments), so nothing
 * waits for the device:
 *   classes 0 .. 7 (up to 4 << c items): groups of 1 .. 32 lanes per
 *       segment in registers (warp_sort_segment), several segments a warp;
 *   classes 8 .. 12 (up to 1024, 2048, 4096, 8192, 16384): a block per
 *       segment in shared memory (block_sort_segment), or from class 10
 *       on Hopper by radix passes (radix_tile.cuh; class 12 with 4-byte
 *       keys alone, whose 16384-item radix block fits);
 *   class 13 (up to 32768, Hopper, the cluster shape below): a cluster
 *       of two such radix blocks per segment, each sorting half, merged
 *       through distributed shared memory (cluster_merge.cuh);
 *   long (over the largest class): every run of the largest block
 *       class's length of every long segment is sorted by a block (all SMs share the runs of
 *       a few huge segments), then the leaf's four-way merge passes
 *       (merge.cuh) within each segment, as many as that segment needs:
 *       its first runs go to the buffer from which its last pass ends in
 *       the caller's arrays; each pass (a cuts and a merge launch, as
 *       dependent launches on Hopper) is launched on a bound from n and
 *       idle for segments already done, an idle one letting the next
 *       launch start at once;
 *   rows of 2^21 items or more: no classes; the leaf (device_sort.h)
 *       sorts groups of up to 2^25 items in one sample sort each, its
 *       level 0 cutting each row, where the sample sort takes a group
 *       (ws_plan_rows), else one row a call, up to four side by side on
 *       the side streams.
 */
#ifndef WARPSORT_CUDA_SEGMENTED_H
#define WARPSORT_CUDA_SEGMENTED_H

#include <stddef.h>
#include <stdint.h>

/* Short classes: class c holds segments of (4 << (c-1)) + 1 .. 4 << c items
 * (classes 8 .. 11: blocks of 128, 256, 512 and 1024 threads x 8 items;
 * class 12: 1024 threads x 16 items; class 13: a cluster of two such
 * blocks). A call takes one of four shapes, per key and value
 * width and per device (the device's family's shared memory per block,
 * ws_family_of(...).smem_block), so long segments start from runs of the
 * largest block class:
 *   cluster: WS_SEG_CLUSTER_CLASSES, where the full shape's radix blocks
 *       sort (Hopper; segmented_sorts.cuh, ws_seg_cluster_fits): 4-byte keys,
 *       alone or with 4-byte values (argsorts' 32-bit indices too); long
 *       segments (over 32768) from runs of 16384 as in full;
 *   full: WS_SEG_CLASSES, where a block of 1024 x 16 keys and values
 *       fits and the width's 1024 x 16 sort keeps within the 64 registers
 *       a thread of 1024 may have (no spills: segmented_sorts.cuh,
 *       ws_seg_full_widths); runs of 16384, the leaf's sm_90 merge blocks;
 *   wide: WS_SEG_WIDE_CLASSES, where a block of 1024 x 8 fits; runs of
 *       8192, the same merge blocks;
 *   narrow: WS_SEG_NARROW_CLASSES (up to 2048 items), runs of 2048, the
 *       leaf's compact merge blocks (u64 pairs of 8192 items need 139 KB:
 *       more than 8.6 / 8.9 / 7.5 chips give a block). */
#define WS_SEG_MAX_CLASSES 14
#define WS_SEG_CLUSTER_CLASSES 14
#define WS_SEG_CLASSES 13
#define WS_SEG_WIDE_CLASSES 12
#define WS_SEG_NARROW_CLASSES 10
#define WS_SEG_WARP_CLASSES 8
/* The long list packs (count << 40) | tiles in one 64-bit counter. */
#define WS_SEG_TILE_BITS 40

/* The workspace of one call: offsets into it (all 256-byte aligned) and
 * the capacity of every list, from n and the number of segments alone. */
struct ws_seg_layout {
    size_t header;                    /* ws_seg_header */
    size_t list[WS_SEG_MAX_CLASSES];  /* uint32_t segment ids per class */
    unsigned cap[WS_SEG_MAX_CLASSES]; /* entries each list can hold */
    size_t long_seg, long_base;       /* uint32_t ids, uint64_t first tile */
    unsigned long long long_cap;
    size_t cuts;                       /* merge-pass cuts: 4 size_t a slot */
    size_t slots;                      /* merge-pass slots' segments: ws_seg_slot a slot */
    size_t scratch_keys, scratch_vals; /* merge ping-pong for long segments */
    size_t keys_copy;                  /* argsort: the keys, sorted in place */
    size_t leaf;                       /* long rows: the leaf's workspace (one row's) */
    size_t total;
};

#endif /* WARPSORT_CUDA_SEGMENTED_H */
