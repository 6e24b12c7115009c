/*
 * cli.h - command-line parsing shared by the modes: one flag reader, lists,
 * bounded integers, sizes with suffixes, names out of a fixed set.
 */
#ifndef WSB_CORE_CLI_H
#define WSB_CORE_CLI_H

#include <cstddef>
#include <cstdint>
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

} // namespace wsb

#endif /* WSB_CORE_CLI_H */
