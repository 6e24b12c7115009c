/*
 * test_hooks.h - every test and diagnostic hook of the library, in one
 * place. The library's behaviour comes from warpsort_config_t; these exist
 * so tests can reach paths that real inputs reach only on other hardware or
 * at sizes too large for a test, and so a host-array call can be traced.
 * They are read from the environment once, when a context is created
 * (ws_test_hooks_read), and nowhere else.
 *
 *   WARPSORT_SAMPLE_MIN_N=N      smallest n the sample sort takes (default:
 *                                the tuning table's)
 *   WARPSORT_SAMPLE_SPLITTERS=S  most splitters per sample-sort level (1-1023;
 *                                above 255, 8-byte keys alone take the wide
 *                                tree at every size, the rest draw 255)
 *   WARPSORT_SAMPLE_LEVELS=L     most sample-sort levels (1-4)
 *   WARPSORT_SMEM_LIMIT=BYTES    caps the device's shared memory per block at
 *                                BYTES (per SM at BYTES + 1 KiB), so the tuning
 *                                rows of smaller chips run on a larger one
 *   WARPSORT_FORCE_NO_KERNEL_IMAGE=1  CUDA initialisation fails as on a chip
 *                                the build has no code for
 *   WARPSORT_TOPK_PATH=P         top-k takes path P (rows, rows-narrow: the
 *                                row blocks without the threads' bar,
 *                                rows-l2: nor keys past the registers in
 *                                shared memory (read from L2), warp,
 *                                filter, filter-single: its candidates
 *                                to one block instead of the read's own
 *                                grid, filter-narrow: that block without
 *                                the threads' bar, or radix)
 *                                wherever its limits allow it, instead of
 *                                the plan's choice (src/cuda/topk.cu)
 *   WARPSORT_NO_PDL=1            kernels of one call are launched one after
 *                                the other, never as dependent launches
 *                                (src/cuda/pdl.cuh): the A/B of the overlap,
 *                                and the order pre-9.0 devices always get
 *   WARPSORT_NO_COOP=1           small arrays above one tile take the merge
 *                                path's launches, not the one cooperative
 *                                launch (src/cuda/coop_sort.cu): the A/B, and
 *                                the merge path's tests at those sizes
 *   WARPSORT_SEG_NO_RADIX=1      segments of 2049..16384 items, and longer
 *                                ones' first runs, take the block
 *                                sorts in shared memory (warpsort/
 *                                segment_sort.cuh), not the radix blocks
 *                                (src/cuda/segmented.cu) Hopper gives them:
 *                                the A/B, and those sorts' tests there
 *   WARPSORT_SEG_NO_CLUSTER=1    segments of 16385..32768 items of 4-byte
 *                                keys (alone or with 4-byte values) take
 *                                the long segments' path (runs of 16384,
 *                                then a merge pass), not the cluster
 *                                pairs (src/cuda/cluster_merge.cuh)
 *                                Hopper gives them: the A/B, and that
 *                                path's tests at those lengths
 *   WARPSORT_MERGE_NO_RADIX=1    the merge path's tile sort of 4-byte keys
 *                                alone takes the block sorts' tiles (4096
 *                                or 8192 items) everywhere, not the radix
 *                                blocks of 16384 or their cluster pairs of
 *                                32768 (src/cuda/radix_tiles.cuh) that Hopper
 *                                gives the sizes where they save a merge
 *                                pass: the A/B, and the block sorts' tests
 *                                at those sizes
 *   WARPSORT_ONE_STREAM=1        a call's kernels all go to the context's
 *                                stream, none to side streams
 *                                (src/cuda/side_streams.h): the A/B, and
 *                                the order a capture sees before the side
 *                                streams exist
 *   WARPSORT_TRACE=FILE          host-array calls append a CSV timeline of
 *                                their copies, sorts and merges to FILE
 *                                (bench/plot.py --timeline draws it)
 *   WARPSORT_TEST_OOC_WORKERS=K  host arrays sorted out of core use K workers
 *                                (2-16), all on the context's device (config
 *                                devices ignored), each with its own stream,
 *                                ring and workspace and 1/K of the device budget:
 *                                the several-GPU code, concurrency included, on
 *                                a machine with one GPU
 *   WARPSORT_TEST_SPREAD=1       host arrays on a context with several workers
 *                                (config devices, or the hook above) are
 *                                sorted in core across them whenever every
 *                                worker's share fits, even where the context's
 *                                device alone would hold the array
 *
 * ws_pipeline_test_fail_at (src/cuda/pipeline/pipeline.h) is the one hook
 * set by a call instead: the k-th pipeline checkpoint fails.
 */
#ifndef WARPSORT_TEST_HOOKS_H
#define WARPSORT_TEST_HOOKS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WS_TRACE_PATH_MAX 256

/* WARPSORT_TOPK_PATH values */
enum {
    WS_TOPK_PATH_PLAN,
    WS_TOPK_PATH_ROWS,
    WS_TOPK_PATH_ROWS_NARROW,
    WS_TOPK_PATH_WARP,
    WS_TOPK_PATH_FILTER,
    WS_TOPK_PATH_RADIX,
    WS_TOPK_PATH_FILTER_NARROW,
    WS_TOPK_PATH_FILTER_SINGLE,
    WS_TOPK_PATH_ROWS_L2
};

typedef struct ws_test_hooks {
    size_t sample_min_n;       /* 0: the tuning table's */
    unsigned sample_splitters; /* 0: the most the tree holds */
    int sample_levels;         /* 0: the most the plan allows */
    size_t smem_limit;         /* 0: the device's own */
    char smem_limit_bad[64];   /* the variable's text when it is not a byte count */
    int force_no_kernel_image;
    char trace_path[WS_TRACE_PATH_MAX]; /* "": no trace */
    unsigned ooc_workers;               /* 0: the config's devices */
    int spread;                         /* 1: spread across workers first */
    int topk_path;                      /* 0: the plan's; else WS_TOPK_PATH_* */
    int no_pdl;                         /* 1: no dependent launches */
    int no_coop;                        /* 1: no one-launch small merge sort */
    int one_stream;                     /* 1: no side streams */
    int seg_no_radix;                   /* 1: classes 10..12, long runs by block sorts */
    int seg_no_cluster;                 /* 1: no class 13 (cluster pairs) */
    int merge_no_radix;                 /* 1: the merge path's tiles by block sorts only */
} ws_test_hooks;

/* Fills *h from the environment (unset variables: the defaults above). */
void ws_test_hooks_read(ws_test_hooks *h);

#ifdef __cplusplus
}
#endif
#endif /* WARPSORT_TEST_HOOKS_H */
