/*
 * warp_sort_dtypes.cu - warpsort::warp_sort_keys / warp_sort_pairs for every
 * dtype in both orders, stable and not, values of both widths.
 */
#include "warp_sort_case.cuh"

/* One dtype, both orders: keys (K = 3 in groups of 8), stable pairs with
 * values of the key's width (K = 8, whole warp), unstable pairs (K = 16,
 * groups of 4). */
template <typename T, typename V>
static void run_dtype(const dt_options &o, dt_tally &t) {
    run_warp<T, no_value, 3, 8, ascending, false>(o, t);
    run_warp<T, no_value, 3, 8, descending, false>(o, t);
    run_warp<T, V, 8, 32, ascending, true>(o, t);
    run_warp<T, V, 8, 32, descending, true>(o, t);
    run_warp<T, V, 16, 4, ascending, false>(o, t);
    run_warp<T, V, 16, 4, descending, false>(o, t);
}

void dt_warp_sort_dtype_tests(const dt_options &o, dt_tally &t) {
    run_dtype<uint32_t, uint32_t>(o, t);
    run_dtype<int32_t, uint32_t>(o, t);
    run_dtype<float, uint32_t>(o, t);
    run_dtype<uint64_t, uint64_t>(o, t);
    run_dtype<int64_t, uint64_t>(o, t);
    run_dtype<double, uint64_t>(o, t);
    /* values wider than keys, and narrower, with padding (K = 5) */
    run_warp<float, uint64_t, 5, 16, descending, true>(o, t);
    run_warp<double, uint32_t, 5, 32, ascending, true>(o, t);
}
