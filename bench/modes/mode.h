/*
 * mode.h - the modes of warpsort_bench. Each is one entry of the table in
 * main.cu: a name (the first word of the command line), one line of help,
 * and its main, which gets argv with the mode word removed (argv[0] stays).
 * A new mode (segmented, topk, ...) is a file in modes/ and one line there.
 */
#ifndef WSB_MODES_MODE_H
#define WSB_MODES_MODE_H

namespace wsb {

struct Mode {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
};

int device_main(int argc, char **argv);
int wide_pairs_main(int argc, char **argv);
int segmented_main(int argc, char **argv);
int host_main(int argc, char **argv);
int collectives_main(int argc, char **argv);
int topk_main(int argc, char **argv);

/* Exit status of every mode: 0 all rows ok or skipped, 1 a row FAILED
 * verification or errored, 2 bad arguments, 3 the harness could not run
 * (no GPU, self-test, broken CUDA context, results not writable). */
enum ExitCode { kExitOk = 0, kExitRowFailed = 1, kExitUsage = 2, kExitHarness = 3 };

} // namespace wsb

#endif /* WSB_MODES_MODE_H */
