/*
 * run_info.h - what a results file says about the run besides its rows:
 * the GPU, driver, toolkit and library versions, the command, the mode and
 * its settings; and the one function that writes a results file.
 */
#ifndef WSB_CORE_RUN_INFO_H
#define WSB_CORE_RUN_INFO_H

#include <string>
#include <vector>

#include "core/json.h"
#include "core/report.h"
#include "core/timing.h"

namespace wsb {

struct RunInfo {
    std::string mode;
    std::string command_line;
    std::string date_utc;
    JsonFields gpu; /* name, SMs, compute capability, memory, L2 */
    std::string gpu_name;
    JsonFields versions; /* driver, CUDA, nvcc, CCCL, warpsort, git commit, archs */
    std::string hostname;
    JsonFields settings; /* the mode's settings */
    JsonFields extra;    /* the mode's own top-level fields (copy bandwidth, ...) */
    std::string aborted; /* non-empty if the run stopped early */
    double wall_s = 0;
};

/* Records the whole command line, shell-quoted, for the results (main). */
void record_command_line(int argc, char **argv);
/* Fills everything but settings / extra / aborted / wall_s from g. */
void collect_run_info(RunInfo &info, const Gpu &g, const std::string &mode);
/* Prints the one-line description of the device and the command. */
void print_run_header(const RunInfo &info);

/* "bench-<mode>-<UTC date>.json" in the current directory (never the
 * source tree: results worth keeping are copied to bench/results/ by hand). */
std::string default_json_path(const std::string &mode);
/* Creates the folders of path and writes the results file with no rows yet
 * (info.aborted says the run is still going), so a path that cannot be
 * written fails before anything is timed; throws BenchError. */
void start_results(const std::string &path, RunInfo &info);
/* Measures the device-to-device copy bandwidth (the rows' pct_copy_bw
 * reference), prints it and records it in info; returns bytes/s. */
double record_copy_bandwidth(Gpu &g, RunInfo &info);
/* Writes the results file (schema warpsort-bench/2); throws BenchError. */
void write_results(const std::string &path, const RunInfo &info, const std::vector<Row> &rows);

} // namespace wsb

#endif /* WSB_CORE_RUN_INFO_H */
