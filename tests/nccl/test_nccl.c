/*
 * test_nccl.c - warpsort_nccl_sort / _sort_pairs across GPUs.
 *
 * Two ways to run the same tests:
 *   test_nccl [--ranks N]    N ranks (default 2) in this process: one
 *                            communicator per GPU from ncclCommInitAll and
 *                            one host thread per rank for every call
 *                            (--ranks 1: the one-rank path, on one GPU);
 *   ws_nccl_launch -n N -- test_nccl --process
 *                            one rank per process (tests/nccl/nccl_rank.h),
 *                            rank r on GPU r.
 * Options of every test program: --quick, --filter PATTERN (wt_cmocka.h).
 *
 * Every case builds one global input (src/core/keygen.h, all
 * distributions) cut into the ranks' pieces, and the reference: the CPU
 * backend's stable sort of the global keys with their global positions as
 * values, itself checked by the testkit's independent oracle (sorted, a
 * permutation). Rank r's output must equal slice r of it byte for byte:
 * keys, and values for pairs, which pins the tie rule (rank, position),
 * the exact part sizes, the order across ranks and the permutation. Each
 * rank's slice is also checked by the testkit's order; inputs must come
 * back unchanged. Failure cases make one rank fail (capacity, alignment,
 * workspace, a call that differs from the others) and require the same
 * status on every rank, untouched outputs and inputs.
 *
 * Cases never stop half-way on one rank (a rank that left would leave the
 * others waiting in NCCL): a test runs all its cases, then reports.
 * With fewer GPUs than ranks (two by default; no CUDA device at all) every
 * test is skipped and the program exits 77, which ctest counts as skipped.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccl_rank.h"
#include "warpsort_nccl.h"
#include "wt_cmocka.h"

#define WT_EXIT_SKIPPED 77
#define NC_MAX_RANKS 8

/*--- the ranks of this process ---*/
static int g_p;            /* ranks in the job; 0: skip everything */
static int g_process_mode; /* 1: one rank here (g_self), 0: all ranks here */
static int g_self;
static int g_quick;
static warpsort_context_t *g_ctx[NC_MAX_RANKS];
static ncclComm_t g_comm[NC_MAX_RANKS];
static cudaStream_t g_stream[NC_MAX_RANKS];
static int g_dev[NC_MAX_RANKS];
static warpsort_context_t *g_cpu; /* the reference, used by the main thread only */
static char g_skip_why[256];

/*--- one case ---*/
typedef enum nc_fail {
    NC_FAIL_NONE = 0,
    NC_FAIL_CAPACITY,   /* out_capacity one short */
    NC_FAIL_MISALIGNED, /* keys_in one byte off */
    NC_FAIL_MISMATCH,   /* the other order than the other ranks */
    NC_FAIL_WORKSPACE,  /* a caller workspace of 256 bytes */
    NC_FAIL_HOST_PTR    /* keys_out in host memory */
} nc_fail_t;

typedef struct nc_case {
    warpsort_dtype_t dtype;
    unsigned flags;
    size_t vb; /* 0: keys alone */
    keygen_dist_t dist;
    uint64_t seed;
    size_t counts[NC_MAX_RANKS];
    nc_fail_t fail;
    int fail_rank;
    warpsort_status_t want; /* on every rank */
} nc_case_t;

/* The case's global arrays and the reference, built once on the host. */
typedef struct nc_data {
    size_t n_total, kb;
    size_t in_off[NC_MAX_RANKS + 1], out_off[NC_MAX_RANKS + 1];
    unsigned char *keys, *vals; /* global input; vals: global positions, vb wide */
    unsigned char *want_keys;   /* reference sort */
    unsigned char *want_vals;   /* its values, vb wide */
} nc_data_t;

static void nc_describe(const nc_case_t *c, char *buf, size_t len) {
    int at = snprintf(buf, len, "%s %s %s v%zu counts", warpsort_dtype_name(c->dtype),
                      keygen_dist_name(c->dist), (c->flags & WARPSORT_DESCENDING) ? "desc" : "asc",
                      c->vb);
    for (int r = 0; r < g_p && at > 0 && (size_t)at < len; r++)
        at += snprintf(buf + at, len - (size_t)at, "%s%zu", r ? "," : "=", c->counts[r]);
}

static void nc_free_data(nc_data_t *d) {
    free(d->keys);
    free(d->vals);
    free(d->want_keys);
    free(d->want_vals);
}

static void *nc_alloc(size_t bytes) { return malloc(bytes ? bytes : 1); }

/* Builds the input and the reference; 0, or 1 with a message. */
static int nc_prepare(const nc_case_t *c, nc_data_t *d, char *msg, size_t len) {
    memset(d, 0, sizeof *d);
    d->kb = warpsort_dtype_size(c->dtype);
    for (int r = 0; r < g_p; r++) d->in_off[r + 1] = d->in_off[r] + c->counts[r];
    const size_t n = d->n_total = d->in_off[g_p];
    for (int r = 0; r < g_p; r++)
        d->out_off[r + 1] = d->out_off[r] + warpsort_nccl_output_count(n, g_p, r);
    d->keys = nc_alloc(n * d->kb);
    d->want_keys = nc_alloc(n * d->kb);
    uint64_t *idx = nc_alloc(n * 8);
    d->vals = nc_alloc(n * (c->vb ? c->vb : 1));
    d->want_vals = nc_alloc(n * (c->vb ? c->vb : 1));
    if (!d->keys || !d->want_keys || !idx || !d->vals || !d->want_vals) {
        free(idx);
        snprintf(msg, len, "out of host memory");
        return 1;
    }
    keygen_fill(d->keys, n, (int)c->dtype, c->dist, c->seed);
    memcpy(d->want_keys, d->keys, n * d->kb);
    wt_fill_iota(idx, n, 8);
    if (c->vb) wt_fill_iota(d->vals, n, c->vb);
    const warpsort_status_t s =
        warpsort_sort_pairs(g_cpu, d->want_keys, idx, n, c->dtype, 8, c->flags | WARPSORT_STABLE);
    int bad = s != WARPSORT_OK;
    if (bad) snprintf(msg, len, "reference sort: %s", warpsort_last_error(g_cpu));
    if (!bad) bad = wt_check_sorted(d->want_keys, n, c->dtype, c->flags, msg, len);
    if (!bad) bad = wt_check_permutation(d->keys, d->want_keys, n, d->kb, msg, len);
    for (size_t i = 0; !bad && c->vb && i < n; i++) wt_store(d->want_vals, i, c->vb, idx[i]);
    free(idx);
    return bad;
}

/*--- one rank's part of a case ---*/
typedef struct nc_rank_job {
    int rank;
    const nc_case_t *c;
    const nc_data_t *d;
    int failed;
    char msg[768];
} nc_rank_job_t;

#define NC_POISON 0xA5

#define NC_CUDA(call)                                                                 \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess && !j->failed) {                                        \
            j->failed = 1;                                                            \
            snprintf(j->msg, sizeof j->msg, "%s: %s", #call, cudaGetErrorString(e_)); \
        }                                                                             \
    } while (0)

static void nc_fail_job(nc_rank_job_t *j, const char *fmt, const char *detail) {
    if (j->failed) return;
    j->failed = 1;
    snprintf(j->msg, sizeof j->msg, fmt, detail);
}

/* 1 if the first `bytes` of host copy h equal d's device bytes. */
static int nc_same(nc_rank_job_t *j, const void *dev, const void *h, size_t bytes) {
    if (!bytes) return 1;
    unsigned char *tmp = nc_alloc(bytes);
    if (!tmp) return 0;
    NC_CUDA(cudaMemcpy(tmp, dev, bytes, cudaMemcpyDeviceToHost));
    const int same = memcmp(tmp, h, bytes) == 0;
    free(tmp);
    return same;
}

static int nc_all_poison(nc_rank_job_t *j, const void *dev, size_t bytes) {
    unsigned char *tmp = nc_alloc(bytes);
    if (!tmp) return 0;
    NC_CUDA(cudaMemcpy(tmp, dev, bytes, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (size_t i = 0; i < bytes && ok; i++) ok = tmp[i] == NC_POISON;
    free(tmp);
    return ok;
}

/* Every rank runs this with the same case, at the same time. */
static void nc_rank(nc_rank_job_t *j) {
    const nc_case_t *c = j->c;
    const nc_data_t *d = j->d;
    const int r = j->rank;
    const size_t kb = d->kb, vb = c->vb;
    const size_t n_in = c->counts[r], want_n = d->out_off[r + 1] - d->out_off[r];
    NC_CUDA(cudaSetDevice(g_dev[r]));
    size_t cap = want_n;
    if (c->fail == NC_FAIL_CAPACITY && r == c->fail_rank) cap = want_n - 1;
    void *in_k = NULL, *in_v = NULL, *out_k = NULL, *out_v = NULL, *tiny_ws = NULL;
    /* One extra item so a misaligned pointer stays inside the allocation. */
    NC_CUDA(cudaMalloc(&in_k, (n_in + 1) * kb));
    NC_CUDA(cudaMalloc(&out_k, (cap + 1) * kb));
    if (vb) {
        NC_CUDA(cudaMalloc(&in_v, (n_in + 1) * vb));
        NC_CUDA(cudaMalloc(&out_v, (cap + 1) * vb));
    }
    /* A failure here must not keep this rank out of the call (the others
     * would wait for it): the call goes ahead and fails on every rank. */
    if (!j->failed) {
        NC_CUDA(cudaMemcpy(in_k, d->keys + d->in_off[r] * kb, n_in * kb, cudaMemcpyHostToDevice));
        NC_CUDA(cudaMemset(out_k, NC_POISON, (cap + 1) * kb));
    }
    if (vb && !j->failed) {
        NC_CUDA(cudaMemcpy(in_v, d->vals + d->in_off[r] * vb, n_in * vb, cudaMemcpyHostToDevice));
        NC_CUDA(cudaMemset(out_v, NC_POISON, (cap + 1) * vb));
    }
    /* The arguments of this rank, with its failure if it is the one. */
    const int failing = r == c->fail_rank;
    const void *keys_in = in_k;
    void *keys_out = out_k;
    unsigned flags = c->flags;
    unsigned char host_out[64];
    if (failing && c->fail == NC_FAIL_MISALIGNED) keys_in = (const unsigned char *)in_k + 1;
    if (failing && c->fail == NC_FAIL_MISMATCH) flags ^= WARPSORT_DESCENDING;
    if (failing && c->fail == NC_FAIL_HOST_PTR) keys_out = host_out;
    if (failing && c->fail == NC_FAIL_WORKSPACE) {
        NC_CUDA(cudaMalloc(&tiny_ws, 256));
        if (warpsort_set_workspace(g_ctx[r], tiny_ws, 256) != WARPSORT_OK)
            nc_fail_job(j, "warpsort_set_workspace: %s", warpsort_last_error(g_ctx[r]));
    }
    size_t n_out = 12345;
    const warpsort_status_t s =
        vb ? warpsort_nccl_sort_pairs(g_ctx[r], g_comm[r], keys_in, in_v, n_in, keys_out, out_v,
                                      cap, &n_out, c->dtype, vb, flags, g_stream[r])
           : warpsort_nccl_sort(g_ctx[r], g_comm[r], keys_in, n_in, keys_out, cap, &n_out, c->dtype,
                                flags, g_stream[r]);
    NC_CUDA(cudaStreamSynchronize(g_stream[r]));
    if (tiny_ws) (void)warpsort_set_workspace(g_ctx[r], NULL, 0);
    if (s != c->want) {
        char why[600];
        snprintf(why, sizeof why, "rank %d returned %s, expected %s: %s", r,
                 warpsort_status_name(s), warpsort_status_name(c->want),
                 warpsort_last_error(g_ctx[r]));
        nc_fail_job(j, "%s", why);
    }
    if (!j->failed && s == WARPSORT_OK && n_out != want_n) {
        char why[128];
        snprintf(why, sizeof why, "rank %d: n_out %zu, expected %zu", r, n_out, want_n);
        nc_fail_job(j, "%s", why);
    }
    /* Inputs untouched, always. */
    if (!j->failed && !nc_same(j, in_k, d->keys + d->in_off[r] * kb, n_in * kb))
        nc_fail_job(j, "%s", "keys_in changed");
    if (!j->failed && vb && !nc_same(j, in_v, d->vals + d->in_off[r] * vb, n_in * vb))
        nc_fail_job(j, "%s", "values_in changed");
    if (j->failed) goto out;
    if (s != WARPSORT_OK) {
        /* Nothing written anywhere, on every rank. */
        if (!nc_all_poison(j, out_k, (cap + 1) * kb) ||
            (vb && !nc_all_poison(j, out_v, (cap + 1) * vb)))
            nc_fail_job(j, "%s", "an output was written by a failed call");
        goto out;
    }
    unsigned char *got = nc_alloc(want_n * kb);
    if (!got) {
        nc_fail_job(j, "%s", "out of host memory");
        goto out;
    }
    NC_CUDA(cudaMemcpy(got, out_k, want_n * kb, cudaMemcpyDeviceToHost));
    char why[512];
    if (!j->failed && wt_check_sorted(got, want_n, c->dtype, c->flags, why, sizeof why))
        nc_fail_job(j, "output not sorted: %s", why);
    const unsigned char *want = d->want_keys + d->out_off[r] * kb;
    for (size_t i = 0; !j->failed && i < want_n; i++) {
        if (memcmp(got + i * kb, want + i * kb, kb)) {
            snprintf(why, sizeof why,
                     "rank %d keys differ from the global reference at %zu (global %zu): "
                     "0x%llx, expected 0x%llx",
                     r, i, d->out_off[r] + i, (unsigned long long)wt_bits(got, i, kb),
                     (unsigned long long)wt_bits(want, i, kb));
            nc_fail_job(j, "%s", why);
        }
    }
    if (!j->failed && vb) {
        unsigned char *gv = nc_alloc(want_n * vb);
        if (gv) {
            NC_CUDA(cudaMemcpy(gv, out_v, want_n * vb, cudaMemcpyDeviceToHost));
            const unsigned char *wv = d->want_vals + d->out_off[r] * vb;
            for (size_t i = 0; !j->failed && i < want_n; i++) {
                if (memcmp(gv + i * vb, wv + i * vb, vb)) {
                    snprintf(why, sizeof why,
                             "rank %d values differ at %zu: %llu, expected %llu (ties not by "
                             "(rank, position)?)",
                             r, i, (unsigned long long)wt_bits(gv, i, vb),
                             (unsigned long long)wt_bits(wv, i, vb));
                    nc_fail_job(j, "%s", why);
                }
            }
        }
        free(gv);
    }
    /* Past n_out the output stays as it was. */
    if (!j->failed && !nc_all_poison(j, (unsigned char *)out_k + want_n * kb, kb))
        nc_fail_job(j, "%s", "written past n_out");
    free(got);
out:
    cudaFree(in_k);
    cudaFree(in_v);
    cudaFree(out_k);
    cudaFree(out_v);
    cudaFree(tiny_ws);
}

static void *nc_rank_thread(void *arg) {
    nc_rank(arg);
    return NULL;
}

/* Runs one case on every rank of this process; 0, or 1 with a message. */
static int nc_run(const nc_case_t *c, char *msg, size_t len) {
    nc_data_t d;
    if (nc_prepare(c, &d, msg, len)) {
        nc_free_data(&d);
        return 1;
    }
    static nc_rank_job_t jobs[NC_MAX_RANKS];
    pthread_t threads[NC_MAX_RANKS];
    int failed = 0;
    if (g_process_mode) {
        jobs[0] = (nc_rank_job_t){.rank = g_self, .c = c, .d = &d};
        nc_rank(&jobs[0]);
        failed = jobs[0].failed;
        if (failed) snprintf(msg, len, "%s", jobs[0].msg);
    } else {
        for (int r = 0; r < g_p; r++) {
            jobs[r] = (nc_rank_job_t){.rank = r, .c = c, .d = &d};
            if (pthread_create(&threads[r], NULL, nc_rank_thread, &jobs[r]) != 0) {
                /* The ranks already started wait for this one: nothing to
                 * join safely. */
                fprintf(stderr, "pthread_create failed\n");
                exit(1);
            }
        }
        for (int r = 0; r < g_p; r++) pthread_join(threads[r], NULL);
        for (int r = 0; r < g_p && !failed; r++)
            if (jobs[r].failed) {
                failed = 1;
                snprintf(msg, len, "%s", jobs[r].msg);
            }
    }
    nc_free_data(&d);
    return failed;
}

/* Runs cases[0..count) and fails the test after the last with the number
 * of failed cases and the first message. */
static void nc_run_all(const nc_case_t *cases, size_t count) {
    size_t failed = 0;
    char first[1200] = "";
    for (size_t i = 0; i < count; i++) {
        char msg[900], name[160];
        if (nc_run(&cases[i], msg, sizeof msg)) {
            nc_describe(&cases[i], name, sizeof name);
            if (!failed++) snprintf(first, sizeof first, "%s: %s", name, msg);
            print_message("FAILED %s: %s\n", name, msg);
        }
    }
    if (failed) fail_msg("%zu of %zu cases failed; first: %s", failed, count, first);
}

#define REQUIRE_RANKS()                                 \
    do {                                                \
        if (!g_p) {                                     \
            print_message("%s: skipped\n", g_skip_why); \
            skip();                                     \
        }                                               \
    } while (0)

/* Part sizes: the same n on every rank, or everything on one rank, ... */
typedef enum nc_shape {
    NC_EVEN,  /* n everywhere */
    NC_FIRST, /* all on rank 0 */
    NC_LAST,  /* all on the last rank */
    NC_RAMP,  /* rank r holds n * r (rank 0 none) */
    NC_TINY,  /* one item on the last rank only */
    NC_ODD,   /* n, 3, n + 7, 0, ... */
    NC_NONE,  /* no items at all */
    NC_SHAPES
} nc_shape_t;

static void nc_shape(nc_case_t *c, nc_shape_t sh, size_t n) {
    for (int r = 0; r < g_p; r++) {
        size_t v = 0;
        switch (sh) {
        case NC_EVEN: v = n; break;
        case NC_FIRST: v = r == 0 ? n : 0; break;
        case NC_LAST: v = r == g_p - 1 ? n : 0; break;
        case NC_RAMP: v = n * (size_t)r; break;
        case NC_TINY: v = r == g_p - 1; break;
        case NC_ODD: v = r % 4 == 0 ? n : r % 4 == 1 ? 3 : r % 4 == 2 ? n + 7 : 0; break;
        default: v = 0; break;
        }
        c->counts[r] = v;
    }
}

/* state: the dtype. Every distribution x order x keys / pairs v4 / v8 on
 * even parts, sizes rotating so the leaf's paths all appear. */
static void test_dtype(void **state) {
    REQUIRE_RANKS();
    const warpsort_dtype_t dt = (warpsort_dtype_t)(uintptr_t)*state;
    const size_t sizes[] = {1000, 4099, 70001, (size_t)1 << 20};
    const size_t nsizes = g_quick ? 3 : 4;
    static nc_case_t cases[KEYGEN_DIST_COUNT * 2 * 3];
    size_t count = 0, k = 0;
    for (int dist = 0; dist < KEYGEN_DIST_COUNT; dist++)
        for (unsigned flags = 0; flags < 2; flags++)
            for (size_t vi = 0; vi < 3; vi++, k++) {
                nc_case_t *c = &cases[count++];
                memset(c, 0, sizeof *c);
                c->dtype = dt;
                c->flags = flags;
                c->vb = vi == 0 ? 0 : vi == 1 ? 4 : 8;
                c->dist = (keygen_dist_t)dist;
                c->seed = 1000 + k * 7 + (uint64_t)dt;
                c->fail_rank = -1;
                nc_shape(c, NC_EVEN, sizes[k % nsizes]);
            }
    nc_run_all(cases, count);
}

/* Uneven parts, empty ranks, no items, fewer items than ranks. */
static void test_shapes(void **state) {
    REQUIRE_RANKS();
    (void)state;
    static nc_case_t cases[NC_SHAPES * 4 * 2];
    const warpsort_dtype_t dts[] = {WARPSORT_U32, WARPSORT_F32, WARPSORT_I64, WARPSORT_F64};
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_EQUAL, KEYGEN_NAN_MIX, KEYGEN_TWO};
    size_t count = 0;
    for (int sh = 0; sh < NC_SHAPES; sh++)
        for (size_t t = 0; t < 4; t++)
            for (unsigned flags = 0; flags < 2; flags++) {
                nc_case_t *c = &cases[count++];
                memset(c, 0, sizeof *c);
                c->dtype = dts[t];
                c->flags = flags;
                c->vb = (t + flags) % 2 ? 8 : 0;
                c->dist = dists[(t + (size_t)sh) % 4];
                c->seed = 77 + (uint64_t)sh * 16 + t * 2 + flags;
                c->fail_rank = -1;
                nc_shape(c, (nc_shape_t)sh, g_quick ? 5003 : 100003);
            }
    nc_run_all(cases, count);
}

/* Large parts: the leaf's sample-sort path on every rank. */
static void test_large(void **state) {
    REQUIRE_RANKS();
    (void)state;
    if (g_quick) skip();
    nc_case_t cases[4];
    const warpsort_dtype_t dts[] = {WARPSORT_U32, WARPSORT_U64, WARPSORT_F32, WARPSORT_F64};
    for (size_t i = 0; i < 4; i++) {
        memset(&cases[i], 0, sizeof cases[i]);
        cases[i].dtype = dts[i];
        cases[i].flags = i == 2 ? WARPSORT_DESCENDING : 0;
        cases[i].vb = i % 2 ? 8 : 4;
        cases[i].dist = i == 3 ? KEYGEN_SKEWED : KEYGEN_RANDOM;
        cases[i].seed = 4242 + i;
        cases[i].fail_rank = -1;
        nc_shape(&cases[i], i == 1 ? NC_FIRST : NC_EVEN, (size_t)1 << 23);
    }
    nc_run_all(cases, 4);
}

/* Sets (value) or clears (NULL) an environment variable, returning the
 * old value in saved (empty: unset). */
static void nc_setenv(const char *name, const char *value, char *saved, size_t len) {
    const char *was = getenv(name);
    if (saved) snprintf(saved, len, "%s", was ? was : "");
    if (value && *value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* Two ranks merge the received part chunk by chunk under the exchange
 * (src/nccl/overlap.cu: asked for 8 chunks, 2 to 8 from 2^18 items per
 * rank): uneven
 * parts, heavy ties across chunk and rank boundaries (equal, two and few
 * distinct keys), descending, pairs, and a part that arrives empty. With
 * other rank counts these are ordinary cases. */
static void test_overlap_chunks(void **state) {
    REQUIRE_RANKS();
    (void)state;
    static nc_case_t cases[16];
    const keygen_dist_t dists[] = {KEYGEN_RANDOM, KEYGEN_EQUAL, KEYGEN_TWO, KEYGEN_FEW};
    const nc_shape_t shapes[] = {NC_EVEN, NC_ODD, NC_RAMP, NC_FIRST};
    const warpsort_dtype_t dts[] = {WARPSORT_U32, WARPSORT_F64, WARPSORT_I64, WARPSORT_F32};
    const size_t sizes[] = {((size_t)1 << 18) + 3, ((size_t)1 << 20) + 5, (size_t)3 << 19};
    size_t count = 0;
    for (size_t i = 0; i < 16 && (!g_quick || i < 6); i++) {
        nc_case_t *c = &cases[count++];
        memset(c, 0, sizeof *c);
        c->dtype = dts[i % 4];
        c->flags = (i / 2) % 2 ? WARPSORT_DESCENDING : 0;
        c->vb = i % 3 == 0 ? 0 : i % 3 == 1 ? 4 : 8;
        c->dist = dists[(i / 4) % 4];
        c->seed = 5150 + i;
        c->fail_rank = -1;
        nc_shape(c, shapes[(i + i / 4) % 4], sizes[i % 3]);
    }
    /* the library exchanges in two chunks unless asked for more */
    char saved[32];
    nc_setenv("WARPSORT_NCCL_CHUNKS", "8", saved, sizeof saved);
    nc_run_all(cases, count);
    nc_setenv("WARPSORT_NCCL_CHUNKS", saved, NULL, 0);
}

/* Keys alone across the partition-first route (src/nccl/partition.cu),
 * three parts a rank so every part round and both bands run at these
 * sizes. First with WARPSORT_NCCL_ROUTE=partition-only on keys the
 * partition must hold for (distinct enough; a sample of all the keys below
 * 2^20 in all, a drawn one above): the route itself, every key width and
 * both orders, uneven ranks and one rank holding everything. Then
 * WARPSORT_NCCL_ROUTE=partition on every distribution: heavy ties (equal,
 * two, few, skewed) make the counts fail the band checks, and the call
 * falls back to the sort-first route from the untouched input. */
static void test_partition(void **state) {
    REQUIRE_RANKS();
    (void)state;
    static nc_case_t cases[64];
    const warpsort_dtype_t dts[] = {WARPSORT_U32, WARPSORT_F32, WARPSORT_I64, WARPSORT_F64};
    const keygen_dist_t holds[] = {KEYGEN_RANDOM, KEYGEN_SORTED, KEYGEN_REVERSED, KEYGEN_NARROW};
    const nc_shape_t shapes[] = {NC_EVEN, NC_ODD, NC_RAMP, NC_FIRST};
    const size_t sizes[] = {5003, 100003, (size_t)3 << 21};
    size_t count = 0;
    for (size_t i = 0; i < 16 && (!g_quick || i < 8); i++) {
        nc_case_t *c = &cases[count++];
        memset(c, 0, sizeof *c);
        c->dtype = dts[i % 4];
        c->flags = (i / 4) % 2 ? WARPSORT_DESCENDING : 0;
        c->dist = holds[(i + i / 4) % 4];
        c->seed = 9100 + i;
        c->fail_rank = -1;
        nc_shape(c, shapes[(i / 2) % 4], sizes[i % 3]);
    }
    char route[64], parts[32];
    nc_setenv("WARPSORT_NCCL_PARTS", "3", parts, sizeof parts);
    nc_setenv("WARPSORT_NCCL_ROUTE", "partition-only", route, sizeof route);
    nc_run_all(cases, count);
    count = 0;
    for (int dist = 0; dist < KEYGEN_DIST_COUNT; dist++)
        for (unsigned flags = 0; flags < 2; flags++) {
            nc_case_t *c = &cases[count++];
            memset(c, 0, sizeof *c);
            c->dtype = dts[(size_t)(dist + (int)flags) % 4];
            c->flags = flags;
            c->dist = (keygen_dist_t)dist;
            c->seed = 9200 + (uint64_t)dist * 2 + flags;
            c->fail_rank = -1;
            nc_shape(c, flags ? NC_ODD : NC_EVEN, g_quick ? 30011 : 300007);
        }
    nc_setenv("WARPSORT_NCCL_ROUTE", "partition", NULL, 0);
    nc_run_all(cases, count);
    nc_setenv("WARPSORT_NCCL_ROUTE", route, NULL, 0);
    nc_setenv("WARPSORT_NCCL_PARTS", parts, NULL, 0);
}

/* One rank fails on purpose: every rank returns the same status, nothing
 * is written, inputs stay. The last rank fails (rank 1 of 2). */
static void test_failures(void **state) {
    REQUIRE_RANKS();
    (void)state;
    const struct {
        nc_fail_t fail;
        warpsort_status_t want;
    } kinds[] = {{NC_FAIL_CAPACITY, WARPSORT_INVALID_ARGUMENT},
                 {NC_FAIL_MISALIGNED, WARPSORT_MISALIGNED},
                 {NC_FAIL_MISMATCH, WARPSORT_INVALID_ARGUMENT},
                 {NC_FAIL_WORKSPACE, WARPSORT_WORKSPACE_TOO_SMALL},
                 {NC_FAIL_HOST_PTR, WARPSORT_INVALID_ARGUMENT}};
    nc_case_t cases[2 * sizeof kinds / sizeof kinds[0]];
    size_t count = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        for (size_t vb = 0; vb <= 8 && (g_p > 1 || kinds[i].fail != NC_FAIL_MISMATCH); vb += 8) {
            nc_case_t *c = &cases[count++];
            memset(c, 0, sizeof *c);
            c->dtype = vb ? WARPSORT_F64 : WARPSORT_U32;
            c->vb = vb;
            c->dist = KEYGEN_RANDOM;
            c->seed = 900 + count;
            c->fail = kinds[i].fail;
            c->fail_rank = g_p - 1;
            c->want = kinds[i].want;
            nc_shape(c, NC_EVEN, 10007);
        }
    nc_run_all(cases, count);
}

/* The same communicator and contexts right after failures: still usable. */
static void test_after_failure(void **state) {
    REQUIRE_RANKS();
    (void)state;
    nc_case_t c;
    memset(&c, 0, sizeof c);
    c.dtype = WARPSORT_I32;
    c.vb = 4;
    c.dist = KEYGEN_FEW;
    c.seed = 31;
    c.fail_rank = -1;
    nc_shape(&c, NC_ODD, 30011);
    nc_run_all(&c, 1);
}

/* Bad calls that need no communicator agreement: NULL ctx or comm. */
static void test_local_errors(void **state) {
    REQUIRE_RANKS();
    (void)state;
    const int r = g_process_mode ? g_self : 0;
    size_t n_out = 7;
    assert_int_equal(
        warpsort_nccl_sort(NULL, g_comm[r], NULL, 0, NULL, 0, &n_out, WARPSORT_U32, 0, g_stream[r]),
        WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(n_out, 0);
    assert_int_equal(
        warpsort_nccl_sort(g_ctx[r], NULL, NULL, 0, NULL, 0, &n_out, WARPSORT_U32, 0, g_stream[r]),
        WARPSORT_INVALID_ARGUMENT);
    assert_non_null(strstr(warpsort_last_error(g_ctx[r]), "comm"));
    assert_int_equal(warpsort_nccl_output_count(10, 3, 0), 4);
    assert_int_equal(warpsort_nccl_output_count(10, 3, 1), 3);
    assert_int_equal(warpsort_nccl_output_count(10, 3, 2), 3);
    assert_int_equal(warpsort_nccl_output_count(10, 3, 3), 0);
    assert_int_equal(warpsort_nccl_output_count(2, 4, 3), 0);
    assert_int_equal(warpsort_nccl_output_count(2, 4, 1), 1);
    size_t bytes = 0;
    assert_int_equal(warpsort_nccl_workspace_size(g_ctx[r], 2, 1000, 1000, WARPSORT_U64, 8, &bytes),
                     WARPSORT_OK);
    assert_true(bytes >= 2 * 1000 * 16);
}

/*--- setup ---*/

static int nc_setup_threads(int want) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    (void)cudaGetLastError();
    if (devices < want) {
        snprintf(g_skip_why, sizeof g_skip_why, "%d CUDA device(s), %d ranks need as many", devices,
                 want);
        return 0;
    }
    for (int r = 0; r < want; r++) g_dev[r] = r;
    const ncclResult_t nr = ncclCommInitAll(g_comm, want, g_dev);
    if (nr != ncclSuccess) {
        fprintf(stderr, "ncclCommInitAll: %s\n", ncclGetErrorString(nr));
        return -1;
    }
    return want;
}

static int nc_setup_process(void) {
    int rank = 0, nranks = 0, devices = 0;
    const char *id_file = NULL;
    if (!nr_from_env(&rank, &nranks, &id_file)) {
        fprintf(stderr,
                "--process: start it with ws_nccl_launch (no WARPSORT_NCCL_* environment)\n");
        return -1;
    }
    if (nranks > NC_MAX_RANKS) {
        fprintf(stderr, "at most %d ranks\n", NC_MAX_RANKS);
        return -1;
    }
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    (void)cudaGetLastError();
    if (devices < 2 || devices < nranks) {
        snprintf(g_skip_why, sizeof g_skip_why, "%d CUDA device(s) for %d ranks", devices, nranks);
        return 0;
    }
    g_self = rank;
    g_dev[rank] = rank;
    if (cudaSetDevice(rank) != cudaSuccess) return -1;
    char err[512];
    if (nr_comm_init(&g_comm[rank], rank, nranks, id_file, 120, err, sizeof err)) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return -1;
    }
    return nranks;
}

int main(int argc, char **argv) {
    /* NVLink multicast stays off on the device machines; a caller's
     * setting wins. Before any communicator exists. */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    int want = 2;
    char *args[16];
    int nargs = 0;
    for (int i = 0; i < argc && nargs < 16; i++) {
        if (!strcmp(argv[i], "--process")) {
            g_process_mode = 1;
        } else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) {
            want = atoi(argv[++i]);
        } else {
            args[nargs++] = argv[i];
        }
    }
    g_quick = wt_cmocka_options(nargs, args);
    if (g_quick < 0) return 2;
    if (want < 1 || want > NC_MAX_RANKS) {
        fprintf(stderr, "--ranks: 1 to %d\n", NC_MAX_RANKS);
        return 2;
    }
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&g_cpu, &cfg) != WARPSORT_OK) return 2;
    g_p = g_process_mode ? nc_setup_process() : nc_setup_threads(want);
    if (g_p < 0) return 1;
    for (int r = 0; r < g_p; r++) {
        if (g_process_mode && r != g_self) continue;
        cfg.backend = WARPSORT_BACKEND_CUDA;
        cfg.device = g_dev[r];
        if (warpsort_create(&g_ctx[r], &cfg) != WARPSORT_OK ||
            cudaSetDevice(g_dev[r]) != cudaSuccess ||
            cudaStreamCreateWithFlags(&g_stream[r], cudaStreamNonBlocking) != cudaSuccess) {
            fprintf(stderr, "rank %d: no CUDA context or stream on device %d\n", r, g_dev[r]);
            return 1;
        }
    }
    if (g_p)
        printf("%d ranks, %s\n", g_p,
               g_process_mode ? "one process each" : "threads of one process");

    static char names[WARPSORT_DTYPE_COUNT_][32];
    struct CMUnitTest tests[WARPSORT_DTYPE_COUNT_ + 8];
    size_t count = 0;
    for (int d = 0; d < WARPSORT_DTYPE_COUNT_; d++) {
        snprintf(names[d], sizeof names[d], "nccl_%s", warpsort_dtype_name((warpsort_dtype_t)d));
        tests[count++] =
            (struct CMUnitTest){names[d], test_dtype, NULL, NULL, (void *)(uintptr_t)d};
    }
    tests[count++] = (struct CMUnitTest){"nccl_shapes", test_shapes, NULL, NULL, NULL};
    tests[count++] = (struct CMUnitTest){"nccl_large", test_large, NULL, NULL, NULL};
    tests[count++] =
        (struct CMUnitTest){"nccl_overlap_chunks", test_overlap_chunks, NULL, NULL, NULL};
    tests[count++] = (struct CMUnitTest){"nccl_partition", test_partition, NULL, NULL, NULL};
    tests[count++] = (struct CMUnitTest){"nccl_failures", test_failures, NULL, NULL, NULL};
    tests[count++] =
        (struct CMUnitTest){"nccl_after_failure", test_after_failure, NULL, NULL, NULL};
    tests[count++] = (struct CMUnitTest){"nccl_local_errors", test_local_errors, NULL, NULL, NULL};
    const char *group = g_process_mode ? "nccl_processes" : "nccl_threads";
    const int failed = _cmocka_run_group_tests(group, tests, count, NULL, NULL);
    for (int r = 0; r < g_p; r++) {
        if (g_process_mode && r != g_self) continue;
        warpsort_destroy(g_ctx[r]);
        cudaStreamDestroy(g_stream[r]);
        ncclCommDestroy(g_comm[r]);
    }
    warpsort_destroy(g_cpu);
    return failed ? 1 : g_p == 0 ? WT_EXIT_SKIPPED : 0;
}
