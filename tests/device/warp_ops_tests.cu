/*
 * warp_ops_tests.cu - warpsort::warp_reduce, warp_inclusive_scan,
 * warp_exclusive_scan (with and without the total) and warp_compact /
 * warp_compact_rank, for every group width 1..32, against sequential host
 * references. Operators: sums (u32 wrapping, u64, integral doubles, so
 * the order of additions cannot change a result), min (i32), max (f32),
 * bitwise or, and a non-commutative one (composition of affine maps mod
 * 2^32, an 8-byte struct) that checks lane order is kept.
 */
#include <stdlib.h>

#include <type_traits>
#include <vector>

#include "device_test.h"
#include "warpsort/warp_ops.cuh"

/* x -> a*x + b (mod 2^32); op(f, g) applies f, then g. */
struct affine {
    uint32_t a, b;
};
struct compose_op {
    __host__ __device__ affine operator()(const affine &f, const affine &g) const {
        return affine{g.a * f.a, g.a * f.b + g.b};
    }
};
static bool same(const affine &x, const affine &y) { return x.a == y.a && x.b == y.b; }
template <typename T>
static bool same(const T &x, const T &y) {
    return memcmp(&x, &y, sizeof(T)) == 0;
}
struct host_plus {
    template <typename T>
    T operator()(const T &a, const T &b) const {
        return a + b;
    }
};
struct host_min {
    template <typename T>
    T operator()(const T &a, const T &b) const {
        return b < a ? b : a;
    }
};
struct host_max {
    template <typename T>
    T operator()(const T &a, const T &b) const {
        return a < b ? b : a;
    }
};
struct host_or {
    template <typename T>
    T operator()(const T &a, const T &b) const {
        return a | b;
    }
};

/* out[4*i + 0..3] per lane: reduce, inclusive, exclusive (seeded), total. */
template <int WIDTH, typename T, typename Op>
__global__ void warp_ops_kernel(const T *in, T *out, T init, Op op) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T x = in[i];
    T total;
    out[4 * i + 0] = warpsort::warp_reduce<WIDTH>(x, op);
    out[4 * i + 1] = warpsort::warp_inclusive_scan<WIDTH>(x, op);
    out[4 * i + 2] = warpsort::warp_exclusive_scan<WIDTH>(x, op, init, total);
    out[4 * i + 3] = total;
    /* the form without total must agree */
    if (!(warpsort::warp_exclusive_scan<WIDTH>(x, op, init) == out[4 * i + 2])) out[4 * i + 3] = x;
}
template <int WIDTH, typename Op>
__global__ void warp_ops_kernel_affine(const affine *in, affine *out, affine init, Op op) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const affine x = in[i];
    affine total;
    out[4 * i + 0] = warpsort::warp_reduce<WIDTH>(x, op);
    out[4 * i + 1] = warpsort::warp_inclusive_scan<WIDTH>(x, op);
    out[4 * i + 2] = warpsort::warp_exclusive_scan<WIDTH>(x, op, init, total);
    out[4 * i + 3] = total;
}

template <int WIDTH, typename T, typename Op, typename HostOp>
static void run_ops(const dt_options &o, dt_tally &t, const char *what, T (*gen)(uint64_t), T init,
                    Op op, HostOp hop) {
    char name[128];
    snprintf(name, sizeof name, "warp_ops %s W=%d", what, WIDTH);
    if (!dt_selected(o, name)) return;
    const int threads = 128, blocks = 2, n = threads * blocks;
    std::vector<T> in(n), out(4 * n);
    char msg[256] = "";
    int failed = 0;
    const int seeds = o.quick ? 1 : 3;
    for (int s = 0; s < seeds && !failed; s++) {
        for (int i = 0; i < n; i++) in[i] = gen(wt_mix((uint64_t)(s * n + i) + 12345u));
        T *din = dt_to_device(in.data(), (size_t)n);
        T *dout = dt_to_device(out.data(), (size_t)(4 * n));
        if constexpr (std::is_same<T, affine>::value)
            warp_ops_kernel_affine<WIDTH><<<blocks, threads>>>(din, dout, init, op);
        else
            warp_ops_kernel<WIDTH><<<blocks, threads>>>(din, dout, init, op);
        DT_CUDA(cudaGetLastError());
        DT_CUDA(cudaDeviceSynchronize());
        dt_to_host(out.data(), dout, (size_t)(4 * n));
        DT_CUDA(cudaFree(din));
        DT_CUDA(cudaFree(dout));
        for (int g = 0; g < n / WIDTH && !failed; g++) {
            const T *x = &in[g * WIDTH];
            T incl = x[0], excl = init;
            T total = x[0];
            for (int l = 1; l < WIDTH; l++) total = hop(total, x[l]);
            const T seeded_total = hop(init, total);
            for (int l = 0; l < WIDTH && !failed; l++) {
                if (l > 0) incl = hop(incl, x[l]);
                const T *r = &out[4 * (g * WIDTH + l)];
                const char *bad = !same(r[0], total)  ? "reduce"
                                  : !same(r[1], incl) ? "inclusive scan"
                                  : !same(r[2], excl) ? "exclusive scan"
                                  : !same(r[3], seeded_total)
                                      ? "exclusive total (or the form without it)"
                                      : NULL;
                if (bad) {
                    failed = 1;
                    snprintf(msg, sizeof msg, "%s wrong at group %d lane %d", bad, g, l);
                }
                excl = hop(excl, x[l]);
            }
        }
    }
    dt_record(t, name, failed, msg);
}

static uint32_t gen_u32(uint64_t r) { return (uint32_t)r; }
static uint64_t gen_u64(uint64_t r) { return r; }
static int32_t gen_i32(uint64_t r) { return (int32_t)(uint32_t)(r >> 7); }
static float gen_f32(uint64_t r) { return (float)((int64_t)(r % 2000001) - 1000000) / 64.0f; }
static double gen_f64(uint64_t r) { return (double)((int64_t)(r % 2000001) - 1000000); }
static uint32_t gen_bits(uint64_t r) { return 1u << (r % 32); }
static affine gen_affine(uint64_t r) { return affine{(uint32_t)r | 1u, (uint32_t)(r >> 32)}; }

/*--- compaction ---*/

/* Lane i keeps in[i] where keep[i]; group g writes out[g*WIDTH ...]. out
 * starts as a canary; count per lane goes to counts[i], rank to ranks[i]. */
template <int WIDTH>
__global__ void compact_kernel(const uint32_t *in, const int *keep, uint32_t *out, int *counts,
                               int *ranks) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int g = i / WIDTH;
    counts[i] = warpsort::warp_compact<WIDTH>(out + g * WIDTH, in[i], keep[i] != 0);
    int c2;
    ranks[i] = warpsort::warp_compact_rank<WIDTH>(keep[i] != 0, c2);
    if (c2 != counts[i]) counts[i] = -1;
}

template <int WIDTH>
static void run_compact(const dt_options &o, dt_tally &t) {
    char name[64];
    snprintf(name, sizeof name, "warp_compact W=%d", WIDTH);
    if (!dt_selected(o, name)) return;
    const int threads = 128, blocks = 2, n = threads * blocks;
    const uint32_t canary = 0xDEADBEEFu;
    std::vector<uint32_t> in(n), out(n, canary);
    std::vector<int> keep(n), counts(n), ranks(n);
    char msg[256] = "";
    int failed = 0;
    /* keep rates: none, all, about 1/2, about 1/8 */
    for (int rate = 0; rate < 4 && !failed; rate++) {
        for (int i = 0; i < n; i++) {
            const uint64_t r = wt_mix((uint64_t)(rate * n + i));
            in[i] = (uint32_t)i;
            keep[i] = rate == 0 ? 0 : rate == 1 ? 1 : rate == 2 ? (int)(r & 1) : (r % 8) == 0;
            out[i] = canary;
        }
        uint32_t *din = dt_to_device(in.data(), (size_t)n),
                 *dout = dt_to_device(out.data(), (size_t)n);
        int *dkeep = dt_to_device(keep.data(), (size_t)n),
            *dcounts = dt_to_device(counts.data(), (size_t)n);
        int *dranks = dt_to_device(ranks.data(), (size_t)n);
        compact_kernel<WIDTH><<<blocks, threads>>>(din, dkeep, dout, dcounts, dranks);
        DT_CUDA(cudaGetLastError());
        DT_CUDA(cudaDeviceSynchronize());
        dt_to_host(out.data(), dout, (size_t)n);
        dt_to_host(counts.data(), dcounts, (size_t)n);
        dt_to_host(ranks.data(), dranks, (size_t)n);
        for (void *p : {(void *)din, (void *)dout, (void *)dkeep, (void *)dcounts, (void *)dranks})
            DT_CUDA(cudaFree(p));
        for (int g = 0; g < n / WIDTH && !failed; g++) {
            int c = 0;
            for (int l = 0; l < WIDTH; l++) {
                const int i = g * WIDTH + l;
                if (ranks[i] != c) {
                    failed = 1;
                    snprintf(msg, sizeof msg, "rank %d at lane %d of group %d, want %d", ranks[i],
                             l, g, c);
                    break;
                }
                if (keep[i] && out[g * WIDTH + c] != in[i]) {
                    failed = 1;
                    snprintf(msg, sizeof msg, "group %d slot %d holds %u, want %u", g, c,
                             out[g * WIDTH + c], in[i]);
                    break;
                }
                c += keep[i] != 0;
            }
            for (int l = 0; l < WIDTH && !failed; l++) {
                if (counts[g * WIDTH + l] != c) {
                    failed = 1;
                    snprintf(msg, sizeof msg, "count %d in group %d, want %d",
                             counts[g * WIDTH + l], g, c);
                } else if (l >= c && out[g * WIDTH + l] != canary) {
                    failed = 1;
                    snprintf(msg, sizeof msg, "group %d wrote slot %d past its count %d", g, l, c);
                }
            }
        }
    }
    dt_record(t, name, failed, msg);
}

template <int WIDTH>
static void run_width(const dt_options &o, dt_tally &t) {
    run_ops<WIDTH>(o, t, "sum u32", gen_u32, (uint32_t)0, warpsort::plus_op{}, host_plus{});
    run_ops<WIDTH>(o, t, "sum u64 seeded", gen_u64, (uint64_t)77, warpsort::plus_op{}, host_plus{});
    run_ops<WIDTH>(o, t, "sum f64", gen_f64, 0.0, warpsort::plus_op{}, host_plus{});
    run_ops<WIDTH>(o, t, "min i32", gen_i32, (int32_t)INT32_MAX, warpsort::min_op{}, host_min{});
    run_ops<WIDTH>(o, t, "max f32", gen_f32, -1e30f, warpsort::max_op{}, host_max{});
    run_ops<WIDTH>(o, t, "or u32", gen_bits, 0u, warpsort::bit_or_op{}, host_or{});
    run_ops<WIDTH>(o, t, "affine (non-commutative)", gen_affine, affine{3u, 5u}, compose_op{},
                   compose_op{});
    run_compact<WIDTH>(o, t);
}

void dt_warp_ops_tests(const dt_options &o, dt_tally &t) {
    run_width<1>(o, t);
    run_width<2>(o, t);
    run_width<4>(o, t);
    run_width<8>(o, t);
    run_width<16>(o, t);
    run_width<32>(o, t);
}
