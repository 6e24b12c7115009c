/*
 * segmented.cu - the CUDA backend's batched rows and segments: validate and
 * classify on the device, then one kernel per length class (segmented.h).
 *
 * A call on device memory queues, on the context's stream: a memset of the
 * workspace header, the classify kernel, then, on side streams forked from
 * it and joined back (side_streams.h), the class kernels that can have
 * work (from n and the number of segments; for rows, the one class of the
 * row length) beside the long-segment tile sort and merge passes: each has
 * a partly idle last wave, and most have nothing to do. Equal rows of
 * a short class launch only that class's kernel (row e is its entry e: no
 * memset, no classify); rows of 2^21 items or more skip all of that and go
 * to the leaf: in groups of one sample sort each where it takes them
 * (ws_plan_rows), else one by one. Values travel with their keys without positions
 * unless a segment needs them (warpsort/segment_sort.cuh); a call is
 * stable when it asks (WARPSORT_STABLE) or is an argsort. Nothing waits
 * for the device, except that with device offsets and no caller workspace
 * the call reads the 8-byte verdict back before queuing the sorts, so it
 * can return INVALID_ARGUMENT itself. Keys are sorted as raw bits under a
 * codec: one instantiation per key width and value width, and per kind
 * (unsigned, signed, float) where that ran faster (ws_kind_codec).
 *
 * This file checks, plans, sizes and stages a call, and classifies its
 * segments; the sorts it then queues are segmented_sorts.cuh's, stamped
 * out once for each key and value width in segmented/ (ws_seg_sorts_of).
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "segmented_sorts.cuh"

/*=== device side: the one kernel that does not depend on the widths ===*/

/* Checks offsets[i] (device offsets only) and appends segment i to its
 * class's list; a warp appends each class with one atomic. Offsets are
 * read once each by two threads; the first bad index wins by atomicMax of
 * its complement. A list that would overflow its capacity can only come
 * from bad offsets, which the verdict already records: such entries are
 * dropped, never written past the list. */
__global__ void __launch_bounds__(256)
    ws_seg_classify_kernel(ws_seg_view v, ws_seg_header *h, ws_seg_lists lists, int argsort,
                           int nclasses, unsigned run0) {
    const int lane = (int)(threadIdx.x & 31);
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long S = v.num_segments;
    for (unsigned long long base =
             (unsigned long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
         base <= S; base += stride) {
        const unsigned long long i = base + (unsigned long long)lane;
        unsigned long long len = 0;
        int cls = -1;
        if (i <= S) {
            if (v.offsets) {
                const unsigned long long oi = v.offsets[i];
                bool bad = i == 0 ? oi != 0 : oi < v.offsets[i - 1];
                if (i == S && oi != v.n) bad = true;
                if (bad) atomicMax(&h->verdict, ~i);
                if (i < S) {
                    const unsigned long long next = v.offsets[i + 1];
                    len = next > oi ? next - oi : 0;
                }
            } else if (i < S) {
                len = v.row_len;
            }
            if (i < S) cls = ws_seg_class_of(len, argsort, nclasses);
        }
        /* the lanes of each class together: their leaders' atomics issue
         * at once, one wait for the warp however many classes it holds */
        const bool listed = cls >= 0 && cls < nclasses;
        const unsigned peers = __match_any_sync(0xFFFFFFFFu, listed ? cls : -1);
        const int leader = __ffs((int)peers) - 1;
        unsigned first = 0;
        if (listed && lane == leader) first = atomicAdd(&h->counts[cls], (unsigned)__popc(peers));
        first = __shfl_sync(0xFFFFFFFFu, first, leader);
        if (listed) {
            const unsigned r = first + (unsigned)__popc(peers & ((1u << lane) - 1u));
            if (r < lists.cap[cls]) lists.list[cls][r] = (unsigned)i;
        }
        if (cls == nclasses) {
            const unsigned long long runs = (len + run0 - 1) / run0;
            const unsigned long long old =
                atomicAdd(&h->long_packed, (1ull << WS_SEG_TILE_BITS) + runs);
            const unsigned long long e = old >> WS_SEG_TILE_BITS;
            if (e < lists.long_cap) {
                lists.long_seg[e] = (unsigned)i;
                lists.long_base[e] = old & ((1ull << WS_SEG_TILE_BITS) - 1);
            }
            atomicMax(&h->max_long, len);
        }
    }
}

cudaError_t ws_seg_classify(const ws_seg_view &v, ws_seg_header *h, const ws_seg_lists &lists,
                            int argsort, int nclasses, unsigned run0, unsigned grid,
                            cudaStream_t stream) {
    ws_seg_classify_kernel<<<grid, 256, 0, stream>>>(v, h, lists, argsort, nclasses, run0);
    return cudaGetLastError();
}

/*=== host side ===*/

/* Smallest length of class c (a single item only for argsort). */
static unsigned long long ws_seg_class_min(int c, int argsort) {
    if (c == 0) return argsort ? 1 : 2;
    return (4ull << (c - 1)) + 1;
}

/* Rows of at least WS_SEG_LEAF_ROW items are sorted one after another by
 * the leaf (device_sort.h), each with the whole device: a row that long
 * fills every SM by itself. Shorter rows take the long-segment path, all
 * rows at once: rows of 2^20 one by one pay the leaf's launches and
 * partly idle waves sixteen times over a 2^24 call (bench/NOTES.md,
 * twenty-seventh session). */
#define WS_SEG_LEAF_ROW ((size_t)1 << 21)

/* Whether a call of n items in num_segments rows sorts row by row with the
 * leaf (also asked by the workspace query, which cannot tell rows from
 * offsets: for offsets it only reserves a little more). */
static int ws_seg_leaf_rows(size_t n, size_t num_segments) {
    return num_segments > 0 && n % num_segments == 0 && n / num_segments >= WS_SEG_LEAF_ROW;
}

/* The leaf's plans for such a call (value bytes: the values, or the
 * indices of an argsort): groups of rows in one sample sort each where the
 * sample sort would take a group as one array (ws_seg_leaf_group,
 * ws_plan_rows), else one row's plan; *rest: the last group's where fewer
 * rows are left for it, else the same. */
static ws_plan_t ws_seg_leaf_plan(const warpsort_context_t *ctx, size_t n, size_t num_segments,
                                  size_t kb, size_t vb, ws_plan_t *rest) {
    const ws_device_info *dev = &ws_state(ctx)->dev;
    const size_t len = n / num_segments;
    const ws_plan_t p = ws_plan_rows(dev, ws_seg_leaf_group(len, num_segments), len, kb, vb);
    const size_t left = num_segments % p.rows;
    *rest = left ? ws_plan_rows(dev, left, len, kb, vb) : p;
    return p;
}

/* The leaf workspaces of such a call: one a group (its groups run one
 * after another), or ws_seg_leaf_ways of one row's. */
static size_t ws_seg_leaf_bytes(const ws_plan_t *leaf, const ws_plan_t *rest, size_t n,
                                size_t num_segments) {
    if (leaf->rows > 1) {
        const size_t a = ws_seg_leaf_stride(leaf), b = ws_seg_leaf_stride(rest);
        return a > b ? a : b;
    }
    return ws_seg_leaf_stride(leaf) * ws_seg_leaf_ways(n, num_segments);
}

/* Shared memory of a shape's largest blocks for KB keys and V values: a
 * block class of 1024 x K (also the long runs' sort; K = 16 full, 8 wide)
 * and a merge block of its merge row. */
template <typename KB, typename V, int K>
static size_t ws_seg_shape_smem() {
    constexpr ws_shape M = ws_seg_merge_row<KB, V>(false);
    const size_t a = sizeof(segment_sort_storage<KB, V, 1024, K>);
    const size_t b = ws_merge_smem_bytes<KB, V, M.merge_threads, M.merge_items>();
    return a > b ? a : b;
}
/* Whether the radix blocks may sort on this device (Hopper, the sample
 * kernels' PTX present, no test hook against them). */
static int ws_seg_radix_ok(const ws_cuda_state *st) {
    return st->dev.family == WS_FAMILY_SM90 && st->dev.sample_ok && !st->dev.seg_no_radix;
}
/* Short classes of a call (its shape, segmented.h): the cluster shape
 * where the device sorts by radix blocks (`radix`, ws_seg_radix_ok: an
 * sm_90 family, whose blocks ws_seg_cluster_fits measured against) and
 * the width fits it, else the full shape where the width allows it and
 * the device's blocks hold it, else the wide one where they hold that,
 * else the narrow one. */
template <typename KB, typename V>
static int ws_seg_nclasses_of(size_t smem_block, int radix) {
    if (ws_seg_full_width<KB, V>() && ws_seg_shape_smem<KB, V, 16>() <= smem_block) {
        if (ws_seg_cluster_fits<KB, V>() && radix) return WS_SEG_CLUSTER_CLASSES;
        return WS_SEG_CLASSES;
    }
    return ws_seg_shape_smem<KB, V, 8>() <= smem_block ? WS_SEG_WIDE_CLASSES
                                                       : WS_SEG_NARROW_CLASSES;
}
static int ws_seg_nclasses(const warpsort_context_t *ctx, size_t kb, size_t vb) {
    const ws_cuda_state *st = ws_state(ctx);
    const size_t smem = ws_family_of(st->dev.family).smem_block;
    const int rx = ws_seg_radix_ok(st) && !st->dev.seg_no_cluster;
    if (kb == 4)
        return vb == 0   ? ws_seg_nclasses_of<uint32_t, no_value>(smem, rx)
               : vb == 4 ? ws_seg_nclasses_of<uint32_t, uint32_t>(smem, rx)
                         : ws_seg_nclasses_of<uint32_t, uint64_t>(smem, rx);
    return vb == 0   ? ws_seg_nclasses_of<uint64_t, no_value>(smem, rx)
           : vb == 4 ? ws_seg_nclasses_of<uint64_t, uint32_t>(smem, rx)
                     : ws_seg_nclasses_of<uint64_t, uint64_t>(smem, rx);
}
/* Merge slots per first run of a long segment (ws_seg_merge_kernel): the
 * first run over the cut chunk of the shape's merge row. */
static unsigned long long ws_seg_per_run(size_t kb, size_t vb, int nclasses) {
    const int family = ws_seg_merge_family(nclasses == WS_SEG_NARROW_CLASSES);
    return ws_seg_run0(nclasses) / (unsigned long long)ws_cut_chunk((int)kb, (int)vb, family);
}

/* Lays out the workspace of a call on n items in num_segments segments:
 * list c of the shape's nclasses holds at most min(segments, n / its
 * shortest length) entries, whatever the lengths, so the host sizes it
 * without seeing the offsets (the classes past the shape's get none); the
 * long list likewise from the shape's first runs; leaf_bytes (rows sorted
 * by the leaf) go last. */
static ws_seg_layout ws_seg_layout_for(size_t n, size_t num_segments, size_t kb, size_t vb,
                                       int argsort, int nclasses, size_t leaf_bytes) {
    ws_seg_layout l;
    memset(&l, 0, sizeof l);
    size_t at = ws_align256(sizeof(ws_seg_header));
    for (int c = 0; c < WS_SEG_MAX_CLASSES; c++) {
        unsigned long long cap = c < nclasses ? n / ws_seg_class_min(c, argsort) : 0;
        if (cap > num_segments) cap = num_segments;
        l.cap[c] = (unsigned)cap;
        l.list[c] = at;
        at += ws_align256((size_t)cap * sizeof(unsigned));
    }
    const unsigned long long run0 = ws_seg_run0(nclasses);
    const unsigned long long per_run = ws_seg_per_run(kb, vb, nclasses);
    unsigned long long long_cap = n / (run0 + 1ull);
    if (long_cap > num_segments) long_cap = num_segments;
    l.long_cap = long_cap;
    l.long_seg = at;
    at += ws_align256((size_t)long_cap * sizeof(unsigned));
    l.long_base = at;
    at += ws_align256((size_t)long_cap * sizeof(unsigned long long));
    l.cuts = at;
    if (long_cap) at += ws_align256(4 * sizeof(size_t) * (n / run0 + long_cap + 1) * per_run);
    l.slots = at;
    if (long_cap) at += ws_align256(sizeof(ws_seg_slot) * (n / run0 + long_cap + 1) * per_run);
    l.scratch_keys = at;
    if (long_cap) at += ws_align256(n * kb);
    l.scratch_vals = at;
    if (long_cap) at += ws_align256(n * vb);
    l.keys_copy = at;
    if (argsort) at += ws_align256(n * kb);
    l.leaf = at;
    at += ws_align256(leaf_bytes);
    l.total = at;
    return l;
}

extern "C" warpsort_status_t ws_cuda_segmented_workspace_size(const warpsort_context_t *ctx,
                                                              size_t n, size_t num_segments,
                                                              warpsort_dtype_t dtype,
                                                              size_t value_bytes, unsigned flags,
                                                              size_t *bytes) {
    const int argsort = (flags & WARPSORT_WORKSPACE_ARGSORT) != 0;
    const size_t kb = warpsort_dtype_size(dtype);
    size_t leaf = 0;
    if (ws_seg_leaf_rows(n, num_segments)) {
        ws_plan_t rest;
        const ws_plan_t plan = ws_seg_leaf_plan(ctx, n, num_segments, kb, value_bytes, &rest);
        leaf = ws_seg_leaf_bytes(&plan, &rest, n, num_segments);
    }
    *bytes = ws_seg_layout_for(n, num_segments, kb, value_bytes, argsort,
                               ws_seg_nclasses(ctx, kb, value_bytes), leaf)
                 .total;
    return WARPSORT_OK;
}

static ws_seg_launch ws_seg_plan(const warpsort_context_t *ctx, const ws_seg_call_t *c) {
    const size_t kb = warpsort_dtype_size(c->dtype);
    ws_seg_launch L;
    memset(&L, 0, sizeof L);
    L.leaf_rows = !c->offsets && ws_seg_leaf_rows(c->n, c->num_segments);
    if (L.leaf_rows)
        L.leaf = ws_seg_leaf_plan(ctx, c->n, c->num_segments, kb, c->value_bytes, &L.leaf_rest);
    L.nclasses = ws_seg_nclasses(ctx, kb, c->value_bytes);
    L.radix = ws_seg_radix_ok(ws_state(ctx));
    L.pdl = ws_state(ctx)->dev.pdl;
    L.lay = ws_seg_layout_for(
        c->n, c->num_segments, kb, c->value_bytes, c->argsort, L.nclasses,
        L.leaf_rows ? ws_seg_leaf_bytes(&L.leaf, &L.leaf_rest, c->n, c->num_segments) : 0);
    if (L.leaf_rows) return L; /* no class, no long-segment pass */
    unsigned long long longest = c->n;
    if (!c->offsets) {
        const int cls = ws_seg_class_of(c->row_len, c->argsort, L.nclasses);
        if (cls >= 0 && cls < L.nclasses) L.class_used[cls] = 1;
        L.long_used = cls == L.nclasses;
        L.direct = !L.long_used;
        longest = c->row_len;
    } else {
        for (int k = 0; k < L.nclasses; k++) L.class_used[k] = L.lay.cap[k] > 0;
        L.long_used = L.lay.long_cap > 0;
    }
    if (L.long_used) {
        L.max_passes = ws_seg_passes(longest, ws_seg_run0(L.nclasses));
        L.run_bound = c->n / ws_seg_run0(L.nclasses) + L.lay.long_cap + 1;
    }
    return L;
}

/* The instance for kb-byte keys with vb-byte values (none: 0). */
static ws_seg_sorts_fn *ws_seg_sorts_of(size_t kb, size_t vb) {
    if (kb == 4)
        return vb == 0 ? ws_seg_sorts_k4 : vb == 4 ? ws_seg_sorts_k4_v4 : ws_seg_sorts_k4_v8;
    return vb == 0 ? ws_seg_sorts_k8 : vb == 4 ? ws_seg_sorts_k8_v4 : ws_seg_sorts_k8_v8;
}

/* The error of bad device offsets found at index `bad` (offsets still in
 * device memory: the two entries around it are read back for the text). */
static warpsort_status_t ws_seg_bad_device_offsets(warpsort_context_t *ctx, const ws_seg_call_t *c,
                                                   const uint64_t *offsets,
                                                   unsigned long long bad) {
    uint64_t pair[2] = {0, 0};
    const unsigned long long from = bad ? bad - 1 : 0;
    if (cudaMemcpy(pair, offsets + from, (bad ? 2 : 1) * sizeof(uint64_t),
                   cudaMemcpyDeviceToHost) != cudaSuccess) {
        (void)cudaGetLastError();
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT, "%s: bad offset at index %llu", c->fn, bad);
    }
    /* Same texts as the host check (ws_seg_check_offsets). */
    if (bad == 0) return ws_seg_check_offsets(ctx, pair, 0, c->n, c->fn);
    if (pair[1] < pair[0])
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "%s: bad offset at index %llu: offsets[%llu] = %llu is below "
                        "offsets[%llu] = %llu (offsets must not decrease)",
                        c->fn, bad, bad, (unsigned long long)pair[1], bad - 1,
                        (unsigned long long)pair[0]);
    return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                    "%s: bad offset at index %llu: offsets[%llu] = %llu, must be n = %zu", c->fn,
                    bad, bad, (unsigned long long)pair[1], c->n);
}

/* The longest segment of host offsets (already validated). */
static size_t ws_seg_longest(const uint64_t *offsets, size_t num_segments) {
    size_t m = 0;
    for (size_t s = 0; s < num_segments; s++)
        if ((size_t)(offsets[s + 1] - offsets[s]) > m) m = (size_t)(offsets[s + 1] - offsets[s]);
    return m;
}

/* What this backend takes, and host offsets checked before any work:
 * INVALID_ARGUMENT or UNSUPPORTED with the reason, else OK. */
static warpsort_status_t ws_seg_check_call(warpsort_context_t *ctx, const ws_seg_call_t *c,
                                           int host_offsets) {
    const size_t vb = c->value_bytes;
    if (c->num_segments >= 0xFFFFFFFFull || (unsigned long long)c->n >= (1ull << 35))
        return ws_error(ctx, WARPSORT_UNSUPPORTED,
                        "%s (cuda): at most 2^32 - 2 segments and 2^35 items per call "
                        "(got %zu segments, %zu items)",
                        c->fn, c->num_segments, c->n);
    if (host_offsets) {
        warpsort_status_t s = ws_seg_check_offsets(ctx, c->offsets, c->num_segments, c->n, c->fn);
        if (s != WARPSORT_OK) return s;
        if (c->argsort && vb == 4 &&
            ws_seg_longest(c->offsets, c->num_segments) > 0xFFFFFFFFull + 1)
            return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                            "%s: a segment needs 8-byte indices (index_bytes = 4 holds 2^32)",
                            c->fn);
    } else if (c->offsets && c->argsort && vb == 4 &&
               (unsigned long long)c->n > 0xFFFFFFFFull + 1) {
        return ws_error(ctx, WARPSORT_UNSUPPORTED,
                        "%s (cuda): device offsets over more than 2^32 items need 8-byte indices",
                        c->fn);
    }
    return WARPSORT_OK;
}

static warpsort_status_t ws_seg_on_stream(warpsort_context_t *ctx, const ws_seg_call_t *c) {
    ws_cuda_state *st = ws_state(ctx);
    cudaStream_t stream = st->stream;
    const size_t kb = warpsort_dtype_size(c->dtype), vb = c->value_bytes;
    const int host_offsets = c->offsets && !ws_cuda_device_pointer(c->offsets);
    WS_TRY(ws_seg_check_call(ctx, c, host_offsets));
    const int stage_keys = c->n > 0 && !ws_cuda_device_pointer(c->keys_in);
    const int stage_vals = c->n > 0 && vb && !ws_cuda_device_pointer(c->values);

    const ws_seg_launch L = ws_seg_plan(ctx, c);
    /* Staging after the call's own workspace: keys, values, offsets. */
    const size_t keys_off = L.lay.total;
    const size_t vals_off = keys_off + (stage_keys && !c->argsort ? ws_align256(c->n * kb) : 0);
    const size_t offs_off = vals_off + (stage_vals ? ws_align256(c->n * vb) : 0);
    const size_t ob = c->offsets ? (c->num_segments + 1) * sizeof(uint64_t) : 0;
    const size_t total = offs_off + (host_offsets ? ws_align256(ob) : 0);
    unsigned char *ws = NULL;
    warpsort_status_t s = ws_acquire(ctx, total, &ws);
    if (s != WARPSORT_OK) return s;

    /* Device views of the arrays. Argsort sorts a copy of the keys. */
    void *dkeys = c->argsort   ? (void *)(ws + L.lay.keys_copy)
                  : stage_keys ? (void *)(ws + keys_off)
                               : c->keys;
    void *dvals = !vb ? NULL : stage_vals ? (void *)(ws + vals_off) : c->values;
    const uint64_t *doffs = host_offsets ? (const uint64_t *)(ws + offs_off) : c->offsets;
    if (c->n > 0 && (c->argsort || stage_keys))
        WS_CUDA_TRY_AT(ctx,
                       cudaMemcpyAsync(dkeys, c->keys_in, c->n * kb, cudaMemcpyDefault, stream),
                       "cudaMemcpyAsync(keys)");
    if (stage_vals && !c->argsort)
        WS_CUDA_TRY_AT(ctx, cudaMemcpyAsync(dvals, c->values, c->n * vb, cudaMemcpyDefault, stream),
                       "cudaMemcpyAsync(values)");
    if (host_offsets)
        WS_CUDA_TRY_AT(
            ctx, cudaMemcpyAsync((void *)doffs, c->offsets, ob, cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync(offsets)");

    /* Device offsets are checked on the device; the verdict is read back
     * unless the caller set the workspace (then warpsort_segments_check). */
    const int device_check = c->offsets && !host_offsets;
    const int wait_verdict = device_check && !st->workspace_external;
    unsigned long long verdict = 0;
    s = ws_seg_sorts_of(kb, vb)(ctx, c, L, ws, dkeys, dvals, doffs, wait_verdict ? &verdict : NULL);
    if (s != WARPSORT_OK) return s;
    if (verdict) return ws_seg_bad_device_offsets(ctx, c, c->offsets, ~verdict);
    ctx->seg_verdict = device_check && !wait_verdict ? (const void *)ws : NULL;

    if (!stage_keys && !stage_vals) return WARPSORT_OK; /* asynchronous */
    /* Host arrays: nothing is written to them before the device is done
     * and the offsets are known good. */
    WS_CUDA_TRY_AT(ctx, cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (device_check && !wait_verdict) {
        WS_CUDA_TRY_AT(ctx, cudaMemcpy(&verdict, ws, sizeof verdict, cudaMemcpyDeviceToHost),
                       "reading the offsets verdict");
        ctx->seg_verdict = NULL;
        if (verdict) return ws_seg_bad_device_offsets(ctx, c, c->offsets, ~verdict);
    }
    if (stage_keys && !c->argsort)
        WS_CUDA_TRY_AT(ctx, cudaMemcpyAsync(c->keys, dkeys, c->n * kb, cudaMemcpyDefault, stream),
                       "cudaMemcpyAsync(keys back)");
    if (stage_vals)
        WS_CUDA_TRY_AT(ctx, cudaMemcpyAsync(c->values, dvals, c->n * vb, cudaMemcpyDefault, stream),
                       "cudaMemcpyAsync(values back)");
    WS_CUDA_TRY_AT(ctx, cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return WARPSORT_OK;
}

extern "C" warpsort_status_t ws_cuda_segmented(warpsort_context_t *ctx, const ws_seg_call_t *c) {
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "cudaSetDevice");
    const warpsort_status_t s = ws_seg_on_stream(ctx, c);
    ws_leave_device(&g);
    return s;
}

extern "C" warpsort_status_t ws_cuda_segments_check(warpsort_context_t *ctx) {
    if (!ctx->seg_verdict) return WARPSORT_OK;
    unsigned long long verdict = 0;
    ws_device_guard g;
    cudaError_t err = ws_enter_device(ctx->device, &g);
    if (err == cudaSuccess) err = cudaStreamSynchronize(ws_state(ctx)->stream);
    if (err == cudaSuccess)
        err = cudaMemcpy(&verdict, ctx->seg_verdict, sizeof verdict, cudaMemcpyDeviceToHost);
    ws_leave_device(&g);
    if (err != cudaSuccess) return ws_cuda_fail(ctx, err, "warpsort_segments_check");
    ctx->seg_verdict = NULL;
    if (verdict)
        return ws_error(ctx, WARPSORT_INVALID_ARGUMENT,
                        "warpsort_segments_check: bad offset at index %llu: the last batched "
                        "call's device offsets break offsets[0] = 0, monotone, last = n; it "
                        "wrote nothing",
                        ~verdict);
    return WARPSORT_OK;
}
