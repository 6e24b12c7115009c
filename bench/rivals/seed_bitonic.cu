/*
 * seed_bitonic.cu - rivals seed-naive and seed-hybrid: the seed document's
 * two bitonic sorts, rebuilt as rivals so its figures can be reproduced beside ours (the document the
 * project started from, not kept in this repository: "naive" 268 MEPS;
 * hybrid kernel time 78.8 ms, both on an H100 with the input padded to 2^27).
 *
 *   seed-naive   one kernel launch per (s, d) stride of the bitonic network,
 *                every compare-exchange in global memory (its Algorithms 1-2):
 *                log2(n) * (log2(n) + 1) / 2 launches.
 *   seed-hybrid  its Algorithm 3: a shared-memory kernel sorts each tile of
 *                1024 keys (padding i + i/32; strides >= 32 through shared
 *                memory with __syncthreads, strides < 32 through
 *                __shfl_xor_sync); then for each s > 1024 one global launch
 *                per stride d >= 1024 and one fused shared-memory launch
 *                for the strides 512..1.
 *
 * Both use its launch shape: 1024 threads per block and at most 4 blocks
 * per SM, grid-stride loops. Both need n to be a power of two (a bitonic
 * network over n keys) and, here, n >= 1024 (a full tile and full warps);
 * the harness shows other n as n/a. The document sorted 32-bit ints; here
 * the same kernels are templated over every dtype and carry u32 values for
 * pairs (not 8-byte values), so its network can be seen in every regime. Comparisons use the
 * key type's own `<`/`>` (the inputs hold no NaN, zero or subnormal).
 * Ascending only.
 */
#include "rivals/factories.h"

namespace wsb {
namespace {

constexpr unsigned kTile = 1024; /* threadsPerBlock of the document */
constexpr unsigned kBlocksPerSm = 4;

__host__ __device__ constexpr unsigned padded(unsigned i) { return i + i / 32; }

/* Algorithm 2, GLOBAL_STAGE: thread i owns the pair (i, i ^ d) when i < j. */
template <class K, bool kPairs>
__global__ void __launch_bounds__(1024)
    global_stage_kernel(K *a, uint32_t *v, unsigned n, unsigned s, unsigned d) {
    const bool up = true;
    for (unsigned i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned j = i ^ d;
        if (j > i && j < n) {
            bool dir = (i & s) == 0;
            K ai = a[i], aj = a[j];
            if ((ai > aj) == (dir == up)) {
                a[i] = aj;
                a[j] = ai;
                if (kPairs) {
                    uint32_t t = v[i];
                    v[i] = v[j];
                    v[j] = t;
                }
            }
        }
    }
}

/* One compare-exchange step seen from one element: keep the smaller or the
 * larger of (own, partner). Equal keys keep their own element on both sides,
 * so the pair stays a permutation. */
template <class K>
__device__ inline bool take_partner(K own, K partner, bool lower, bool ascending) {
    bool want_small = lower == ascending;
    return want_small ? (partner < own) : (partner > own);
}

/* Bitonic merge steps d = d_start, d_start/2, ..., 1 of stage s on one tile
 * held in shared memory (padded), thread t owning element t. Strides >= 32
 * go through shared memory, strides < 32 through warp shuffles. */
template <class K, bool kPairs>
__device__ void tile_merge(K *sk, uint32_t *sv, unsigned t, unsigned gi, unsigned s,
                           unsigned d_start) {
    const bool ascending = (gi & s) == 0;
    unsigned d = d_start;
    for (; d >= 32; d >>= 1) {
        K own = sk[padded(t)], partner = sk[padded(t ^ d)];
        uint32_t partner_v = kPairs ? sv[padded(t ^ d)] : 0u;
        __syncthreads();
        if (take_partner(own, partner, (t & d) == 0, ascending)) {
            sk[padded(t)] = partner;
            if (kPairs) sv[padded(t)] = partner_v;
        }
        __syncthreads();
    }
    K key = sk[padded(t)];
    uint32_t val = kPairs ? sv[padded(t)] : 0u;
    for (; d >= 1; d >>= 1) {
        K partner = __shfl_xor_sync(0xFFFFFFFFu, key, d);
        uint32_t partner_v = kPairs ? __shfl_xor_sync(0xFFFFFFFFu, val, d) : 0u;
        if (take_partner(key, partner, (t & d) == 0, ascending)) {
            key = partner;
            val = partner_v;
        }
    }
    sk[padded(t)] = key;
    if (kPairs) sv[padded(t)] = val;
    __syncthreads();
}

/* bitonic_sort_shared (fused == false: every stage s = 2..kTile) and
 * bitonic_sort_shared_fused (fused == true: stage s, strides kTile/2..1).
 * Blocks walk the tiles with a block-stride loop (grid capped at 4 per SM). */
template <class K, bool kPairs>
__global__ void __launch_bounds__(kTile)
    shared_kernel(K *a, uint32_t *v, unsigned n, unsigned s_fused, bool fused) {
    __shared__ K sk[padded(kTile)];
    __shared__ uint32_t sv[kPairs ? padded(kTile) : 1];
    const unsigned t = threadIdx.x;
    const unsigned tiles = n / kTile;
    for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const unsigned gi = tile * kTile + t;
        sk[padded(t)] = a[gi];
        if (kPairs) sv[padded(t)] = v[gi];
        __syncthreads();
        if (fused) {
            tile_merge<K, kPairs>(sk, sv, t, gi, s_fused, kTile / 2);
        } else {
            for (unsigned s = 2; s <= kTile; s <<= 1)
                tile_merge<K, kPairs>(sk, sv, t, gi, s, s / 2);
        }
        a[gi] = sk[padded(t)];
        if (kPairs) v[gi] = sv[padded(t)];
        __syncthreads(); /* the next tile reuses shared memory */
    }
}

bool is_pow2(size_t n) { return n && (n & (n - 1)) == 0; }
unsigned log2_of(size_t n) {
    unsigned l = 0;
    while (((size_t)1 << l) < n) ++l;
    return l;
}

/* Launches: log2(n) (log2(n) + 1) / 2 for the naive sort; the hybrid's
 * 1 + sum over k = 11..log2(n) of (k - 9). Every launch reads the array and
 * writes (at most) all of it, so bytes = passes x 2 x n x item bytes is an
 * upper bound. */
double seed_naive_passes(size_t n) {
    const double l = (double)log2_of(n);
    return l * (l + 1.0) / 2.0;
}

double seed_hybrid_passes(size_t n) {
    const unsigned lt = log2_of(kTile), l = log2_of(n);
    double passes = 1.0;                                                     /* phase A */
    for (unsigned k = lt + 1; k <= l; ++k) passes += (double)(k - lt) + 1.0; /* globals + fused */
    return passes;
}

double pass_bytes(const Buffers &b) {
    return 2.0 * (double)b.n * (double)(b.key_bytes + b.value_bytes);
}

bool seed_size_ok(const Buffers &b, std::string *err) {
    if (!is_pow2(b.n) || b.n < kTile) {
        *err = "needs n a power of two >= 1024";
        return false;
    }
    if (b.n > ((size_t)1 << 31)) {
        *err = "n above 2^31 (32-bit indices, as in the document)";
        return false;
    }
    return true;
}

unsigned grid_blocks(unsigned n) {
    int dev = 0, sms = 1;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        sms = 1;
    }
    unsigned want = (n + kTile - 1) / kTile;
    unsigned cap = (unsigned)sms * kBlocksPerSm;
    return want < cap ? want : cap;
}

bool launched(const char *what, std::string *err) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return true;
    *err = std::string(what) + " launch: " + cuda_error_text(e);
    return false;
}

/* What both seed sorts share: no temp storage, power-of-two sizes only, and
 * the document's launch shape (grid of grid_blocks(n) blocks of 1024). */
class SeedRival : public DeviceRival {
  public:
    bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) override {
        *bytes = 0;
        return seed_size_ok(b, err);
    }
    bool prepare(const Buffers &b, std::string *err) override {
        if (!seed_size_ok(b, err)) return false;
        blocks_ = grid_blocks((unsigned)b.n);
        return true;
    }
    std::string note() const override { return strprintf("%u blocks x 1024 threads", blocks_); }

  protected:
    explicit SeedRival(bool pairs) : pairs_(pairs) {}
    bool pairs_;
    unsigned blocks_ = 0;
};

template <class K>
class SeedNaive final : public SeedRival {
  public:
    explicit SeedNaive(bool pairs) : SeedRival(pairs) {}
    bool run(const Buffers &b, std::string *err) override {
        const unsigned n = (unsigned)b.n;
        for (unsigned s = 2; s <= n && s != 0; s <<= 1)
            for (unsigned d = s / 2; d >= 1; d >>= 1) {
                if (pairs_)
                    global_stage_kernel<K, true><<<blocks_, kTile, 0, b.stream>>>(
                        (K *)b.keys_work, (uint32_t *)b.vals_work, n, s, d);
                else
                    global_stage_kernel<K, false>
                        <<<blocks_, kTile, 0, b.stream>>>((K *)b.keys_work, nullptr, n, s, d);
                if (!launched("global_stage", err)) return false;
            }
        return true;
    }
    double model_bytes(const Buffers &b) const override {
        return seed_naive_passes(b.n) * pass_bytes(b);
    }
};

template <class K>
class SeedHybrid final : public SeedRival {
  public:
    explicit SeedHybrid(bool pairs) : SeedRival(pairs) {}
    bool run(const Buffers &b, std::string *err) override {
        const unsigned n = (unsigned)b.n;
        K *a = (K *)b.keys_work;
        uint32_t *v = (uint32_t *)b.vals_work;
        /* Phase A: sort every tile. */
        if (!shared(a, v, n, 0, false, b.stream, err)) return false;
        /* Phase B: grow the sorted runs. */
        for (unsigned s = 2 * kTile; s <= n && s != 0; s <<= 1) {
            for (unsigned d = s / 2; d >= kTile; d >>= 1) {
                if (pairs_)
                    global_stage_kernel<K, true><<<blocks_, kTile, 0, b.stream>>>(a, v, n, s, d);
                else
                    global_stage_kernel<K, false>
                        <<<blocks_, kTile, 0, b.stream>>>(a, nullptr, n, s, d);
                if (!launched("global_stage", err)) return false;
            }
            if (!shared(a, v, n, s, true, b.stream, err)) return false;
        }
        return true;
    }
    double model_bytes(const Buffers &b) const override {
        return seed_hybrid_passes(b.n) * pass_bytes(b);
    }

  private:
    bool shared(K *a, uint32_t *v, unsigned n, unsigned s, bool fused, cudaStream_t st,
                std::string *err) {
        if (pairs_)
            shared_kernel<K, true><<<blocks_, kTile, 0, st>>>(a, v, n, s, fused);
        else
            shared_kernel<K, false><<<blocks_, kTile, 0, st>>>(a, nullptr, n, s, fused);
        return launched(fused ? "bitonic_sort_shared_fused" : "bitonic_sort_shared", err);
    }
};

} // namespace

/* true if the seed kernels can sort r's regime at all (else *why). */
static bool seed_regime_ok(const Regime &r, std::string *why) {
    if (r.segmented() || r.stable) {
        *why = r.stable ? "not stable (a bitonic network)" : "whole-array sort";
        return false;
    }
    return !wide_values_refused(r, why);
}

std::unique_ptr<DeviceRival> make_seed_naive(const Regime &r, const RivalEnv &, std::string *why) {
    return seed_regime_ok(r, why) ? make_typed<SeedNaive>(r.dtype, r.pairs()) : nullptr;
}

std::unique_ptr<DeviceRival> make_seed_hybrid(const Regime &r, const RivalEnv &, std::string *why) {
    return seed_regime_ok(r, why) ? make_typed<SeedHybrid>(r.dtype, r.pairs()) : nullptr;
}

} // namespace wsb
