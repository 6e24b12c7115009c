/*
 * cli.cu - command-line parsing shared by the modes.
 */
#include "core/cli.h"

#include "core/common.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace wsb {

static std::string g_mode = "";

void set_cli_mode(const std::string &mode) { g_mode = mode; }

void usage_error(const std::string &msg) {
    std::fprintf(stderr, "warpsort_bench%s%s: error: %s (try 'warpsort_bench %s--help')\n",
                 g_mode.empty() ? "" : " ", g_mode.c_str(), msg.c_str(),
                 g_mode.empty() ? "" : (g_mode + " ").c_str());
    std::exit(2);
}

bool ArgReader::next(std::string *flag) {
    if (++i_ >= argc_) return false;
    flag_ = argv_[i_];
    has_inline_ = false;
    const size_t eq = flag_.find('=');
    if (flag_.rfind("--", 0) == 0 && eq != std::string::npos) {
        inline_value_ = flag_.substr(eq + 1);
        flag_ = flag_.substr(0, eq);
        has_inline_ = true;
    }
    *flag = flag_;
    return true;
}

std::string ArgReader::value() {
    if (has_inline_) return inline_value_;
    if (i_ + 1 >= argc_) usage_error(flag_ + ": missing value");
    return argv_[++i_];
}

void ArgReader::no_value() {
    if (has_inline_) usage_error(flag_ + ": takes no value");
}

std::vector<std::string> split_list(const std::string &s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

long long parse_int(const std::string &flag, const std::string &v, long long lo, long long hi) {
    errno = 0;
    char *end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || errno || !end || *end != '\0' || x < lo || x > hi)
        usage_error(strprintf("%s: expected an integer in %lld..%lld, got '%s'", flag.c_str(), lo,
                              hi, v.c_str()));
    return x;
}

uint64_t parse_size(const std::string &flag, const std::string &v) {
    if (v.rfind("2^", 0) == 0) return (uint64_t)1 << parse_int(flag, v.substr(2), 0, 40);
    errno = 0;
    char *end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    double scale = 1;
    if (end && *end) {
        scale = *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : 0;
        if (end[1] != '\0') scale = 0;
    }
    if (v.empty() || errno || !end || scale == 0 || !(x >= 1) || x * scale > 1e13 ||
        x * scale != std::floor(x * scale))
        usage_error(flag + ": expected a count such as 1000, 100M, 2G or 2^30, got '" + v + "'");
    return (uint64_t)(x * scale);
}

void parse_names(const std::string &flag, const std::string &v,
                 const std::vector<std::string> &names, std::vector<bool> *set,
                 const char *all_word) {
    set->assign(names.size(), false);
    for (const std::string &item : split_list(v)) {
        if (item == all_word) {
            set->assign(names.size(), true);
            continue;
        }
        size_t i = 0;
        while (i < names.size() && item != names[i]) ++i;
        if (i == names.size()) {
            std::string expected;
            for (size_t j = 0; j < names.size(); ++j) expected += (j ? "," : "") + names[j];
            usage_error(strprintf("%s: unknown name '%s' (expected %s or %s)", flag.c_str(),
                                  item.c_str(), expected.c_str(), all_word));
        }
        (*set)[i] = true;
    }
}

/* One flag of spec.flags into *o; false if a is not one of them. */
static bool parse_common_flag(const std::string &a, ArgReader &args, const CommonSpec &spec,
                              CommonOptions *o) {
    const unsigned f = spec.flags;
    if ((f & kFlagRepeat) && a == "--repeat")
        o->repeat = (int)parse_int(a, args.value(), 1, 1000);
    else if ((f & kFlagSlowRepeat) && a == "--slow-repeat")
        o->slow_repeat = (int)parse_int(a, args.value(), 1, 1000);
    else if ((f & kFlagWarmup) && a == "--warmup")
        o->warmup = (int)parse_int(a, args.value(), spec.warmup_min, 100);
    else if ((f & kFlagSeed) && a == "--seed")
        o->seed = (uint64_t)parse_int(a, args.value(), 0, (1ll << 62));
    else if ((f & kFlagDevice) && a == "--device")
        o->device = (int)parse_int(a, args.value(), 0, 1023);
    else if ((f & kFlagJson) && a == "--json") {
        o->json_path = args.value();
        if (o->json_path.empty()) usage_error("--json: empty path");
    } else if ((f & kFlagJson) && a == "--no-json") {
        args.no_value();
        o->no_json = true;
    } else if ((f & kFlagList) && a == "--list") {
        args.no_value();
        o->list_only = true;
    } else if ((f & kFlagNoFlushL2) && a == "--no-flush-l2") {
        args.no_value();
        o->flush_l2 = false;
    } else {
        return false;
    }
    return true;
}

void parse_flags(int argc, char **argv, const CommonSpec &spec, CommonOptions *common,
                 const ModeFlagParser &mode_flag) {
    ArgReader args(argc, argv);
    std::string a;
    while (args.next(&a)) {
        if (a == "--help" || a == "-h") {
            std::fputs(spec.usage, stdout);
            std::exit(0);
        }
        if (!parse_common_flag(a, args, spec, common) && !(mode_flag && mode_flag(a, args)))
            usage_error("unknown argument '" + a + "'");
    }
}

void check_common_flags(const CommonOptions &o) {
    if (o.no_json && !o.json_path.empty()) usage_error("--json and --no-json exclude each other");
}

} // namespace wsb
