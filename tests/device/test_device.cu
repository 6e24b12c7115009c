/*
 * test_device.cu - the public device API (include/warpsort/), each collective
 * on its own against a host reference: warp sort (every dtype, K, width,
 * partial counts, both orders, stable or not, keys or pairs), block sort,
 * block merge, warp reduce / scans (several operators, a non-commutative
 * one among them), compaction, and the segment sorts (warp and block form)
 * with STABLE = false.
 *
 * Standalone: copy the binary to a GPU machine and run it. Options:
 *   --quick            fewer distributions and seeds
 *   --filter TEXT      only cases whose name contains TEXT
 * Without a device it prints SKIPPED and exits 77 (ctest: SKIP_RETURN_CODE).
 */
#include "device_test.h"

#include <stdlib.h>

int main(int argc, char **argv) {
    dt_options o = {0, NULL};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            o.filter = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--quick] [--filter TEXT]\n", argv[0]);
            return 2;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: SKIPPED\n");
        return 77;
    }
    dt_tally t = {0, 0};
    dt_warp_sort_grid_tests(o, t);
    dt_warp_sort_dtype_tests(o, t);
    dt_block_tests(o, t);
    dt_warp_ops_tests(o, t);
    dt_segment_sort_tests(o, t);
    printf("%d cases, %d failed\n", t.run, t.failed);
    if (t.run == 0) {
        printf("no case matched the filter\n");
        return 1;
    }
    return t.failed ? 1 : 0;
}
