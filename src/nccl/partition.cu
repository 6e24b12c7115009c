/*
 * partition.cu - the partition-first route of a distributed sort of keys
 * (sort.cu picks it): the keys are cut by global splitters and exchanged
 * before anything is sorted, so the exchange runs under the sorts instead
 * of after one.
 *
 * The sort-first route sorts every rank's input, finds exact cuts in the
 * sorted runs, exchanges and merges: the exchange can only start once the
 * whole local sort is done.
 * Here (p ranks, K parts per rank, p x K + p - 1 buckets):
 *  1. Sample: every rank draws a systematic sample of its keys (S items in
 *     all, each rank's share in proportion to its input, ordered bits), all
 *     ranks gather them in rank order and sort the whole sample alike.
 *  2. Splitters: boundary j (global position g_j) gets a band [lo_j, hi_j)
 *     of sample keys around its expected place, t_j -+ 5 standard
 *     deviations of where it falls in a sample of S; the keys between two
 *     bands (rank r's own range) are cut into K parts of growing weight at
 *     sample keys. Every rank computes the same positions from n_total,
 *     p and S alone (ws_pt_plan_for).
 *  3. Count and scatter: each block counts its chunk of the input by
 *     bucket, a scan gives every (bucket, block) its place, and the scatter
 *     writes each key there: parts of this rank and band pieces it keeps
 *     straight into their final receive slots, the rest into a send buffer
 *     with 16-byte aligned pieces. The counts are gathered by every rank
 *     (one host wait), which is where the route is checked: every boundary
 *     must fall inside its band, every band fit its buffer and every part
 *     the leaf's reserve.
 *     Otherwise (few distinct keys, an unlucky sample) every rank drops
 *     the partition alike and takes the sort-first route from the untouched
 *     input.
 *  4. Exchange, on a stream of the highest priority: first the bands (each
 *     band to the two ranks beside it), then part 0 of every rank, part 1,
 *     ... each one grouped send / receive.
 *  5. Sorts, on the call's stream, as the pieces arrive: each band next to
 *     this rank (sorted whole on both ranks beside it; the boundary takes
 *     the part of it on this rank's side), then part k once it is all here,
 *     from the receive buffer straight into its place in keys_out.
 * Rank r's output is the tail of band r - 1 past g_(r-1), its K parts in
 * order, then the head of band r up to g_r: every key of the global order
 * between g_(r-1) and g_r, exactly. Keys alone: equal keys are the same
 * bits, so the order in which the scatter places them does not show.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cuda/check.cuh"
#include "cuda/device_sort.h"
#include "cuda/state.h"
#include "nccl/nccl_sort.h"
#include "warpsort/warp_ops.cuh"
#include "warpsort_nccl.h"

using warpsort::encode;
using warpsort::key_codec;

#define WS_PT_THREADS 256
#define WS_PT_ITEMS 8
#define WS_PT_TILE (WS_PT_THREADS * WS_PT_ITEMS)
/* Blocks a SM of the count and the scatter of KB-byte keys, as many as the
 * scatter's registers allow (40 for 4-byte keys, 48 for 8-byte ones, with
 * the next tile's loads in flight): a fixed grid, each block one
 * contiguous chunk of the input, so both walk the same chunks. Fewer
 * left each block's loads waiting on its tile's barriers (bench/NOTES.md,
 * issue 27). */
#define WS_PT_BLOCKS_PER_SM(kb) ((kb) == 4 ? 6 : 5)
/* The kernels' register bound: the same, but on chips with 1024 threads
 * an SM (sm_75), where four blocks fill it and the grid's others queue. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WS_PT_MIN_BLOCKS(kb) 4
#else
#define WS_PT_MIN_BLOCKS(kb) WS_PT_BLOCKS_PER_SM(kb)
#endif
/* The sample of up to four ranks: at most this many keys in all. A
 * boundary's band spans about 5 / sqrt(S) of the keys (0.5 % at 2^20),
 * which both ranks beside it sort while the first part travels; the
 * sample's own sort is not hidden. */
#define WS_PT_SAMPLE ((uint64_t)1 << 20)
/* Standard deviations of a boundary's place in the sample on each side. */
#define WS_PT_SIGMAS 5.0
/* Parts grow: part 0 has weight 1, part 1 weight 3, the rest 6 each, so
 * the first round (the one nothing hides) is short, and each later round
 * travels while the part before it sorts (a part's sort takes about 5x the
 * time its received half needs over NVLink). K: the fewest parts whose
 * largest holds at most WS_PT_PART_ITEMS, the size the leaf sorts at its
 * best rate per key (bench/NOTES.md, issue 27). */
#define WS_PT_PART_ITEMS ((uint64_t)220 << 20)
/* From this many keys a rank, at least two parts, so the first round
 * carries a quarter of the exchange at most. */
#define WS_PT_SPLIT_MIN ((uint64_t)1 << 24)
static_assert(WS_PT_MAX_PARTS + 3 <= WS_NCCL_SIDE_EVENTS, "an event a part and three");
static uint64_t ws_pt_weight(int k) { return k == 0 ? 1 : k == 1 ? 3 : 6; }
static uint64_t ws_pt_weights(int K) {
    uint64_t w = 0;
    for (int k = 0; k < K; k++) w += ws_pt_weight(k);
    return w;
}
/* Smallest input (items per rank on average) the route takes by default:
 * below it the sorts are too short to hide an exchange. */
#define WS_PT_MIN_PER_RANK ((uint64_t)1 << 22)
/* Fewest ranks the route takes by default. Two ranks sort first: there the
 * other route merges the received half under the exchange (overlap.cu), so
 * exchange and merge tail cost it less than this route's count, scatter
 * and the sorts' slowdown beside NCCL (measured on 2 x H100:
 * docs/multi-gpu.md, "Time model"); more ranks would merge log2 p times
 * after the exchange. */
#define WS_PT_MIN_RANKS 3

/*--- the plan: the same on every rank ---*/

static int ws_pt_env_parts(void) {
    const char *e = getenv("WARPSORT_NCCL_PARTS");
    const int v = e ? atoi(e) : 0;
    return v < 0 ? 0 : v > WS_PT_MAX_PARTS ? WS_PT_MAX_PARTS : v;
}

int ws_nccl_route(void) {
    const char *e = getenv("WARPSORT_NCCL_ROUTE");
    if (!e || !*e) return WS_NCCL_ROUTE_AUTO;
    if (!strcmp(e, "sort-first")) return WS_NCCL_ROUTE_SORT_FIRST;
    if (!strcmp(e, "partition")) return WS_NCCL_ROUTE_PARTITION;
    if (!strcmp(e, "partition-only")) return WS_NCCL_ROUTE_PARTITION_ONLY;
    return WS_NCCL_ROUTE_AUTO;
}

/* Keys in the sample: 2^20, and with more than four ranks p^2 / 16 times
 * that (at most 16 times), since a rank sorts up to two bands of about
 * 5 / sqrt(S) of all the keys each: 2 % of its own at two ranks, about 4 %
 * at eight and sixteen. All the keys of a small input. */
static uint64_t ws_pt_sample_of(uint64_t n_total, int p) {
    const uint64_t q = (uint64_t)p * (uint64_t)p / 16;
    const uint64_t s = WS_PT_SAMPLE * (q < 1 ? 1 : q > 16 ? 16 : q);
    return n_total < s ? n_total : s;
}
/* Half the band of boundary j, in places of a sample of S: WS_PT_SIGMAS
 * standard deviations of where the boundary falls in it, and a few places
 * for the rounding of the ranks' sample shares. */
static double ws_pt_half_band(uint64_t n_total, int p, int j, double S) {
    const double t = (double)ws_nccl_boundary(n_total, p, j) / (double)n_total * S;
    return WS_PT_SIGMAS * sqrt(t * (S - t) / S) + 2.0 + p;
}
/* Keys a band may hold in all: four times what the widest band's share of
 * the sample stands for (the plan takes the route only where twice fits),
 * all of a small input. */
static uint64_t ws_pt_band_cap(uint64_t n_total, int p) {
    const double S = (double)ws_pt_sample_of(n_total, p);
    double widest = 0;
    for (int j = 0; j + 1 < p; j++) {
        const double w = 2.0 * ws_pt_half_band(n_total, p, j, S) + 2.0;
        widest = w > widest ? w : widest;
    }
    const double cap = 4.0 * widest / S * (double)n_total + 65536.0;
    return cap < (double)n_total ? (uint64_t)cap : n_total;
}

int ws_pt_plan_for(const ws_nccl_call *c, const uint64_t *n_in_all, uint64_t n_total,
                   ws_pt_plan *pl) {
    memset(pl, 0, sizeof *pl);
    const int p = c->nranks, route = ws_nccl_route();
    if (c->vb || c->pairs || p < 2 || p > WS_PT_MAX_RANKS || !n_total) return 0;
    if (route == WS_NCCL_ROUTE_SORT_FIRST) return 0;
    if (route == WS_NCCL_ROUTE_AUTO &&
        (p < WS_PT_MIN_RANKS || n_total / (uint64_t)p < WS_PT_MIN_PER_RANK))
        return 0;
    const uint64_t per_rank = n_total / (uint64_t)p;
    int K = ws_pt_env_parts();
    if (!K)
        for (K = per_rank >= WS_PT_SPLIT_MIN ? 2 : 1; K < WS_PT_MAX_PARTS; K++)
            if ((double)per_rank * (double)ws_pt_weight(K - 1) / (double)ws_pt_weights(K) <=
                (double)WS_PT_PART_ITEMS)
                break;
    pl->p = p;
    pl->K = K;
    pl->B = p * K + p - 1;
    pl->band_cap = ws_pt_band_cap(n_total, p);
    /* Sample shares in proportion to the inputs (all of it when small). */
    const uint64_t want = ws_pt_sample_of(n_total, p);
    uint64_t at = 0;
    for (int r = 0; r < p; r++) {
        pl->s_at[r] = at;
        at += want == n_total ? n_in_all[r]
                              : (uint64_t)((double)want * (double)n_in_all[r] / (double)n_total);
    }
    pl->s_at[p] = at;
    const uint64_t S = at;
    if (S < 2) return 0;
    /* Splitter positions in the sorted sample: per rank its K - 1 part
     * splitters, then (but for the last) its band's lo and hi. */
    uint64_t prev_hi = 0; /* first sample position of rank r's own range */
    int n = 0;
    for (int r = 0; r < p; r++) {
        uint64_t lo = S, hi = S;
        if (r + 1 < p) {
            const double t = (double)ws_nccl_boundary(n_total, p, r) / (double)n_total * (double)S;
            const double d = ws_pt_half_band(n_total, p, r, (double)S);
            if (t - d < 1.0 || t + d > (double)S - 2.0) return 0; /* too small a sample */
            lo = (uint64_t)(t - d);
            hi = (uint64_t)(t + d) + 1;
            if (lo < prev_hi) return 0; /* bands overlap */
            /* Twice the keys the band's share of the sample stands for
             * must fit its buffer. */
            if ((double)(hi - lo) / (double)S * (double)n_total * 2.0 > (double)pl->band_cap)
                return 0;
        }
        for (uint64_t k = 1, w = 0; k < (uint64_t)K; k++) {
            w += ws_pt_weight((int)k - 1);
            pl->pos[n++] =
                prev_hi + (uint64_t)((double)(lo - prev_hi) * (double)w / (double)ws_pt_weights(K));
        }
        if (r + 1 < p) {
            pl->pos[n++] = lo;
            pl->pos[n++] = hi;
        }
        prev_hi = hi;
    }
    return n == pl->B - 1;
}

/* Bucket numbers: rank r's part k, and the band of boundary j. */
static inline int ws_pt_part(const ws_pt_plan *pl, int r, int k) { return r * (pl->K + 1) + k; }
static inline int ws_pt_band(const ws_pt_plan *pl, int j) { return j * (pl->K + 1) + pl->K; }

/*--- workspace ---*/

/* The route's buffers in the call's workspace (byte offsets), after the
 * leaf's own; from the plan's sizes alone. */
struct ws_pt_layout {
    size_t leaf;                     /* bytes the leaf may use */
    size_t sample, send, recv, band; /* band: two buffers of band_cap */
    size_t blk_cnt, cnt, cnt_all, split;
    size_t total;
};
static unsigned ws_pt_grid(const ws_cuda_state *st, size_t kb) {
    return (unsigned)(st->dev.sm_count * WS_PT_BLOCKS_PER_SM(kb));
}
static size_t ws_pt_leaf_bytes(const ws_cuda_state *st, size_t n, size_t kb) {
    return n ? ws_plan_make(&st->dev, n, kb, 0).lay.total : 0;
}
/* The leaf sorts the sample, the bands and the parts (none longer than
 * n_out); ws_pt_check makes sure each fits this. A plan's workspace grows
 * with n but not strictly (a few KiB back where the tiles change), so
 * the reserve keeps 1/64 and 64 KiB to spare. */
static size_t ws_pt_leaf_reserve(const ws_cuda_state *st, uint64_t S, uint64_t cap, size_t n_out,
                                 size_t kb) {
    const size_t sizes[3] = {(size_t)S, (size_t)cap, n_out};
    size_t leaf = 0;
    for (int i = 0; i < 3; i++) {
        const size_t b = ws_pt_leaf_bytes(st, sizes[i], kb);
        leaf = b > leaf ? b : leaf;
    }
    return ws_align256(leaf + leaf / 64 + 65536);
}
static ws_pt_layout ws_pt_layout_of(const ws_cuda_state *st, int p, int B, uint64_t S, uint64_t cap,
                                    size_t n_in, size_t n_out, size_t kb) {
    ws_pt_layout l;
    l.leaf = ws_pt_leaf_reserve(st, S, cap, n_out, kb);
    size_t at = l.leaf;
    l.sample = at;
    at += ws_align256(S * kb);
    l.send = at;
    at += ws_align256(n_in * kb + (size_t)B * 16);
    l.recv = at;
    at += ws_align256(n_out * kb);
    l.band = at;
    at += 2 * ws_align256(cap * kb);
    const size_t G = ws_pt_grid(st, kb);
    l.blk_cnt = at;
    at += ws_align256((size_t)B * G * sizeof(uint64_t));
    l.cnt = at;
    at += ws_align256((size_t)B * sizeof(uint64_t));
    l.cnt_all = at;
    at += ws_align256((size_t)B * (size_t)p * sizeof(uint64_t));
    l.split = at;
    at += ws_align256((size_t)B * kb);
    l.total = at;
    return l;
}
static ws_pt_layout ws_pt_layout_plan(const ws_cuda_state *st, const ws_pt_plan *pl, size_t n_in,
                                      size_t n_out, size_t kb) {
    return ws_pt_layout_of(st, pl->p, pl->B, pl->s_at[pl->p], pl->band_cap, n_in, n_out, kb);
}

size_t ws_pt_workspace(const ws_nccl_call *c, const ws_pt_plan *pl, size_t n_in, size_t n_out) {
    return ws_pt_layout_plan(ws_state(c->ctx), pl, n_in, n_out, c->kb).total;
}

/* Every size above grows with n_total, which is at most p (n_out + 1). */
size_t ws_pt_workspace_bound(const ws_cuda_state *st, int nranks, size_t n_in, size_t n_out,
                             size_t kb) {
    if (nranks < 2 || nranks > WS_PT_MAX_RANKS) return 0;
    const uint64_t n_total = ((uint64_t)n_out + 1) * (uint64_t)nranks;
    const int B = nranks * WS_PT_MAX_PARTS + nranks - 1;
    return ws_pt_layout_of(st, nranks, B, ws_pt_sample_of(n_total, nranks),
                           ws_pt_band_cap(n_total, nranks), n_in, n_out, kb)
        .total;
}

/*--- kernels ---*/

/* Number of splitters <= x: the bucket of x (s sorted, n of them). */
template <typename KB>
__device__ __forceinline__ int ws_pt_bucket(const KB *s, int n, int top, KB x) {
    int b = 0;
    for (int step = top; step >= 1; step >>= 1)
        if (b + step <= n && s[b + step - 1] <= x) b += step;
    return b;
}

/* The sample: S_me keys of this rank at evenly spaced positions, as ordered
 * bits, into its slot of the gathered sample. */
template <typename KB>
__global__ void ws_pt_sample(const KB *keys, uint64_t n, uint64_t s, KB *out, key_codec c) {
    const uint64_t q = n / s, rem = n % s;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < s;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t at = i * q + i * rem / s + q / 2;
        out[i] = encode(keys[at < n ? at : n - 1], c);
    }
}

/* The splitters: the sorted sample at the plan's positions. */
struct ws_pt_pos {
    uint64_t at[WS_PT_MAX_BUCKETS];
};
template <typename KB>
__global__ void ws_pt_splitters(const KB *sample, ws_pt_pos pos, int n, KB *split) {
    for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x) split[i] = sample[pos.at[i]];
}

/* The chunk of block blk: tiles of the input, in order. */
__device__ __forceinline__ void ws_pt_chunk(uint64_t n, uint64_t *lo, uint64_t *hi) {
    const uint64_t tiles = (n + WS_PT_TILE - 1) / WS_PT_TILE;
    const uint64_t per = (tiles + gridDim.x - 1) / gridDim.x;
    *lo = (uint64_t)blockIdx.x * per * WS_PT_TILE;
    *hi = *lo + per * WS_PT_TILE;
    if (*lo > n) *lo = n;
    if (*hi > n) *hi = n;
}

/* The keys of the tile at base, item i of thread t at base + i x THREADS +
 * t (coalesced), up to hi. */
template <typename KB>
__device__ __forceinline__ void ws_pt_load_tile(const KB *keys, uint64_t base, uint64_t hi,
                                                KB (&x)[WS_PT_ITEMS]) {
#pragma unroll
    for (int i = 0; i < WS_PT_ITEMS; i++) {
        const uint64_t at = base + (uint64_t)i * WS_PT_THREADS + threadIdx.x;
        x[i] = at < hi ? keys[at] : KB(0);
    }
}

/* Loads the splitters into shared memory; returns the search's top step. */
template <typename KB>
__device__ __forceinline__ int ws_pt_load_split(const KB *split, int ns, KB *s) {
    for (int i = (int)threadIdx.x; i < ns; i += (int)blockDim.x) s[i] = split[i];
    int top = 1;
    while (top * 2 <= ns) top *= 2;
    return top;
}

/* Per-block counts by bucket: blk_cnt[b * G + blk]. One shared add a key,
 * into its warp's own counters (fewer warps contend for one word), and the
 * next tile's keys load while this one is counted. Aggregating the lanes
 * of a bucket first (match.any, or a ballot per bucket) cost more than it
 * saved (bench/NOTES.md, issue 27). */
template <typename KB>
__global__ void __launch_bounds__(WS_PT_THREADS, WS_PT_MIN_BLOCKS(sizeof(KB)))
    ws_pt_count(const KB *keys, uint64_t n, const KB *split, int ns, key_codec c,
                unsigned long long *blk_cnt) {
    constexpr int WARPS = WS_PT_THREADS / 32;
    __shared__ KB s[WS_PT_MAX_BUCKETS];
    __shared__ unsigned h[WARPS][WS_PT_MAX_BUCKETS];
    const int top = ws_pt_load_split(split, ns, s);
    for (int i = (int)threadIdx.x; i < WARPS * WS_PT_MAX_BUCKETS; i += (int)blockDim.x)
        h[i / WS_PT_MAX_BUCKETS][i % WS_PT_MAX_BUCKETS] = 0;
    __syncthreads();
    unsigned *mine = h[threadIdx.x / 32];
    uint64_t lo, hi;
    ws_pt_chunk(n, &lo, &hi);
    KB x[WS_PT_ITEMS];
    ws_pt_load_tile(keys, lo, hi, x);
    for (uint64_t base = lo; base < hi; base += WS_PT_TILE) {
        KB y[WS_PT_ITEMS];
        ws_pt_load_tile(keys, base + WS_PT_TILE, hi, y);
#pragma unroll
        for (int i = 0; i < WS_PT_ITEMS; i++) {
            const uint64_t at = base + (uint64_t)i * WS_PT_THREADS + threadIdx.x;
            if (at < hi) atomicAdd(&mine[ws_pt_bucket(s, ns, top, encode(x[i], c))], 1u);
            x[i] = y[i];
        }
    }
    __syncthreads();
    for (int b = (int)threadIdx.x; b <= ns; b += (int)blockDim.x) {
        unsigned sum = 0;
        for (int w = 0; w < WARPS; w++) sum += h[w][b];
        blk_cnt[(size_t)b * gridDim.x + blockIdx.x] = sum;
    }
}

/* A warp per bucket: every block's offset within the bucket, in block
 * order, and the bucket's total. */
__global__ void __launch_bounds__(32)
    ws_pt_scan(unsigned long long *blk_cnt, int blocks, unsigned long long *cnt) {
    unsigned long long *row = blk_cnt + (size_t)blockIdx.x * blocks, carry = 0;
    for (int at = (int)threadIdx.x; at - (int)threadIdx.x < blocks; at += 32) {
        const unsigned long long v = at < blocks ? row[at] : 0;
        const unsigned long long before =
            warpsort::warp_exclusive_scan(v, warpsort::plus_op(), carry, carry);
        if (at < blocks) row[at] = before;
    }
    if (threadIdx.x == 0) cnt[blockIdx.x] = carry;
}

/* Where bucket b's keys go: dst.at[b] (a device address) plus the key's
 * place among the bucket's keys of this rank. */
struct ws_pt_dst {
    unsigned long long at[WS_PT_MAX_BUCKETS];
};

/* The scatter: each block walks its chunk again, tile by tile; a tile's
 * keys are grouped by bucket in shared memory (a shared add gives each key
 * its slot: keys alone, so their order within a bucket does not matter)
 * and go out in runs. Three barriers a tile, and the next tile's loads in
 * flight while this one goes out. */
template <typename KB>
__global__ void __launch_bounds__(WS_PT_THREADS, WS_PT_MIN_BLOCKS(sizeof(KB)))
    ws_pt_scatter(const KB *keys, uint64_t n, const KB *split, int ns, key_codec c,
                  const unsigned long long *blk_off, ws_pt_dst dst) {
    __shared__ KB s[WS_PT_MAX_BUCKETS];
    __shared__ unsigned h[WS_PT_MAX_BUCKETS], start[WS_PT_MAX_BUCKETS + 1];
    __shared__ unsigned long long run[WS_PT_MAX_BUCKETS]; /* next slot of bucket b */
    __shared__ unsigned long long out[WS_PT_MAX_BUCKETS]; /* tile slot 0's address in b */
    __shared__ KB tile[WS_PT_TILE];
    __shared__ unsigned char tb[WS_PT_TILE];
    const int top = ws_pt_load_split(split, ns, s);
    const int lane = (int)threadIdx.x & 31;
    for (int b = (int)threadIdx.x; b <= ns; b += (int)blockDim.x) {
        run[b] = dst.at[b] + blk_off[(size_t)b * gridDim.x + blockIdx.x] * sizeof(KB);
        h[b] = 0;
    }
    __syncthreads();
    uint64_t lo, hi;
    ws_pt_chunk(n, &lo, &hi);
    KB x[WS_PT_ITEMS];
    ws_pt_load_tile(keys, lo, hi, x);
    for (uint64_t base = lo; base < hi; base += WS_PT_TILE) {
        int bk[WS_PT_ITEMS];
        unsigned slot[WS_PT_ITEMS];
#pragma unroll
        for (int i = 0; i < WS_PT_ITEMS; i++) {
            const uint64_t at = base + (uint64_t)i * WS_PT_THREADS + threadIdx.x;
            bk[i] = at < hi ? ws_pt_bucket(s, ns, top, encode(x[i], c)) : -1;
            slot[i] = bk[i] >= 0 ? atomicAdd(&h[bk[i]], 1u) : 0u;
        }
        __syncthreads();
        if (threadIdx.x < 32) { /* warp 0: the tile's offsets, the runs move on */
            unsigned carry = 0;
            for (int b = lane; b - lane <= ns; b += 32) {
                const unsigned v = b <= ns ? h[b] : 0u;
                const unsigned at =
                    warpsort::warp_exclusive_scan(v, warpsort::plus_op(), carry, carry);
                if (b <= ns) {
                    start[b] = at;
                    out[b] = run[b] - (unsigned long long)at * sizeof(KB);
                    run[b] += (unsigned long long)v * sizeof(KB);
                    h[b] = 0;
                }
            }
            if (lane == 0) start[ns + 1] = carry;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < WS_PT_ITEMS; i++) {
            if (bk[i] < 0) continue;
            const unsigned at = start[bk[i]] + slot[i];
            tile[at] = x[i];
            tb[at] = (unsigned char)bk[i];
        }
        /* The next tile's keys load while this one goes out. */
        ws_pt_load_tile(keys, base + WS_PT_TILE, hi, x);
        __syncthreads();
        /* No barrier after: the next tile writes tile[] only past two more. */
        const unsigned count = start[ns + 1];
        for (unsigned i = threadIdx.x; i < count; i += WS_PT_THREADS)
            *(KB *)(uintptr_t)(out[tb[i]] + (unsigned long long)i * sizeof(KB)) = tile[i];
    }
}

/*--- the route ---*/

int ws_pt_check(const ws_nccl_call *c, const ws_pt_plan *pl, const uint64_t *cnt, uint64_t n_total,
                size_t n_out, ws_pt_sizes *z) {
    const ws_cuda_state *st = ws_state(c->ctx);
    const int p = pl->p, B = pl->B, me = c->rank;
    memset(z, 0, sizeof *z);
    uint64_t below = 0; /* keys of buckets before b, all ranks */
    for (int b = 0; b < B; b++) {
        uint64_t tot = 0;
        for (int q = 0; q < p; q++) tot += cnt[(size_t)q * B + b];
        const int j = b / (pl->K + 1);
        /* Whoever sorts this bucket (rank j, and j + 1 for a band) has a
         * leaf reserve for it: the same verdict on every rank, as the
         * devices of one job plan alike. */
        for (int r = j; r <= j + (b % (pl->K + 1) == pl->K); r++) {
            const size_t own = warpsort_nccl_output_count((size_t)n_total, p, r);
            if (ws_pt_leaf_bytes(st, (size_t)tot, c->kb) >
                ws_pt_leaf_reserve(st, pl->s_at[p], pl->band_cap, own, c->kb))
                return 0;
        }
        if (b % (pl->K + 1) == pl->K) { /* band j */
            const uint64_t g = ws_nccl_boundary(n_total, p, j);
            if (g < below || g > below + tot || tot > pl->band_cap) return 0;
            if (j == me - 1) {
                z->band_n[0] = tot;
                z->band_from = g - below;
                z->tail = below + tot - g;
            }
            if (j == me) {
                z->band_n[1] = tot;
                z->head = g - below;
            }
        } else if (j == me) {
            z->part_n[b % (pl->K + 1)] = tot;
        }
        below += tot;
    }
    uint64_t at = 0;
    for (int k = 0; k < pl->K; k++) {
        z->part_at[k] = at;
        at += z->part_n[k];
    }
    return z->tail + at + z->head == n_out;
}

void ws_pt_exchange_plan(const ws_pt_plan *pl, int me, const uint64_t *cnt, const ws_pt_sizes *z,
                         size_t kb, ws_pt_exchange *x) {
    const int p = pl->p, B = pl->B, K = pl->K;
    const uint64_t align = 16 % kb == 0 ? 16 / kb : 1; /* items in 16 bytes */
    uint64_t next = 0;                                 /* the send buffer's next piece */
    memset(x, 0, sizeof *x);
    for (int b = 0; b < B; b++) {
        const int j = b / (K + 1), k = b % (K + 1);
        uint64_t before = 0; /* keys of this bucket on ranks below me */
        for (int q = 0; q < me; q++) before += cnt[(size_t)q * B + b];
        ws_pt_place &d = x->dst[b];
        if (k < K && j == me) {
            d = ws_pt_place{WS_PT_RECV, z->part_at[k] + before};
        } else if (k == K && j == me - 1) {
            d = ws_pt_place{WS_PT_BAND0, before};
        } else if (k == K && j == me) {
            d = ws_pt_place{WS_PT_BAND1, before};
        } else {
            d = ws_pt_place{WS_PT_SEND, next};
            next += (cnt[(size_t)me * B + b] + align - 1) / align * align;
        }
    }
    int nm = 0;
    /* Round 0, the bands: this rank's piece of band j to ranks j and
     * j + 1 (from where the scatter put it), then band me - 1's and band
     * me's pieces of every other rank, in rank order after the ones below. */
    for (int j = 0; j < p - 1; j++) {
        const int b = ws_pt_band(pl, j);
        for (int to = j; to <= j + 1; to++)
            if (to != me)
                x->msg[nm++] =
                    ws_pt_xmsg{x->dst[b].buf, x->dst[b].at, cnt[(size_t)me * B + b], to, 0};
    }
    for (int side = 0; side < 2; side++) {
        const int j = me - 1 + side;
        if (j < 0 || j >= p - 1) continue;
        const int b = ws_pt_band(pl, j);
        uint64_t at = 0;
        for (int q = 0; q < p; q++) {
            const uint64_t nq = cnt[(size_t)q * B + b];
            if (q != me) x->msg[nm++] = ws_pt_xmsg{side ? WS_PT_BAND1 : WS_PT_BAND0, at, nq, q, 1};
            at += nq;
        }
    }
    x->round_at[1] = nm;
    /* Round 1 + k, part k: this rank's part k of every other rank to it,
     * and every other rank's piece of this rank's part k into its slot. */
    for (int k = 0; k < K; k++) {
        for (int q = 0; q < p; q++) {
            if (q == me) continue;
            const int b = ws_pt_part(pl, q, k);
            x->msg[nm++] = ws_pt_xmsg{WS_PT_SEND, x->dst[b].at, cnt[(size_t)me * B + b], q, 0};
        }
        const int mb = ws_pt_part(pl, me, k);
        uint64_t at = z->part_at[k];
        for (int q = 0; q < p; q++) {
            const uint64_t nq = cnt[(size_t)q * B + mb];
            if (q != me) x->msg[nm++] = ws_pt_xmsg{WS_PT_RECV, at, nq, q, 1};
            at += nq;
        }
        x->round_at[2 + k] = nm;
    }
}

/* One grouped send / receive on xs; ends with the group closed. */
struct ws_pt_msg {
    void *at; /* read by a send, written by a receive */
    size_t n;
    int peer, recv;
};
static warpsort_status_t ws_pt_group(const ws_nccl_call *c, const ws_pt_msg *m, int count,
                                     cudaStream_t xs) {
    const ncclDataType_t kt = ws_nccl_word(c->kb);
    ncclResult_t first = ncclSuccess, r = ncclGroupStart();
    const char *what = "ncclGroupStart";
    if (r != ncclSuccess) return ws_nccl_fail(c->ctx, c->comm, r, what);
    for (int i = 0; i < count && first == ncclSuccess; i++) {
        if (!m[i].n) continue; /* both sides know it is empty */
        r = m[i].recv ? ncclRecv(m[i].at, m[i].n, kt, m[i].peer, c->comm, xs)
                      : ncclSend(m[i].at, m[i].n, kt, m[i].peer, c->comm, xs);
        if (r != ncclSuccess) {
            first = r;
            what = m[i].recv ? "ncclRecv" : "ncclSend";
        }
    }
    r = ncclGroupEnd();
    if (first == ncclSuccess && r != ncclSuccess) {
        first = r;
        what = "ncclGroupEnd";
    }
    return first == ncclSuccess ? WARPSORT_OK : ws_nccl_fail(c->ctx, c->comm, first, what);
}

/* Sorts n keys from src into dst (in place when equal) with the leaf. */
static warpsort_status_t ws_pt_sort(const ws_nccl_call *c, const ws_pt_layout *l, unsigned char *ws,
                                    const void *src, void *dst, size_t n, warpsort_dtype_t dtype,
                                    int desc) {
    if (!n) return WARPSORT_OK;
    const ws_plan_t plan = ws_plan_make(&ws_state(c->ctx)->dev, n, c->kb, 0);
    if (plan.lay.total > l->leaf)
        return ws_error(c->ctx, WARPSORT_INTERNAL,
                        "%s: a part of %zu keys needs %zu bytes, not %zu", c->fn, n, plan.lay.total,
                        l->leaf);
    const char *failed = NULL;
    const cudaError_t err =
        ws_device_sort_from(&plan, src, NULL, dst, NULL, dtype, desc, 0, ws, c->s, &failed);
    return err == cudaSuccess ? WARPSORT_OK : ws_cuda_fail(c->ctx, err, failed);
}

/* Steps 1-3: the sample, the splitters, the counts (gathered to the host
 * in cnt_host, p x B words). */
template <typename KB>
static warpsort_status_t ws_pt_count_all(const ws_nccl_call *c, const ws_pt_plan *pl,
                                         const ws_pt_layout *l, unsigned char *ws,
                                         uint64_t *cnt_host) {
    const ws_cuda_state *st = ws_state(c->ctx);
    const int p = pl->p, me = c->rank, B = pl->B, ns = B - 1;
    const unsigned G = ws_pt_grid(st, sizeof(KB));
    KB *sample = (KB *)(ws + l->sample);
    const uint64_t S = pl->s_at[p], s_me = pl->s_at[me + 1] - pl->s_at[me];
    if (s_me) {
        const unsigned grid = (unsigned)((s_me + 255) / 256 < 1024 ? (s_me + 255) / 256 : 1024);
        ws_pt_sample<KB><<<grid, 256, 0, c->s>>>((const KB *)c->keys_in, c->n_in, s_me,
                                                 sample + pl->s_at[me], c->codec);
        WS_CUDA_TRY_AT(c->ctx, cudaGetLastError(), "partition sample");
    }
    ws_pt_msg m[2 * WS_PT_MAX_RANKS];
    int nm = 0;
    for (int q = 0; q < p; q++) {
        if (q == me) continue;
        m[nm++] = ws_pt_msg{sample + pl->s_at[me], (size_t)s_me, q, 0};
        m[nm++] = ws_pt_msg{sample + pl->s_at[q], (size_t)(pl->s_at[q + 1] - pl->s_at[q]), q, 1};
    }
    WS_TRY(ws_pt_group(c, m, nm, c->s));
    WS_TRY(
        ws_pt_sort(c, l, ws, sample, sample, S, sizeof(KB) == 4 ? WARPSORT_U32 : WARPSORT_U64, 0));
    ws_pt_pos pos;
    for (int i = 0; i < ns; i++) pos.at[i] = pl->pos[i];
    KB *split = (KB *)(ws + l->split);
    ws_pt_splitters<KB><<<1, 256, 0, c->s>>>(sample, pos, ns, split);
    WS_CUDA_TRY_AT(c->ctx, cudaGetLastError(), "partition splitters");
    unsigned long long *blk = (unsigned long long *)(ws + l->blk_cnt);
    unsigned long long *cnt = (unsigned long long *)(ws + l->cnt);
    ws_pt_count<KB>
        <<<G, WS_PT_THREADS, 0, c->s>>>((const KB *)c->keys_in, c->n_in, split, ns, c->codec, blk);
    WS_CUDA_TRY_AT(c->ctx, cudaGetLastError(), "partition count");
    ws_pt_scan<<<(unsigned)B, 32, 0, c->s>>>(blk, (int)G, cnt);
    WS_CUDA_TRY_AT(c->ctx, cudaGetLastError(), "partition scan");
    uint64_t *all = (uint64_t *)(ws + l->cnt_all);
    WS_NCCL_TRY(c, ncclAllGather(cnt, all, (size_t)B, ncclUint64, c->comm, c->s));
    WS_CUDA_TRY_AT(c->ctx,
                   cudaMemcpyAsync(cnt_host, all, (size_t)p * B * sizeof(uint64_t),
                                   cudaMemcpyDeviceToHost, c->s),
                   "partition counts download");
    WS_CUDA_TRY_AT(c->ctx, cudaStreamSynchronize(c->s), "partition counts");
    return WARPSORT_OK;
}

/* Steps 3-5 once the counts hold: the scatter, the exchange and the sorts. */
template <typename KB>
static warpsort_status_t ws_pt_move_sort(const ws_nccl_call *c, const ws_pt_plan *pl,
                                         const ws_pt_layout *l, unsigned char *ws,
                                         const uint64_t *cnt, const ws_pt_sizes *z, size_t n_out) {
    const ws_cuda_state *st = ws_state(c->ctx);
    const int B = pl->B, K = pl->K;
    const size_t kb = sizeof(KB);
    ws_pt_exchange *x = (ws_pt_exchange *)malloc(sizeof(ws_pt_exchange));
    if (!x)
        return ws_error(c->ctx, WARPSORT_OUT_OF_MEMORY, "%s: no host memory for the exchange",
                        c->fn);
    ws_pt_exchange_plan(pl, c->rank, cnt, z, kb, x);
    unsigned char *base[WS_PT_BUFS];
    base[WS_PT_SEND] = ws + l->send;
    base[WS_PT_RECV] = ws + l->recv;
    base[WS_PT_BAND0] = ws + l->band;
    base[WS_PT_BAND1] = ws + l->band + ws_align256(pl->band_cap * kb);
    ws_pt_dst dst;
    for (int b = 0; b < B; b++)
        dst.at[b] = (unsigned long long)(uintptr_t)(base[x->dst[b].buf] + x->dst[b].at * kb);
    ws_nccl_mark(c, WS_NCCL_PHASE_PARTITION);
    unsigned long long *blk = (unsigned long long *)(ws + l->blk_cnt);
    const KB *split = (const KB *)(ws + l->split);
    ws_pt_scatter<KB><<<ws_pt_grid(st, sizeof(KB)), WS_PT_THREADS, 0, c->s>>>(
        (const KB *)c->keys_in, c->n_in, split, B - 1, c->codec, blk, dst);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        free(x);
        return ws_cuda_fail(c->ctx, err, "partition scatter");
    }
    ws_nccl_mark(c, WS_NCCL_PHASE_LOCAL_SORT);

    /* The exchange stream (ws_nccl_side): ev[0] forks it from the call's
     * stream, ev[1 + r] marks the arrival of round r (0: the bands, 1 + k:
     * part k), ev[K + 2] its end. */
    ws_nccl_side o;
    warpsort_status_t s = WARPSORT_OK;
    err = ws_nccl_side_open(&o, 1, K + 3);
    const cudaStream_t xs = o.st[0];
    if (err == cudaSuccess) err = cudaEventRecord(o.ev[0], c->s);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(xs, o.ev[0], 0);
    if (err != cudaSuccess) s = ws_cuda_fail(c->ctx, err, "exchange stream");
    for (int r = 0; r <= K && s == WARPSORT_OK; r++) {
        ws_pt_msg m[WS_PT_ROUND_MSGS];
        int nm = 0;
        for (int i = x->round_at[r]; i < x->round_at[r + 1]; i++) {
            const ws_pt_xmsg &v = x->msg[i];
            unsigned char *at = base[v.buf] + v.at * kb;
            m[nm++] = ws_pt_msg{at, (size_t)v.n, v.peer, v.recv};
        }
        s = ws_pt_group(c, m, nm, xs);
        if (s == WARPSORT_OK && (err = cudaEventRecord(o.ev[1 + r], xs)) != cudaSuccess)
            s = ws_cuda_fail(c->ctx, err, "exchange event");
    }
    /* The sorts, each after its pieces are here. */
    unsigned char *out = (unsigned char *)c->keys_out;
    const int desc = c->codec.desc;
    if (s == WARPSORT_OK && (err = cudaStreamWaitEvent(c->s, o.ev[1], 0)) != cudaSuccess)
        s = ws_cuda_fail(c->ctx, err, "exchange wait");
    for (int side = 0; side < 2 && s == WARPSORT_OK; side++) {
        unsigned char *band = base[side ? WS_PT_BAND1 : WS_PT_BAND0];
        const size_t n = z->band_n[side];
        s = ws_pt_sort(c, l, ws, band, band, n, c->dtype, desc);
        const size_t from = side ? 0 : z->band_from, keep = side ? z->head : z->tail;
        unsigned char *to = side ? out + (n_out - z->head) * kb : out;
        if (s == WARPSORT_OK && keep &&
            (err = cudaMemcpyAsync(to, band + from * kb, keep * kb, cudaMemcpyDeviceToDevice,
                                   c->s)) != cudaSuccess)
            s = ws_cuda_fail(c->ctx, err, "band copy");
    }
    for (int k = 0; k < K && s == WARPSORT_OK; k++) {
        if ((err = cudaStreamWaitEvent(c->s, o.ev[2 + k], 0)) != cudaSuccess) {
            s = ws_cuda_fail(c->ctx, err, "exchange wait");
            break;
        }
        s = ws_pt_sort(c, l, ws, base[WS_PT_RECV] + z->part_at[k] * kb,
                       out + (z->tail + z->part_at[k]) * kb, z->part_n[k], c->dtype, desc);
    }
    err = ws_nccl_side_close(&o, c->s);
    if (err != cudaSuccess && s == WARPSORT_OK) s = ws_cuda_fail(c->ctx, err, "exchange join");
    free(x);
    return s;
}

template <typename KB>
static warpsort_status_t ws_pt_run(const ws_nccl_call *c, const ws_pt_plan *pl, unsigned char *ws,
                                   uint64_t n_total, size_t n_out, int *taken) {
    const ws_pt_layout l = ws_pt_layout_plan(ws_state(c->ctx), pl, c->n_in, n_out, c->kb);
    uint64_t *cnt = (uint64_t *)malloc((size_t)pl->p * pl->B * sizeof(uint64_t));
    if (!cnt)
        return ws_error(c->ctx, WARPSORT_OUT_OF_MEMORY, "%s: no host memory for the counts", c->fn);
    warpsort_status_t s = ws_pt_count_all<KB>(c, pl, &l, ws, cnt);
    ws_pt_sizes z;
    if (s == WARPSORT_OK && ws_pt_check(c, pl, cnt, n_total, n_out, &z)) {
        *taken = 1;
        s = ws_pt_move_sort<KB>(c, pl, &l, ws, cnt, &z, n_out);
    } else if (s == WARPSORT_OK && ws_nccl_route() == WS_NCCL_ROUTE_PARTITION_ONLY) {
        s = ws_error(c->ctx, WARPSORT_INTERNAL,
                     "%s: the partition does not hold for these keys (WARPSORT_NCCL_ROUTE="
                     "partition-only)",
                     c->fn);
    }
    free(cnt);
    return s;
}

warpsort_status_t ws_nccl_partition_sort(const ws_nccl_call *c, const ws_pt_plan *pl,
                                         unsigned char *ws, uint64_t n_total, size_t n_out,
                                         int *taken) {
    *taken = 0;
    return c->kb == 4 ? ws_pt_run<uint32_t>(c, pl, ws, n_total, n_out, taken)
                      : ws_pt_run<uint64_t>(c, pl, ws, n_total, n_out, taken);
}
