/*
 * verify.h - the checks every timed result goes through.
 *
 * Device results (Verifier): exact comparison with the verified reference
 * keys, or, for segmented regimes, sortedness within each segment plus a
 * per-segment 128-bit multiset hash; for pairs, the values are a
 * permutation of 0..n-1 (a bitmap catches duplicates), each carries its key
 * (key[i] == input[value[i]]) and stays in its segment.
 * Host results (HostVerifier): linear-time checks of host arrays on all
 * cores (sorted, same multiset as the input, values carry their keys).
 * HostCheck: the independent std::sort cross-check for small n.
 */
#ifndef WSB_CORE_VERIFY_H
#define WSB_CORE_VERIFY_H

#include <cstdint>
#include <string>
#include <vector>

#include "core/buffers.h"

namespace wsb {

/* What a check found. Every count must be zero for a row to pass. */
struct VerifyResult {
    uint64_t unsorted = 0;      /* i with key[i] > key[i+1] inside one segment */
    uint64_t ref_mismatch = 0;  /* i with key bits != reference bits */
    uint64_t hash_mismatch = 0; /* segments whose key multiset hash differs from the input's */
    uint64_t val_range = 0;     /* values >= n */
    uint64_t val_dup = 0;       /* values seen twice (so not a permutation) */
    uint64_t val_follow = 0;    /* i with key[i] != input_key[value[i]] */
    uint64_t val_segment = 0;   /* values that left their segment */
    uint64_t val_unstable = 0;  /* stable rows: i with key[i] == key[i+1], value[i] > value[i+1] */
    uint64_t first_bad = UINT64_MAX; /* smallest index of any failure above, if known */
    std::string problem;             /* a failure described in words (host checks) */
    bool ok() const {
        return unsorted == 0 && ref_mismatch == 0 && hash_mismatch == 0 && val_range == 0 &&
               val_dup == 0 && val_follow == 0 && val_segment == 0 && val_unstable == 0 &&
               problem.empty();
    }
    std::string describe() const;
};

/* Device scratch of the verifier for one (regime, n); owns its memory. */
class Verifier {
  public:
    /* Random segment lengths: b.seg_offsets must hold the offsets already. */
    explicit Verifier(const Buffers &b);
    ~Verifier();
    Verifier(const Verifier &) = delete;
    Verifier &operator=(const Verifier &) = delete;
    /* Bytes it allocates for (r, n) (for the memory check). */
    static size_t bytes_needed(const Regime &r, size_t n, size_t num_segments);
    /* Hashes the pristine input per segment (once, after generation). */
    void hash_input();
    /* The full check of keys (and values, for pairs). Synchronous. */
    VerifyResult check(const void *keys, const void *vals);
    /* Checks the reference itself: sorted and the same multiset as the input. */
    VerifyResult check_reference();
    /* The check after every run of one rival. The first run after forget()
     * gets the full check(), and its output, once it passes, is remembered.
     * A later output bit for bit the remembered one (keys against the
     * reference or the remembered keys, values against the remembered
     * values) is correct by that equality; any other output gets the full
     * check again (values may legitimately differ among equal keys). */
    VerifyResult check_run(const void *keys, const void *vals);
    void forget() { remembered_ = false; }
    /* How many check_run() calls took the full check / the equality path. */
    uint64_t full_checks = 0, equality_checks = 0;

  private:
    void remember(const void *keys, const void *vals);
    void free_all();
    const Buffers &b_;
    uint64_t *in_hash_ = nullptr;  /* 2 * num_segments (at least 4) */
    uint64_t *out_hash_ = nullptr; /* 2 * num_segments (at least 4) */
    uint32_t *bitmap_ = nullptr;   /* pairs: one bit per value */
    void *counters_ = nullptr;     /* device VerifyCounters */
    void *saved_vals_ = nullptr;   /* pairs: the remembered values */
    void *saved_keys_ = nullptr;   /* segmented: the remembered keys */
    uint32_t *seg_ids_ = nullptr;  /* random segment lengths: each item's segment */
    bool remembered_ = false;
};

/* Independent host check of a device result: the expected keys come from
 * std::sort of the pristine input, per segment, computed once and reused
 * by every rival of the same (regime, n); segments from b.host_offsets
 * where set, else equal ones. "" if keys (and vals, for pairs)
 * are a correct result. */
class HostCheck {
  public:
    explicit HostCheck(const Buffers &b) : b_(b) {}
    std::string check(const void *keys, const void *vals);

  private:
    const Buffers &b_;
    bool built_ = false;
    std::vector<uint64_t> input_, expect_; /* key bits widened to 64 */
    std::vector<uint64_t> seg_of_;         /* each item's segment */
};

/* Linear-time check of a sorted host array (whole-array regimes): keys in
 * order; keys only: the same multiset hash as the input's; pairs: every
 * value < n, the values' multiset hash that of 0..n-1, and each value
 * carrying its key (key[i] == input[value[i]]). On all cores. */
class HostVerifier {
  public:
    /* input: the pristine host keys (kept by the caller). */
    HostVerifier(const Regime &r, size_t n, const void *input);
    VerifyResult check(const void *keys, const void *vals) const;

  private:
    Regime r_;
    size_t n_;
    const void *input_;
    uint64_t in_hash_[2] = {0, 0}, iota_hash_[2] = {0, 0};
};

/* Number of 32-bit words in which a and b (device, n words) differ. */
uint64_t device_words_differ(const uint32_t *a, const uint32_t *b, size_t n, cudaStream_t stream);

/* Runs the verifiers on small planted faults; "" if every fault was caught
 * and every clean input passed, else what went wrong. */
std::string verifier_self_test(cudaStream_t stream);

} // namespace wsb

#endif /* WSB_CORE_VERIFY_H */
