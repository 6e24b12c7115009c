/*
 * segmented_sorts.cuh - the sorts of the CUDA backend's batched rows and
 * segments (segmented.h), for one key width and one value width: the
 * device side (the classes' kernels, the long segments' runs, cuts and
 * merge passes) and ws_seg_run, which queues them for a call that
 * segmented.cu has checked, planned and staged. Each (key width, value
 * width) is stamped out in its own translation unit (segmented/k4.cu .. k8_v8.cu) with
 * WS_SEG_INSTANCE, so a many-core build compiles the six side by side
 * instead of one after another; segmented.cu reads only the types and
 * the constexpr shapes here. Internal; CUDA translation units only.
 */
#ifndef WARPSORT_CUDA_SEGMENTED_SORTS_CUH
#define WARPSORT_CUDA_SEGMENTED_SORTS_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "check.cuh"
#include "state.h"
#include "workspace.h"
#include "segmented.h"
#include "side_streams.h"
#include "device_sort.h"
#include "iota.h"
#include "pdl.cuh"
#include "plan.cuh"  /* ws_align256 */
#include "merge.cuh" /* the four-way merge passes of long segments */
#include "radix_tile.cuh"
#include "cluster_merge.cuh"
#include "warpsort/segment_sort.cuh"

using warpsort::key_codec;
using warpsort::no_value;
using warpsort::segment_sort_storage;
using warpsort::detail::block_sort_segment_run;
using warpsort::detail::warp_sort_segment_run;

/*=== device side ===*/

/* The workspace header: zeroed by a memset before every call. */
struct ws_seg_header {
    unsigned long long verdict;     /* 0: offsets good; else ~(first bad index) */
    unsigned long long max_long;    /* items of the longest long segment */
    unsigned long long long_packed; /* (long segments << WS_SEG_TILE_BITS) | their runs */
    unsigned counts[WS_SEG_MAX_CLASSES];
};

/* Where segment s starts: offsets, or s * row_len for rows. */
struct ws_seg_view {
    const uint64_t *offsets;
    unsigned long long row_len, n, num_segments;
    __device__ __forceinline__ unsigned long long begin(unsigned long long s) const {
        return offsets ? offsets[s] : s * row_len;
    }
};

struct ws_seg_lists {
    unsigned *list[WS_SEG_MAX_CLASSES];
    unsigned cap[WS_SEG_MAX_CLASSES];
    unsigned *long_seg;
    unsigned long long *long_base;
    unsigned long long long_cap;
};

/* Everything a sort kernel of the call reads. vals NULL with iota: the
 * values are generated as segment-local indices (argsort). direct: equal
 * rows of one short class, no classify pass: entry e of that class's list
 * is row e, num_segments entries, and the header is neither zeroed nor
 * read (rows have no offsets to check). */
template <typename KB, typename V>
struct ws_seg_args {
    KB *keys;
    V *vals;
    int iota;
    int stable; /* values keep the input order of equal keys (argsort too) */
    int direct;
    int nclasses;  /* short classes of the call's shape (segmented.h) */
    unsigned run0; /* first sorted runs of long segments: the largest class */
    key_codec codec;
    ws_seg_view view;
    const ws_seg_header *header;
    ws_seg_lists lists;
};

/* Class of a segment of len items: -1 nothing to do (empty, or a single
 * item unless an argsort must write its index), 0 .. nclasses-1 short,
 * nclasses long. */
__host__ __device__ __forceinline__ int ws_seg_class_of(unsigned long long len, int argsort,
                                                        int nclasses) {
    if (len == 0 || (len == 1 && !argsort)) return -1;
    int c = 0;
    while (c < nclasses && len > (4ull << c)) c++;
    return c;
}

/* Four-way merge passes that make a long segment of len items one run
 * (first runs of run0, a power of two). */
__host__ __device__ __forceinline__ int ws_seg_passes(unsigned long long len,
                                                      unsigned long long run0) {
    int p = 0;
    for (unsigned long long run = run0; run < len; run *= 4) p++;
    return p;
}

/* Checks the offsets (device offsets) and bins the segments into the
 * class lists: ws_seg_classify_kernel, segmented.cu; `grid` blocks of 256. */
cudaError_t ws_seg_classify(const ws_seg_view &v, ws_seg_header *h, const ws_seg_lists &lists,
                            int argsort, int nclasses, unsigned run0, unsigned grid,
                            cudaStream_t stream);

/* Entries of list c (never more than it holds). */
template <typename KB, typename V>
__device__ __forceinline__ unsigned ws_seg_count(const ws_seg_args<KB, V> &a, int c) {
    if (a.direct) return (unsigned)a.view.num_segments;
    const unsigned n = a.header->counts[c];
    return n < a.lists.cap[c] ? n : a.lists.cap[c];
}
/* Segment of entry e of list c. */
template <typename KB, typename V>
__device__ __forceinline__ unsigned ws_seg_entry(const ws_seg_args<KB, V> &a, int c,
                                                 unsigned long long e) {
    return a.direct ? (unsigned)e : a.lists.list[c][e];
}
/* Whether the call's offsets failed the device check (nothing to do). */
template <typename KB, typename V>
__device__ __forceinline__ bool ws_seg_rejected(const ws_seg_args<KB, V> &a) {
    return !a.direct && a.header->verdict != 0;
}

/* Value pointer of item `first`, or NULL when values are generated. */
template <typename KB, typename V>
__device__ __forceinline__ V *ws_seg_vals_at(const ws_seg_args<KB, V> &a, V *vals,
                                             unsigned long long first) {
    if constexpr (warpsort::is_value<V>::value)
        return vals ? vals + first : nullptr;
    else
        return nullptr;
}

/* Occupancy floor of a warp-class kernel: as many blocks of 256 as leave a
 * register cap (64K / (256 x blocks)) that still holds the network of K
 * items a lane. The short classes wait on memory more than they issue, so
 * every block an SM holds pays: keys alone take all that fit without a
 * spill. With values the cap holds the keys-and-values network, so the
 * positions network beside it (the rare second pass,
 * warpsort/segment_sort.cuh) cannot lower the occupancy of the first;
 * 4-byte pairs of 4 a lane in groups narrower than the warp take a full SM
 * although ptxas then spills a few words, which cost less than the blocks
 * they add (not so at WIDTH 32). Register counts and times: bench/NOTES.md,
 * fourteenth and twenty-sixth sessions. */
template <int WIDTH, int K, typename KB, typename V>
__host__ __device__ constexpr int ws_seg_warp_min_blocks() {
    constexpr int words = K * (int)((sizeof(KB) + sizeof(V)) / 4);
    return !warpsort::is_value<V>::value ? (words <= 4    ? 8
                                            : words <= 8  ? 6
                                            : words <= 16 ? 5
                                                          : 2)
           : words <= 8                  ? (WIDTH < 32 && sizeof(KB) == 4 ? 8 : 6)
           : words <= 16                 ? 4
           : words <= 32                 ? 3
                                         : 2;
}

/* Classes 0 .. 7: 32 / WIDTH segments per warp, grid-stride over the list
 * (KIND: ws_kind_codec). */
template <int WIDTH, int K, typename KB, typename V, int KIND>
__global__ void __launch_bounds__(256,
                                  ws_min_blocks_fit(256, ws_seg_warp_min_blocks<WIDTH, K, KB, V>()))
    ws_seg_warp_kernel(ws_seg_args<KB, V> a, int c) {
    const key_codec codec = ws_kind_codec<KIND>(a.codec);
    if (ws_seg_rejected(a)) return;
    constexpr unsigned GROUPS = 32 / WIDTH;
    const unsigned count = ws_seg_count(a, c);
    const unsigned long long warp =
        ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const unsigned long long warps = (unsigned long long)gridDim.x * blockDim.x / 32;
    const unsigned group = (threadIdx.x & 31) / WIDTH;
    for (unsigned long long e0 = warp * GROUPS; e0 < count; e0 += warps * GROUPS) {
        const unsigned long long e = e0 + group;
        unsigned long long b = 0;
        int len = 0;
        if (e < count) {
            const unsigned s = ws_seg_entry(a, c, e);
            b = a.view.begin(s);
            len = (int)(a.view.begin(s + 1ull) - b);
        }
        V *vals = a.iota ? nullptr : ws_seg_vals_at(a, a.vals, b);
        V *out_vals = ws_seg_vals_at(a, a.vals, b);
        warp_sort_segment_run<WIDTH, K>(a.keys + b, (const V *)vals, a.keys + b, out_vals, len,
                                        codec, 0, a.stable != 0);
    }
}

/* Shared memory of a block sorting THREADS x K items: dynamic, since the
 * larger shapes pass the 48 KiB a static array may take (u64 pairs of
 * 8192 items: 139 KB), launched by ws_seg_launch_block. */
template <int THREADS, int K, typename KB, typename V>
__device__ __forceinline__ segment_sort_storage<KB, V, THREADS, K> &ws_seg_block_storage() {
    extern __shared__ __align__(16) unsigned char ws_seg_dyn[];
    return *reinterpret_cast<segment_sort_storage<KB, V, THREADS, K> *>(ws_seg_dyn);
}

/* Occupancy floor of a block sort of THREADS x K items: one block an SM
 * stated for 1024 x 16 (class 12 and the full shape's first runs), so that
 * ptxas keeps the sort within its 64 registers instead of spilling to fit
 * two blocks of 32; 0, none stated, for the smaller shapes (ptxas's own
 * choice, as before the full shape). */
template <int THREADS, int K>
__host__ __device__ constexpr int ws_seg_block_min_blocks() {
    return THREADS * K >= 16384 ? 1 : 0;
}

/* Occupancy floor of class 7 .. 12's block kernels: 4-byte keys alone in
 * blocks of up to 512 threads fill the SM (32 registers, no spill), where
 * ptxas's own choice left part of it idle while their barriers waited;
 * 4-byte pairs keep the registers their blocked stores took (80 at 64
 * threads, 72 at 128, 64 above) beside the striped store of misaligned
 * segments, which left alone took more (bench/NOTES.md, twenty-sixth
 * session). The rest as the long runs. */
template <int THREADS, int K, typename KB, typename V>
__host__ __device__ constexpr int ws_seg_class_block_min_blocks() {
    return !warpsort::is_value<V>::value && sizeof(KB) == 4 && THREADS < 1024
               ? WS_ARCH_SM_THREADS / THREADS
           : warpsort::is_value<V>::value && sizeof(KB) == 4 && sizeof(V) == 4 && THREADS < 1024
               ? (THREADS == 64    ? 12
                  : THREADS == 128 ? 7
                                   : 1024 / THREADS)
               : ws_seg_block_min_blocks<THREADS, K>();
}

/* Classes 8 .. 12: a block per segment, grid-stride over the list (KIND:
 * ws_kind_codec). */
template <int THREADS, int K, typename KB, typename V, int KIND>
__global__ void __launch_bounds__(THREADS, ws_seg_class_block_min_blocks<THREADS, K, KB, V>())
    ws_seg_block_kernel(ws_seg_args<KB, V> a, int c) {
    const key_codec codec = ws_kind_codec<KIND>(a.codec);
    segment_sort_storage<KB, V, THREADS, K> &storage = ws_seg_block_storage<THREADS, K, KB, V>();
    if (ws_seg_rejected(a)) return;
    const unsigned count = ws_seg_count(a, c);
    for (unsigned long long e = blockIdx.x; e < count; e += gridDim.x) {
        const unsigned s = ws_seg_entry(a, c, e);
        const unsigned long long b = a.view.begin(s);
        const int len = (int)(a.view.begin(s + 1ull) - b);
        V *vals = a.iota ? nullptr : ws_seg_vals_at(a, a.vals, b);
        block_sort_segment_run<THREADS, K>(a.keys + b, (const V *)vals, a.keys + b,
                                           ws_seg_vals_at(a, a.vals, b), len, codec, codec, storage,
                                           0, a.stable != 0);
    }
}

/* Whether the radix blocks pack their counters (ws_rx_smem): keys alone
 * always, and keys with values only where the unpacked room does not fit
 * (16384 4-byte keys with 4-byte values): packed passes with values ran
 * slower where both fit (bench/NOTES.md, thirty-fourth session). */
template <typename KB, typename V, int THREADS>
__host__ __device__ constexpr bool ws_seg_radix_pack() {
    return !warpsort::is_value<V>::value ||
           sizeof(ws_rx_smem<KB, V, THREADS, false>) > ws_family_of(WS_FAMILY_SM90).smem_block;
}
template <typename KB, typename V, int THREADS>
using ws_seg_rx_smem = ws_rx_smem<KB, V, THREADS, ws_seg_radix_pack<KB, V, THREADS>()>;

/* The long segment that run r belongs to: the last entry whose first run
 * is <= r (entries were numbered in the order of their runs). The lanes
 * of a warp probe 32 points a round (two rounds for 1024 segments, where
 * a binary search waits on ten dependent loads). All 32 lanes call it,
 * converged, with the same r. */
__device__ __forceinline__ unsigned long long
ws_seg_long_entry(const unsigned long long *base, unsigned long long count, unsigned long long r) {
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long lo = 0, hi = count; /* base[lo] <= r < base[hi] (base[count]: past all) */
    while (hi - lo > 1) {
        const unsigned long long step = (hi - lo + 31) / 32;
        const unsigned long long at = lo + (lane + 1ull) * step;
        const unsigned below = __ballot_sync(0xFFFFFFFFu, at < hi && base[at] <= r);
        const unsigned long long c = (unsigned long long)__popc(below); /* probes at or below */
        lo += c * step;
        const unsigned long long end = lo + step;
        hi = end < hi ? end : hi;
    }
    return lo;
}

/* A run (tile kernel) or tile (merge kernel) of a long segment. */
struct ws_seg_tile {
    unsigned long long begin, len; /* the segment */
    unsigned long long first;      /* the run's or tile's first item, segment-local */
};

template <typename KB, typename V>
__device__ __forceinline__ bool
ws_seg_long_runs(const ws_seg_args<KB, V> &a, unsigned long long *runs, unsigned long long *count) {
    const unsigned long long packed = a.header->long_packed;
    *count = packed >> WS_SEG_TILE_BITS;
    if (*count > a.lists.long_cap) *count = a.lists.long_cap;
    *runs = packed & ((1ull << WS_SEG_TILE_BITS) - 1);
    return *count > 0;
}

/* Run r of the long segments. */
template <typename KB, typename V>
__device__ __forceinline__ ws_seg_tile ws_seg_run_of(const ws_seg_args<KB, V> &a,
                                                     unsigned long long count,
                                                     unsigned long long r) {
    const unsigned long long e = ws_seg_long_entry(a.lists.long_base, count, r);
    const unsigned s = a.lists.long_seg[e];
    ws_seg_tile tl;
    tl.begin = a.view.begin(s);
    tl.len = a.view.begin(s + 1ull) - tl.begin;
    tl.first = (r - a.lists.long_base[e]) * a.run0;
    return tl;
}

/* Asks L2 for the bytes [p, p + bytes), a line a thread a step, without
 * waiting: a block's next job, fetched while it sorts this one, so that the
 * job's loads wait on L2 instead of DRAM. Every thread of the block calls
 * it. */
template <int THREADS>
__device__ __forceinline__ void ws_seg_prefetch_l2(const void *p, unsigned long long bytes) {
    constexpr unsigned long long LINE = 128;
    const uintptr_t first = (uintptr_t)p & ~(uintptr_t)(LINE - 1);
    const uintptr_t end = (uintptr_t)p + bytes;
    for (uintptr_t at = first + threadIdx.x * LINE; at < end; at += THREADS * LINE)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
}
/* The same for a job's len keys at k and values at v. */
template <int THREADS, typename KB, typename V>
__device__ __forceinline__ void ws_seg_prefetch_job(const KB *k, const V *v,
                                                    unsigned long long len) {
    ws_seg_prefetch_l2<THREADS>(k, len * sizeof(KB));
    ws_seg_prefetch_l2<THREADS>(v, len * sizeof(V));
}

/* Classes 10 .. 12 on Hopper: a block per segment sorts it by radix
 * passes (radix_tile.cuh: two passes over the top 18 bits of the
 * segment's range, then runs), grid-stride over the list: faster than
 * the block sorts from 4096 items, slower at 2048 (bench/NOTES.md,
 * thirty-third session). Same contract as the block kernel; the sample
 * sort's kernels' arch guard. LONG: the same for the first runs of long
 * segments (c unused), each run stored as ordered bits where the tile
 * kernel below stores it (ws_seg_long_tile_kernel), where a radix block
 * of the run's length fits. KIND: ws_kind_codec. */
template <typename KB, typename V, bool STABLE, int THREADS, int KIND, bool LONG>
__global__ void __launch_bounds__(THREADS, ws_rx_min_blocks<KB, V>(THREADS))
    ws_seg_radix_kernel(ws_seg_args<KB, V> a, int c, KB *sk, V *sv) {
#if WS_SAMPLE_ARCH
    constexpr int RUN0 = THREADS * WS_RX_ITEMS;
    /* 4-byte keys with 4-byte values in segments of up to 8192 items ask
     * L2 for the block's next job while they sort this one: at two blocks
     * an SM their loads were the largest stall. Keys alone (four blocks an
     * SM), larger jobs and long segments' runs gained nothing or lost
     * (bench/NOTES.md, thirty-seventh session); other widths and argsorts
     * were not measured. */
    constexpr bool PREFETCH =
        warpsort::is_value<V>::value && sizeof(KB) == 4 && sizeof(V) == 4 && RUN0 <= 8192;
    const key_codec codec = ws_kind_codec<KIND>(a.codec);
    extern __shared__ __align__(16) unsigned char ws_seg_rx_dyn[];
    ws_seg_rx_smem<KB, V, THREADS> &s = *(ws_seg_rx_smem<KB, V, THREADS> *)ws_seg_rx_dyn;
    if (ws_seg_rejected(a)) return;
    V *vsrc = a.iota ? nullptr : a.vals;
    ws_rx_block_init(s);
    if constexpr (LONG) {
        unsigned long long runs, count;
        if (!ws_seg_long_runs(a, &runs, &count)) return;
        for (unsigned long long r = blockIdx.x; r < runs; r += gridDim.x) {
            const ws_seg_tile tl = ws_seg_run_of(a, count, r);
            const bool to_scratch = ws_seg_passes(tl.len, RUN0) & 1;
            const unsigned long long rest = tl.len - tl.first;
            ws_rx_sort_job<KB, V, STABLE, true, THREADS>(
                s, a.keys, vsrc, to_scratch ? sk : a.keys, to_scratch ? sv : a.vals,
                tl.begin + tl.first, rest < RUN0 ? (int)rest : RUN0, codec, key_codec{0, 0},
                tl.first);
        }
    } else {
        const unsigned count = ws_seg_count(a, c);
        for (unsigned long long e = blockIdx.x; e < count; e += gridDim.x) {
            const unsigned seg = ws_seg_entry(a, c, e);
            const unsigned long long b = a.view.begin(seg);
            const int len = (int)(a.view.begin(seg + 1ull) - b);
            if (PREFETCH && vsrc && e + gridDim.x < count) { /* the next job, into L2 */
                const unsigned nx = ws_seg_entry(a, c, e + gridDim.x);
                const unsigned long long nb = a.view.begin(nx);
                ws_seg_prefetch_job<THREADS>(a.keys + nb, vsrc + nb, a.view.begin(nx + 1ull) - nb);
            }
            ws_rx_sort_job<KB, V, STABLE, true, THREADS>(s, a.keys, vsrc, a.keys, a.vals, b, len,
                                                         codec, codec, 0);
        }
    }
#endif
}

/* Class 13 on Hopper: a cluster of two blocks of 1024 threads per
 * segment (16385 .. 32768 items), grid-stride over the list by pair: each
 * block sorts its half by radix passes into its shared memory
 * (radix_tile.cuh), then the two halves are merged across the pair's
 * shared memory into the caller's arrays (cluster_merge.cuh), so the
 * segment is read and written once, where the long segments' path stores
 * two runs, finds cuts and merges them in two more launches. Launched
 * with the cluster size as a launch attribute (ws_seg_launch_pairs), so
 * that the fat build's older targets compile it (empty there, never
 * launched). Same contract as the radix kernel; KIND: ws_kind_codec. */
template <typename KB, typename V, bool STABLE, int KIND>
__global__ void __launch_bounds__(1024, 1) ws_seg_pair_kernel(ws_seg_args<KB, V> a, int c) {
#if WS_SAMPLE_ARCH
    constexpr int N = 1024 * WS_RX_ITEMS;
    const key_codec codec = ws_kind_codec<KIND>(a.codec);
    extern __shared__ __align__(16) unsigned char ws_seg_rx_dyn[];
    ws_seg_rx_smem<KB, V, 1024> &s = *(ws_seg_rx_smem<KB, V, 1024> *)ws_seg_rx_dyn;
    if (ws_seg_rejected(a)) return; /* both blocks of the pair alike */
    V *vsrc = a.iota ? nullptr : a.vals;
    ws_rx_block_init(s);
    const int r = ws_cl_rank();
    const unsigned count = ws_seg_count(a, c);
    for (unsigned long long e = blockIdx.x / 2; e < count; e += gridDim.x / 2) {
        const unsigned seg = ws_seg_entry(a, c, e);
        const unsigned long long b = a.view.begin(seg);
        const int len = (int)(a.view.begin(seg + 1ull) - b);
        const int na = len < N ? len : N, nb = len - na;
        ws_rx_sort_job<KB, V, STABLE, true, 1024>(s, a.keys, vsrc, (KB *)nullptr, (V *)nullptr,
                                                  b + (unsigned)(r * na), r ? nb : na, codec, codec,
                                                  (unsigned long long)(r * na));
        ws_cl_merge_pair(s, na, nb, a.keys, a.vals, b, codec);
    }
#endif
}

/* Long segments, step 1: every run of a.run0 = THREADS x K items (the
 * largest class's shape) sorted by a block and stored as ordered bits
 * (the merge passes compare and move those, the last decodes), in the
 * buffer from which the segment's own merge passes end in the caller's
 * arrays: a segment of fewer runs needs fewer passes and none of the
 * others' copies. */
template <int THREADS, int K, typename KB, typename V>
__global__ void __launch_bounds__(THREADS, ws_seg_block_min_blocks<THREADS, K>())
    ws_seg_long_tile_kernel(ws_seg_args<KB, V> a, KB *sk, V *sv) {
    constexpr int RUN0 = THREADS * K;
    segment_sort_storage<KB, V, THREADS, K> &storage = ws_seg_block_storage<THREADS, K, KB, V>();
    if (a.header->verdict) return;
    unsigned long long runs, count;
    if (!ws_seg_long_runs(a, &runs, &count)) return;
    for (unsigned long long r = blockIdx.x; r < runs; r += gridDim.x) {
        const ws_seg_tile tl = ws_seg_run_of(a, count, r);
        const bool to_scratch = ws_seg_passes(tl.len, RUN0) & 1;
        KB *dk = to_scratch ? sk : a.keys;
        V *dv = to_scratch ? sv : a.vals;
        const unsigned long long at = tl.begin + tl.first;
        const unsigned long long rest = tl.len - tl.first;
        const int len = rest < RUN0 ? (int)rest : RUN0;
        V *vals = a.iota ? nullptr : ws_seg_vals_at(a, a.vals, at);
        block_sort_segment_run<THREADS, K>(a.keys + at, (const V *)vals, dk + at,
                                           ws_seg_vals_at(a, dv, at), len, a.codec, key_codec{0, 0},
                                           storage, tl.first, a.stable != 0);
    }
}

/* Long segments, merge pass p: the leaf's four-way pass (merge.cuh) within
 * each segment that still has runs to merge, its cuts from merge4_cuts'
 * code and its merges from merge4_pass's. A pass's slots (merge blocks)
 * are numbered per first run: `per_run` = a.run0 / chunk of them cover
 * every group of four runs at any pass (a group of runs of a.run0 << 2p
 * has at most per_run slots per first run it holds), so slot t belongs to
 * the segment of first run t / per_run and its cuts live at 4 t. */
struct ws_seg_slot {
    unsigned long long begin, len; /* the segment */
    unsigned long long first;      /* its first slot (= first run x per_run) */
    int passes;                    /* four-way passes the segment takes */
    int pad;                       /* 32 bytes: two 16-byte copies */
};
static_assert(sizeof(ws_seg_slot) == 32, "a slot's segment is two 16-byte copies");

/* The segment of slot t. Every lane of the warp calls it, converged, with
 * the same t (ws_seg_long_entry). */
template <typename KB, typename V>
__device__ __forceinline__ ws_seg_slot ws_seg_slot_of(const ws_seg_args<KB, V> &a,
                                                      unsigned long long count,
                                                      unsigned long long t,
                                                      unsigned long long per_run) {
    const unsigned long long e = ws_seg_long_entry(a.lists.long_base, count, t / per_run);
    const unsigned s = a.lists.long_seg[e];
    ws_seg_slot sl;
    sl.begin = a.view.begin(s);
    sl.len = a.view.begin(s + 1ull) - sl.begin;
    sl.first = a.lists.long_base[e] * per_run;
    sl.passes = ws_seg_passes(sl.len, a.run0);
    return sl;
}

/* Pass p's shape within a segment of len items (runs of run0 << 2p). */
__device__ __forceinline__ ws_pass_shape ws_seg_pass_shape(unsigned long long len, unsigned run0,
                                                           int p, unsigned chunk_shift) {
    ws_pass_shape sh;
    sh.n = (size_t)len;
    sh.run_shift = (unsigned)(__ffs((int)run0) - 1 + 2 * p);
    sh.chunk_shift = chunk_shift;
    return sh;
}

/* The start of a pass's cuts or merge kernel, a dependent launch
 * (pdl.cuh): waits for the launch before it, then finds whether pass p
 * has nothing to do (bad offsets, a pass past the longest segment's that
 * the bound from n launched, no long segment) and if so lets the next
 * launch start at once: the bound launches passes most calls leave empty.
 * A pass with work releases nothing early: the merge's blocks, waiting
 * beside the cuts, took the SMs' room the cuts ran on, and the next
 * cuts, a few latency-bound blocks, would pile onto the SMs the merge
 * frees first (bench/NOTES.md, fiftieth session). */
template <typename KB, typename V>
__device__ __forceinline__ bool ws_seg_pass_start(const ws_seg_args<KB, V> &a, int p,
                                                  unsigned long long *runs,
                                                  unsigned long long *count) {
    ws_pdl_wait();
    if (!a.header->verdict && p < ws_seg_passes(a.header->max_long, a.run0) &&
        ws_seg_long_runs(a, runs, count))
        return true;
    ws_pdl_release();
    return false;
}

/* Step 1 of pass p: the cuts, a warp a slot; at pass 0 each slot's
 * segment too, so that a merge block finds it with one load instead of a
 * search. */
template <typename KB, typename V>
__global__ void __launch_bounds__(256)
    ws_seg_cuts_kernel(ws_seg_args<KB, V> a, const KB *sk, size_t *cuts, ws_seg_slot *slots, int p,
                       unsigned chunk_shift) {
    unsigned long long runs, count;
    if (!ws_seg_pass_start(a, p, &runs, &count)) return;
    const unsigned long long per_run = a.run0 >> chunk_shift;
    const unsigned long long warps = (unsigned long long)gridDim.x * (blockDim.x / 32);
    for (unsigned long long t = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
         t < runs * per_run; t += warps) {
        const ws_seg_slot sl = ws_seg_slot_of(a, count, t, per_run);
        if (p == 0 && (threadIdx.x & 31) == 0) slots[t] = sl; /* the same at every pass */
        if (p >= sl.passes) continue;                         /* the whole warp alike */
        const KB *src = (sl.passes - p) & 1 ? sk : a.keys;
        ws_merge4_cut<KB>(src + sl.begin, ws_seg_pass_shape(sl.len, a.run0, p, chunk_shift),
                          t - sl.first, cuts + 4 * sl.first);
    }
}

/* What a merge block needs of a slot before it can load the slot's items:
 * the slot's segment and its two cuts, copied into shared memory one slot
 * ahead. */
struct __align__(16) ws_seg_slot_ahead {
    ws_seg_slot sl;
    size_t cut[8]; /* cut k, then cut k+1 (ws_segment_of) */
};

/* Starts copying slot t's segment and cuts into `to`: threads 0..5 a
 * 16-byte piece each, asynchronously where the device can (sm_80 on);
 * ws_seg_ahead_wait, then a barrier, makes them visible. Cut k+1 is left
 * out for the pass's last slot, past which the cut array may end. */
__device__ __forceinline__ void ws_seg_ahead(ws_seg_slot_ahead &to, const ws_seg_slot *slots,
                                             const size_t *cuts, unsigned long long t,
                                             unsigned long long total) {
    const int i = (int)threadIdx.x;
    if (i >= 6 || (i >= 4 && t + 1 >= total)) return;
    const void *src = i < 2 ? (const void *)((const char *)&slots[t] + 16 * i)
                            : (const void *)(cuts + 4 * t + 2 * (i - 2));
    void *dst = i < 2 ? (void *)((char *)&to.sl + 16 * i) : (void *)(to.cut + 2 * (i - 2));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#else
    *(uint4 *)dst = *(const uint4 *)src;
#endif
}
__device__ __forceinline__ void ws_seg_ahead_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/* Step 2 of pass p: a block a slot, the segment's last pass decoding the
 * keys into the caller's arrays. A slot's segment and cuts arrive one
 * slot ahead (ws_seg_ahead): found on the spot they were a chain of
 * dependent loads that every warp of the block waited for (bench/NOTES.md,
 * thirty-eighth session). */
template <typename KB, typename V, int THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, ws_min_blocks_fit(THREADS, MIN_BLOCKS))
    ws_seg_merge_kernel(ws_seg_args<KB, V> a, KB *sk, V *sv, const size_t *cuts,
                        const ws_seg_slot *slots, int p) {
    constexpr int CHUNK = THREADS * ITEMS / 2;
    static_assert((CHUNK & (CHUNK - 1)) == 0, "a merge tile of a power of two");
    extern __shared__ __align__(16) unsigned char ws_seg_dyn[];
    __shared__ ws_seg_slot_ahead ahead[2];
    unsigned long long runs, count;
    if (!ws_seg_pass_start(a, p, &runs, &count)) return;
    const unsigned chunk_shift = (unsigned)(__ffs(CHUNK) - 1);
    const unsigned long long per_run = a.run0 / CHUNK, total = runs * per_run;
    if (blockIdx.x < total) ws_seg_ahead(ahead[0], slots, cuts, blockIdx.x, total);
    int b = 0;
    for (unsigned long long t = blockIdx.x; t < total; t += gridDim.x, b ^= 1) {
        /* ahead[b] holds slot t; every read of ahead[b ^ 1] and of the
         * merge's shared memory by the last slot is behind this barrier. */
        ws_seg_ahead_wait();
        __syncthreads();
        if (t + gridDim.x < total) ws_seg_ahead(ahead[b ^ 1], slots, cuts, t + gridDim.x, total);
        const ws_seg_slot sl = ahead[b].sl;
        if (p >= sl.passes) continue; /* the whole block alike */
        const bool from_scratch = (sl.passes - p) & 1;
        const KB *srck = from_scratch ? sk : a.keys;
        const V *srcv = from_scratch ? sv : a.vals;
        KB *dstk = from_scratch ? a.keys : sk;
        V *dstv = from_scratch ? a.vals : sv;
        ws_merge4_segment<KB, V, THREADS, ITEMS>(
            srck + sl.begin, srcv + sl.begin, dstk + sl.begin, dstv + sl.begin, ahead[b].cut,
            ws_seg_pass_shape(sl.len, a.run0, p, chunk_shift), p == sl.passes - 1, a.codec,
            (size_t)(t - sl.first), ws_seg_dyn);
    }
    ws_seg_ahead_wait(); /* no copy outlives the block */
}

/*=== host side ===*/

/* Leaf rows whose plan sorts them one by one (not in groups of one sample
 * sort: ws_plan_rows) and of at most WS_SEG_LEAF_SIDE_ROW items are sorted up to
 * WS_SIDE_STREAMS + 1 at once (ws_seg_leaf_ways), each on its own stream
 * with its own copy of the leaf's workspace: one such row's launches and
 * their partly idle last waves leave the device idle in part, which
 * another row's kernels fill (bench/NOTES.md, thirty-fifth session).
 * Longer rows fill it alone, and their workspace is large. */
#define WS_SEG_LEAF_SIDE_ROW ((size_t)1 << 23)

/* Long rows in one sample sort (ws_plan_rows) go in groups of at most
 * WS_SEG_LEAF_GROUP items, one after another: a group's workspace is a
 * flat sort's of its items, so a call of any number of long rows needs no
 * more than four rows of WS_SEG_LEAF_SIDE_ROW side by side always did. */
#define WS_SEG_LEAF_GROUP ((size_t)(WS_SIDE_STREAMS + 1) * WS_SEG_LEAF_SIDE_ROW)

/* Rows of len items a group of such a call of num_segments rows. */
static inline size_t ws_seg_leaf_group(size_t len, size_t num_segments) {
    const size_t g = len < WS_SEG_LEAF_GROUP ? WS_SEG_LEAF_GROUP / len : 1;
    return g < num_segments ? g : num_segments;
}

/* Leaf calls of such a call queued at once (1 or more; the workspace holds
 * as many leaf workspaces). */
static inline size_t ws_seg_leaf_ways(size_t n, size_t num_segments) {
    if (n / num_segments > WS_SEG_LEAF_SIDE_ROW) return 1;
    return num_segments < WS_SIDE_STREAMS + 1 ? num_segments : WS_SIDE_STREAMS + 1;
}

/* One leaf workspace of such a call: its copies lie this far apart. */
static inline size_t ws_seg_leaf_stride(const ws_plan_t *leaf) {
    return ws_align256(leaf->lay.total);
}

/* Key and value widths that may take the full shape (segmented.h): those
 * whose 1024 x 16 block sort (class 12 and the first runs of long
 * segments) compiles within the 64 registers a thread of 1024 may have
 * without spilling: keys alone, 4- or 8-byte, and 4-byte keys with 4-byte
 * values (two words an item in either network: keys and values, or the
 * second sort's keys and positions, warpsort/segment_sort.cuh). Mixed
 * widths hold three words an item in the keys-and-values network and
 * spill there; 8-byte pairs hold four and also need 278 KB, more than any
 * family gives a block. Those keep the wide or narrow shape, and only the
 * widths here instantiate the 1024 x 16 kernels. */
template <typename KB, typename V>
__host__ __device__ constexpr bool ws_seg_full_width() {
    return !warpsort::is_value<V>::value || (sizeof(KB) == 4 && sizeof(V) == 4);
}

/* The family whose merge row a shape's long-segment passes take: the
 * leaf's sm_90 row for the full and wide shapes, the compact one
 * (ws_policy) for the narrow shape, whose devices give a block less shared
 * memory. The kernels' blocks and the workspace's cut slots
 * (ws_seg_per_run) both follow it. */
__host__ __device__ constexpr int ws_seg_merge_family(bool narrow) {
    return narrow ? WS_FAMILY_SM75 : WS_FAMILY_SM90;
}
template <typename KB, typename V>
__host__ __device__ constexpr ws_shape ws_seg_merge_row(bool narrow) {
    return ws_policy((int)sizeof(KB), warpsort::is_value<V>::value ? (int)sizeof(V) : 0,
                     ws_seg_merge_family(narrow));
}

/* Widths that take the cluster shape: 4-byte keys, alone or with 4-byte
 * values, whose pair's merge holds the other block's keys in the idle
 * counters (cluster_merge.cuh), where their 1024 x 16 radix block fits
 * sm_90's shared memory. */
template <typename KB, typename V>
__host__ __device__ constexpr bool ws_seg_cluster_fits() {
    return sizeof(KB) == 4 && (!warpsort::is_value<V>::value || sizeof(V) == 4) &&
           sizeof(ws_seg_rx_smem<KB, V, 1024>) <= ws_family_of(WS_FAMILY_SM90).smem_block;
}

/* First runs of long segments: the largest block class's length (the
 * cluster shape's long segments start as the full shape's). */
static inline unsigned ws_seg_run0(int nclasses) {
    return 4u << ((nclasses < WS_SEG_CLASSES ? nclasses : WS_SEG_CLASSES) - 1);
}

/* What one call launches, decided on the host from n and the segments. */
struct ws_seg_launch {
    ws_seg_layout lay;
    int leaf_rows; /* rows sorted by the leaf, with this plan (leaf.rows rows a sort) */
    ws_plan_t leaf;
    ws_plan_t leaf_rest; /* the last group's, of fewer rows (ws_seg_leaf_groups_run) */
    int class_used[WS_SEG_MAX_CLASSES]; /* 0: no segment can fall in this class */
    int long_used;
    int direct;     /* equal rows of a short class (or none to sort): no classify pass */
    int nclasses;   /* the call's shape: WS_SEG_CLUSTER_, _CLASSES, _WIDE_ or _NARROW_CLASSES */
    int max_passes; /* merge passes launched (bound) */
    unsigned long long run_bound; /* runs of long segments, at most */
    int radix;                    /* classes 10 .. 13 by radix blocks (ws_seg_radix_ok) */
    int pdl;                      /* the long segments' passes as dependent launches (pdl.cuh) */
};

/* Blocks for `work` items of `per_block` each, at most `per_sm` an SM
 * (and at most a grid's 2^31 - 1: the kernels stride over the rest). */
static inline unsigned ws_seg_grid(unsigned long long work, unsigned per_block, int sm_count,
                                   unsigned per_sm) {
    unsigned long long g = (work + per_block - 1) / per_block;
    const unsigned long long cap = (unsigned long long)sm_count * per_sm;
    if (g > cap) g = cap;
    if (g > 0x7FFFFFFFull) g = 0x7FFFFFFFull;
    return g ? (unsigned)g : 1u;
}

/* Blocks an SM of a block class's grid (ws_seg_launch_block): for
 * offsets at most per_sm, one wave whose blocks stride over the class's
 * list, as the host sizes grids from the list's bound and not its count
 * (a grid of the bound spends its time on empty blocks); for equal rows
 * (L.direct, the count is the rows) a block a row, so each row starts as
 * a block retires instead of after its resident block's last row, which
 * measured faster (bench/NOTES.md, fiftieth session). */
static inline unsigned ws_seg_block_per_sm(const ws_seg_launch &L, unsigned per_sm) {
    return L.direct ? 0xFFFFFFFFu : per_sm;
}

/* The kernels by KIND (ws_kind_codec): `of<KIND>()` is the instance. */
template <int WIDTH, int K, typename KB, typename V>
struct ws_seg_warp_kernels {
    template <int KIND>
    static auto of() {
        return ws_seg_warp_kernel<WIDTH, K, KB, V, KIND>;
    }
};
template <int THREADS, int K, typename KB, typename V>
struct ws_seg_block_kernels {
    template <int KIND>
    static auto of() {
        return ws_seg_block_kernel<THREADS, K, KB, V, KIND>;
    }
};

/* The instance of F's kernel (F::of<KIND>) a call takes: its keys'
 * kind's. */
template <typename F, typename KB, typename V>
static auto ws_seg_by_kind(const ws_seg_args<KB, V> &a) {
    return a.codec.kind == 0   ? F::template of<0>()
           : a.codec.kind == 1 ? F::template of<1>()
                               : F::template of<2>();
}

template <int WIDTH, int K, typename KB, typename V>
static void ws_seg_launch_warp(const ws_seg_args<KB, V> &a, int c, unsigned cap, int sms,
                               cudaStream_t stream) {
    auto kernel = ws_seg_by_kind<ws_seg_warp_kernels<WIDTH, K, KB, V>>(a);
    kernel<<<ws_seg_grid(cap, 8 * (32 / WIDTH), sms, 8), 256, 0, stream>>>(a, c);
}

/* The group of a warp class: lanes a segment and items a lane. */
struct ws_seg_warp_shape {
    int width, k;
};
/* Warp class c's shape (c = 0 .. 6; class 7 is in ws_seg_launch_class).
 * Fewer lanes with more items each trade shuffle stages of the network
 * for compare-exchanges inside a lane. The short classes are bound by the
 * instructions they issue, not by memory, so from 9 items on (17 for
 * 8-byte keys alone) narrower groups run faster although their registers
 * leave fewer warps an SM. 4-byte keys with 8-byte values keep the wide
 * groups (narrower ones ran slower: three words an item), and so do
 * 8-byte keys with values (bench/NOTES.md, thirty-sixth session). */
template <typename KB, typename V>
__host__ __device__ constexpr ws_seg_warp_shape ws_seg_warp_shape_of(int c) {
    constexpr bool vals = warpsort::is_value<V>::value;
    if (sizeof(KB) == 4 && (!vals || sizeof(V) == 4)) { /* 4-byte keys, 4-byte values or none */
        constexpr ws_seg_warp_shape narrow[7] = {
            {1, 4}, {2, 4}, {2, 8}, {4, 8}, {4, 16}, {8, 16}, {vals ? 32 : 16, vals ? 8 : 16}};
        return narrow[c];
    }
    if (!vals) { /* 8-byte keys alone */
        constexpr ws_seg_warp_shape wide[7] = {{1, 4}, {2, 4},  {4, 4}, {4, 8},
                                               {8, 8}, {16, 8}, {32, 8}};
        return wide[c];
    }
    constexpr ws_seg_warp_shape plain[7] = {{1, 4},  {2, 4},  {4, 4}, {8, 4},
                                            {16, 4}, {32, 4}, {32, 8}};
    return plain[c];
}
template <int C, typename KB, typename V>
static void ws_seg_launch_warp_class(const ws_seg_args<KB, V> &a, unsigned cap, int sms,
                                     cudaStream_t stream) {
    constexpr ws_seg_warp_shape s = ws_seg_warp_shape_of<KB, V>(C);
    static_assert(s.width * s.k == 4 << C, "the group holds the class's longest segment");
    ws_seg_launch_warp<s.width, s.k>(a, C, cap, sms, stream);
}

/* Lets kernel launch with `bytes` of dynamic shared memory: its attribute
 * is set when they pass the 48 KiB any launch may take. */
template <typename F>
static cudaError_t ws_seg_dyn_smem(F kernel, size_t bytes) {
    if (bytes <= 48 * 1024) return cudaSuccess;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

/* Class c's block kernel of THREADS x K items, at most per_sm blocks an SM
 * (ws_seg_block_per_sm). */
template <int THREADS, int K, typename KB, typename V>
static cudaError_t ws_seg_launch_block(const ws_seg_args<KB, V> &a, int c, unsigned cap, int sms,
                                       unsigned per_sm, cudaStream_t stream) {
    auto kernel = ws_seg_by_kind<ws_seg_block_kernels<THREADS, K, KB, V>>(a);
    const size_t smem = sizeof(segment_sort_storage<KB, V, THREADS, K>);
    const cudaError_t err = ws_seg_dyn_smem(kernel, smem);
    if (err != cudaSuccess) return err;
    kernel<<<ws_seg_grid(cap, 1, sms, per_sm), THREADS, smem, stream>>>(a, c);
    return cudaGetLastError();
}

/* Whether a radix block of THREADS x WS_RX_ITEMS items of KB keys and V
 * values fits the sm_90 row's shared memory: every width at 4096 and 8192
 * items; at 16384 (class 12) keys alone and 4-byte keys with 4-byte
 * values (both with packed counters). */
template <typename KB, typename V, int THREADS>
__host__ __device__ constexpr bool ws_seg_radix_fits() {
    return sizeof(ws_seg_rx_smem<KB, V, THREADS>) <= ws_family_of(WS_FAMILY_SM90).smem_block;
}

/* A radix kernel of THREADS x WS_RX_ITEMS items (LONG: the long segments'
 * first runs, at most `work` of them; else class c's `work` segments):
 * stable with values when the call is (keys alone need not be: equal keys
 * are the same bits). Float keys alone take the float instance
 * (ws_kind_codec); the others keep the run-time codec: fixed at compile
 * time, unsigned keys ran slower in these blocks (bench/NOTES.md,
 * thirty-fifth session). */
template <int THREADS, bool LONG, typename KB, typename V>
static cudaError_t ws_seg_launch_radix(const ws_seg_args<KB, V> &a, int c, unsigned long long work,
                                       int sms, cudaStream_t stream, KB *sk = nullptr,
                                       V *sv = nullptr) {
    static_assert(ws_seg_radix_fits<KB, V, THREADS>(),
                  "the radix block fits sm_90's shared memory");
    constexpr bool VALS = warpsort::is_value<V>::value;
    constexpr int FLOAT = warpsort::key_traits<float>::kind;
    auto kernel = a.stable && VALS ? ws_seg_radix_kernel<KB, V, VALS, THREADS, -1, LONG>
                                   : ws_seg_radix_kernel<KB, V, false, THREADS, -1, LONG>;
    if constexpr (!VALS)
        if (a.codec.kind == FLOAT) kernel = ws_seg_radix_kernel<KB, V, false, THREADS, FLOAT, LONG>;
    const size_t smem = sizeof(ws_seg_rx_smem<KB, V, THREADS>);
    cudaError_t err = ws_seg_dyn_smem(kernel, smem);
    if (err != cudaSuccess) return err;
    int per_sm = 0;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem);
    if (err != cudaSuccess) return err;
    kernel<<<ws_seg_grid(work, 1, sms, per_sm > 0 ? (unsigned)per_sm : 1u), THREADS, smem,
             stream>>>(a, c, sk, sv);
    return cudaGetLastError();
}

/* Class 13's pair kernel (`work` segments at most): as many pairs as the
 * device holds at once, fewer for fewer segments; the instances of
 * ws_seg_launch_radix. */
template <typename KB, typename V>
static cudaError_t ws_seg_launch_pairs(const ws_seg_args<KB, V> &a, int c, unsigned long long work,
                                       cudaStream_t stream) {
    constexpr bool VALS = warpsort::is_value<V>::value;
    constexpr int FLOAT = warpsort::key_traits<float>::kind;
    auto kernel = a.stable && VALS ? ws_seg_pair_kernel<KB, V, VALS, -1>
                                   : ws_seg_pair_kernel<KB, V, false, -1>;
    if constexpr (!VALS)
        if (a.codec.kind == FLOAT) kernel = ws_seg_pair_kernel<KB, V, false, FLOAT>;
    const size_t smem = sizeof(ws_seg_rx_smem<KB, V, 1024>);
    cudaError_t err = ws_seg_dyn_smem(kernel, smem);
    if (err != cudaSuccess) return err;
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(2);
    cfg.blockDim = dim3(1024);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int pairs = 0;
    err = cudaOccupancyMaxActiveClusters(&pairs, kernel, &cfg);
    if (err != cudaSuccess) return err;
    const unsigned long long g =
        work < (unsigned long long)pairs ? work : (unsigned long long)pairs;
    cfg.gridDim = dim3((unsigned)(g > 0 ? g : 1) * 2);
    return cudaLaunchKernelEx(&cfg, kernel, a, c);
}

/* Long segments: runs of TT x TK sorted by blocks of TT threads (stage 0),
 * then the four-way merge passes in blocks of the shape's merge row
 * (stage 1; ws_seg_merge_row, NARROW: the narrow shape's), each a cuts
 * launch and a merge launch. */
template <int TT, int TK, bool NARROW, typename KB, typename V>
static cudaError_t ws_seg_long(const ws_seg_launch &L, const ws_seg_args<KB, V> &a,
                               unsigned char *ws, int sms, cudaStream_t stream, int stage) {
    constexpr ws_shape M = ws_seg_merge_row<KB, V>(NARROW);
    constexpr int CHUNK = M.merge_threads * M.merge_items / 2;
    static_assert((TT * TK) % CHUNK == 0, "the cut chunk divides the first runs");
    KB *sk = (KB *)(ws + L.lay.scratch_keys);
    V *sv = (V *)(ws + L.lay.scratch_vals);
    if (stage == 0) {
        constexpr int RT = TT * TK / WS_RX_ITEMS; /* a radix block's threads for the run */
        if constexpr (RT >= 256 && RT * WS_RX_ITEMS == TT * TK && ws_seg_radix_fits<KB, V, RT>())
            if (L.radix)
                return ws_seg_launch_radix<RT, true>(a, 0, L.run_bound, sms, stream, sk, sv);
        auto tile = ws_seg_long_tile_kernel<TT, TK, KB, V>;
        const size_t smem = sizeof(segment_sort_storage<KB, V, TT, TK>);
        const cudaError_t err = ws_seg_dyn_smem(tile, smem);
        if (err != cudaSuccess) return err;
        tile<<<ws_seg_grid(L.run_bound, 1, sms, 2048 / TT), TT, smem, stream>>>(a, sk, sv);
        return cudaGetLastError();
    }
    size_t *cuts = (size_t *)(ws + L.lay.cuts);
    ws_seg_slot *segs = (ws_seg_slot *)(ws + L.lay.slots);
    auto merge = ws_seg_merge_kernel<KB, V, M.merge_threads, M.merge_items, M.merge_min_blocks>;
    const size_t msmem = ws_merge_smem_bytes<KB, V, M.merge_threads, M.merge_items>();
    cudaError_t err = ws_seg_dyn_smem(merge, msmem);
    const unsigned long long slots = L.run_bound * (unsigned long long)((TT * TK) / CHUNK);
    const unsigned cut_grid = ws_seg_grid(slots, 8, sms, 8); /* a warp a slot */
    const unsigned grid = ws_seg_grid(slots, 1, sms, (unsigned)M.merge_min_blocks);
    const unsigned chunk_shift = (unsigned)__builtin_ctz((unsigned)CHUNK);
    /* Every pass a dependent launch after the runs (ws_seg_pass_start),
     * so the empty ones the bound launches cost the chain less than
     * ordinary launches (bench/NOTES.md, fiftieth session). The runs'
     * launch, the stream's first after the fork, is an ordinary one. */
    for (int p = 0; p < L.max_passes && err == cudaSuccess; p++) {
        err = ws_launch(ws_seg_cuts_kernel<KB, V>, cut_grid, 256, 0, stream, L.pdl, a,
                        (const KB *)sk, cuts, segs, p, chunk_shift);
        if (err == cudaSuccess)
            err = ws_launch(merge, grid, (unsigned)M.merge_threads, msmem, stream, L.pdl, a, sk, sv,
                            (const size_t *)cuts, (const ws_seg_slot *)segs, p);
    }
    return err;
}

/* Stage 0 or 1 of the long segments in the call's shape (only widths that
 * may take the full shape instantiate it). */
template <typename KB, typename V>
static cudaError_t ws_seg_long_stage(const ws_seg_launch &L, const ws_seg_args<KB, V> &a,
                                     unsigned char *ws, int sms, cudaStream_t stream, int stage) {
    if constexpr (ws_seg_full_width<KB, V>())
        if (L.nclasses >= WS_SEG_CLASSES)
            return ws_seg_long<1024, 16, false>(L, a, ws, sms, stream, stage);
    return L.nclasses == WS_SEG_WIDE_CLASSES
               ? ws_seg_long<1024, 8, false>(L, a, ws, sms, stream, stage)
               : ws_seg_long<256, 8, true>(L, a, ws, sms, stream, stage);
}

static_assert(WS_SIDE_STREAMS == 3, "the class-to-stream map below names four streams");

/* Queues class c's kernel (nclasses: the long segments' tile sort) on its
 * stream: s[1] block classes 12, 10 and 8, s[2] 13, 11 and 9, s[3] the
 * long segments, and the warp classes dealt over s[0 .. 2] from class 7 down
 * (7, 4 and 1 on s[0], 6, 3 and 0 on s[1], 5 and 2 on s[2]), so that short
 * lengths, whose classes are all warp classes, run three at once. */
template <typename KB, typename V>
static cudaError_t ws_seg_launch_class(const ws_seg_launch &L, const ws_seg_args<KB, V> &a,
                                       unsigned char *ws, int sms,
                                       const cudaStream_t (&s)[WS_SIDE_STREAMS + 1], int c) {
    const unsigned *cap = L.lay.cap;
    if (c == L.nclasses)
        return L.long_used ? ws_seg_long_stage(L, a, ws, sms, s[3], 0) : cudaSuccess;
    if (!L.class_used[c]) return cudaSuccess;
    const cudaStream_t w = c <= 7 ? s[(7 - c) % 3] : s[0];
    switch (c) {
    case 0: ws_seg_launch_warp_class<0>(a, cap[0], sms, w); break;
    case 1: ws_seg_launch_warp_class<1>(a, cap[1], sms, w); break;
    case 2: ws_seg_launch_warp_class<2>(a, cap[2], sms, w); break;
    case 3: ws_seg_launch_warp_class<3>(a, cap[3], sms, w); break;
    case 4: ws_seg_launch_warp_class<4>(a, cap[4], sms, w); break;
    case 5: ws_seg_launch_warp_class<5>(a, cap[5], sms, w); break;
    case 6: ws_seg_launch_warp_class<6>(a, cap[6], sms, w); break;
    case 7:
        /* With values: two warps of 256 and one merge round, not one warp
         * of 32 x 16 keys and values (80 registers; as the small path). */
        if constexpr (warpsort::is_value<V>::value)
            return ws_seg_launch_block<64, 8>(a, 7, cap[7], sms, ws_seg_block_per_sm(L, 32), w);
        else
            ws_seg_launch_warp<32, 16>(a, 7, cap[7], sms, w);
        break;
    case 8: return ws_seg_launch_block<128, 8>(a, 8, cap[8], sms, ws_seg_block_per_sm(L, 16), s[1]);
    case 9: return ws_seg_launch_block<256, 8>(a, 9, cap[9], sms, ws_seg_block_per_sm(L, 8), s[2]);
    case 10:
        if (L.radix) return ws_seg_launch_radix<256, false>(a, 10, cap[10], sms, s[1]);
        return ws_seg_launch_block<512, 8>(a, 10, cap[10], sms, ws_seg_block_per_sm(L, 4), s[1]);
    case 11:
        if (L.radix) return ws_seg_launch_radix<512, false>(a, 11, cap[11], sms, s[2]);
        return ws_seg_launch_block<1024, 8>(a, 11, cap[11], sms, ws_seg_block_per_sm(L, 2), s[2]);
    case 12:
        /* The full shape: only widths that may take it instantiate it. */
        if constexpr (ws_seg_radix_fits<KB, V, 1024>())
            if (L.radix) return ws_seg_launch_radix<1024, false>(a, 12, cap[12], sms, s[1]);
        if constexpr (ws_seg_full_width<KB, V>())
            return ws_seg_launch_block<1024, 16>(a, 12, cap[12], sms, ws_seg_block_per_sm(L, 1),
                                                 s[1]);
        break;
    case 13:
        /* The cluster shape: only widths that may take it instantiate it. */
        if constexpr (ws_seg_cluster_fits<KB, V>())
            return ws_seg_launch_pairs(a, 13, cap[13], s[2]);
        break;
    default: break;
    }
    return cudaSuccess;
}

/* Queues the sorts of every class (all on one stream when the call did not
 * fork: side_streams.h); the verdict gates each kernel. Every launch
 * costs the host time and a stream's work cannot start before its launch,
 * so the order matters, and the host knows only the mean length m = n /
 * segments: first the class of length 2m (for lengths spread evenly from
 * 1, the one that holds most of the items: uniform 1..2048, class 9 three
 * quarters of them), then the shorter classes longest first, then the
 * longer ones, the long segments' passes last. */
template <typename KB, typename V>
static cudaError_t
ws_seg_sorts(const ws_seg_launch &L, const ws_seg_args<KB, V> &a, unsigned char *ws, int sms,
             const cudaStream_t (&s)[WS_SIDE_STREAMS + 1], unsigned long long mean) {
    const int first = ws_seg_class_of(2 * mean > 2 ? 2 * mean : 2, 0, L.nclasses);
    cudaError_t err = cudaSuccess;
    for (int c = first; c >= 0 && err == cudaSuccess; c--)
        err = ws_seg_launch_class(L, a, ws, sms, s, c);
    for (int c = first + 1; c <= L.nclasses && err == cudaSuccess; c++)
        err = ws_seg_launch_class(L, a, ws, sms, s, c);
    if (L.long_used && err == cudaSuccess) err = ws_seg_long_stage(L, a, ws, sms, s[3], 1);
    if (err != cudaSuccess) return err;
    return cudaGetLastError();
}

/* The streams a forked call queues on (side_streams.h): the side streams,
 * then the call's own, st->stream, last. */
static void ws_seg_streams(const ws_cuda_state *st, cudaStream_t (&s)[WS_SIDE_STREAMS + 1]) {
    for (int i = 0; i < WS_SIDE_STREAMS; i++) s[i] = st->side[i];
    s[WS_SIDE_STREAMS] = st->stream;
}

/* Long rows (ws_seg_leaf_rows) in groups of L.leaf.rows rows (the last
 * group L.leaf_rest's), each group one sample sort whose level 0 cuts
 * each row (ws_plan_rows), one after another on the call's stream; an
 * argsort first writes each row's positions as its values, and sorts
 * stably so equal keys keep them in order. */
template <typename KB, typename V>
static cudaError_t ws_seg_leaf_groups_run(warpsort_context_t *ctx, const ws_seg_call_t *c,
                                          const ws_seg_launch &L, unsigned char *ws, KB *keys,
                                          V *vals, const char **failed) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t len = c->row_len;
    const int stable = c->argsort || (c->flags & WARPSORT_STABLE) != 0;
    const int desc = (c->flags & WARPSORT_DESCENDING) != 0;
    cudaError_t err = cudaSuccess;
    for (size_t g = 0; g < c->num_segments && err == cudaSuccess;) {
        const bool whole = c->num_segments - g >= L.leaf.rows;
        const ws_plan_t &p = whole ? L.leaf : L.leaf_rest; /* p.rows rows a sort */
        const size_t rows = whole ? L.leaf.rows : c->num_segments - g;
        if constexpr (warpsort::is_value<V>::value) {
            for (size_t r = g; r < g + rows && err == cudaSuccess && c->argsort; r++) {
                err = ws_iota(vals + r * len, len, 0, sizeof(V), st->dev.sm_count, st->stream);
                *failed = "segment positions (iota)";
            }
        }
        for (size_t r = g; r < g + rows && err == cudaSuccess; r += p.rows) {
            V *v = nullptr;
            if constexpr (warpsort::is_value<V>::value) v = vals + r * len;
            err = ws_device_sort(&p, keys + r * len, v, c->dtype, desc, stable, ws + L.lay.leaf,
                                 st->stream, failed);
        }
        g += rows;
    }
    return err;
}

/* Long rows (ws_seg_leaf_rows): in groups of one sample sort each where
 * the plan says so (ws_seg_leaf_groups_run), else each row by the leaf,
 * row r on stream r % ways of ws_seg_streams with leaf workspace r % ways
 * (ws_seg_leaf_ways; in order on the call's stream with the first
 * workspace when it does not fork: side_streams.h); an argsort first
 * writes the row's positions as its values, and sorts stably so equal
 * keys keep them in order. */
template <typename KB, typename V>
static warpsort_status_t ws_seg_leaf_rows_run(warpsort_context_t *ctx, const ws_seg_call_t *c,
                                              const ws_seg_launch &L, unsigned char *ws, KB *keys,
                                              V *vals) {
    ws_cuda_state *st = ws_state(ctx);
    const size_t len = c->row_len;
    const int stable = c->argsort || (c->flags & WARPSORT_STABLE) != 0;
    const int desc = (c->flags & WARPSORT_DESCENDING) != 0;
    const char *failed = NULL;
    if (L.leaf.rows > 1) {
        const cudaError_t err = ws_seg_leaf_groups_run(ctx, c, L, ws, keys, vals, &failed);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
        return WARPSORT_OK;
    }
    const size_t ways = ws_seg_leaf_ways(c->n, c->num_segments);
    const size_t stride = ws_seg_leaf_stride(&L.leaf);
    cudaError_t err = cudaSuccess;
    const int forked = ways > 1 && ws_fork(st, ctx->hooks.one_stream, &err);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "forking the side streams");
    cudaStream_t streams[WS_SIDE_STREAMS + 1];
    ws_seg_streams(st, streams);
    /* Rows sorted side by side launch the leaf's kernels as ordinary ones:
     * a dependent launch's blocks wait on the SMs for the kernel before
     * them, holding room the other rows' kernels would fill (pairs of 4
     * rows of 2^22 ran 4-11 % slower so: bench/NOTES.md, forty-fourth
     * session). */
    ws_plan_t leaf = L.leaf;
    if (forked) leaf.pdl = 0;
    for (size_t r = 0; r < c->num_segments && err == cudaSuccess; r++) {
        const size_t way = forked ? r % ways : 0; /* its workspace */
        const cudaStream_t on = forked ? streams[way] : st->stream;
        V *v = nullptr;
        if constexpr (warpsort::is_value<V>::value) v = vals + r * len;
        if (c->argsort) {
            err = ws_iota(v, len, 0, sizeof(V), st->dev.sm_count, on);
            failed = "segment positions (iota)";
            if (err != cudaSuccess) break;
        }
        err = ws_device_sort(&leaf, keys + r * len, v, c->dtype, desc, stable,
                             ws + L.lay.leaf + way * stride, on, &failed);
    }
    if (forked) {
        const cudaError_t joined = ws_join(st);
        if (err == cudaSuccess && joined != cudaSuccess) {
            err = joined;
            failed = "joining the side streams";
        }
    }
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, failed);
    return WARPSORT_OK;
}

/* The whole device part of a call on device-resident keys / values /
 * offsets (offsets NULL: rows): header reset, classify, sorts. With
 * `verdict_out` the verdict is read back (a wait) before the sorts. */
template <typename KB, typename V>
static warpsort_status_t ws_seg_run(warpsort_context_t *ctx, const ws_seg_call_t *c,
                                    const ws_seg_launch &L, unsigned char *ws, KB *keys, V *vals,
                                    const uint64_t *offsets, unsigned long long *verdict_out) {
    ws_cuda_state *st = ws_state(ctx);
    cudaStream_t stream = st->stream;
    ws_seg_header *h = (ws_seg_header *)(ws + L.lay.header);
    ws_seg_args<KB, V> a;
    a.keys = keys;
    a.vals = vals;
    a.iota = c->argsort;
    a.stable = c->argsort || (c->flags & WARPSORT_STABLE) != 0;
    a.direct = L.direct;
    a.nclasses = L.nclasses;
    a.run0 = ws_seg_run0(L.nclasses);
    a.codec = key_codec{ws_dtype_kind(c->dtype), (c->flags & WARPSORT_DESCENDING) ? 1 : 0};
    a.view = ws_seg_view{offsets, c->row_len, c->n, c->num_segments};
    a.header = h;
    for (int k = 0; k < WS_SEG_MAX_CLASSES; k++) {
        a.lists.list[k] = (unsigned *)(ws + L.lay.list[k]);
        a.lists.cap[k] = L.lay.cap[k];
    }
    a.lists.long_seg = (unsigned *)(ws + L.lay.long_seg);
    a.lists.long_base = (unsigned long long *)(ws + L.lay.long_base);
    a.lists.long_cap = L.lay.long_cap;

    if (L.leaf_rows) return ws_seg_leaf_rows_run(ctx, c, L, ws, keys, vals);
    cudaError_t err;
    cudaStream_t one[WS_SIDE_STREAMS + 1]; /* every class on the call's stream */
    for (cudaStream_t &o : one) o = stream;
    const unsigned long long mean = c->num_segments ? c->n / c->num_segments : 0;
    if (L.direct) { /* rows: nothing to check, every row in one known class */
        err = ws_seg_sorts<KB, V>(L, a, ws, st->dev.sm_count, one, mean);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "segmented sort kernels");
        return WARPSORT_OK;
    }
    err = cudaMemsetAsync(h, 0, sizeof *h, stream);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaMemsetAsync(segment header)");
    const unsigned grid =
        ws_seg_grid((unsigned long long)c->num_segments + 1, 256, st->dev.sm_count, 32);
    err = ws_seg_classify(a.view, h, a.lists, c->argsort, a.nclasses, a.run0, grid, stream);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "segment classify kernel");
    if (verdict_out) {
        err = cudaMemcpyAsync(verdict_out, &h->verdict, sizeof *verdict_out, cudaMemcpyDeviceToHost,
                              stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "reading the offsets verdict");
        if (*verdict_out) return WARPSORT_OK; /* bad offsets: the caller reports them */
    }
    /* the classes and the long segments beside each other (side_streams.h) */
    const int forked = ws_fork(st, ctx->hooks.one_stream, &err);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "forking the side streams");
    cudaStream_t sides[WS_SIDE_STREAMS + 1];
    ws_seg_streams(st, sides);
    err = ws_seg_sorts<KB, V>(L, a, ws, st->dev.sm_count, forked ? sides : one, mean);
    if (forked) {
        const cudaError_t joined = ws_join(st);
        if (err == cudaSuccess) err = joined;
    }
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "segmented sort kernels");
    return WARPSORT_OK;
}

/* Defines NAME, the sorts of one call on KB keys and V values
 * (ws_seg_run), for segmented.cu's dispatch (ws_seg_sorts_of). */
#define WS_SEG_INSTANCE(NAME, KB, V)                                                          \
    warpsort_status_t NAME(warpsort_context_t *ctx, const ws_seg_call_t *c,                   \
                           const ws_seg_launch &L, unsigned char *ws, void *keys, void *vals, \
                           const uint64_t *offsets, unsigned long long *verdict_out) {        \
        return ws_seg_run<KB, V>(ctx, c, L, ws, (KB *)keys, (V *)vals, offsets, verdict_out); \
    }

/* The six instances, one a translation unit (segmented/k4.cu .. k8_v8.cu). */
typedef warpsort_status_t ws_seg_sorts_fn(warpsort_context_t *ctx, const ws_seg_call_t *c,
                                          const ws_seg_launch &L, unsigned char *ws, void *keys,
                                          void *vals, const uint64_t *offsets,
                                          unsigned long long *verdict_out);
ws_seg_sorts_fn ws_seg_sorts_k4, ws_seg_sorts_k4_v4, ws_seg_sorts_k4_v8;
ws_seg_sorts_fn ws_seg_sorts_k8, ws_seg_sorts_k8_v4, ws_seg_sorts_k8_v8;

#endif /* WARPSORT_CUDA_SEGMENTED_SORTS_CUH */
