/*
 * report.h - the rows every mode produces, their statistics, and the table
 * on stdout. A row that did not pass verification prints FAILED and its
 * reason, never a time; in the JSON its timing fields are absent.
 */
#ifndef WSB_CORE_REPORT_H
#define WSB_CORE_REPORT_H

#include <cstddef>
#include <string>
#include <vector>

#include "core/json.h"

namespace wsb {

enum class RowStatus { Ok, Failed, Error, Skipped, NotApplicable };
constexpr int kNumRowStatus = 5;
const char *row_status_name(RowStatus s);

struct Row {
    std::string label; /* the regime, e.g. "u32 keys random" */
    JsonFields fields; /* the regime as JSON fields (mode-specific) */
    size_t n = 0;      /* items per timed call */
    std::string rival;
    RowStatus status = RowStatus::Skipped;
    std::string note;             /* why skipped / what failed / how it ran */
    std::vector<double> times_ms; /* the timed repeats (after warm-up) */
    int warmup = 0;
    std::string timer; /* "cuda-events" or "wall-clock" */
    double median_ms = 0, min_ms = 0, mean_ms = 0, max_ms = 0;
    double gitems_per_s = 0;   /* n / median */
    double model_bytes = 0;    /* bytes the rival's passes move; 0 = no model */
    double pct_copy_bw = 0;    /* model_bytes / median against the copy bandwidth */
    bool host_checked = false; /* the independent std::sort check also ran */
    JsonFields results;        /* mode-specific results (ok rows only) */
};

/* A rival that could not be set up: skipped where the size does not fit
 * (out of memory, n above a rival's limit), an error otherwise. */
RowStatus prepare_failure_status(const std::string &err);

/* A row for label/fields/n/rival, not yet run. */
Row make_row(const std::string &label, const JsonFields &fields, size_t n,
             const std::string &rival);

/* Median, min, mean, max and Gitems/s from times_ms; with model_bytes and
 * copy_bw (bytes/s) > 0 also the percentage of copy bandwidth. */
void fill_stats(Row &row, double copy_bw);

/* The table on stdout (rate_name heads the n / median column). */
void print_table_header(const char *rate_name = "Gkeys/s");
void print_row(const Row &row);
/* "12 rows: 10 ok, 0 FAILED, ..." and the FAILED / error rows with their reasons;
 * returns the number of FAILED and error rows. */
int print_summary(const std::vector<Row> &rows, double wall_s);

/* One row as JSON, on one line. */
std::string row_json(const Row &r);

} // namespace wsb

#endif /* WSB_CORE_REPORT_H */
