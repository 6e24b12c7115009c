/*
 * rival.h - what a rival is, and the registry every mode takes its rivals
 * from.
 *
 * A DeviceRival sorts the device buffers of a (regime, n) on the harness's
 * stream; a HostRival sorts host arrays in place. The modes time them
 * (core/measure.h): the device mode a device rival between CUDA events and a
 * host rival on host copies by the wall clock, the host mode a host rival
 * directly and a device rival as copy in, sort, copy out (rivals/copy_sort_copy.cu).
 */
#ifndef WSB_RIVALS_RIVAL_H
#define WSB_RIVALS_RIVAL_H

#include <memory>
#include <string>
#include <vector>

#include "core/buffers.h"
#include "core/common.h"

namespace wsb {

/* Per repeat the device mode calls: reset input; before_run(); [start event]
 * run() [stop event]; finish(); verify out_keys() / out_vals(). Rivals report
 * failures through the returned bool and *err; they never throw on purpose
 * (Thrust may: the modes catch that too). */
class DeviceRival {
  public:
    virtual ~DeviceRival() = default;
    /* Device bytes this rival will allocate for b (for the memory check). */
    virtual bool temp_bytes(const Buffers &b, size_t *bytes, std::string *err) = 0;
    /* Allocates temp storage, contexts, ...: outside timing. */
    virtual bool prepare(const Buffers &b, std::string *err) = 0;
    /* Per repeat, outside timing (e.g. rewind a double buffer). */
    virtual void before_run(const Buffers &) {}
    /* The timed work, enqueued on b.stream. */
    virtual bool run(const Buffers &b, std::string *err) = 0;
    /* After the stop event completed, outside timing (collect async errors). */
    virtual bool finish(const Buffers &, std::string *) { return true; }
    /* Where the sorted keys / values are after run(). */
    virtual const void *out_keys(const Buffers &b) const { return b.keys_work; }
    virtual const void *out_vals(const Buffers &b) const { return b.vals_work; }
    /* Bytes its passes read and write, for the moved_GB column; 0 = no model. */
    virtual double model_bytes(const Buffers &) const { return 0.0; }
    /* Free-form note for the row (e.g. "caching allocator"). */
    virtual std::string note() const { return std::string(); }
};

/* Host arrays of one (regime, n): keys and (pairs) values, sorted in place. */
struct HostArrays {
    Regime regime;
    size_t n = 0;
    void *keys = nullptr;
    void *vals = nullptr;
};

class HostRival {
  public:
    virtual ~HostRival() = default;
    /* Outside timing: contexts, device buffers, ... */
    virtual bool prepare(const HostArrays &, std::string *) { return true; }
    /* The timed call: sorts h.keys (and h.vals) in place, synchronously. */
    virtual bool run(const HostArrays &h, std::string *err) = 0;
    virtual std::string note() const { return std::string(); }
};

/* What a factory may need besides the regime. */
struct RivalEnv {
    int device = 0;
    cudaStream_t stream = nullptr;
};

enum class RivalPlace { Device, Host };

/* Which size cap of the device mode applies (--seed-max-log, --cpu-max-log). */
enum class RivalCap { None, Seed, Host };

/* The regimes whose tables list the rival (where it cannot sort one, its
 * factory says why and the row shows n/a: warpsort lists itself in the
 * segmented regimes to show that it has no segmented sort yet). */
enum class RivalScope { Whole, Segmented, Both };

/* One entry of the registry. A factory returns nullptr, with *why, where the
 * rival cannot sort the regime at all (the row shows n/a). */
struct RivalInfo {
    const char *name;
    RivalPlace place;
    bool slow; /* timed --slow-repeat times instead of --repeat */
    RivalCap cap;
    RivalScope scope;
    const char *what; /* one line for --help */
    std::unique_ptr<DeviceRival> (*make_device)(const Regime &, const RivalEnv &, std::string *);
    std::unique_ptr<HostRival> (*make_host)(const Regime &, const RivalEnv &, std::string *);
};

/* Every rival, in table order. */
const std::vector<RivalInfo> &rival_registry();
/* nullptr if there is none of that name. */
const RivalInfo *find_rival(const std::string &name);
std::vector<std::string> rival_names(RivalPlace place);

/* Instantiates R<K> for the key type of d (uint32_t, float, uint64_t, double):
 * the one place that maps a runtime dtype to a C++ key type. */
template <template <class> class R, class... Args>
std::unique_ptr<DeviceRival> make_typed(Dtype d, Args &&...args) {
    switch (d) {
    case Dtype::U32: return std::unique_ptr<DeviceRival>(new R<uint32_t>(args...));
    case Dtype::F32: return std::unique_ptr<DeviceRival>(new R<float>(args...));
    case Dtype::U64: return std::unique_ptr<DeviceRival>(new R<uint64_t>(args...));
    case Dtype::F64: return std::unique_ptr<DeviceRival>(new R<double>(args...));
    }
    return nullptr;
}

/* The same for rivals that carry 8-byte values too: R<K, V>, V = uint32_t
 * (also for keys only) or uint64_t. */
template <template <class, class> class R, class... Args>
std::unique_ptr<DeviceRival> make_typed_kv(const Regime &r, Args &&...args) {
    if (r.value_bytes == 8) {
        switch (r.dtype) {
        case Dtype::U32: return std::unique_ptr<DeviceRival>(new R<uint32_t, uint64_t>(args...));
        case Dtype::F32: return std::unique_ptr<DeviceRival>(new R<float, uint64_t>(args...));
        case Dtype::U64: return std::unique_ptr<DeviceRival>(new R<uint64_t, uint64_t>(args...));
        case Dtype::F64: return std::unique_ptr<DeviceRival>(new R<double, uint64_t>(args...));
        }
        return nullptr;
    }
    switch (r.dtype) {
    case Dtype::U32: return std::unique_ptr<DeviceRival>(new R<uint32_t, uint32_t>(args...));
    case Dtype::F32: return std::unique_ptr<DeviceRival>(new R<float, uint32_t>(args...));
    case Dtype::U64: return std::unique_ptr<DeviceRival>(new R<uint64_t, uint32_t>(args...));
    case Dtype::F64: return std::unique_ptr<DeviceRival>(new R<double, uint32_t>(args...));
    }
    return nullptr;
}

/* "u32 values only" for rivals without an 8-byte-value form: true if r has
 * 8-byte values (and *why says so). */
bool wide_values_refused(const Regime &r, std::string *why);

} // namespace wsb

#endif /* WSB_RIVALS_RIVAL_H */
