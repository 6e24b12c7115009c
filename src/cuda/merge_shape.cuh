/*
 * merge_shape.cuh - the geometry of a four-way merge pass (merge.cuh): runs,
 * groups of four runs, cut chunks and the segments between cuts. Host and
 * device code share it: the plan (plan.cu) counts a pass's segments with it,
 * the kernels find their segment with it.
 */
#ifndef WARPSORT_CUDA_MERGE_SHAPE_CUH
#define WARPSORT_CUDA_MERGE_SHAPE_CUH

#include <stddef.h>

/* Shape of one merge pass: runs of `run` items merge four at a time
 * into groups of 4*run, cut every `chunk` items (both powers of two, so
 * every index split is a shift). */
struct ws_pass_shape {
    size_t n;
    unsigned run_shift;   /* log2(run) */
    unsigned chunk_shift; /* log2(chunk) */
};
__host__ __device__ __forceinline__ size_t ws_pass_chunk(ws_pass_shape p) {
    return (size_t)1 << p.chunk_shift;
}
/* Cuts of a half (X or Y) of len items: X cuts sit at chunk, 2*chunk, ...
 * and Y cuts half a chunk earlier (chunk/2, 3*chunk/2, ...), so for random
 * keys the two kinds interleave and segments come out about a chunk long
 * instead of alternating full and empty. */
__host__ __device__ __forceinline__ size_t ws_x_cuts(size_t len, ws_pass_shape p) {
    return len ? (len - 1) >> p.chunk_shift : 0;
}
__host__ __device__ __forceinline__ size_t ws_y_cuts(size_t len, ws_pass_shape p) {
    return (len + ws_pass_chunk(p) / 2 - 1) >> p.chunk_shift;
}
/* Segments (= merge blocks) per full group, a power of two: the group
 * start, 2*run/chunk - 1 X cuts and 2*run/chunk Y cuts. */
__host__ __device__ __forceinline__ unsigned ws_slot_shift(ws_pass_shape p) {
    return p.run_shift + 2 - p.chunk_shift;
}

/* The four runs of group g. */
struct ws_merge4_span {
    size_t group;  /* first index of the group of four runs */
    size_t len[4]; /* lengths of A, B, C, D (the last ones may be short or empty) */
};
__host__ __device__ __forceinline__ ws_merge4_span ws_group_span(size_t g, ws_pass_shape p) {
    ws_merge4_span s;
    const size_t run = (size_t)1 << p.run_shift;
    s.group = g << (p.run_shift + 2);
    size_t left = p.n - s.group;
    for (int r = 0; r < 4; r++) {
        s.len[r] = left < run ? left : run;
        left -= s.len[r];
    }
    return s;
}
/* Segments of group s: 1 + its X cuts + its Y cuts. */
__host__ __device__ __forceinline__ size_t ws_group_segments(const ws_merge4_span &s,
                                                             ws_pass_shape p) {
    return 1 + ws_x_cuts(s.len[0] + s.len[1], p) + ws_y_cuts(s.len[2] + s.len[3], p);
}

#endif /* WARPSORT_CUDA_MERGE_SHAPE_CUH */
