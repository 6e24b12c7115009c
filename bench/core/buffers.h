/*
 * buffers.h - the device buffers of one (regime, n) measurement, shared by
 * the input generator, the verifier and every device rival.
 */
#ifndef WSB_CORE_BUFFERS_H
#define WSB_CORE_BUFFERS_H

#include <cuda_runtime.h>

#include <cstddef>

#include "core/regime.h"

namespace wsb {

struct Buffers {
    Regime regime;
    size_t n = 0;
    size_t key_bytes = 0;
    size_t value_bytes = 0;                 /* 0, 4 or 8 (regime.value_bytes) */
    size_t num_segments = 1;                /* n / seg_size, the random segments, or 1 */
    void *keys_pristine = nullptr;          /* the input, never modified after generation */
    void *keys_work = nullptr;              /* reset from keys_pristine before each run */
    void *keys_alt = nullptr;               /* second buffer for rivals that ping-pong */
    void *keys_ref = nullptr;               /* the verified sorted keys */
    void *vals_work = nullptr;              /* pairs: reset to 0, 1, 2, ... before each run */
    void *vals_alt = nullptr;               /* pairs: second buffer */
    int *seg_offsets = nullptr;             /* segmented: num_segments + 1 offsets */
    uint64_t *seg_offsets64 = nullptr;      /* segmented, if allocated: the same as uint64_t */
    const uint64_t *host_offsets = nullptr; /* random segments: the offsets on the host
                                               (segment_offsets()), uploaded by generate_input */
    cudaStream_t stream = nullptr;
};

} // namespace wsb

#endif /* WSB_CORE_BUFFERS_H */
