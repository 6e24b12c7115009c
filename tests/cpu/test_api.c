/*
 * test_api.c - the public API's contract outside of sorting itself: every
 * error path (and that it leaves the caller's buffers byte-identical and
 * explains itself), status/dtype/backend tables, versions, context lifetime.
 */
#include "testkit.h"
#include "wt_cmocka.h"

#ifndef WT_BUILT_WITH_CUDA
#define WT_BUILT_WITH_CUDA 0
#endif

enum { N = 64 };

/* Buffers with known contents and their pristine copies. */
struct fixture {
    warpsort_context_t *ctx;
    uint64_t keys[N + 1], values[N + 1];
    uint64_t keys_copy[N + 1], values_copy[N + 1];
};

static int setup(void **state) {
    struct fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    if (warpsort_create(&f->ctx, &cfg) != WARPSORT_OK) {
        free(f);
        return -1;
    }
    keygen_fill(f->keys, N + 1, WARPSORT_U64, KEYGEN_RANDOM, 5);
    keygen_fill(f->values, N + 1, WARPSORT_U64, KEYGEN_RANDOM, 6);
    memcpy(f->keys_copy, f->keys, sizeof f->keys);
    memcpy(f->values_copy, f->values, sizeof f->values);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    struct fixture *f = *state;
    warpsort_destroy(f->ctx);
    free(f);
    return 0;
}

/* The call failed with want, said why, and touched nothing. */
static void expect_error(const struct fixture *f, warpsort_status_t got, warpsort_status_t want) {
    if (got != want)
        fail_msg("got %s, want %s (%s)", warpsort_status_name(got), warpsort_status_name(want),
                 warpsort_last_error(f->ctx));
    assert_true(strlen(warpsort_last_error(f->ctx)) > 0);
    assert_memory_equal(f->keys, f->keys_copy, sizeof f->keys);
    assert_memory_equal(f->values, f->values_copy, sizeof f->values);
}

static void test_null_context(void **state) {
    struct fixture *f = *state;
    assert_int_equal(warpsort_sort(NULL, f->keys, N, WARPSORT_U32, 0), WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_sort_pairs(NULL, f->keys, f->values, N, WARPSORT_U32, 4, 0),
                     WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_argsort(NULL, f->keys, f->values, N, WARPSORT_U32, 4, 0),
                     WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_synchronize(NULL), WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_set_workspace(NULL, NULL, 0), WARPSORT_INVALID_ARGUMENT);
    size_t bytes = 0;
    assert_int_equal(warpsort_workspace_size(NULL, N, WARPSORT_U32, 0, 0, &bytes),
                     WARPSORT_INVALID_ARGUMENT);
    assert_memory_equal(f->keys, f->keys_copy, sizeof f->keys);
    assert_memory_equal(f->values, f->values_copy, sizeof f->values);
    assert_non_null(warpsort_last_error(NULL));
    assert_true(strlen(warpsort_last_error(NULL)) > 0);
    assert_int_equal(warpsort_get_backend(NULL), WARPSORT_BACKEND_AUTO);
    warpsort_destroy(NULL); /* a no-op */
}

static void test_null_pointers(void **state) {
    struct fixture *f = *state;
    expect_error(f, warpsort_sort(f->ctx, NULL, N, WARPSORT_U32, 0), WARPSORT_NULL_POINTER);
    expect_error(f, warpsort_sort_pairs(f->ctx, NULL, f->values, N, WARPSORT_U32, 4, 0),
                 WARPSORT_NULL_POINTER);
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, NULL, N, WARPSORT_U32, 4, 0),
                 WARPSORT_NULL_POINTER);
    expect_error(f, warpsort_argsort(f->ctx, NULL, f->values, N, WARPSORT_U32, 4, 0),
                 WARPSORT_NULL_POINTER);
    expect_error(f, warpsort_argsort(f->ctx, f->keys, NULL, N, WARPSORT_U32, 4, 0),
                 WARPSORT_NULL_POINTER);
    expect_error(f, warpsort_sort(f->ctx, NULL, 1, WARPSORT_F64, 0), WARPSORT_NULL_POINTER);
}

/* n = 0 is valid with NULL pointers; n = 0 and 1 never change anything. */
static void test_empty_and_single(void **state) {
    struct fixture *f = *state;
    for (unsigned flags = 0; flags < 4; flags++) {
        assert_int_equal(warpsort_sort(f->ctx, NULL, 0, WARPSORT_F32, flags), WARPSORT_OK);
        assert_int_equal(warpsort_sort_pairs(f->ctx, NULL, NULL, 0, WARPSORT_I64, 8, flags),
                         WARPSORT_OK);
        assert_int_equal(warpsort_argsort(f->ctx, NULL, NULL, 0, WARPSORT_U32, 4, flags),
                         WARPSORT_OK);
        assert_int_equal(warpsort_sort(f->ctx, f->keys, 0, WARPSORT_U64, flags), WARPSORT_OK);
        assert_int_equal(warpsort_sort(f->ctx, f->keys, 1, WARPSORT_U64, flags), WARPSORT_OK);
        assert_int_equal(warpsort_sort_pairs(f->ctx, f->keys, f->values, 1, WARPSORT_F64, 8, flags),
                         WARPSORT_OK);
        assert_memory_equal(f->keys, f->keys_copy, sizeof f->keys);
        assert_memory_equal(f->values, f->values_copy, sizeof f->values);
        f->values[0] = 12345;
        assert_int_equal(warpsort_argsort(f->ctx, f->keys, f->values, 1, WARPSORT_U64, 8, flags),
                         WARPSORT_OK);
        assert_int_equal(f->values[0], 0);
        f->values[0] = f->values_copy[0];
    }
}

static void test_unknown_dtype(void **state) {
    struct fixture *f = *state;
    const int bad[] = {WARPSORT_DTYPE_COUNT_, -1, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        warpsort_dtype_t d = (warpsort_dtype_t)bad[i];
        expect_error(f, warpsort_sort(f->ctx, f->keys, N, d, 0), WARPSORT_UNSUPPORTED_DTYPE);
        expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, f->values, N, d, 8, 0),
                     WARPSORT_UNSUPPORTED_DTYPE);
        expect_error(f, warpsort_argsort(f->ctx, f->keys, f->values, N, d, 8, 0),
                     WARPSORT_UNSUPPORTED_DTYPE);
        size_t bytes;
        assert_int_equal(warpsort_workspace_size(f->ctx, N, d, 0, 0, &bytes),
                         WARPSORT_UNSUPPORTED_DTYPE);
    }
}

static void test_unknown_flags(void **state) {
    struct fixture *f = *state;
    /* WORKSPACE_ARGSORT is only meaningful to warpsort_workspace_size */
    const unsigned bad[] = {WARPSORT_WORKSPACE_ARGSORT, 8u, 0x80000000u, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        expect_error(f, warpsort_sort(f->ctx, f->keys, N, WARPSORT_U32, bad[i]),
                     WARPSORT_INVALID_ARGUMENT);
        expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, f->values, N, WARPSORT_U32, 4, bad[i]),
                     WARPSORT_INVALID_ARGUMENT);
        expect_error(f, warpsort_argsort(f->ctx, f->keys, f->values, N, WARPSORT_U32, 4, bad[i]),
                     WARPSORT_INVALID_ARGUMENT);
    }
}

static void test_misaligned(void **state) {
    struct fixture *f = *state;
    char *k = (char *)f->keys, *v = (char *)f->values;
    expect_error(f, warpsort_sort(f->ctx, k + 1, N, WARPSORT_U32, 0), WARPSORT_MISALIGNED);
    expect_error(f, warpsort_sort(f->ctx, k + 4, N, WARPSORT_F64, 0), WARPSORT_MISALIGNED);
    expect_error(f, warpsort_sort_pairs(f->ctx, k + 2, f->values, N, WARPSORT_I32, 4, 0),
                 WARPSORT_MISALIGNED);
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, v + 4, N, WARPSORT_I32, 8, 0),
                 WARPSORT_MISALIGNED);
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, v + 1, N, WARPSORT_U64, 4, 0),
                 WARPSORT_MISALIGNED);
    expect_error(f, warpsort_argsort(f->ctx, k + 4, f->values, N, WARPSORT_I64, 8, 0),
                 WARPSORT_MISALIGNED);
    expect_error(f, warpsort_argsort(f->ctx, f->keys, v + 4, N, WARPSORT_U32, 8, 0),
                 WARPSORT_MISALIGNED);
    expect_error(f, warpsort_argsort(f->ctx, f->keys, v + 2, N, WARPSORT_U32, 4, 0),
                 WARPSORT_MISALIGNED);
}

static void test_bad_value_sizes(void **state) {
    struct fixture *f = *state;
    const size_t bad[] = {0, 1, 2, 3, 5, 16};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, f->values, N, WARPSORT_U32, bad[i], 0),
                     WARPSORT_INVALID_ARGUMENT);
        expect_error(f, warpsort_argsort(f->ctx, f->keys, f->values, N, WARPSORT_U32, bad[i], 0),
                     WARPSORT_INVALID_ARGUMENT);
    }
    size_t bytes;
    assert_int_equal(warpsort_workspace_size(f->ctx, N, WARPSORT_U32, 3, 0, &bytes),
                     WARPSORT_INVALID_ARGUMENT);
}

static void test_overlap(void **state) {
    struct fixture *f = *state;
    /* values start inside the keys, keys inside the values, or they coincide */
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, f->keys + 2, N / 2, WARPSORT_U64, 8, 0),
                 WARPSORT_OVERLAP);
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys + 2, f->keys, N / 2, WARPSORT_U64, 8, 0),
                 WARPSORT_OVERLAP);
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, f->keys, N, WARPSORT_U32, 4, 0),
                 WARPSORT_OVERLAP);
    /* the last key meets the first value */
    expect_error(
        f, warpsort_sort_pairs(f->ctx, f->keys, (char *)f->keys + 4 * 7, 8, WARPSORT_U32, 4, 0),
        WARPSORT_OVERLAP);
    expect_error(f, warpsort_argsort(f->ctx, f->keys, f->keys + 1, N / 2, WARPSORT_U64, 8, 0),
                 WARPSORT_OVERLAP);
    /* adjacent but disjoint is fine: keys [0, 8), values [8, 16) */
    assert_int_equal(warpsort_sort_pairs(f->ctx, f->keys, f->keys + 8, 8, WARPSORT_U64, 8, 0),
                     WARPSORT_OK);
    memcpy(f->keys, f->keys_copy, sizeof f->keys);
}

/* 4-byte indices cannot number more than 2^32 keys; validation says so
 * before anything is read, so the arrays need not exist. */
static void test_index_bytes_too_small(void **state) {
    struct fixture *f = *state;
    if (SIZE_MAX <= UINT32_MAX) skip();
    const size_t n = ((size_t)1 << 32) + 1;
    const uintptr_t base = (uintptr_t)1 << 20;
    const void *keys = (const void *)base;                         /* n * 4 bytes */
    void *indices = (void *)(base + n * 8 + ((uintptr_t)1 << 20)); /* past the keys */
    expect_error(f, warpsort_argsort(f->ctx, keys, indices, n, WARPSORT_U32, 4, 0),
                 WARPSORT_INVALID_ARGUMENT);
    expect_error(f, warpsort_argsort(f->ctx, keys, indices, n, WARPSORT_F32, 4, WARPSORT_STABLE),
                 WARPSORT_INVALID_ARGUMENT);
}

/* n beyond SIZE_MAX / 8 would overflow byte counts; rejected up front. */
static void test_n_too_large(void **state) {
    struct fixture *f = *state;
    expect_error(f, warpsort_sort(f->ctx, f->keys, SIZE_MAX, WARPSORT_U32, 0),
                 WARPSORT_INVALID_ARGUMENT);
    expect_error(f, warpsort_sort(f->ctx, f->keys, SIZE_MAX / 8 + 1, WARPSORT_U64, 0),
                 WARPSORT_INVALID_ARGUMENT);
    /* the limit is SIZE_MAX / 32: 32 bytes per item bound every byte count */
    expect_error(f, warpsort_sort(f->ctx, f->keys, SIZE_MAX / 32 + 1, WARPSORT_U32, 0),
                 WARPSORT_INVALID_ARGUMENT);
}

/* An n that validation accepts but no host can hold: the CPU backend must
 * fail to get its scratch before reading or writing any key. */
static void test_out_of_memory(void **state) {
    struct fixture *f = *state;
    if (SIZE_MAX <= UINT32_MAX) skip();
    const size_t n = (size_t)1 << 58; /* under the n limit, 2^61 bytes of scratch */
    expect_error(f, warpsort_sort(f->ctx, f->keys, n, WARPSORT_U32, 0), WARPSORT_OUT_OF_MEMORY);
    expect_error(f, warpsort_sort(f->ctx, f->keys, n, WARPSORT_F64, WARPSORT_DESCENDING),
                 WARPSORT_OUT_OF_MEMORY);
    /* The message names the call that was made, not the backend entry it shares. */
    const char *msg = warpsort_last_error(f->ctx);
    if (strncmp(msg, "warpsort_sort ", 14) != 0 && strncmp(msg, "warpsort_sort:", 14) != 0)
        fail_msg("a failed warpsort_sort reports \"%s\"", msg);
    /* 2^58 values must not overlap the keys: an address 2^62 away, never
     * dereferenced because the scratch allocation fails first. */
    void *far = (void *)((uintptr_t)f->keys + ((uintptr_t)1 << 62));
    expect_error(f, warpsort_sort_pairs(f->ctx, f->keys, far, n, WARPSORT_U32, 4, 0),
                 WARPSORT_OUT_OF_MEMORY);
    assert_non_null(strstr(warpsort_last_error(f->ctx), "warpsort_sort_pairs"));
    expect_error(f, warpsort_argsort(f->ctx, f->keys, far, n, WARPSORT_U32, 8, 0),
                 WARPSORT_OUT_OF_MEMORY);
    assert_non_null(strstr(warpsort_last_error(f->ctx), "warpsort_argsort"));
    /* the context stays usable */
    assert_int_equal(warpsort_sort(f->ctx, f->keys, N, WARPSORT_U64, 0), WARPSORT_OK);
    for (size_t i = 1; i < N; i++) assert_true(f->keys[i - 1] <= f->keys[i]);
    memcpy(f->keys, f->keys_copy, sizeof f->keys);
}

static void test_create(void **state) {
    (void)state;
    warpsort_context_t *ctx = (warpsort_context_t *)&ctx; /* must be reset to NULL */
    assert_int_equal(warpsort_create(NULL, NULL), WARPSORT_NULL_POINTER);

    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = (warpsort_backend_t)7;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_INVALID_ARGUMENT);
    assert_null(ctx);
    cfg.backend = WARPSORT_BACKEND_CPU;
    cfg.device = -1;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_INVALID_ARGUMENT);
    assert_null(ctx);

    /* NULL config = defaults = AUTO, which resolves to a real backend; a
     * fallback to the CPU says why (no CUDA built, no device, no kernel
     * image for it), CUDA leaves the message empty */
    assert_int_equal(warpsort_create(&ctx, NULL), WARPSORT_OK);
    assert_non_null(ctx);
    warpsort_backend_t b = warpsort_get_backend(ctx);
    assert_true(b == WARPSORT_BACKEND_CPU || (WT_BUILT_WITH_CUDA && b == WARPSORT_BACKEND_CUDA));
    if (b == WARPSORT_BACKEND_CUDA) {
        assert_string_equal(warpsort_last_error(ctx), "");
    } else {
        const char *why = warpsort_last_error(ctx);
        const char *prefix = "AUTO chose the CPU backend: ";
        if (strncmp(why, prefix, strlen(prefix)) != 0 || strlen(why) <= strlen(prefix) + 8)
            fail_msg("AUTO fell back to the CPU without saying why: '%s'", why);
        if (!WT_BUILT_WITH_CUDA && !strstr(why, "built without"))
            fail_msg("a build without CUDA should say so: '%s'", why);
    }
    assert_int_equal(warpsort_synchronize(ctx), WARPSORT_OK);
    warpsort_destroy(ctx);

    cfg = (warpsort_config_t)WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CPU;
    cfg.cpu_threads = 5;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    assert_int_equal(warpsort_get_backend(ctx), WARPSORT_BACKEND_CPU);
    assert_int_equal(warpsort_synchronize(ctx), WARPSORT_OK);
    warpsort_destroy(ctx);

    /* host-array fields: a ring below 16 KiB is refused; budgets are free */
    cfg.host_ring_bytes = 16383;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_INVALID_ARGUMENT);
    assert_null(ctx);
    cfg.host_ring_bytes = 16384;
    cfg.device_budget_bytes = 1;
    assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
    warpsort_destroy(ctx);
}

/* struct_size: WARPSORT_CONFIG_INIT records the caller's layout; create
 * accepts every layout from the first versioned one (0.1) to its own and
 * rejects anything else (garbage, or a header newer than the library). */
static void test_config_struct_size(void **state) {
    (void)state;
    warpsort_context_t *ctx = (warpsort_context_t *)&ctx;
    const warpsort_config_t init = WARPSORT_CONFIG_INIT;
    assert_int_equal(init.struct_size, sizeof(warpsort_config_t));
    const size_t first = offsetof(warpsort_config_t, cpu_threads) + sizeof(unsigned);
    const size_t bad[] = {0,
                          1,
                          first - 1,
                          sizeof(warpsort_config_t) + 1,
                          2 * sizeof(warpsort_config_t),
                          (size_t)0xA5A5A5A5u,
                          SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.backend = WARPSORT_BACKEND_CPU;
        cfg.struct_size = bad[i];
        ctx = (warpsort_context_t *)&ctx;
        assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_INVALID_ARGUMENT);
        assert_null(ctx);
    }

    /* A config from a newer header, with a field this library lacks. */
    struct newer_config {
        warpsort_config_t base;
        uint64_t field_of_the_future;
    } newer = {WARPSORT_CONFIG_INIT, 0};
    newer.base.struct_size = sizeof newer;
    assert_int_equal(warpsort_create(&ctx, &newer.base), WARPSORT_INVALID_ARGUMENT);
    assert_null(ctx);

    /* The first layout without its tail padding, and every size up to the
     * full struct: accepted, and the fields inside it are read. */
    for (size_t size = first; size <= sizeof(warpsort_config_t); size++) {
        warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
        cfg.struct_size = size;
        cfg.backend = WARPSORT_BACKEND_CPU;
        cfg.cpu_threads = 3;
        assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
        assert_int_equal(warpsort_get_backend(ctx), WARPSORT_BACKEND_CPU);
        warpsort_destroy(ctx);
        cfg.device = -1; /* read: a negative device is refused */
        assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_INVALID_ARGUMENT);
        assert_null(ctx);
    }
}

static void test_cuda_backend_request(void **state) {
    (void)state;
    warpsort_context_t *ctx = (warpsort_context_t *)&ctx;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = WARPSORT_BACKEND_CUDA;
    warpsort_status_t st = warpsort_create(&ctx, &cfg);
    if (!WT_BUILT_WITH_CUDA) {
        assert_int_equal(st, WARPSORT_BACKEND_UNAVAILABLE);
        assert_null(ctx);
        return;
    }
    /* built with CUDA: either a device answers, or it is unavailable and
     * AUTO, taking the CPU, names the reason (here: no device) */
    if (st == WARPSORT_OK) {
        assert_int_equal(warpsort_get_backend(ctx), WARPSORT_BACKEND_CUDA);
        warpsort_destroy(ctx);
    } else {
        assert_int_equal(st, WARPSORT_BACKEND_UNAVAILABLE);
        assert_null(ctx);
        cfg.backend = WARPSORT_BACKEND_AUTO;
        assert_int_equal(warpsort_create(&ctx, &cfg), WARPSORT_OK);
        assert_int_equal(warpsort_get_backend(ctx), WARPSORT_BACKEND_CPU);
        if (!strstr(warpsort_last_error(ctx), "CUDA"))
            fail_msg("AUTO does not say why CUDA is unusable: '%s'", warpsort_last_error(ctx));
        /* the next call starts clean */
        uint32_t two[2] = {2, 1};
        assert_int_equal(warpsort_sort(ctx, two, 2, WARPSORT_U32, 0), WARPSORT_OK);
        assert_string_equal(warpsort_last_error(ctx), "");
        warpsort_destroy(ctx);
    }
}

static void test_workspace_on_cpu(void **state) {
    struct fixture *f = *state;
    expect_error(f, warpsort_set_workspace(f->ctx, f->values, sizeof f->values),
                 WARPSORT_UNSUPPORTED);
    /* NULL returns to context-managed workspace, which the CPU backend always uses. */
    assert_int_equal(warpsort_set_workspace(f->ctx, NULL, 0), WARPSORT_OK);
    assert_string_equal(warpsort_last_error(f->ctx), "");
    assert_int_equal(warpsort_sort(f->ctx, f->keys, N, WARPSORT_U64, 0), WARPSORT_OK);
    for (size_t i = 1; i < N; i++) assert_true(f->keys[i - 1] <= f->keys[i]);
    memcpy(f->keys, f->keys_copy, sizeof f->keys);
    size_t bytes = 12345;
    assert_int_equal(
        warpsort_workspace_size(f->ctx, 1000, WARPSORT_F32, 4, WARPSORT_STABLE, &bytes),
        WARPSORT_OK);
    assert_int_equal(bytes, 0); /* the CPU backend needs no device workspace */
    bytes = 12345;
    assert_int_equal(
        warpsort_workspace_size(f->ctx, 1000, WARPSORT_F32, 8, WARPSORT_WORKSPACE_ARGSORT, &bytes),
        WARPSORT_OK);
    assert_int_equal(bytes, 0);
    assert_int_equal(warpsort_workspace_size(f->ctx, 1000, WARPSORT_F32, 0, 0, NULL),
                     WARPSORT_INVALID_ARGUMENT);
    /* an argsort writes indices: their size must be given */
    assert_int_equal(
        warpsort_workspace_size(f->ctx, 1000, WARPSORT_F32, 0, WARPSORT_WORKSPACE_ARGSORT, &bytes),
        WARPSORT_INVALID_ARGUMENT);
    /* n whose byte counts would not fit in a size_t */
    assert_int_equal(warpsort_workspace_size(f->ctx, SIZE_MAX / 16, WARPSORT_U64, 8, 0, &bytes),
                     WARPSORT_INVALID_ARGUMENT);
    assert_int_equal(warpsort_workspace_size(f->ctx, 1000, WARPSORT_F32, 0, 0x100, &bytes),
                     WARPSORT_INVALID_ARGUMENT);
}

static void test_status_tables(void **state) {
    (void)state;
    struct {
        warpsort_status_t code;
        const char *name, *text;
    } const expected[] = {
#define WT_X(name, value, text) {WARPSORT_##name, "WARPSORT_" #name, text},
        WARPSORT_STATUS_LIST(WT_X)
#undef WT_X
    };
    const size_t count = sizeof expected / sizeof *expected;
    assert_int_equal(count, WARPSORT_STATUS_COUNT_);
    assert_int_equal(WARPSORT_OK, 0);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(expected[i].code, (int)i); /* explicit, dense values */
        assert_string_equal(warpsort_status_name(expected[i].code), expected[i].name);
        assert_string_equal(warpsort_status_string(expected[i].code), expected[i].text);
        assert_true(strlen(expected[i].text) > 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(warpsort_status_string(expected[i].code),
                                    warpsort_status_string(expected[j].code));
    }
    const int unknown[] = {WARPSORT_STATUS_COUNT_, -1, 999};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        warpsort_status_t s = (warpsort_status_t)unknown[i];
        assert_string_equal(warpsort_status_name(s), "WARPSORT_UNKNOWN_STATUS");
        assert_non_null(warpsort_status_string(s));
        assert_true(strlen(warpsort_status_string(s)) > 0);
    }
}

static void test_version(void **state) {
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", WARPSORT_VERSION_MAJOR, WARPSORT_VERSION_MINOR,
             WARPSORT_VERSION_PATCH);
    assert_string_equal(warpsort_version(), want);
    assert_int_equal(warpsort_version_code(), WARPSORT_VERSION_CODE);
    assert_int_equal(WARPSORT_VERSION_CODE, WARPSORT_VERSION_MAJOR * 10000 +
                                                WARPSORT_VERSION_MINOR * 100 +
                                                WARPSORT_VERSION_PATCH);
}

static void test_dtype_table(void **state) {
    (void)state;
    const struct {
        warpsort_dtype_t d;
        const char *name;
        size_t size;
    } expected[] = {{WARPSORT_U32, "u32", 4}, {WARPSORT_I32, "i32", 4}, {WARPSORT_F32, "f32", 4},
                    {WARPSORT_U64, "u64", 8}, {WARPSORT_I64, "i64", 8}, {WARPSORT_F64, "f64", 8}};
    assert_int_equal(sizeof expected / sizeof *expected, WARPSORT_DTYPE_COUNT_);
    for (size_t i = 0; i < WARPSORT_DTYPE_COUNT_; i++) {
        assert_string_equal(warpsort_dtype_name(expected[i].d), expected[i].name);
        assert_int_equal(warpsort_dtype_size(expected[i].d), expected[i].size);
        warpsort_dtype_t back = (warpsort_dtype_t)-1;
        assert_int_equal(warpsort_dtype_from_name(expected[i].name, &back), WARPSORT_OK);
        assert_int_equal(back, expected[i].d);
    }
    warpsort_dtype_t d = WARPSORT_U32;
    assert_int_equal(warpsort_dtype_from_name("f16", &d), WARPSORT_UNSUPPORTED_DTYPE);
    assert_int_equal(warpsort_dtype_from_name("U32", &d), WARPSORT_UNSUPPORTED_DTYPE);
    assert_int_equal(warpsort_dtype_from_name("", &d), WARPSORT_UNSUPPORTED_DTYPE);
    assert_int_equal(d, WARPSORT_U32); /* untouched on failure */
    assert_int_equal(warpsort_dtype_from_name(NULL, &d), WARPSORT_NULL_POINTER);
    assert_int_equal(warpsort_dtype_from_name("u32", NULL), WARPSORT_NULL_POINTER);
    assert_null(warpsort_dtype_name(WARPSORT_DTYPE_COUNT_));
    assert_null(warpsort_dtype_name((warpsort_dtype_t)-1));
    assert_int_equal(warpsort_dtype_size(WARPSORT_DTYPE_COUNT_), 0);
    assert_int_equal(warpsort_dtype_size((warpsort_dtype_t)-1), 0);
}

static void test_backend_names(void **state) {
    (void)state;
    assert_string_equal(warpsort_backend_name(WARPSORT_BACKEND_AUTO), "auto");
    assert_string_equal(warpsort_backend_name(WARPSORT_BACKEND_CPU), "cpu");
    assert_string_equal(warpsort_backend_name(WARPSORT_BACKEND_CUDA), "cuda");
    assert_null(warpsort_backend_name((warpsort_backend_t)3));
}

/* A fresh context has no message; an error names the failed call. */
static void test_last_error_lifetime(void **state) {
    struct fixture *f = *state;
    assert_string_equal(warpsort_last_error(f->ctx), "");
    expect_error(f, warpsort_sort(f->ctx, NULL, N, WARPSORT_U32, 0), WARPSORT_NULL_POINTER);
    assert_non_null(strstr(warpsort_last_error(f->ctx), "warpsort_sort"));
    /* ... and lasts only until the next call. */
    uint32_t one = 7;
    assert_int_equal(warpsort_sort(f->ctx, &one, 1, WARPSORT_U32, 0), WARPSORT_OK);
    assert_string_equal(warpsort_last_error(f->ctx), "");
}

/* Creates with a device list; returns the status, *ctx NULL on failure. */
static warpsort_status_t create_with_devices(warpsort_backend_t backend, const int *devices,
                                             int count, warpsort_context_t **ctx) {
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT;
    cfg.backend = backend;
    cfg.devices = devices;
    cfg.device_count = count;
    *ctx = (warpsort_context_t *)ctx; /* garbage: create must clear it */
    return warpsort_create(ctx, &cfg);
}

/* The device list's rules that need no GPU (warpsort.h, warpsort_create):
 * rejected on every build and backend, with warpsort_create_error naming
 * the bad entry. */
static void test_device_list(void **state) {
    (void)state;
    static const struct {
        int devices[4];
        int count, null_list;
        warpsort_status_t want;
        const char *says;
    } bad[] = {
        {{0, -1}, 2, 0, WARPSORT_INVALID_ARGUMENT, "devices[1] = -1 is negative"},
        {{1, 0, 1}, 3, 0, WARPSORT_INVALID_ARGUMENT, "devices[2] = 1 repeats devices[0]"},
        {{3, 3}, 2, 0, WARPSORT_INVALID_ARGUMENT, "devices[1] = 3 repeats devices[0]"},
        {{0}, -2, 0, WARPSORT_INVALID_ARGUMENT, "device_count = -2"},
        {{0}, WARPSORT_MAX_DEVICES + 1, 0, WARPSORT_INVALID_ARGUMENT, "device_count = 65"},
        {{0}, 2, 1, WARPSORT_NULL_POINTER, "devices is NULL with device_count = 2"},
        {{0}, WARPSORT_ALL_DEVICES, 0, WARPSORT_INVALID_ARGUMENT, "WARPSORT_ALL_DEVICES"},
    };
    const warpsort_backend_t backends[] = {WARPSORT_BACKEND_CPU, WARPSORT_BACKEND_AUTO,
                                           WARPSORT_BACKEND_CUDA};
    int many[WARPSORT_MAX_DEVICES + 1] = {0};
    for (int i = 0; i <= WARPSORT_MAX_DEVICES; i++) many[i] = i;
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            warpsort_context_t *ctx;
            const int *list = bad[i].null_list                           ? NULL
                              : bad[i].count == WARPSORT_MAX_DEVICES + 1 ? many
                                                                         : bad[i].devices;
            const warpsort_status_t st = create_with_devices(backends[b], list, bad[i].count, &ctx);
            if (st != bad[i].want || ctx != NULL)
                fail_msg("backend %s, case %zu: %s (want %s)", warpsort_backend_name(backends[b]),
                         i, warpsort_status_name(st), warpsort_status_name(bad[i].want));
            if (!strstr(warpsort_create_error(), bad[i].says))
                fail_msg("case %zu: create error '%s' does not say '%s'", i,
                         warpsort_create_error(), bad[i].says);
        }
    /* Accepted lists: the CPU backend never uses them; device_count 0
     * ignores devices; a success clears the last create error. */
    const int two[2] = {1, 0};
    warpsort_context_t *ctx;
    assert_int_equal(create_with_devices(WARPSORT_BACKEND_CPU, two, 2, &ctx), WARPSORT_OK);
    assert_string_equal(warpsort_create_error(), "");
    uint32_t keys[3] = {3, 1, 2};
    assert_int_equal(warpsort_sort(ctx, keys, 3, WARPSORT_U32, 0), WARPSORT_OK);
    assert_int_equal(keys[0], 1);
    warpsort_destroy(ctx);
    const int negative[1] = {-5};
    assert_int_equal(create_with_devices(WARPSORT_BACKEND_CPU, negative, 0, &ctx), WARPSORT_OK);
    warpsort_destroy(ctx);
    assert_int_equal(create_with_devices(WARPSORT_BACKEND_CPU, NULL, WARPSORT_ALL_DEVICES, &ctx),
                     WARPSORT_OK);
    warpsort_destroy(ctx);
    /* An ordinal with no device behind it: BACKEND_UNAVAILABLE where CUDA is
     * asked for and there is no such device (without the CUDA backend: for
     * any list); AUTO takes the CPU and says why. */
    const int far[2] = {0, 4095};
    warpsort_status_t st = create_with_devices(WARPSORT_BACKEND_CUDA, far, 2, &ctx);
    assert_int_equal(st, WARPSORT_BACKEND_UNAVAILABLE);
    assert_null(ctx);
    assert_true(strlen(warpsort_create_error()) > 0);
    if (WT_BUILT_WITH_CUDA && strstr(warpsort_create_error(), "CUDA device 0") == NULL &&
        strstr(warpsort_create_error(), "no CUDA device") == NULL &&
        strstr(warpsort_create_error(), "devices[1] = 4095") == NULL)
        fail_msg("create error '%s' names neither the device nor devices[1]",
                 warpsort_create_error());
    assert_int_equal(create_with_devices(WARPSORT_BACKEND_AUTO, far, 2, &ctx), WARPSORT_OK);
    if (warpsort_get_backend(ctx) == WARPSORT_BACKEND_CPU && WT_BUILT_WITH_CUDA &&
        !strstr(warpsort_last_error(ctx), "CUDA"))
        fail_msg("AUTO does not say why CUDA is unusable: '%s'", warpsort_last_error(ctx));
    assert_int_equal(warpsort_get_backend(ctx), WARPSORT_BACKEND_CPU);
    warpsort_destroy(ctx);
}

int main(int argc, char **argv) {
    if (wt_cmocka_options(argc, argv) < 0) return 2;
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_null_context),
        T(test_null_pointers),
        T(test_empty_and_single),
        T(test_unknown_dtype),
        T(test_unknown_flags),
        T(test_misaligned),
        T(test_bad_value_sizes),
        T(test_overlap),
        T(test_index_bytes_too_small),
        T(test_n_too_large),
        T(test_out_of_memory),
        T(test_create),
        T(test_config_struct_size),
        T(test_cuda_backend_request),
        T(test_workspace_on_cpu),
        T(test_status_tables),
        T(test_version),
        T(test_dtype_table),
        T(test_backend_names),
        T(test_last_error_lifetime),
        T(test_device_list),
    };
#undef T
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
