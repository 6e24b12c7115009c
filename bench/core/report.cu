/*
 * report.cu - row statistics, the table on stdout and a row's JSON.
 */
#include "core/report.h"

#include "core/common.h"
#include "core/regime.h"
#include "core/timing.h"

#include <algorithm>
#include <cstdio>

namespace wsb {

const char *row_status_name(RowStatus s) {
    switch (s) {
    case RowStatus::Ok: return "ok";
    case RowStatus::Failed: return "FAILED";
    case RowStatus::Error: return "error";
    case RowStatus::Skipped: return "skipped";
    case RowStatus::NotApplicable: return "n/a";
    }
    return "?";
}

RowStatus prepare_failure_status(const std::string &err) {
    const bool size = err.find("out of memory") != std::string::npos ||
                      err.find("above INT_MAX") != std::string::npos;
    return size ? RowStatus::Skipped : RowStatus::Error;
}

Row make_row(const std::string &label, const JsonFields &fields, size_t n,
             const std::string &rival) {
    Row r;
    r.label = label;
    r.fields = fields;
    r.n = n;
    r.rival = rival;
    return r;
}

void fill_stats(Row &row, double copy_bw) {
    const std::vector<double> &t = row.times_ms;
    if (t.empty()) return;
    row.median_ms = median_of(t);
    row.min_ms = *std::min_element(t.begin(), t.end());
    row.max_ms = *std::max_element(t.begin(), t.end());
    double sum = 0;
    for (double x : t) sum += x;
    row.mean_ms = sum / (double)t.size();
    row.gitems_per_s = row.median_ms > 0 ? (double)row.n / (row.median_ms * 1e-3) / 1e9 : 0;
    if (row.model_bytes > 0 && row.median_ms > 0 && copy_bw > 0)
        row.pct_copy_bw = 100.0 * (row.model_bytes / (row.median_ms * 1e-3)) / copy_bw;
}

static std::string size_label(size_t n) {
    const int l = exact_log2(n);
    return l >= 0 ? strprintf("2^%d", l) : strprintf("%zu", n);
}

void print_table_header(const char *rate_name) {
    std::printf("%-30s %11s  %-19s %10s %10s %8s %9s %7s  %s\n", "regime", "n", "rival",
                "median_ms", "min_ms", rate_name, "moved_GB", "%copyBW", "notes");
    std::printf("%s\n", std::string(125, '-').c_str());
    std::fflush(stdout);
}

void print_row(const Row &row) {
    const std::string n = size_label(row.n);
    if (row.status == RowStatus::Ok) {
        std::string moved = "-", pct = "-";
        if (row.model_bytes > 0) {
            moved = strprintf("%.4g", row.model_bytes / 1e9);
            if (row.pct_copy_bw > 0) pct = strprintf("%.1f%%", row.pct_copy_bw);
        }
        std::string note = row.note;
        if (row.host_checked) note = note.empty() ? "host-checked" : "host-checked; " + note;
        std::printf("%-30s %11s  %-19s %10.5g %10.5g %8.4g %9s %7s  %s\n", row.label.c_str(),
                    n.c_str(), row.rival.c_str(), row.median_ms, row.min_ms, row.gitems_per_s,
                    moved.c_str(), pct.c_str(), note.c_str());
    } else {
        std::printf("%-30s %11s  %-19s %10s  %s\n", row.label.c_str(), n.c_str(), row.rival.c_str(),
                    row_status_name(row.status), row.note.c_str());
    }
    std::fflush(stdout);
}

int print_summary(const std::vector<Row> &rows, double wall_s) {
    int counts[kNumRowStatus] = {0, 0, 0, 0, 0};
    for (const Row &r : rows) counts[(int)r.status]++;
    std::printf("\n%zu rows: %d ok, %d FAILED, %d error, %d skipped, %d n/a; %.1f s\n", rows.size(),
                counts[0], counts[1], counts[2], counts[3], counts[4], wall_s);
    for (const Row &r : rows)
        if (r.status == RowStatus::Failed || r.status == RowStatus::Error)
            std::printf("  %s: %s %s %s: %s\n", row_status_name(r.status), r.label.c_str(),
                        size_label(r.n).c_str(), r.rival.c_str(), r.note.c_str());
    return counts[1] + counts[2];
}

std::string row_json(const Row &r) {
    JsonFields o;
    o.str("regime", r.label).append(r.fields).integer("n", (long long)r.n);
    const int l = exact_log2(r.n);
    if (l >= 0) o.integer("log2_n", l);
    o.str("rival", r.rival).str("status", row_status_name(r.status)).str("note", r.note);
    if (r.status != RowStatus::Ok) return o.boolean("verified", false).one_line();
    std::string t = "[";
    for (size_t i = 0; i < r.times_ms.size(); ++i)
        t += (i ? ", " : "") + json_number(r.times_ms[i]);
    o.boolean("verified", true)
        .boolean("host_checked", r.host_checked)
        .str("timer", r.timer)
        .integer("warmup", r.warmup)
        .integer("repeats", (long long)r.times_ms.size())
        .num("median_ms", r.median_ms)
        .num("min_ms", r.min_ms)
        .num("mean_ms", r.mean_ms)
        .num("max_ms", r.max_ms)
        .raw("times_ms", t + "]")
        .num("gkeys_per_s", r.gitems_per_s);
    if (r.model_bytes > 0) {
        o.num("model_bytes", r.model_bytes);
        if (r.pct_copy_bw > 0) o.num("pct_copy_bw", r.pct_copy_bw);
    }
    return o.append(r.results).one_line();
}

} // namespace wsb
