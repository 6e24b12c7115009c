/*
 * warp_sort_grid.cu - warpsort::warp_sort_keys / warp_sort_pairs on u32
 * keys for K = 1, 2, 3, 4, 5, 8, 16 keys per lane x group widths 2..32:
 * keys alone, and stable pairs (the paths that pad K to a power of two and
 * gather the result back by shuffles included).
 */
#include "warp_sort_case.cuh"

/* Every group width for one K. */
template <typename T, typename V, bool STABLE, int K>
static void run_widths(const dt_options &o, dt_tally &t) {
    run_warp<T, V, K, 2, ascending, STABLE>(o, t);
    run_warp<T, V, K, 4, ascending, STABLE>(o, t);
    run_warp<T, V, K, 8, ascending, STABLE>(o, t);
    run_warp<T, V, K, 16, ascending, STABLE>(o, t);
    run_warp<T, V, K, 32, ascending, STABLE>(o, t);
}
/* K = 1..16: every power of two and the padded odd sizes 3 and 5. */
template <typename T, typename V, bool STABLE>
static void run_ks(const dt_options &o, dt_tally &t) {
    run_widths<T, V, STABLE, 1>(o, t);
    run_widths<T, V, STABLE, 2>(o, t);
    run_widths<T, V, STABLE, 3>(o, t);
    run_widths<T, V, STABLE, 4>(o, t);
    run_widths<T, V, STABLE, 5>(o, t);
    run_widths<T, V, STABLE, 8>(o, t);
    run_widths<T, V, STABLE, 16>(o, t);
}
void dt_warp_sort_grid_tests(const dt_options &o, dt_tally &t) {
    run_ks<uint32_t, no_value, false>(o, t);
    run_ks<uint32_t, uint32_t, true>(o, t);
}
