/*
 * input.h - inputs of every mode, from src/core/keygen.h (counter-based, the
 * generator the CLI and the tests use), so a (seed, regime, n) always gives
 * the same keys; and the reference every device result is compared with.
 */
#ifndef WSB_CORE_INPUT_H
#define WSB_CORE_INPUT_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/buffers.h"

namespace wsb {

/* The keygen stream of a (seed, n): keys-only and pairs of the same
 * dtype / dist / n share it (keygen mixes in the dtype and distribution). */
uint64_t input_seed(uint64_t seed, size_t n);

/* The num_segments + 1 offsets of a segmented regime of n items: equal
 * segments of seg_size, or random lengths uniform in 1..seg_max drawn from
 * (seed, n, seg_max), the last one cut at n. Deterministic. */
std::vector<uint64_t> segment_offsets(const Regime &r, size_t n, uint64_t seed);

/* Fills b.keys_pristine per b.regime, then b.keys_ref (the input sorted by
 * CUB's radix sort, to be checked by Verifier::check_reference before any
 * rival is timed) and, for segmented regimes, b.seg_offsets (and
 * b.seg_offsets64 if allocated): from b.host_offsets where set (required
 * for random lengths), else equal segments. Synchronous. */
void generate_input(Buffers &b, uint64_t seed);

/* Only the keys: keys[0..n) of regime r for (seed, n) on the device, the
 * same keys generate_input() makes (async on stream). */
void generate_keys(const Regime &r, size_t n, uint64_t seed, void *keys, cudaStream_t stream);

/* The same keys on the host: keys[0..n) of regime r, on all cores. */
void generate_input_host(const Regime &r, size_t n, uint64_t seed, void *keys);

/* Writes 0, 1, ..., n-1 as value_bytes-wide values (async on stream). */
void fill_iota(void *vals, size_t value_bytes, size_t n, cudaStream_t stream);
/* The same on the host. */
void fill_iota_host(void *vals, size_t value_bytes, size_t n);

/* Grid for grid-stride loops over n items: enough blocks to fill the GPU. */
unsigned grid_for(size_t n, unsigned block);

/* Runs body(first, count) over [0, n) split across the host's cores. */
template <class F>
void parallel_for(size_t n, F body);

} // namespace wsb

#include <algorithm>
#include <thread>
#include <vector>

template <class F>
void wsb::parallel_for(size_t n, F body) {
    const size_t threads = std::max(1u, std::thread::hardware_concurrency());
    const size_t chunk = std::max<size_t>((n + threads - 1) / threads, 1 << 16);
    std::vector<std::thread> pool;
    for (size_t first = chunk; first < n; first += chunk)
        pool.emplace_back(body, first, std::min(chunk, n - first));
    body((size_t)0, std::min(chunk, n));
    for (std::thread &t : pool) t.join();
}

#endif /* WSB_CORE_INPUT_H */
