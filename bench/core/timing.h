/*
 * timing.h - the clocks of the harness and what surrounds them: the GPU
 * with its stream, events and L2 flush buffer; a wall clock; medians; the
 * device copy bandwidth every device row is compared with.
 */
#ifndef WSB_CORE_TIMING_H
#define WSB_CORE_TIMING_H

#include <cuda_runtime.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/common.h"

namespace wsb {

/* The device a mode runs on: its stream, one event pair, a buffer twice
 * the size of L2 to flush it with. */
struct Gpu {
    int device = 0;
    cudaDeviceProp prop;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    DeviceMemory flush_buf, flush_sink;
    size_t flush_bytes = 0;
    ~Gpu();
};

/* Opens device `device`: false with *why when there is no usable device
 * (no driver, no GPU, a device number out of range). Throws BenchError if
 * the device is there but setting it up fails. */
bool open_gpu(Gpu &g, int device, std::string *why);

/* Reads the flush buffer on g.stream so the next kernel starts with a cold,
 * clean L2 (reads leave no dirty lines whose write-back would be timed). */
void flush_l2(Gpu &g);

/* Times work enqueued on g.stream between two events: begin(); enqueue;
 * end() waits for the stop event and returns its error (the work's
 * asynchronous error, if any) without throwing; ms() reads the time. */
cudaError_t event_end(Gpu &g);
void event_begin(Gpu &g);
double event_ms(Gpu &g);

/* Wall clock in ms (steady). */
double wall_ms();
/* Seconds since t, and resets t to now (for the wall-time breakdown). */
double lap(std::chrono::steady_clock::time_point &t);

double median_of(std::vector<double> v);

/* Device-to-device copy bandwidth, bytes read + written / time, median of
 * 20 after 3 warm-ups, of a 1 GiB buffer (smaller if memory is short). */
double measure_copy_bw(Gpu &g, size_t *buffer_bytes);

/* After a rival's error: clears what can be cleared; throws BenchError if
 * the CUDA context is broken (a sticky error: every later call would fail). */
void ensure_context_alive(Gpu &g, const std::string &who);

} // namespace wsb

#endif /* WSB_CORE_TIMING_H */
