/*
 * measure.cu - the timing loop shared by every mode, and the guard around a
 * rival's row.
 */
#include "core/measure.h"

#include "core/common.h"
#include "core/timing.h"

#include <new>

namespace wsb {

static std::string run_name(int it, int warmup) {
    return it < warmup ? strprintf("warm-up %d: ", it + 1)
                       : strprintf("repeat %d: ", it - warmup + 1);
}

bool measure(Trial &t, int warmup, int repeat, Row &row, double copy_bw, PhaseTimes &ph) {
    auto tp = std::chrono::steady_clock::now();
    row.warmup = warmup;
    row.times_ms.clear();
    for (int it = 0; it < warmup + repeat; ++it) {
        t.reset();
        ph.reset += lap(tp);
        double ms = 0;
        std::string err;
        const bool ok = t.run(&ms, &err);
        ph.run += lap(tp);
        if (!ok) {
            row.status = RowStatus::Error;
            row.note = run_name(it, warmup) + err;
            return false;
        }
        VerifyResult vr = t.verify();
        ph.verify += lap(tp);
        if (!vr.ok()) {
            row.status = RowStatus::Failed;
            row.note = run_name(it, warmup) + vr.describe();
            return false;
        }
        if (it >= warmup) row.times_ms.push_back(ms);
    }
    row.status = RowStatus::Ok;
    fill_stats(row, copy_bw);
    return true;
}

void guard_rival_row(Gpu &g, Row &row, const std::function<void()> &time_row) {
    try {
        time_row();
    } catch (const std::bad_alloc &) {
        row.status = RowStatus::Skipped;
        row.note = "out of memory (allocation inside the rival)";
    } catch (const BenchError &) {
        throw;
    } catch (const std::exception &e) {
        row.status = RowStatus::Error;
        row.note = std::string("exception: ") + e.what();
    }
    if (row.status != RowStatus::Ok) ensure_context_alive(g, row.rival);
}

} // namespace wsb
