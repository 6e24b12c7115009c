/*
 * segment_sort_tests.cu - warpsort::warp_sort_segment and block_sort_segment
 * with STABLE = false: keys alone and key/value pairs, segment lengths 0, 1,
 * 2, 31, 32, 33, the block's thread count, partial and full capacities,
 * both orders, 4- and 8-byte keys (u32, f32, u64, f64) with ties, NaNs,
 * +-0 and real keys equal to the padding sentinel.
 *
 * Checks per segment: the keys are exactly the input's keys sorted by the
 * library's order (warpsort::encode), and ordered by the independent
 * reference (testkit); with values, the (key, value) multiset equals the
 * input's (compared after sorting the pairs by key, then value, on the
 * host), since an unstable sort may permute the values of equal keys; the
 * slots past len (padding of the segment's slot) are unchanged.
 * Each case runs out of place with aligned slots, out of place with slots
 * one item apart (unaligned: the scalar stores) and generated values
 * (in_vals NULL: iota_base + index), and in place with unaligned slots.
 */
#include <stdlib.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "device_test.h"
#include "warpsort/segment_sort.cuh"

using warpsort::key_codec;
using warpsort::no_value;
using warpsort::sort_order;

/* p + at, or NULL for a NULL p (no values, generated values). */
template <typename X>
__device__ __forceinline__ X *seg_at(X *p, size_t at) {
    return p ? p + at : p;
}

/* Group g of WIDTH lanes sorts segment g: lens[g] items of the slot at
 * g * stride, from in_k / in_v into out_k / out_v (in_v NULL: generated
 * values; the same arrays: in place). Blocks of 128 threads. */
template <int WIDTH, int K, typename KB, typename V>
__global__ void __launch_bounds__(128)
    warp_segment_kernel(const KB *in_k, const V *in_v, KB *out_k, V *out_v, const int *lens,
                        int stride, key_codec codec, unsigned long long iota_base) {
    const int g = (int)((blockIdx.x * blockDim.x + threadIdx.x) / WIDTH);
    const size_t at = (size_t)g * (size_t)stride;
    warpsort::warp_sort_segment<WIDTH, K, false>(in_k + at, seg_at(in_v, at), out_k + at,
                                                 seg_at(out_v, at), lens[g], codec, iota_base);
}

/* Block b sorts segment b (as above, one segment a block). */
template <int THREADS, int K, typename KB, typename V>
__global__ void __launch_bounds__(THREADS)
    block_segment_kernel(const KB *in_k, const V *in_v, KB *out_k, V *out_v, const int *lens,
                         int stride, key_codec codec, unsigned long long iota_base) {
    __shared__ warpsort::segment_sort_storage<KB, V, THREADS, K> storage;
    const size_t at = (size_t)blockIdx.x * (size_t)stride;
    warpsort::block_sort_segment<THREADS, K, false>(in_k + at, seg_at(in_v, at), out_k + at,
                                                    seg_at(out_v, at), lens[blockIdx.x], codec,
                                                    storage, iota_base);
}

/* Distributions: the generator's (random: nearly distinct keys; few: 16
 * distinct keys; nan-mix: NaNs of several payloads, +-0, +-inf, extremes;
 * equal: one key everywhere), and two of this file: specials, ties among
 * the sentinel key, the first key of the order, +-0, NaNs (integers: 0, 1,
 * the sign bit) and two random keys, with the sentinel key at least once
 * in every non-empty segment; all-sentinel, every key the sentinel key. */
enum seg_dist {
    SEG_RANDOM,
    SEG_FEW,
    SEG_NAN_MIX,
    SEG_EQUAL,
    SEG_SPECIALS,
    SEG_ALL_SENTINEL,
    SEG_DIST_COUNT
};
static const char *seg_dist_name(int d) {
    static const char *names[] = {"random", "few", "nan-mix", "equal", "specials", "all-sentinel"};
    return names[d];
}
static keygen_dist_t seg_keygen(int d) {
    const keygen_dist_t map[] = {KEYGEN_RANDOM, KEYGEN_FEW, KEYGEN_NAN_MIX, KEYGEN_EQUAL};
    return map[d];
}

/* The key whose ordered bits under codec are the padding sentinel: the
 * last key of the order, tied with the padding (u32 ascending 0xFFFFFFFF,
 * descending 0; f32 ascending the NaN 0xFF800001, which keybits.h puts
 * last, descending -inf 0xFF800000). */
template <typename KB>
static KB seg_sentinel_key(key_codec codec) {
    return warpsort::decode(warpsort::sentinel<KB>(), codec);
}

/* Keys of SEG_SPECIALS for keys[0, len) (raw bits): about a quarter the
 * sentinel key, the rest from the pool. */
template <typename KB>
static void seg_fill_specials(KB *keys, int len, int dtype, key_codec codec, uint64_t seed) {
    const bool f32 = dtype == WARPSORT_F32, f64 = dtype == WARPSORT_F64;
    const uint64_t sign = sizeof(KB) == 8 ? 1ull << 63 : 1ull << 31;
    uint64_t pool[10];
    int np = 0;
    pool[np++] = (uint64_t)seg_sentinel_key<KB>(codec);
    pool[np++] = (uint64_t)warpsort::decode((KB)0, codec); /* first in the order */
    if (f32) {
        const uint64_t p[] = {0x00000000u, 0x80000000u, 0x7FC00000u, 0xFFC00000u, 0x7F800000u};
        for (uint64_t x : p) pool[np++] = x;
    } else if (f64) {
        const uint64_t p[] = {0, 0x8000000000000000ull, 0x7FF8000000000000ull,
                              0xFFF8000000000000ull, 0x7FF0000000000000ull};
        for (uint64_t x : p) pool[np++] = x;
    } else {
        const uint64_t p[] = {0, 1, sign, sign - 1, 2};
        for (uint64_t x : p) pool[np++] = x;
    }
    /* two random keys, finite for floats */
    KB rnd[2];
    keygen_fill(rnd, 2, dtype, KEYGEN_RANDOM, seed ^ 0x5eedull);
    pool[np++] = (uint64_t)rnd[0];
    pool[np++] = (uint64_t)rnd[1];
    for (int j = 0; j < len; j++) {
        const uint64_t r = wt_mix(seed * 1000003ull + (uint64_t)j);
        keys[j] = (KB)(r % 4 == 0 ? pool[0] : pool[(r >> 2) % (uint64_t)np]);
    }
}

/* Checks one segment slot of `slot` items of which the first len were
 * sorted. in_k / in_v: the input (in_v the values the kernel read or
 * generated); before_k / before_v: the output slot before the launch;
 * out_k / out_v: after. 0 if right, else 1 with a message. */
template <typename KB, typename V>
static int seg_check(const KB *in_k, const V *in_v, const KB *before_k, const V *before_v,
                     const KB *out_k, const V *out_v, int len, int slot, int dtype, key_codec codec,
                     char *msg, size_t msg_len) {
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    /* keys: exactly the input's, ordered by the library's order */
    std::vector<KB> want(in_k, in_k + len);
    std::sort(want.begin(), want.end(), [codec](KB a, KB b) {
        return warpsort::encode(a, codec) < warpsort::encode(b, codec);
    });
    for (int j = 0; j < len; j++) {
        if (out_k[j] != want[j]) {
            snprintf(msg, msg_len, "key %d of %d is 0x%llx, the library's order puts 0x%llx", j,
                     len, (unsigned long long)out_k[j], (unsigned long long)want[j]);
            return 1;
        }
    }
    /* the same keys by the independent reference order */
    if (wt_check_sorted(out_k, (size_t)len, (warpsort_dtype_t)dtype,
                        codec.desc ? WARPSORT_DESCENDING : 0u, msg, msg_len))
        return 1;
    if constexpr (PAIRS) {
        std::vector<std::pair<KB, V>> a((size_t)len), b((size_t)len);
        for (int j = 0; j < len; j++) {
            a[j] = std::make_pair(in_k[j], in_v[j]);
            b[j] = std::make_pair(out_k[j], out_v[j]);
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        for (int j = 0; j < len; j++) {
            if (a[j] != b[j]) {
                snprintf(msg, msg_len,
                         "(key, value) pairs differ from the input's: sorted pair %d of %d is "
                         "(0x%llx, %llu) in the output, (0x%llx, %llu) in the input",
                         j, len, (unsigned long long)b[j].first, (unsigned long long)b[j].second,
                         (unsigned long long)a[j].first, (unsigned long long)a[j].second);
                return 1;
            }
        }
    }
    for (int j = len; j < slot; j++) {
        bool changed = out_k[j] != before_k[j];
        if constexpr (PAIRS) changed = changed || out_v[j] != before_v[j];
        if (changed) {
            snprintf(msg, msg_len, "slot item %d (past len %d) was changed", j, len);
            return 1;
        }
    }
    return 0;
}

enum seg_form { SEG_WARP, SEG_BLOCK };

/* One case: form FORM with G = WIDTH (warp) or THREADS (block) and K items
 * a thread, key bits KB read as dtype, values V, in the given order. */
template <seg_form FORM, int G, int K, typename KB, typename V>
static void run_segment(const dt_options &o, dt_tally &t, int dtype, sort_order order) {
    constexpr bool PAIRS = warpsort::is_value<V>::value;
    constexpr int CAP = G * K;
    char name[160], items[16];
    if (PAIRS)
        snprintf(items, sizeof items, "pairs v%d", (int)sizeof(V));
    else
        snprintf(items, sizeof items, "keys");
    snprintf(name, sizeof name, "%s %s %s %s=%d K=%d %s unstable",
             FORM == SEG_WARP ? "warp_sort_segment" : "block_sort_segment", dt_dtype_name(dtype),
             items, FORM == SEG_WARP ? "W" : "T", G, K,
             order == warpsort::descending ? "desc" : "asc");
    if (!dt_selected(o, name)) return;
    /* kind: dtype % 3 (0 unsigned, 1 signed, 2 float), as warpsort_dtype_t counts */
    const key_codec codec = {dtype % 3, order == warpsort::descending ? 1 : 0};

    /* lengths: -1 stands for a random one in [1, CAP]; the block form adds
     * its thread count and one more, the warp form 3 and 5 */
    const int extra = FORM == SEG_BLOCK ? G : 3, extra2 = FORM == SEG_BLOCK ? G + 1 : 5;
    const int wanted[] = {1, 2, 31, 32, 33, extra, extra2, CAP / 2 + 1, CAP - 1, CAP, 0, -1};
    std::vector<int> lens_list;
    for (int w : wanted)
        if (w <= CAP && std::find(lens_list.begin(), lens_list.end(), w) == lens_list.end())
            lens_list.push_back(w);
    lens_list.push_back(-1); /* a second random length */
    const int L = (int)lens_list.size();
    /* warp form: blocks of 128 threads hold 128 / G groups */
    const int per_block = FORM == SEG_WARP ? 128 / G : 1;
    int segments = std::max(2 * L, 2 * per_block);
    segments = (segments + per_block - 1) / per_block * per_block;
    const int blocks = segments / per_block, threads = FORM == SEG_WARP ? 128 : G;

    const int dists_full[] = {SEG_RANDOM, SEG_FEW,      SEG_NAN_MIX,
                              SEG_EQUAL,  SEG_SPECIALS, SEG_ALL_SENTINEL};
    const int dists_quick[] = {SEG_FEW, SEG_SPECIALS};
    const int *dists = o.quick ? dists_quick : dists_full;
    const int num_dists = o.quick ? 2 : 6;
    const unsigned long long iota_base = sizeof(V) == 8 ? 0x500000000ull : 0x50000000ull;

    char msg[512] = "";
    int failed = 0;
    for (int d = 0; d < num_dists && !failed; d++) {
        /* mode 0: out of place, aligned slots, values read; 1: out of place,
         * slots CAP + 1 apart, values generated; 2: in place, slots CAP + 1 apart */
        for (int mode = 0; mode < 3 && !failed; mode++) {
            const uint64_t seed = 9000u + 131u * (uint64_t)CAP + 17u * (uint64_t)G +
                                  3u * (uint64_t)dists[d] + (uint64_t)mode +
                                  (uint64_t)order * 7919u + (uint64_t)dtype * 104729u;
            const int stride = mode == 0 ? CAP : CAP + 1;
            const bool iota = PAIRS && mode == 1, in_place = mode == 2;
            const size_t n = (size_t)segments * (size_t)stride;
            std::vector<int> lens(segments);
            for (int s = 0; s < segments; s++) {
                const int w = lens_list[s % L];
                lens[s] = w >= 0 ? w : 1 + (int)(wt_mix(seed + 31u * (uint64_t)s) % CAP);
            }
            std::vector<KB> in_k(n), before_k(n), out_k(n);
            /* host-side values (a placeholder type for keys alone) */
            using VH = typename std::conditional<PAIRS, V, uint32_t>::type;
            std::vector<VH> in_v(n), before_v(n), out_v(n);
            if (dists[d] < SEG_SPECIALS) {
                keygen_fill(in_k.data(), n, dtype, seg_keygen(dists[d]), seed);
            } else if (dists[d] == SEG_SPECIALS) {
                for (int s = 0; s < segments; s++)
                    seg_fill_specials(&in_k[(size_t)s * stride], stride, dtype, codec,
                                      seed + (uint64_t)s);
                for (int s = 0; s < segments; s++) /* the sentinel key among the real ones */
                    if (lens[s] > 0)
                        in_k[(size_t)s * stride + wt_mix(seed + 5u * (uint64_t)s) % lens[s]] =
                            seg_sentinel_key<KB>(codec);
            } else {
                std::fill(in_k.begin(), in_k.end(), seg_sentinel_key<KB>(codec));
            }
            for (size_t j = 0; j < n; j++) {
                in_v[j] = (VH)wt_mix(seed * 31u + j);
                before_k[j] = in_place ? in_k[j] : (KB)wt_mix(~(seed + j));
                before_v[j] = in_place ? in_v[j] : (VH)wt_mix(seed + 3u * j);
            }
            if (iota) /* the values the kernel generates: index in the segment + iota_base */
                for (int s = 0; s < segments; s++)
                    for (int j = 0; j < lens[s]; j++)
                        in_v[(size_t)s * stride + j] = (VH)(iota_base + (unsigned long long)j);

            KB *dk_in = dt_to_device(in_k.data(), n);
            KB *dk_out = in_place ? dk_in : dt_to_device(before_k.data(), n);
            VH *dv_in = PAIRS && !iota ? dt_to_device(in_v.data(), n) : NULL;
            VH *dv_out = !PAIRS ? NULL : in_place ? dv_in : dt_to_device(before_v.data(), n);
            int *dlens = dt_to_device(lens.data(), (size_t)segments);
            const V *kin_v = PAIRS ? (const V *)dv_in : NULL;
            V *kout_v = PAIRS ? (V *)dv_out : NULL;
            if constexpr (FORM == SEG_WARP)
                warp_segment_kernel<G, K, KB, V><<<blocks, threads>>>(
                    dk_in, kin_v, dk_out, kout_v, dlens, stride, codec, iota_base);
            else
                block_segment_kernel<G, K, KB, V><<<blocks, threads>>>(
                    dk_in, kin_v, dk_out, kout_v, dlens, stride, codec, iota_base);
            DT_CUDA(cudaGetLastError());
            DT_CUDA(cudaDeviceSynchronize());
            dt_to_host(out_k.data(), dk_out, n);
            if (PAIRS) dt_to_host(out_v.data(), dv_out, n);
            DT_CUDA(cudaFree(dk_in));
            if (!in_place) DT_CUDA(cudaFree(dk_out));
            if (dv_in) DT_CUDA(cudaFree(dv_in));
            if (dv_out && !in_place) DT_CUDA(cudaFree(dv_out));
            DT_CUDA(cudaFree(dlens));
            for (int s = 0; s < segments && !failed; s++) {
                const size_t at = (size_t)s * stride;
                failed =
                    seg_check<KB, V>(&in_k[at], (const V *)&in_v[at], &before_k[at],
                                     (const V *)&before_v[at], &out_k[at], (const V *)&out_v[at],
                                     lens[s], stride, dtype, codec, msg, sizeof msg);
                if (failed) {
                    char where[160];
                    snprintf(where, sizeof where, " [%s, %s, segment %d, len %d]",
                             seg_dist_name(dists[d]),
                             mode == 0   ? "out of place"
                             : mode == 1 ? (iota ? "out of place, unaligned, generated values"
                                                 : "out of place, unaligned")
                                         : "in place, unaligned",
                             s, lens[s]);
                    strncat(msg, where, sizeof msg - strlen(msg) - 1);
                }
            }
        }
    }
    dt_record(t, name, failed, msg);
}

/* One shape for every dtype of its key width, both orders: one
 * instantiation serves them all (the codec is a run-time argument). */
template <seg_form FORM, int G, int K, typename KB, typename V>
static void run_shape(const dt_options &o, dt_tally &t) {
    const int dtypes4[] = {WARPSORT_U32, WARPSORT_F32}, dtypes8[] = {WARPSORT_U64, WARPSORT_F64};
    const int *dtypes = sizeof(KB) == 8 ? dtypes8 : dtypes4;
    for (int i = 0; i < 2; i++) {
        run_segment<FORM, G, K, KB, V>(o, t, dtypes[i], warpsort::ascending);
        run_segment<FORM, G, K, KB, V>(o, t, dtypes[i], warpsort::descending);
    }
}

void dt_segment_sort_tests(const dt_options &o, dt_tally &t) {
    /* warp form: full warp capacity (32 x 16), lengths around 32 (32 x 2),
     * small groups down to one lane, values wider and narrower than keys */
    run_shape<SEG_WARP, 32, 16, uint32_t, no_value>(o, t);
    run_shape<SEG_WARP, 32, 16, uint32_t, uint32_t>(o, t);
    run_shape<SEG_WARP, 32, 2, uint32_t, uint32_t>(o, t);
    run_shape<SEG_WARP, 8, 4, uint32_t, uint64_t>(o, t);
    run_shape<SEG_WARP, 2, 2, uint32_t, uint32_t>(o, t);
    run_shape<SEG_WARP, 1, 8, uint32_t, uint32_t>(o, t);
    run_shape<SEG_WARP, 32, 16, uint64_t, no_value>(o, t);
    run_shape<SEG_WARP, 32, 8, uint64_t, uint64_t>(o, t);
    run_shape<SEG_WARP, 16, 4, uint64_t, uint32_t>(o, t);
    /* block form: the smallest block to 1024 threads */
    run_shape<SEG_BLOCK, 128, 4, uint32_t, no_value>(o, t);
    run_shape<SEG_BLOCK, 128, 4, uint32_t, uint32_t>(o, t);
    run_shape<SEG_BLOCK, 256, 8, uint32_t, uint32_t>(o, t);
    run_shape<SEG_BLOCK, 64, 8, uint32_t, uint64_t>(o, t);
    run_shape<SEG_BLOCK, 1024, 4, uint32_t, uint32_t>(o, t);
    run_shape<SEG_BLOCK, 256, 4, uint64_t, no_value>(o, t);
    run_shape<SEG_BLOCK, 128, 8, uint64_t, uint64_t>(o, t);
}
