/*
 * topk_check.cu - how every top-k result is checked, outside timing.
 *
 * Order: the library's total order on the key bits (core/order.h: floats
 * flipped, every NaN largest), the k largest best first (or the k smallest
 * ascending), ties to the lower index. Each entry is thus ranked by
 * (score, -index) with score the ordered bits (complemented for the
 * smallest), a strict order since indices differ.
 *
 * The device check, every row: each output index < row_len, each output
 * key the input's key at that index, each row strictly best first, and
 * exactly k keys of the row rank at or above the row's last output. The k
 * outputs are distinct entries (strict order) that all rank at or above
 * the last, and only k entries do: so they are exactly the top k, in order.
 * The host reference, sampled rows (the whole array for one array): the
 * top k by a heap over the downloaded row, compared index by index and
 * key by key with the output.
 */
#include "modes/topk.h"

#include "core/common.h"
#include "core/input.h"
#include "core/order.h"

#include <algorithm>
#include <climits>
#include <queue>
#include <thread>

namespace wsb {
namespace {

/* ---- the host reference ---- */

struct Cand {
    uint64_t score, idx;
};
inline bool better(const Cand &a, const Cand &b) {
    return a.score > b.score || (a.score == b.score && a.idx < b.idx);
}

inline uint64_t load_bits(const unsigned char *p, size_t kb, size_t i) {
    return kb == 8 ? ((const uint64_t *)p)[i] : ((const uint32_t *)p)[i];
}

inline uint64_t host_score(uint64_t bits, size_t kb, bool is_float, bool largest) {
    if (kb == 8) {
        const uint64_t o = ordered_bits<uint64_t>(bits, is_float);
        return largest ? o : ~o;
    }
    const uint32_t o = ordered_bits<uint32_t>((uint32_t)bits, is_float);
    return largest ? o : (uint32_t)~o;
}

/* The best k of row[lo, hi), unordered: a heap whose top is the worst kept. */
std::vector<Cand> best_of_range(const unsigned char *row, size_t kb, size_t lo, size_t hi, size_t k,
                                bool is_float, bool largest) {
    std::priority_queue<Cand, std::vector<Cand>, bool (*)(const Cand &, const Cand &)> heap(better);
    for (size_t i = lo; i < hi; ++i) {
        const Cand c = {host_score(load_bits(row, kb, i), kb, is_float, largest), i};
        if (heap.size() < k)
            heap.push(c);
        else if (better(c, heap.top())) {
            heap.pop();
            heap.push(c);
        }
    }
    std::vector<Cand> out;
    out.reserve(heap.size());
    while (!heap.empty()) out.push_back(heap.top()), heap.pop();
    return out;
}

/* The indices of the top k of one row, best first; long rows on all cores. */
std::vector<uint64_t> host_topk_row(const unsigned char *row, size_t len, size_t kb, size_t k,
                                    bool is_float, bool largest) {
    std::vector<Cand> cands;
    const size_t threads = std::max(1u, std::thread::hardware_concurrency());
    if (len >= ((size_t)1 << 20) && threads > 1) {
        const size_t chunk = (len + threads - 1) / threads;
        std::vector<std::vector<Cand>> parts(threads);
        std::vector<std::thread> pool;
        for (size_t t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                const size_t lo = std::min(len, t * chunk), hi = std::min(len, lo + chunk);
                parts[t] = best_of_range(row, kb, lo, hi, k, is_float, largest);
            });
        for (std::thread &th : pool) th.join();
        for (const std::vector<Cand> &p : parts) cands.insert(cands.end(), p.begin(), p.end());
    } else {
        cands = best_of_range(row, kb, 0, len, k, is_float, largest);
    }
    const size_t keep = std::min(k, cands.size());
    std::partial_sort(cands.begin(), cands.begin() + (ptrdiff_t)keep, cands.end(), better);
    std::vector<uint64_t> idx(keep);
    for (size_t j = 0; j < keep; ++j) idx[j] = cands[j].idx;
    return idx;
}

/* ---- the device check ---- */

struct TopkCounters {
    unsigned long long range, follow, order, first_bad;
};

template <class Bits>
__device__ inline Bits dev_score(Bits b, bool is_float, bool largest) {
    const Bits o = ordered_bits(b, is_float);
    return largest ? o : Bits(~o);
}

/* Every output entry: index in range, key = input[index], strictly better
 * than its successor in the row. */
template <class Bits, class I>
__global__ void outputs_kernel(const Bits *in, size_t len, const Bits *ok, const I *oi, size_t rows,
                               size_t k, bool is_float, bool largest, TopkCounters *c) {
    unsigned long long range = 0, follow = 0, order = 0, first = ULLONG_MAX;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < rows * k;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t r = e / k, j = e - r * k;
        const uint64_t idx = (uint64_t)oi[e];
        bool bad = false;
        if (idx >= len)
            ++range, bad = true;
        else if (in[r * len + idx] != ok[e])
            ++follow, bad = true;
        if (j + 1 < k) {
            const Bits s0 = dev_score(ok[e], is_float, largest),
                       s1 = dev_score(ok[e + 1], is_float, largest);
            const uint64_t i1 = (uint64_t)oi[e + 1];
            if (!(s0 > s1 || (s0 == s1 && idx < i1))) ++order, bad = true;
        }
        if (bad && e < first) first = e;
    }
    if (range) atomicAdd(&c->range, range);
    if (follow) atomicAdd(&c->follow, follow);
    if (order) atomicAdd(&c->order, order);
    if (first != ULLONG_MAX) atomicMin(&c->first_bad, first);
}

/* counts[r] += entries of row r ranking at or above the row's last output. */
template <class Bits, class I>
__global__ void rank_count_kernel(const Bits *in, size_t len, size_t n, const Bits *ok, const I *oi,
                                  size_t k, bool is_float, bool largest, unsigned *counts) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / len, j = i - r * len;
        const size_t last = r * k + k - 1;
        const Bits ls = dev_score(ok[last], is_float, largest),
                   s = dev_score(in[i], is_float, largest);
        if (s > ls || (s == ls && (uint64_t)j <= (uint64_t)oi[last])) atomicAdd(&counts[r], 1u);
    }
}

template <class T>
struct Type {
    using type = T;
};
template <class F>
void with_types(size_t kb, size_t ib, F f) {
    if (kb == 4) {
        if (ib == 8)
            f(Type<uint32_t>(), Type<uint64_t>());
        else
            f(Type<uint32_t>(), Type<uint32_t>());
    } else {
        if (ib == 8)
            f(Type<uint64_t>(), Type<uint64_t>());
        else
            f(Type<uint64_t>(), Type<uint32_t>());
    }
}

enum Layers { kDevice = 1, kHost = 2, kBoth = 3 };

} // namespace

TopkChecker::TopkChecker(const TopkInput &in, size_t max_rows) : in_(in) {
    const size_t rows = in.c.rows, len = in.c.row_len, kb = dtype_info(in.c.dtype).bytes;
    if (rows <= max_rows) {
        for (size_t r = 0; r < rows; ++r) sample_.push_back(r);
    } else if (max_rows == 1) {
        sample_.push_back(0);
    } else if (max_rows > 1) {
        for (size_t s = 0; s < max_rows; ++s) sample_.push_back(s * (rows - 1) / (max_rows - 1));
    }
    host_.resize(sample_.size() * len * kb);
    for (size_t s = 0; s < sample_.size(); ++s)
        WSB_CUDA(cudaMemcpy(host_.data() + s * len * kb,
                            (const unsigned char *)in.keys + sample_[s] * len * kb, len * kb,
                            cudaMemcpyDeviceToHost));
    WSB_CUDA(counts_.allocate(std::max<size_t>(rows, 1) * sizeof(unsigned)));
    WSB_CUDA(counters_.allocate(sizeof(TopkCounters)));
}

void TopkChecker::set_case(const TopkInput &in) {
    in_ = in;
    const size_t len = in.c.row_len, kb = dtype_info(in.c.dtype).bytes, k = in.c.k;
    const bool is_float = dtype_info(in.c.dtype).is_float;
    expect_.assign(sample_.size() * k, 0);
    auto one = [&](size_t s) {
        const std::vector<uint64_t> idx =
            host_topk_row(host_.data() + s * len * kb, len, kb, k, is_float, in.largest);
        std::copy(idx.begin(), idx.end(), expect_.begin() + (ptrdiff_t)(s * k));
    };
    if (len >= ((size_t)1 << 20)) {
        for (size_t s = 0; s < sample_.size(); ++s) one(s); /* each row on all cores */
    } else {
        const size_t threads = std::max(1u, std::thread::hardware_concurrency());
        std::vector<std::thread> pool;
        for (size_t t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                for (size_t s = t; s < sample_.size(); s += threads) one(s);
            });
        for (std::thread &th : pool) th.join();
    }
}

static VerifyResult check_layers(const TopkInput &in, const std::vector<size_t> &sample,
                                 const std::vector<unsigned char> &host,
                                 const std::vector<uint64_t> &expect, void *counts, void *counters,
                                 const void *ok, const void *oi, int layers) {
    const TopkCase &c = in.c;
    const size_t kb = dtype_info(c.dtype).bytes, ib = in.index_bytes, k = c.k, len = c.row_len;
    const bool is_float = dtype_info(c.dtype).is_float;
    VerifyResult r;
    std::string problem;
    auto add = [&problem](const std::string &s) { problem += (problem.empty() ? "" : "; ") + s; };
    if (layers & kDevice) {
        WSB_CUDA(cudaMemsetAsync(counts, 0, c.rows * sizeof(unsigned), in.stream));
        WSB_CUDA(cudaMemsetAsync(counters, 0, sizeof(TopkCounters), in.stream));
        WSB_CUDA(cudaMemsetAsync(&((TopkCounters *)counters)->first_bad, 0xFF,
                                 sizeof(unsigned long long), in.stream));
        with_types(kb, ib, [&](auto kt, auto it) {
            using Bits = typename decltype(kt)::type;
            using I = typename decltype(it)::type;
            outputs_kernel<Bits, I><<<grid_for(c.rows * k, 256), 256, 0, in.stream>>>(
                (const Bits *)in.keys, len, (const Bits *)ok, (const I *)oi, c.rows, k, is_float,
                in.largest, (TopkCounters *)counters);
            rank_count_kernel<Bits, I><<<grid_for(c.n(), 256), 256, 0, in.stream>>>(
                (const Bits *)in.keys, len, c.n(), (const Bits *)ok, (const I *)oi, k, is_float,
                in.largest, (unsigned *)counts);
        });
        WSB_CUDA(cudaGetLastError());
        TopkCounters tc;
        std::vector<unsigned> cnt(c.rows);
        WSB_CUDA(cudaMemcpyAsync(&tc, counters, sizeof tc, cudaMemcpyDeviceToHost, in.stream));
        WSB_CUDA(cudaMemcpyAsync(cnt.data(), counts, c.rows * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost, in.stream));
        WSB_CUDA(cudaStreamSynchronize(in.stream));
        if (tc.range) add(strprintf("%llu indices >= row length", tc.range));
        if (tc.follow) add(strprintf("%llu keys not the input's key at their index", tc.follow));
        r.unsorted = tc.order; /* "out-of-order neighbours": not strictly best first */
        if (tc.first_bad != ULLONG_MAX) r.first_bad = tc.first_bad;
        size_t bad_rows = 0, first_row = 0;
        for (size_t row = 0; row < c.rows; ++row)
            if (cnt[row] != k && bad_rows++ == 0) first_row = row;
        if (bad_rows)
            add(strprintf(
                "%zu rows where not exactly k = %zu keys rank at or above the last output "
                "(first: row %zu, %u)",
                bad_rows, k, first_row, cnt[first_row]));
    }
    if ((layers & kHost) && !sample.empty()) {
        std::vector<unsigned char> dk(k * kb), di(k * ib);
        uint64_t mism = 0;
        std::string first;
        for (size_t s = 0; s < sample.size(); ++s) {
            const size_t row = sample[s];
            WSB_CUDA(cudaMemcpy(dk.data(), (const unsigned char *)ok + row * k * kb, k * kb,
                                cudaMemcpyDeviceToHost));
            WSB_CUDA(cudaMemcpy(di.data(), (const unsigned char *)oi + row * k * ib, k * ib,
                                cudaMemcpyDeviceToHost));
            const unsigned char *hrow = host.data() + s * len * kb;
            for (size_t j = 0; j < k; ++j) {
                const uint64_t want = expect[s * k + j], got = load_bits(di.data(), ib, j);
                const uint64_t key = load_bits(dk.data(), kb, j),
                               want_key = load_bits(hrow, kb, want);
                if (got == want && key == want_key) continue;
                if (mism++ == 0)
                    first = strprintf(
                        "row %zu rank %zu: index %llu key 0x%llx, expected index %llu key 0x%llx",
                        row, j, (unsigned long long)got, (unsigned long long)key,
                        (unsigned long long)want, (unsigned long long)want_key);
            }
        }
        r.ref_mismatch = mism; /* "keys differing from the reference" (key or index) */
        if (mism) add("host reference: " + first);
    }
    r.problem = problem;
    return r;
}

VerifyResult TopkChecker::check(const void *out_keys, const void *out_indices) {
    return check_layers(in_, sample_, host_, expect_, counts_.get(), counters_.get(), out_keys,
                        out_indices, kBoth);
}

/* ---- the self-test ---- */

std::string topk_checker_self_test(cudaStream_t stream, int device) {
    struct Spec {
        Dtype dtype;
        bool largest;
        size_t index_bytes;
    };
    const Spec specs[] = {{Dtype::U32, true, 4}, {Dtype::F32, false, 8}, {Dtype::U64, true, 4}};
    const size_t rows = 3, len = 1000, k = 10;
    for (const Spec &sp : specs) {
        const size_t kb = dtype_info(sp.dtype).bytes, ib = sp.index_bytes;
        /* Few distinct keys (ties everywhere), floats among them negative. */
        std::vector<unsigned char> keys(rows * len * kb);
        for (size_t i = 0; i < rows * len; ++i) {
            const uint64_t v = keygen_mix(i) % 7;
            if (sp.dtype == Dtype::F32)
                ((float *)keys.data())[i] = (float)v - 3.5f;
            else if (kb == 8)
                ((uint64_t *)keys.data())[i] = v << 40;
            else
                ((uint32_t *)keys.data())[i] = (uint32_t)v;
        }
        DeviceMemory dkeys, dok, doi;
        WSB_CUDA(dkeys.allocate(keys.size()));
        WSB_CUDA(dok.allocate(rows * k * kb));
        WSB_CUDA(doi.allocate(rows * k * ib));
        WSB_CUDA(cudaMemcpy(dkeys.get(), keys.data(), keys.size(), cudaMemcpyHostToDevice));
        TopkInput in;
        in.c.dtype = sp.dtype;
        in.c.rows = rows;
        in.c.row_len = len;
        in.c.k = k;
        in.keys = dkeys.get();
        in.largest = sp.largest;
        in.index_bytes = ib;
        in.stream = stream;
        in.device = device;
        TopkChecker chk(in, rows);
        chk.set_case(in);
        /* The correct output from the host reference of k + 1 (the extra
         * one is the planted "(k+1)-th for the k-th" fault). */
        const bool is_float = dtype_info(sp.dtype).is_float;
        std::vector<unsigned char> good_k(rows * k * kb), good_i(rows * k * ib);
        std::vector<uint64_t> next(rows);
        for (size_t r = 0; r < rows; ++r) {
            const std::vector<uint64_t> idx =
                host_topk_row(keys.data() + r * len * kb, len, kb, k + 1, is_float, sp.largest);
            for (size_t j = 0; j < k; ++j) {
                const uint64_t key = load_bits(keys.data() + r * len * kb, kb, idx[j]);
                if (kb == 8)
                    ((uint64_t *)good_k.data())[r * k + j] = key;
                else
                    ((uint32_t *)good_k.data())[r * k + j] = (uint32_t)key;
                if (ib == 8)
                    ((uint64_t *)good_i.data())[r * k + j] = idx[j];
                else
                    ((uint32_t *)good_i.data())[r * k + j] = (uint32_t)idx[j];
            }
            next[r] = idx[k];
        }
        auto put = [&](size_t e, uint64_t key, uint64_t idx, std::vector<unsigned char> &K,
                       std::vector<unsigned char> &I) {
            if (kb == 8)
                ((uint64_t *)K.data())[e] = key;
            else
                ((uint32_t *)K.data())[e] = (uint32_t)key;
            if (ib == 8)
                ((uint64_t *)I.data())[e] = idx;
            else
                ((uint32_t *)I.data())[e] = (uint32_t)idx;
        };
        /* A key of row 1 equal to its rank-2 output's key, at a higher index, not selected. */
        const size_t row1 = len * kb;
        const uint64_t tie_key = load_bits(good_k.data(), kb, k + 2);
        uint64_t tie_idx = UINT64_MAX;
        for (size_t i = len - 1; i > 0 && tie_idx == UINT64_MAX; --i) {
            bool chosen = false;
            for (size_t j = 0; j < k; ++j)
                chosen = chosen || load_bits(good_i.data(), ib, k + j) == i;
            if (!chosen && load_bits(keys.data() + row1, kb, i) == tie_key) tie_idx = i;
        }
        if (tie_idx == UINT64_MAX) return "self-test input has no unselected tie";
        struct Fault {
            const char *what;
            int edit;
        };
        const Fault faults[] = {{"correct output", -1},
                                {"swapped neighbours", 0},
                                {"index moved to a tied key's higher index", 1},
                                {"(k+1)-th key for the k-th", 2},
                                {"key bits changed", 3},
                                {"index out of range", 4}};
        for (const Fault &f : faults) {
            std::vector<unsigned char> K = good_k, I = good_i;
            const size_t e0 = k + 2; /* row 1, rank 2 */
            if (f.edit == 0) {
                put(e0, load_bits(good_k.data(), kb, e0 + 1), load_bits(good_i.data(), ib, e0 + 1),
                    K, I);
                put(e0 + 1, load_bits(good_k.data(), kb, e0), load_bits(good_i.data(), ib, e0), K,
                    I);
            } else if (f.edit == 1) {
                put(e0, tie_key, tie_idx, K, I);
            } else if (f.edit == 2) {
                put(2 * k - 1, load_bits(keys.data() + row1, kb, next[1]), next[1], K, I);
            } else if (f.edit == 3) {
                put(e0, load_bits(good_k.data(), kb, e0) ^ 1u, load_bits(good_i.data(), ib, e0), K,
                    I);
            } else if (f.edit == 4) {
                put(e0, load_bits(good_k.data(), kb, e0), len, K, I);
            }
            WSB_CUDA(cudaMemcpy(dok.get(), K.data(), K.size(), cudaMemcpyHostToDevice));
            WSB_CUDA(cudaMemcpy(doi.get(), I.data(), I.size(), cudaMemcpyHostToDevice));
            for (int layer : {kDevice, kHost}) {
                const VerifyResult vr = chk.check_only(dok.get(), doi.get(), layer);
                const char *where = layer == kDevice ? "device check" : "host reference";
                if (f.edit < 0 && !vr.ok())
                    return strprintf("%s %s rejects a correct top-k: %s", dtype_info(sp.dtype).name,
                                     where, vr.describe().c_str());
                if (f.edit >= 0 && vr.ok())
                    return strprintf("%s %s misses a planted fault: %s", dtype_info(sp.dtype).name,
                                     where, f.what);
            }
        }
    }
    return "";
}

VerifyResult TopkChecker::check_only(const void *out_keys, const void *out_indices, int layers) {
    return check_layers(in_, sample_, host_, expect_, counts_.get(), counters_.get(), out_keys,
                        out_indices, layers);
}

} // namespace wsb
