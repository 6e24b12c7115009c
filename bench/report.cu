/*
 * report.cu - the table on stdout and the JSON results file.
 *
 * A row that did not pass verification prints FAILED and its reason, never
 * a time; in the JSON its timing fields are absent.
 */
#include "bench.cuh"

#include <cmath>
#include <cstdio>
#include <cstring>

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

static std::string size_label(size_t n) {
    if (n && (n & (n - 1)) == 0) {
        int l = 0;
        while (((size_t)1 << l) < n) ++l;
        return strprintf("2^%d", l);
    }
    return strprintf("%zu", n);
}

void print_table_header() {
    std::printf("%-24s %5s  %-13s %10s %10s %8s %9s %7s  %s\n", "regime", "n", "rival",
                "median_ms", "min_ms", "Gkeys/s", "moved_GB", "%copyBW", "notes");
    std::printf("%s\n", std::string(110, '-').c_str());
    std::fflush(stdout);
}

void print_row(const Row &row) {
    const std::string reg = regime_label(row.regime);
    const std::string n = size_label(row.n);
    if (row.status == RowStatus::Ok) {
        std::string moved = "-", pct = "-";
        if (row.model_bytes > 0) {
            moved = strprintf("%.4g", row.model_bytes / 1e9);
            if (row.pct_copy_bw > 0) pct = strprintf("%.1f%%", row.pct_copy_bw);
        }
        std::string note = row.note;
        if (row.host_checked) note = note.empty() ? "host-checked" : "host-checked; " + note;
        std::printf("%-24s %5s  %-13s %10.5g %10.5g %8.4g %9s %7s  %s\n", reg.c_str(), n.c_str(),
                    row.rival.c_str(), row.median_ms, row.min_ms, row.gkeys_per_s, moved.c_str(),
                    pct.c_str(), note.c_str());
    } else {
        std::printf("%-24s %5s  %-13s %10s  %s\n", reg.c_str(), n.c_str(), row.rival.c_str(),
                    row_status_name(row.status), row.note.c_str());
    }
    std::fflush(stdout);
}

/*----------------------------------------------------------------------
 * JSON
 *--------------------------------------------------------------------*/
std::string json_escape(const std::string &s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) out += strprintf("\\u%04x", c);
            else out += (char)c;
        }
    }
    return out;
}

namespace {

std::string jstr(const std::string &s) { return "\"" + json_escape(s) + "\""; }

std::string jnum(double v) {
    if (!std::isfinite(v)) return "null";
    return strprintf("%.9g", v);
}

class JsonObject {
public:
    explicit JsonObject(int indent) : indent_(indent) {}
    JsonObject &raw(const char *key, const std::string &value) {
        parts_.push_back(jstr(key) + ": " + value);
        return *this;
    }
    JsonObject &str(const char *key, const std::string &v) { return raw(key, jstr(v)); }
    JsonObject &num(const char *key, double v) { return raw(key, jnum(v)); }
    JsonObject &integer(const char *key, long long v) { return raw(key, strprintf("%lld", v)); }
    JsonObject &boolean(const char *key, bool v) { return raw(key, v ? "true" : "false"); }
    std::string text() const {
        std::string pad(indent_ + 2, ' '), out = "{\n";
        for (size_t i = 0; i < parts_.size(); ++i)
            out += pad + parts_[i] + (i + 1 < parts_.size() ? ",\n" : "\n");
        return out + std::string(indent_, ' ') + "}";
    }

private:
    int indent_;
    std::vector<std::string> parts_;
};

std::string row_json(const Row &r) {
    JsonObject o(4);
    o.str("regime", regime_label(r.regime));
    o.str("dtype", dtype_info(r.regime.dtype).name);
    o.str("kind", r.regime.pairs ? "pairs" : "keys");
    o.str("dist", dist_name(r.regime.dist));
    o.integer("segment_size", (long long)r.regime.seg_size);
    o.boolean("stable", r.regime.stable);
    o.integer("key_bytes", dtype_info(r.regime.dtype).bytes);
    o.integer("value_bytes", r.regime.pairs ? kValueBytes : 0);
    o.integer("n", (long long)r.n);
    int l = -1;
    if (r.n && (r.n & (r.n - 1)) == 0) {
        l = 0;
        while (((size_t)1 << l) < r.n) ++l;
    }
    if (l >= 0) o.integer("log2_n", l);
    o.str("rival", r.rival);
    o.str("status", row_status_name(r.status));
    o.str("note", r.note);
    if (r.status == RowStatus::Ok) {
        o.boolean("verified", true);
        o.boolean("host_checked", r.host_checked);
        o.str("timer", r.timer);
        o.integer("warmup", r.warmup);
        o.integer("repeats", (long long)r.times_ms.size());
        o.num("median_ms", r.median_ms);
        o.num("min_ms", r.min_ms);
        o.num("mean_ms", r.mean_ms);
        o.num("max_ms", r.max_ms);
        std::string t = "[";
        for (size_t i = 0; i < r.times_ms.size(); ++i)
            t += (i ? ", " : "") + jnum(r.times_ms[i]);
        o.raw("times_ms", t + "]");
        o.num("gkeys_per_s", r.gkeys_per_s);
        if (r.model_passes > 0) {
            o.num("model_passes", r.model_passes);
            o.num("model_bytes", r.model_bytes);
            o.num("pct_copy_bw", r.pct_copy_bw);
        }
    } else {
        o.boolean("verified", false);
    }
    return o.text();
}

} // namespace

void write_json(const std::string &path, const RunInfo &info, const std::vector<Row> &rows) {
    JsonObject gpu(2);
    gpu.str("name", info.gpu_name)
        .integer("sm_count", info.sm_count)
        .str("compute_capability", strprintf("%d.%d", info.cc_major, info.cc_minor))
        .integer("memory_bytes", (long long)info.gpu_memory_bytes)
        .integer("l2_bytes", info.l2_bytes);
    JsonObject copy(2);
    copy.str("method", "cudaMemcpyAsync device-to-device; bytes read + written / time; median")
        .integer("buffer_bytes", (long long)info.copy_bw_buffer_bytes)
        .num("bytes_per_s", info.copy_bw_bytes_per_s)
        .num("gb_per_s", info.copy_bw_bytes_per_s / 1e9)
        .num("end_of_run_gb_per_s", info.copy_bw_end_bytes_per_s / 1e9);
    JsonObject settings(2);
    settings.integer("repeat", info.repeat)
        .integer("slow_repeat", info.slow_repeat)
        .integer("warmup", info.warmup)
        .integer("seed", (long long)info.seed)
        .boolean("flush_l2", info.flush_l2)
        .integer("host_check_max_log", info.host_check_max_log)
        .integer("cpu_max_log", info.cpu_max_log)
        .integer("seed_max_log", info.seed_max_log)
        .str("thrust_allocator", "caching (allocated during warm-up, reused)")
        .str("bytes_model",
             "model_bytes = model_passes x 2 x n x (key_bytes + value_bytes); warpsort: the "
             "library's own plan (ws_plan_passes, src/cuda/plan_report.h), passes listed in the note");
    JsonObject top(0);
    top.str("schema", "warpsort-bench/1")
        .str("date_utc", info.date_utc)
        .str("command", info.command_line)
        .str("hostname", info.hostname)
        .raw("gpu", gpu.text())
        .str("nvidia_driver_version", info.driver_version)
        .str("cuda_driver_api_version",
             strprintf("%d.%d", info.cuda_driver_api / 1000, (info.cuda_driver_api % 1000) / 10))
        .str("cuda_runtime_version",
             strprintf("%d.%d", info.cuda_runtime / 1000, (info.cuda_runtime % 1000) / 10))
        .str("nvcc_version", info.nvcc_version)
        .str("cccl_version", info.cccl_version)
        .str("cuda_architectures", info.cuda_arch)
        .str("warpsort_version", info.warpsort_version)
        .str("git_commit_at_configure", info.git_commit)
        .str("warpsort_cuda_note", info.warpsort_cuda_note)
        .raw("copy_bandwidth", copy.text())
        .raw("settings", settings.text())
        .str("aborted", info.aborted)
        .num("wall_s", info.wall_s);
    JsonObject phases(2);
    phases.num("rival_runs", info.t_run)
        .num("verification", info.t_verify)
        .num("input_resets", info.t_reset)
        .num("setup_and_references", info.t_setup)
        .num("host_checks", info.t_host_check)
        .num("rival_setup_teardown", info.t_rival_setup);
    top.raw("wall_s_by_phase", phases.text());
    top.integer("runs_fully_checked", (long long)info.full_checks);
    top.integer("runs_identical_to_a_verified_output", (long long)info.equality_checks);
    std::string rows_text = "[";
    for (size_t i = 0; i < rows.size(); ++i)
        rows_text += (i ? ",\n    " : "\n    ") + row_json(rows[i]);
    rows_text += rows.empty() ? "]" : "\n  ]";
    top.raw("rows", rows_text);

    const std::string tmp = path + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (!f) throw BenchError("cannot write " + tmp + ": " + std::strerror(errno));
    std::string text = top.text() + "\n";
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
        throw BenchError("cannot write " + path + ": " + std::strerror(errno));
}

} // namespace wsb
