/*
 * verify_host.cu - the host-side checks: HostCheck (std::sort cross-check
 * of device results) and HostVerifier (linear checks of host results).
 */
#include "core/verify.h"

#include "core/common.h"
#include "core/input.h"
#include "core/order.h"

#include <algorithm>
#include <mutex>

namespace wsb {
namespace {

std::vector<uint64_t> download_widened(const void *dev, size_t n, size_t bytes) {
    std::vector<uint64_t> out(n);
    if (bytes == 8) {
        WSB_CUDA(cudaMemcpy(out.data(), dev, n * 8, cudaMemcpyDeviceToHost));
    } else {
        std::vector<uint32_t> tmp(n);
        WSB_CUDA(cudaMemcpy(tmp.data(), dev, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) out[i] = tmp[i];
    }
    return out;
}

inline uint64_t load(const void *p, size_t bytes, size_t i) {
    return bytes == 8 ? ((const uint64_t *)p)[i] : ((const uint32_t *)p)[i];
}

inline uint64_t order_key(uint64_t bits, size_t bytes, bool is_float) {
    return bytes == 8 ? ordered_bits(bits, is_float) : ordered_bits((uint32_t)bits, is_float);
}

} // namespace

std::string HostCheck::check(const void *keys_dev, const void *vals_dev) {
    const Buffers &b = b_;
    const size_t n = b.n;
    WSB_CUDA(cudaStreamSynchronize(b.stream));
    if (!built_) { /* the expected keys: the pristine input sorted per segment */
        if (b.regime.seg_max && !b.host_offsets)
            throw BenchError("host check: random segments without offsets");
        seg_of_.assign(n, 0);
        if (b.host_offsets) {
            for (size_t s = 0; s < b.num_segments; ++s)
                for (uint64_t i = b.host_offsets[s]; i < b.host_offsets[s + 1]; ++i) seg_of_[i] = s;
        } else if (b.regime.seg_size) {
            for (size_t i = 0; i < n; ++i) seg_of_[i] = i / b.regime.seg_size;
        }
        const bool is_float = dtype_info(b.regime.dtype).is_float;
        const size_t kb = b.key_bytes;
        input_ = download_widened(b.keys_pristine, n, kb);
        expect_ = input_;
        auto less = [is_float, kb](uint64_t x, uint64_t y) {
            return order_key(x, kb, is_float) < order_key(y, kb, is_float);
        };
        for (size_t lo = 0, hi = 0; lo < n; lo = hi) {
            while (hi < n && seg_of_[hi] == seg_of_[lo]) ++hi;
            std::sort(expect_.begin() + (ptrdiff_t)lo, expect_.begin() + (ptrdiff_t)hi, less);
        }
        built_ = true;
    }
    std::vector<uint64_t> out = download_widened(keys_dev, n, b.key_bytes);
    for (size_t i = 0; i < n; ++i)
        if (out[i] != expect_[i])
            return strprintf("key %zu is 0x%llx, expected 0x%llx", i, (unsigned long long)out[i],
                             (unsigned long long)expect_[i]);
    if (!b.value_bytes || !vals_dev) return std::string();
    std::vector<uint64_t> vals = download_widened(vals_dev, n, b.value_bytes);
    std::vector<bool> seen(n, false);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t v = vals[i];
        if (v >= n) return strprintf("value %zu is %llu, out of range", i, (unsigned long long)v);
        if (seen[v]) return strprintf("value %llu appears twice", (unsigned long long)v);
        seen[v] = true;
        if (input_[v] != out[i]) return strprintf("value %zu does not carry its key", i);
        if (seg_of_[v] != seg_of_[i]) return strprintf("value %zu left its segment", i);
    }
    return std::string();
}

HostVerifier::HostVerifier(const Regime &r, size_t n, const void *input)
    : r_(r), n_(n), input_(input) {
    if (r.segmented()) throw BenchError("HostVerifier: whole-array regimes only");
    const size_t kb = r.key_bytes();
    std::mutex m;
    parallel_for(n, [&](size_t first, size_t count) {
        uint64_t a[4] = {0, 0, 0, 0}, h1, h2;
        for (size_t i = first; i < first + count; ++i) {
            mix_pair(load(input, kb, i), &h1, &h2);
            a[0] += h1, a[1] += h2;
            mix_pair(i, &h1, &h2);
            a[2] += h1, a[3] += h2;
        }
        std::lock_guard<std::mutex> lock(m);
        in_hash_[0] += a[0], in_hash_[1] += a[1], iota_hash_[0] += a[2], iota_hash_[1] += a[3];
    });
}

VerifyResult HostVerifier::check(const void *keys, const void *vals) const {
    const size_t kb = r_.key_bytes(), vb = (size_t)r_.value_bytes, n = n_;
    const bool is_float = dtype_info(r_.dtype).is_float, pairs = vb && vals;
    std::mutex m;
    VerifyResult res;
    uint64_t hash[2] = {0, 0};
    parallel_for(n, [&](size_t first, size_t count) {
        VerifyResult part;
        uint64_t a[2] = {0, 0}, h1, h2;
        for (size_t i = first; i < first + count; ++i) {
            const uint64_t k = load(keys, kb, i);
            bool bad = false;
            if (i + 1 < n) {
                const uint64_t next = load(keys, kb, i + 1);
                if (order_key(k, kb, is_float) > order_key(next, kb, is_float))
                    ++part.unsorted, bad = true;
                if (r_.stable && pairs && k == next && load(vals, vb, i) > load(vals, vb, i + 1))
                    ++part.val_unstable, bad = true;
            }
            const uint64_t v = pairs ? load(vals, vb, i) : k;
            if (pairs && v >= n)
                ++part.val_range, bad = true;
            else if (pairs && load(input_, kb, v) != k)
                ++part.val_follow, bad = true;
            mix_pair(v, &h1, &h2);
            a[0] += h1, a[1] += h2;
            if (bad && i < part.first_bad) part.first_bad = i;
        }
        std::lock_guard<std::mutex> lock(m);
        res.unsorted += part.unsorted, res.val_unstable += part.val_unstable;
        res.val_range += part.val_range, res.val_follow += part.val_follow;
        res.first_bad = std::min(res.first_bad, part.first_bad);
        hash[0] += a[0], hash[1] += a[1];
    });
    const uint64_t *want = pairs ? iota_hash_ : in_hash_;
    if (hash[0] != want[0] || hash[1] != want[1])
        res.problem = pairs ? "the values are not a permutation of 0..n-1"
                            : "the keys are not the input's multiset";
    return res;
}

} // namespace wsb
