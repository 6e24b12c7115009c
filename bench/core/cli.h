/*
 * cli.h - command-line parsing shared by the modes: one flag reader, the
 * flags most modes share (parse_flags), lists, bounded integers, sizes with
 * suffixes, names out of a fixed set.
 */
#ifndef WSB_CORE_CLI_H
#define WSB_CORE_CLI_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wsb {

/* Prints "warpsort_bench MODE: error: MSG (try ...)" and exits with 2. */
[[noreturn]] void usage_error(const std::string &msg);
/* The mode name that usage_error() prints (set by main). */
void set_cli_mode(const std::string &mode);

/* Walks argv from index 1: --flag VALUE and --flag=VALUE both work. */
class ArgReader {
  public:
    ArgReader(int argc, char **argv) : argc_(argc), argv_(argv) {}
    /* Next flag into *flag; false at the end. */
    bool next(std::string *flag);
    /* The flag's value (the next word, or what followed '='). */
    std::string value();
    /* Fails if the flag was given a value with '='. */
    void no_value();

  private:
    int argc_;
    char **argv_;
    int i_ = 0;
    std::string flag_, inline_value_;
    bool has_inline_ = false;
};

std::vector<std::string> split_list(const std::string &s);
long long parse_int(const std::string &flag, const std::string &v, long long lo, long long hi);
/* "100M", "10K", "2G" (powers of ten), "2^20", or a plain count. */
uint64_t parse_size(const std::string &flag, const std::string &v);
/* Sets set[i] for every listed name (names[i]); all_word selects all. */
void parse_names(const std::string &flag, const std::string &v,
                 const std::vector<std::string> &names, std::vector<bool> *set,
                 const char *all_word);

/* The settings that the flags of CommonSpec::flags set, the same way in
 * every mode. A mode's options derive from it and set their own defaults in
 * their constructor; a mode that does not take a flag keeps the default. */
struct CommonOptions {
    int repeat = 7, slow_repeat = 1, warmup = 1;
    uint64_t seed = 20240601;
    int device = 0;
    std::string json_path; /* "" = the mode's default name */
    bool no_json = false, list_only = false, flush_l2 = true;
};

/* The common flags, for CommonSpec::flags. */
enum CommonFlag : unsigned {
    kFlagRepeat = 1u << 0,     /* --repeat N, 1..1000 */
    kFlagSlowRepeat = 1u << 1, /* --slow-repeat N, 1..1000 */
    kFlagWarmup = 1u << 2,     /* --warmup N, CommonSpec::warmup_min..100 */
    kFlagSeed = 1u << 3,       /* --seed N, 0..2^62 */
    kFlagDevice = 1u << 4,     /* --device N, 0..1023 */
    kFlagJson = 1u << 5,       /* --json PATH (not empty), --no-json */
    kFlagList = 1u << 6,       /* --list */
    kFlagNoFlushL2 = 1u << 7,  /* --no-flush-l2 */
};

/* What a mode's command line takes besides its own flags. */
struct CommonSpec {
    const char *usage; /* printed by --help and -h */
    unsigned flags;    /* CommonFlag bits */
    int warmup_min;    /* the least --warmup */
};

/* A mode's own flags: reads the flag's value from args if it takes one and
 * returns true, or returns false for a flag that is not the mode's. */
using ModeFlagParser = std::function<bool(const std::string &flag, ArgReader &args)>;

/* Walks argv: --help / -h print spec.usage and exit with 0, the flags of
 * spec.flags set *common, every other flag goes to mode_flag (if any); a
 * flag that neither knows is "unknown argument" (exit 2). The checks across
 * flags are the caller's, and check_common_flags(). */
void parse_flags(int argc, char **argv, const CommonSpec &spec, CommonOptions *common,
                 const ModeFlagParser &mode_flag = nullptr);
/* --json and --no-json exclude each other. */
void check_common_flags(const CommonOptions &o);

} // namespace wsb

#endif /* WSB_CORE_CLI_H */
