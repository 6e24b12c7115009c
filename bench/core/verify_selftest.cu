/*
 * verify_selftest.cu - before anything is timed, the verifiers must accept
 * correct outputs and catch planted faults (swapped neighbours, a
 * duplicated key that keeps the order, floats sorted as raw bits, swapped /
 * duplicated / out-of-range values, entries moved across segments, equal
 * and random segment lengths), on the
 * GPU and on the host. A verifier that passes everything proves nothing.
 */
#include "core/verify.h"

#include "core/common.h"
#include "core/input.h"
#include "core/json.h"
#include "core/order.h"

#include <algorithm>

namespace wsb {
namespace {

/* One regime of 4096 keys: its buffers, a correct output made on the host
 * (good keys, idx values), and checks that a planted output is accepted or
 * caught by the GPU verifier and both host checks. */
template <class Bits, class V>
struct Case {
    static constexpr size_t n = 4096;
    DeviceMemory mem[7];
    Buffers b;
    std::vector<Bits> in, good;
    std::vector<V> idx;
    std::vector<uint64_t> off, sid; /* segment offsets; each item's segment */
    size_t at = SIZE_MAX;           /* a spot where neighbours differ */
    std::string label;

    void *alloc(int i, size_t bytes) {
        WSB_CUDA(mem[i].allocate(bytes));
        return mem[i].get();
    }
    void build(const Regime &r, cudaStream_t stream);
    bool same_seg(size_t i, size_t j) const { return sid[i] == sid[j]; }
    /* Sorts each segment of v (indices into in) stably by less. */
    template <class L>
    void sort_segments(std::vector<V> &v, L less) const {
        for (size_t s = 0; s + 1 < off.size(); ++s)
            std::stable_sort(v.begin() + (ptrdiff_t)off[s], v.begin() + (ptrdiff_t)off[s + 1],
                             less);
    }
    void upload(const std::vector<Bits> &k, const std::vector<V> &v) {
        WSB_CUDA(cudaMemcpy(b.keys_work, k.data(), n * sizeof(Bits), cudaMemcpyHostToDevice));
        if (b.value_bytes)
            WSB_CUDA(cudaMemcpy(b.vals_work, v.data(), n * sizeof(V), cudaMemcpyHostToDevice));
    }
    /* "" if the verdicts on (k, v) are right. */
    std::string expect(Verifier &ver, const std::vector<Bits> &k, const std::vector<V> &v,
                       bool correct, const char *what);
};

template <class Bits, class V>
void Case<Bits, V>::build(const Regime &r, cudaStream_t stream) {
    b.regime = r;
    b.n = n;
    b.key_bytes = sizeof(Bits);
    b.value_bytes = (size_t)r.value_bytes;
    off = segment_offsets(r, n, 12345);
    b.num_segments = off.size() - 1;
    if (r.seg_max) b.host_offsets = off.data();
    sid.assign(n, 0);
    for (size_t s = 0; s + 1 < off.size(); ++s)
        for (uint64_t i = off[s]; i < off[s + 1]; ++i) sid[i] = s;
    b.stream = stream;
    b.keys_pristine = alloc(0, n * sizeof(Bits));
    b.keys_work = alloc(1, n * sizeof(Bits));
    b.keys_alt = alloc(2, n * sizeof(Bits));
    b.keys_ref = alloc(3, n * sizeof(Bits));
    if (r.pairs()) b.vals_work = alloc(4, n * sizeof(V));
    if (r.pairs()) b.vals_alt = alloc(5, n * sizeof(V));
    if (r.segmented()) b.seg_offsets = (int *)alloc(6, (b.num_segments + 1) * sizeof(int));
    generate_input(b, 12345);
    label = regime_label(r);
    const bool is_float = dtype_info(r.dtype).is_float;
    in.resize(n);
    WSB_CUDA(cudaMemcpy(in.data(), b.keys_pristine, n * sizeof(Bits), cudaMemcpyDeviceToHost));
    idx.resize(n);
    for (size_t i = 0; i < n; ++i) idx[i] = (V)i;
    sort_segments(idx, [&](V x, V y) {
        return ordered_bits(in[x], is_float) < ordered_bits(in[y], is_float);
    });
    good.resize(n);
    for (size_t i = 0; i < n; ++i) good[i] = in[idx[i]];
    for (size_t i = n / 2; i + 1 < n && at == SIZE_MAX; ++i)
        if (good[i] != good[i + 1] && same_seg(i, i + 1)) at = i;
}

template <class Bits, class V>
std::string Case<Bits, V>::expect(Verifier &ver, const std::vector<Bits> &k,
                                  const std::vector<V> &v, bool correct, const char *what) {
    upload(k, v);
    VerifyResult r = ver.check(b.keys_work, b.vals_work);
    HostCheck hc(b);
    const std::string h = hc.check(b.keys_work, b.vals_work);
    std::string hv_problem;
    if (!b.regime.segmented()) { /* the host verifier takes whole arrays only */
        HostVerifier hv(b.regime, n, in.data());
        VerifyResult hr = hv.check(k.data(), b.value_bytes ? (const void *)v.data() : nullptr);
        if (hr.ok() != correct) hv_problem = hr.describe();
        if (hr.ok() != correct && correct)
            return label + ": host verifier rejected " + what + ": " + hv_problem;
        if (hr.ok() != correct) return label + ": host verifier missed " + std::string(what);
    }
    if (correct && !r.ok())
        return label + ": correct output (" + what + ") rejected: " + r.describe();
    if (correct && !h.empty())
        return label + ": correct output (" + what + ") rejected by host check: " + h;
    if (!correct && r.ok())
        return label + ": planted fault not caught by the GPU verifier: " + what;
    if (!correct && h.empty())
        return label + ": planted fault not caught by the host check: " + what;
    return std::string();
}

/* Faults in the keys (values moved along, so only the keys are wrong). */
template <class Bits, class V>
std::string key_faults(Case<Bits, V> &c, Verifier &ver) {
    std::string err;
    std::vector<Bits> k = c.good;
    std::vector<V> v = c.idx;
    std::swap(k[c.at], k[c.at + 1]);
    std::swap(v[c.at], v[c.at + 1]);
    if (!(err = c.expect(ver, k, v, false, "swapped neighbours")).empty()) return err;
    k = c.good;
    k[c.at] = k[c.at + 1]; /* still sorted, multiset wrong */
    if (!(err = c.expect(ver, k, c.idx, false, "key duplicated over its neighbour")).empty())
        return err;
    if (!(err = c.expect(ver, c.in, c.idx, false, "unsorted input")).empty()) return err;
    /* sorted by raw unsigned bits instead of the dtype's order */
    for (size_t i = 0; i < c.n; ++i) v[i] = (V)i;
    c.sort_segments(v, [&](V x, V y) { return c.in[x] < c.in[y]; });
    for (size_t i = 0; i < c.n; ++i) k[i] = c.in[v[i]];
    if (k != c.good) return c.expect(ver, k, v, false, "sorted as raw bits");
    if (dtype_info(c.b.regime.dtype).is_float)
        return c.label + ": self-test input has no negative floats";
    return std::string();
}

template <class Bits, class V>
std::string value_faults(Case<Bits, V> &c, Verifier &ver) {
    std::string err;
    std::vector<V> v = c.idx;
    std::swap(v[c.at], v[c.at + 1]);
    if (!(err = c.expect(ver, c.good, v, false, "values swapped")).empty()) return err;
    v = c.idx;
    v[c.at] = v[c.at + 1];
    if (!(err = c.expect(ver, c.good, v, false, "value duplicated")).empty()) return err;
    v = c.idx;
    v[c.at] = (V)(c.n + 7);
    if (!(err = c.expect(ver, c.good, v, false, "value out of range")).empty()) return err;
    v.assign(c.n, (V)0);
    return c.expect(ver, c.good, v, false, "values not written");
}

/* check_run: the full check first, then equality with the remembered output. */
template <class Bits, class V>
std::string check_run_faults(Case<Bits, V> &c, Verifier &ver) {
    ver.forget();
    c.upload(c.good, c.idx);
    VerifyResult r1 = ver.check_run(c.b.keys_work, c.b.vals_work);
    VerifyResult r2 = ver.check_run(c.b.keys_work, c.b.vals_work);
    if (!r1.ok() || !r2.ok() || ver.equality_checks == 0)
        return c.label + ": check_run rejected a correct output or never took the equality path";
    std::vector<Bits> k = c.good;
    std::vector<V> v = c.idx;
    std::swap(k[c.at], k[c.at + 1]);
    std::swap(v[c.at], v[c.at + 1]);
    c.upload(k, v);
    if (ver.check_run(c.b.keys_work, c.b.vals_work).ok())
        return c.label + ": check_run missed swapped neighbours";
    if (!c.b.value_bytes) return std::string();
    v = c.idx;
    std::swap(v[c.at], v[c.at + 1]);
    c.upload(c.good, v);
    if (ver.check_run(c.b.keys_work, c.b.vals_work).ok())
        return c.label + ": check_run missed swapped values";
    for (size_t i = 0; i + 1 < c.n;
         ++i) /* another correct output: values of equal keys exchanged */
        if (c.good[i] == c.good[i + 1] && c.same_seg(i, i + 1)) {
            v = c.idx;
            std::swap(v[i], v[i + 1]);
            c.upload(c.good, v);
            const uint64_t full_before = ver.full_checks;
            VerifyResult r3 = ver.check_run(c.b.keys_work, c.b.vals_work);
            if (!r3.ok() || ver.full_checks != full_before + 1)
                return c.label +
                       ": check_run rejected values exchanged between equal keys: " + r3.describe();
            break;
        }
    return std::string();
}

template <class Bits, class V>
std::string run_case(const Regime &r, cudaStream_t stream) {
    Case<Bits, V> c;
    c.build(r, stream);
    Verifier ver(c.b);
    ver.hash_input();
    VerifyResult rr = ver.check_reference();
    if (!rr.ok()) return c.label + ": reference failed its own check: " + rr.describe();
    if (c.at == SIZE_MAX) return c.label + ": self-test input has no distinct neighbours";
    std::string err;
    if (!(err = c.expect(ver, c.good, c.idx, true, "host-sorted")).empty()) return err;
    if (!(err = key_faults(c, ver)).empty()) return err;
    if (r.pairs() && !(err = value_faults(c, ver)).empty()) return err;
    if (!(err = check_run_faults(c, ver)).empty()) return err;
    if (r.segmented()) { /* two entries exchanged across a segment border */
        std::vector<Bits> k = c.good;
        std::vector<V> v = c.idx;
        const size_t second = (size_t)c.off[1];
        if (second >= c.n) return c.label + ": self-test input has one segment";
        std::swap(k[0], k[second]);
        std::swap(v[0], v[second]);
        if (k[0] != c.good[0]) return c.expect(ver, k, v, false, "entries moved across segments");
    }
    return std::string();
}

std::string device_words_self_test(cudaStream_t stream) {
    std::vector<uint32_t> a(1000, 7u), b(1000, 7u);
    b[3] = 8u;
    b[999] = 0u;
    DeviceMemory da, db;
    WSB_CUDA(da.allocate(a.size() * 4));
    WSB_CUDA(db.allocate(b.size() * 4));
    WSB_CUDA(cudaMemcpy(da.get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    WSB_CUDA(cudaMemcpy(db.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    const uint64_t d = device_words_differ((const uint32_t *)da.get(), (const uint32_t *)db.get(),
                                           a.size(), stream);
    return d == 2 ? std::string()
                  : strprintf("device_words_differ found %llu differences, not 2",
                              (unsigned long long)d);
}

} // namespace

std::string verifier_self_test(cudaStream_t stream) {
    struct Spec {
        Dtype dt;
        int vb;
        uint64_t seg;
        Dist dist;
        uint64_t seg_max = 0;
    };
    static const Spec specs[] = {
        {Dtype::U32, 0, 0, KEYGEN_RANDOM},      {Dtype::U32, 4, 0, KEYGEN_RANDOM},
        {Dtype::F32, 0, 0, KEYGEN_RANDOM},      {Dtype::F32, 4, 0, KEYGEN_FEW},
        {Dtype::U64, 4, 0, KEYGEN_RANDOM},      {Dtype::F64, 0, 0, KEYGEN_RANDOM},
        {Dtype::F64, 4, 256, KEYGEN_RANDOM},    {Dtype::U32, 0, 256, KEYGEN_RANDOM},
        {Dtype::F32, 0, 16, KEYGEN_RANDOM},     {Dtype::U64, 4, 1024, KEYGEN_FEW},
        {Dtype::U64, 8, 0, KEYGEN_RANDOM},      {Dtype::F64, 8, 0, KEYGEN_FEW},
        {Dtype::U32, 8, 0, KEYGEN_RANDOM},      {Dtype::U32, 4, 0, KEYGEN_RANDOM, 100},
        {Dtype::F32, 0, 0, KEYGEN_RANDOM, 300}, {Dtype::U32, 0, 0, KEYGEN_FEW, 2048},
    };
    for (const Spec &sp : specs) {
        Regime r;
        r.dtype = sp.dt;
        r.value_bytes = sp.vb;
        r.seg_size = sp.seg;
        r.seg_max = sp.seg_max;
        r.dist = sp.dist;
        const bool wide = sp.vb == 8;
        std::string e = dtype_info(sp.dt).bytes == 4
                            ? (wide ? run_case<uint32_t, uint64_t>(r, stream)
                                    : run_case<uint32_t, uint32_t>(r, stream))
                            : (wide ? run_case<uint64_t, uint64_t>(r, stream)
                                    : run_case<uint64_t, uint32_t>(r, stream));
        if (!e.empty()) return e;
    }
    std::string e = device_words_self_test(stream);
    if (!e.empty()) return e;
    /* JSON escaping is part of what must not lie. */
    if (json_escape("a\"b\\c\n\x01") != "a\\\"b\\\\c\\n\\u0001")
        return "json_escape is wrong: " + json_escape("a\"b\\c\n\x01");
    return std::string();
}

} // namespace wsb
