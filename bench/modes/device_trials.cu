/*
 * device_trials.cu - the device mode's two kinds of timed call.
 */
#include "modes/device_trials.h"

#include "core/input.h"

#include <cstring>

namespace wsb {

void DeviceTrial::reset() {
    WSB_CUDA(cudaMemcpyAsync(b_.keys_work, b_.keys_pristine, b_.n * b_.key_bytes,
                             cudaMemcpyDeviceToDevice, b_.stream));
    if (b_.value_bytes) fill_iota(b_.vals_work, b_.value_bytes, b_.n, b_.stream);
    if (flush_) flush_l2(g_);
    rv_.before_run(b_);
    WSB_CUDA(cudaStreamSynchronize(b_.stream));
}

bool DeviceTrial::run(double *ms, std::string *err) {
    event_begin(g_);
    bool ok = rv_.run(b_, err);
    const cudaError_t sync = event_end(g_);
    if (ok && sync != cudaSuccess) {
        ok = false;
        *err = "while running: " + cuda_error_text(sync);
    }
    if (ok) ok = rv_.finish(b_, err);
    if (ok) {
        const cudaError_t late = cudaGetLastError();
        if (late != cudaSuccess) {
            ok = false;
            *err = "CUDA error after the run: " + cuda_error_text(late);
        }
    }
    if (ok) *ms = event_ms(g_);
    return ok;
}

HostStagedTrial::HostStagedTrial(HostRival &hr, const Buffers &b, Verifier &ver)
    : hr_(hr), b_(b), ver_(ver), pristine_(b.n * b.key_bytes), keys_(b.n * b.key_bytes),
      vals_(b.n * b.value_bytes) {
    WSB_CUDA(
        cudaMemcpy(pristine_.data(), b.keys_pristine, pristine_.size(), cudaMemcpyDeviceToHost));
    h_.regime = b.regime;
    h_.n = b.n;
    h_.keys = keys_.data();
    h_.vals = b.value_bytes ? vals_.data() : nullptr;
}

void HostStagedTrial::reset() {
    std::memcpy(keys_.data(), pristine_.data(), pristine_.size());
    if (b_.value_bytes) fill_iota_host(vals_.data(), b_.value_bytes, b_.n);
}

bool HostStagedTrial::run(double *ms, std::string *err) {
    const double t0 = wall_ms();
    const bool ok = hr_.run(h_, err);
    *ms = wall_ms() - t0;
    return ok;
}

VerifyResult HostStagedTrial::verify() {
    WSB_CUDA(cudaMemcpy(b_.keys_work, keys_.data(), keys_.size(), cudaMemcpyHostToDevice));
    if (b_.value_bytes)
        WSB_CUDA(cudaMemcpy(b_.vals_work, vals_.data(), vals_.size(), cudaMemcpyHostToDevice));
    return ver_.check_run(b_.keys_work, b_.vals_work);
}

} // namespace wsb
