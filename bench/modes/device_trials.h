/*
 * device_trials.h - how the device mode times one rival on the buffers of a
 * (regime, n): a device rival between CUDA events on the harness's stream,
 * a host rival on host copies of the same input by the wall clock. Both
 * are verified by the GPU verifier after every run.
 */
#ifndef WSB_MODES_DEVICE_TRIALS_H
#define WSB_MODES_DEVICE_TRIALS_H

#include <vector>

#include "core/measure.h"
#include "core/timing.h"
#include "rivals/rival.h"

namespace wsb {

class DeviceTrial final : public Trial {
  public:
    DeviceTrial(Gpu &g, DeviceRival &rv, const Buffers &b, Verifier &ver, bool flush)
        : g_(g), rv_(rv), b_(b), ver_(ver), flush_(flush) {}
    void reset() override;
    bool run(double *ms, std::string *err) override;
    VerifyResult verify() override { return ver_.check_run(rv_.out_keys(b_), rv_.out_vals(b_)); }

  private:
    Gpu &g_;
    DeviceRival &rv_;
    const Buffers &b_;
    Verifier &ver_;
    bool flush_;
};

/* The host rival sorts host copies of the pristine input; its output is
 * uploaded into b.keys_work / b.vals_work for the verifier (untimed). */
class HostStagedTrial final : public Trial {
  public:
    HostStagedTrial(HostRival &hr, const Buffers &b, Verifier &ver);
    void reset() override;
    bool run(double *ms, std::string *err) override;
    VerifyResult verify() override;

  private:
    HostRival &hr_;
    const Buffers &b_;
    Verifier &ver_;
    std::vector<unsigned char> pristine_, keys_, vals_;
    HostArrays h_;
};

} // namespace wsb

#endif /* WSB_MODES_DEVICE_TRIALS_H */
