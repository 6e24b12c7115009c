/*
 * segmented_cases.h - one batched (rows / segments) case run on any context
 * and memory, judged segment by segment by the independent oracle
 * (tests/common/testkit.h), shared by tests/cpu/test_segmented.c and
 * tests/gpu/test_gpu_segmented.c.
 *
 * Every segment is checked as an array of its own: keys sorted and a
 * bit-exact permutation of the segment's input; pairs: each value (the
 * item's index inside its segment) follows its key, in input order among
 * equal keys when stable; argsort: segment-local indices that order the
 * segment stably. With an oracle context (the CPU backend) the output must
 * also be byte-identical to the oracle's wherever the order is determined.
 */
#ifndef WARPSORT_SEGMENTED_CASES_H
#define WARPSORT_SEGMENTED_CASES_H

#include "testkit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sg_case {
    wt_op_t op; /* SORT, PAIRS or ARGSORT */
    warpsort_dtype_t dtype;
    size_t second_bytes; /* value or index bytes */
    unsigned flags;
    keygen_dist_t dist;
    uint64_t seed;
    /* segments: lengths[0 .. num_segments-1]; rows: row_len > 0, lengths NULL */
    const size_t *lengths;
    size_t num_segments;
    size_t row_len;
} sg_case_t;

static void sg_describe(const sg_case_t *c, char *buf, size_t len) {
    size_t n = 0;
    for (size_t s = 0; c->lengths && s < c->num_segments; s++) n += c->lengths[s];
    if (!c->lengths) n = c->num_segments * c->row_len;
    snprintf(buf, len, "%s %s b%zu%s%s, %zu %s (n=%zu), %s", wt_op_name(c->op),
             warpsort_dtype_name(c->dtype), c->op == WT_OP_SORT ? (size_t)0 : c->second_bytes,
             (c->flags & WARPSORT_DESCENDING) ? " desc" : "",
             (c->flags & WARPSORT_STABLE) ? " stable" : "", c->num_segments,
             c->lengths ? "segments" : "rows", n, keygen_dist_name(c->dist));
}

/* Host offsets of the case: num_segments + 1 entries; sets *n. */
static uint64_t *sg_offsets(const sg_case_t *c, size_t *n) {
    uint64_t *o = malloc((c->num_segments + 1) * sizeof *o);
    if (!o) return NULL;
    o[0] = 0;
    for (size_t s = 0; s < c->num_segments; s++)
        o[s + 1] = o[s] + (c->lengths ? c->lengths[s] : c->row_len);
    *n = (size_t)o[c->num_segments];
    return o;
}

/* Runs the case's call on ctx with device-or-host pointers. */
static warpsort_status_t sg_call(warpsort_context_t *ctx, const sg_case_t *c, void *keys,
                                 void *second, const uint64_t *offsets, size_t n) {
    if (!c->lengths) {
        switch (c->op) {
        case WT_OP_SORT:
            return warpsort_sort_rows(ctx, keys, c->num_segments, c->row_len, c->dtype, c->flags);
        case WT_OP_PAIRS:
            return warpsort_sort_rows_pairs(ctx, keys, second, c->num_segments, c->row_len,
                                            c->dtype, c->second_bytes, c->flags);
        default:
            return warpsort_argsort_rows(ctx, keys, second, c->num_segments, c->row_len, c->dtype,
                                         c->second_bytes, c->flags);
        }
    }
    switch (c->op) {
    case WT_OP_SORT:
        return warpsort_sort_segments(ctx, keys, n, offsets, c->num_segments, c->dtype, c->flags);
    case WT_OP_PAIRS:
        return warpsort_sort_segments_pairs(ctx, keys, second, n, offsets, c->num_segments,
                                            c->dtype, c->second_bytes, c->flags);
    default:
        return warpsort_argsort_segments(ctx, keys, second, n, offsets, c->num_segments, c->dtype,
                                         c->second_bytes, c->flags);
    }
}

typedef struct sg_result {
    void *keys, *second; /* host copies of the outputs */
} sg_result_t;

static void sg_result_free(sg_result_t *r) {
    free(r->keys);
    free(r->second);
    r->keys = r->second = NULL;
}

/* Uploads keys (and the values: segment-local iota; argsort: a fill
 * pattern) to mem, the offsets to offs_mem (NULL: same as mem), runs the
 * call, downloads. 0 and *out on success, else 1 with a message. */
static int sg_execute(warpsort_context_t *ctx, const wt_memory_t *mem, const wt_memory_t *offs_mem,
                      const sg_case_t *c, const void *keys, const void *second,
                      const uint64_t *offsets, size_t n, sg_result_t *out, char *msg,
                      size_t msg_len) {
    if (!offs_mem) offs_mem = mem;
    const size_t kb = warpsort_dtype_size(c->dtype);
    const size_t sb = c->op == WT_OP_SORT ? 0 : c->second_bytes;
    const size_t ob = (c->num_segments + 1) * 8;
    void *dk = mem->alloc(n * kb, mem->user);
    void *ds = sb ? mem->alloc(n * sb, mem->user) : NULL;
    void *dofs = c->lengths ? offs_mem->alloc(ob, offs_mem->user) : NULL;
    out->keys = malloc(n * kb + 8);
    out->second = malloc(n * sb + 8);
    int rc = 1;
    if (!dk || (sb && !ds) || (c->lengths && !dofs) || !out->keys || !out->second) {
        snprintf(msg, msg_len, "allocation failed (n = %zu)", n);
        goto done;
    }
    if (mem->upload(dk, keys, n * kb, mem->user) ||
        (sb && mem->upload(ds, second, n * sb, mem->user)) ||
        (c->lengths && offs_mem->upload(dofs, offsets, ob, offs_mem->user))) {
        snprintf(msg, msg_len, "upload failed");
        goto done;
    }
    warpsort_status_t st = sg_call(ctx, c, dk, ds, dofs, n);
    if (st == WARPSORT_OK) st = warpsort_synchronize(ctx);
    if (st != WARPSORT_OK) {
        snprintf(msg, msg_len, "call failed: %s: %s", warpsort_status_name(st),
                 warpsort_last_error(ctx));
        goto done;
    }
    if (mem->download(out->keys, dk, n * kb, mem->user) ||
        (sb && mem->download(out->second, ds, n * sb, mem->user))) {
        snprintf(msg, msg_len, "download failed");
        goto done;
    }
    rc = 0;
done:
    if (dk) mem->release(dk, mem->user);
    if (ds) mem->release(ds, mem->user);
    if (dofs) offs_mem->release(dofs, offs_mem->user);
    if (rc) sg_result_free(out);
    return rc;
}

/* Fills the inputs of a case: keys from keygen, values as segment-local
 * indices, argsort outputs with a pattern no index has. */
static void sg_inputs(const sg_case_t *c, const uint64_t *offsets, size_t n, void *keys,
                      void *second) {
    keygen_fill(keys, n, (int)c->dtype, c->dist, c->seed);
    if (c->op == WT_OP_PAIRS) {
        for (size_t s = 0; s < c->num_segments; s++)
            for (uint64_t i = offsets[s]; i < offsets[s + 1]; i++)
                wt_store(second, (size_t)i, c->second_bytes, i - offsets[s]);
    } else if (c->op == WT_OP_ARGSORT) {
        memset(second, 0xA5, n * c->second_bytes);
    }
}

/* The oracle's checks, segment by segment. */
static int sg_check(const sg_case_t *c, const uint64_t *offsets, const void *keys_in,
                    const sg_result_t *r, char *msg, size_t msg_len) {
    const size_t kb = warpsort_dtype_size(c->dtype), sb = c->second_bytes;
    char inner[320];
    for (size_t s = 0; s < c->num_segments; s++) {
        const size_t b = (size_t)offsets[s], len = (size_t)(offsets[s + 1] - offsets[s]);
        const char *in = (const char *)keys_in + b * kb;
        const char *ok = (const char *)r->keys + b * kb;
        const char *os = (const char *)r->second + b * sb;
        int bad;
        if (c->op == WT_OP_ARGSORT) {
            bad = memcmp(in, ok, len * kb) != 0;
            if (bad) snprintf(inner, sizeof inner, "argsort changed the keys");
            if (!bad)
                bad = wt_check_argsort(in, os, len, c->dtype, sb, c->flags, inner, sizeof inner);
        } else {
            bad = wt_check_sorted(ok, len, c->dtype, c->flags, inner, sizeof inner) ||
                  wt_check_permutation(in, ok, len, kb, inner, sizeof inner);
            if (!bad && c->op == WT_OP_PAIRS)
                bad = wt_check_values(in, ok, os, len, c->dtype, sb,
                                      (c->flags & WARPSORT_STABLE) != 0, inner, sizeof inner);
        }
        if (bad) {
            snprintf(msg, msg_len, "segment %zu (items %zu..%zu): %s", s, b, b + len, inner);
            return 1;
        }
    }
    return 0;
}

/* Runs c on ctx (arrays in mem, offsets in offs_mem or mem) and checks it;
 * with an oracle context also requires byte-identical output wherever the
 * order is determined (keys; values when stable; argsort indices). */
static int sg_run_case(warpsort_context_t *ctx, const wt_memory_t *mem, const wt_memory_t *offs_mem,
                       const sg_case_t *c, warpsort_context_t *oracle, char *msg, size_t msg_len) {
    size_t n = 0;
    uint64_t *offsets = sg_offsets(c, &n);
    const size_t kb = warpsort_dtype_size(c->dtype);
    const size_t sb = c->op == WT_OP_SORT ? 0 : c->second_bytes;
    void *keys = malloc(n * kb + 8), *second = malloc(n * sb + 8);
    sg_result_t r = {NULL, NULL}, o = {NULL, NULL};
    char what[160], inner[400];
    sg_describe(c, what, sizeof what);
    int rc = 1;
    if (!offsets || !keys || !second) {
        snprintf(msg, msg_len, "%s: host allocation failed", what);
        goto done;
    }
    sg_inputs(c, offsets, n, keys, second);
    if (sg_execute(ctx, mem, offs_mem, c, keys, second, offsets, n, &r, inner, sizeof inner)) {
        snprintf(msg, msg_len, "%s [%s]: %s", what, mem->name, inner);
        goto done;
    }
    if (sg_check(c, offsets, keys, &r, inner, sizeof inner)) {
        snprintf(msg, msg_len, "%s [%s]: %s", what, mem->name, inner);
        goto done;
    }
    if (oracle) {
        if (sg_execute(oracle, &wt_host_memory, NULL, c, keys, second, offsets, n, &o, inner,
                       sizeof inner)) {
            snprintf(msg, msg_len, "%s [oracle]: %s", what, inner);
            goto done;
        }
        const int keys_det = c->op != WT_OP_ARGSORT;
        const int second_det =
            c->op == WT_OP_ARGSORT || (c->op == WT_OP_PAIRS && (c->flags & WARPSORT_STABLE));
        if ((keys_det && memcmp(r.keys, o.keys, n * kb) != 0) ||
            (second_det && memcmp(r.second, o.second, n * sb) != 0)) {
            snprintf(msg, msg_len, "%s [%s]: output differs from the CPU backend's", what,
                     mem->name);
            goto done;
        }
    }
    rc = 0;
done:
    sg_result_free(&r);
    sg_result_free(&o);
    free(offsets);
    free(keys);
    free(second);
    return rc;
}

/* Lengths around every switch of either backend, in one list:
 * 0, 1, 2, the CPU's insertion-sort cut (64), the CUDA backend's classes
 * (4 .. 2048 items: lanes, groups of lanes, warps, blocks, long). */
static const size_t sg_switch_lengths[] = {
    0,    1,    2,    3,    4,    5,    7,    8,    9,    15,   16,   17,   31,  32,
    33,   63,   64,   65,   127,  128,  129,  255,  256,  257,  511,  512,  513, 1023,
    1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193, 16385};
#define SG_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A shuffled copy of `count` lengths (each switch length once, several
 * empty and tiny ones besides), so every class of segment meets every other
 * in one call. */
static inline size_t sg_mix(size_t *out, size_t cap, uint64_t seed) {
    size_t m = 0;
    for (size_t i = 0; i < SG_COUNT(sg_switch_lengths) && m < cap; i++)
        out[m++] = sg_switch_lengths[i];
    for (size_t i = 0; i < 24 && m < cap; i++) out[m++] = (size_t)(wt_mix(seed + i) % 6);
    for (size_t i = m; i > 1; i--) {
        size_t j = (size_t)(wt_mix(seed ^ (0x9E37ull * i)) % i);
        size_t t = out[i - 1];
        out[i - 1] = out[j];
        out[j] = t;
    }
    return m;
}

#endif /* WARPSORT_SEGMENTED_CASES_H */
