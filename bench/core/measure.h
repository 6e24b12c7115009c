/*
 * measure.h - the one timing loop of the harness. Every mode describes one
 * timed call as a Trial (how to restore its input, how to run and time it,
 * how to check its output) and measure() does the rest the same way for
 * all: --warmup untimed runs, then the timed repeats, every run verified,
 * a row's median / min / mean / max, FAILED or error with the run that
 * broke, and the wall time of each phase.
 */
#ifndef WSB_CORE_MEASURE_H
#define WSB_CORE_MEASURE_H

#include <functional>
#include <string>

#include "core/report.h"
#include "core/verify.h"

namespace wsb {

class Trial {
  public:
    virtual ~Trial() = default;
    /* Outside timing: give the call a fresh copy of its input. */
    virtual void reset() = 0;
    /* The timed call; *ms from the trial's own clock (CUDA events around
     * device work, the wall clock around host calls). false with *err if
     * the call reported an error. */
    virtual bool run(double *ms, std::string *err) = 0;
    /* Outside timing: check the output of the call just made. */
    virtual VerifyResult verify() = 0;
};

/* Seconds the harness spent in each phase (accumulated over rows). */
struct PhaseTimes {
    double reset = 0, run = 0, verify = 0;
};

/* Runs warmup + repeat calls of t into row (times_ms, status, note; stats
 * through fill_stats with copy_bw). false if a run errored or failed
 * verification: row says which run and why. Throws BenchError only for
 * the harness's own failures. */
bool measure(Trial &t, int warmup, int repeat, Row &row, double copy_bw, PhaseTimes &ph);

struct Gpu;

/* Runs time_row, which times one rival into row. An exception thrown from
 * inside the rival ends its row, not the run: std::bad_alloc makes the row
 * Skipped, any other std::exception an Error (BenchError, the harness's own
 * failure, goes on up). After a row that is not Ok, ensure_context_alive(g)
 * checks that the next rival can still run. */
void guard_rival_row(Gpu &g, Row &row, const std::function<void()> &time_row);

} // namespace wsb

#endif /* WSB_CORE_MEASURE_H */
