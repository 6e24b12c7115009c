/*
 * regime.h - what a row sorts: key type, values, distribution, segments,
 * stability, and (host mode) where the arrays live.
 */
#ifndef WSB_CORE_REGIME_H
#define WSB_CORE_REGIME_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json.h"
#include "core/keygen.h"
#include "warpsort.h"

namespace wsb {

enum class Dtype { U32, F32, U64, F64 };
constexpr int kNumDtypes = 4;

struct DtypeInfo {
    Dtype dtype;
    const char *name;    /* "u32" ... as in warpsort_dtype_name() */
    int bytes;           /* 4 or 8 */
    bool is_float;       /* ordered through the float total order */
    warpsort_dtype_t ws; /* the library's code for it */
};
const DtypeInfo &dtype_info(Dtype d);

/* Inputs come from src/core/keygen.h, the generator (and the names) the CLI
 * and the tests use. The harness times the distributions whose floats are
 * finite and normal, so the rivals that compare with `<` agree with
 * warpsort's total order. */
using Dist = keygen_dist_t;
constexpr Dist kDists[] = {KEYGEN_RANDOM, KEYGEN_SORTED,      KEYGEN_REVERSED,
                           KEYGEN_FEW,    KEYGEN_EQUAL,       KEYGEN_TWO,
                           KEYGEN_SKEWED, KEYGEN_EXPONENTIAL, KEYGEN_ALL_BUT_ONE};
constexpr int kNumDists = sizeof kDists / sizeof kDists[0];
int dist_index(Dist d); /* position in kDists, -1 if not timed */
const char *dist_name(Dist d);

/* Where the arrays a rival is handed live. */
enum class Memory { Device, Pageable, Pinned };
const char *memory_name(Memory m);

/* Values of pairs are the input positions 0, 1, ..., n-1 (uint32_t or, with
 * value_bytes 8, uint64_t), so a sorted output can be checked exactly. */
struct Regime {
    Dtype dtype = Dtype::U32;
    int value_bytes = 0; /* 0: keys only; 4 or 8: pairs */
    Dist dist = KEYGEN_RANDOM;
    uint64_t seg_size = 0; /* 0: the whole array; else equal segments of this size */
    uint64_t seg_max = 0;  /* else (seg_size 0): random lengths, uniform 1..seg_max */
    bool stable = false;   /* rivals sort stably; those that cannot are n/a */
    Memory memory = Memory::Device;
    uint64_t device_budget = 0; /* host mode, out of core: the context's device budget */
    bool pairs() const { return value_bytes != 0; }
    bool segmented() const { return seg_size != 0 || seg_max != 0; }
    size_t key_bytes() const { return (size_t)dtype_info(dtype).bytes; }
    size_t item_bytes() const { return key_bytes() + (size_t)value_bytes; }
};

/* "u32 keys random", "f64 pairs few seg1024", "u32 keys random seg1..2048",
 * "u64 pairs64 random", "u32 keys random pinned". */
std::string regime_label(const Regime &r);
/* The regime as JSON row fields (dtype, kind, dist, ...; plot.py reads them). */
JsonFields regime_fields(const Regime &r);

/* log2(n) for a power of two, else -1. */
int exact_log2(uint64_t n);

} // namespace wsb

#endif /* WSB_CORE_REGIME_H */
