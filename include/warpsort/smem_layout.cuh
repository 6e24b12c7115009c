/*
 * warpsort/smem_layout.cuh - the padded shared-memory layout of the block
 * collectives (public device API).
 *
 * Item e of a padded array lives at slot e + e / (128 / sizeof(T)): one pad
 * slot per 128 bytes. Blocked accesses (thread t touches items t*K + i) and
 * striped ones (item i*THREADS + t) of a warp then both hit distinct banks
 * for 4- and 8-byte elements, and so do the lockstep reads of merges over
 * structured input (threads K items apart). Arrays get 16 bytes of slack
 * past their items: branch-free merges read (and ignore) one item past the
 * end.
 *
 * A caller who lays out its own shared memory for block_sort / the merge
 * primitives sizes each array with smem_slots<T>(n).
 */
#ifndef WARPSORT_SMEM_LAYOUT_CUH
#define WARPSORT_SMEM_LAYOUT_CUH

#include "key_traits.cuh"

namespace warpsort {

/* Padded slot of item e (e >= 0). Unsigned, so the division is a shift. */
template <typename T>
__device__ __forceinline__ int smem_index(int e) {
    return (int)((unsigned)e + (unsigned)e / (unsigned)(128 / sizeof(T)));
}
/* Slots (elements of T) a padded array of n items needs, slack included. */
template <typename T>
__host__ __device__ constexpr int smem_slots(int n) {
    return n + n / (int)(128 / sizeof(T)) + (int)(16 / sizeof(T));
}

/* Slot and item accessors that vanish for no_value, so one code path
 * serves keys-only and key/value tiles. */
template <typename T>
__device__ __forceinline__ void slot_put(T *a, int slot, T x) {
    if constexpr (is_value<T>::value) a[slot] = x;
}
template <typename T>
__device__ __forceinline__ T slot_get(const T *a, int slot) {
    if constexpr (is_value<T>::value)
        return a[slot];
    else
        return T{};
}
template <typename T>
__device__ __forceinline__ void smem_put(T *a, int e, T x) {
    slot_put(a, smem_index<T>(e), x);
}
template <typename T>
__device__ __forceinline__ T smem_get(const T *a, int e) {
    return slot_get(a, smem_index<T>(e));
}

/* First padded slot of a thread's ITEMS blocked items from item `first` on,
 * when they share one padding period (so slot(first + i) = base + i). */
template <typename T, int ITEMS>
__device__ __forceinline__ int blocked_base(int first) {
    static_assert((128 / sizeof(T)) % ITEMS == 0, "a thread's items share one padding period");
    return smem_index<T>(first);
}

/* Padded slot of striped item i * THREADS + thread, given the thread's
 * slot smem_index<T>(thread) (THREADS a multiple of the padding period, so
 * the pad count splits between the two terms). */
template <typename T, int THREADS>
__device__ __forceinline__ int striped_slot(int i, int thread_slot) {
    constexpr int PERIOD = 128 / sizeof(T);
    static_assert(THREADS % PERIOD == 0, "a block spans whole padding periods");
    return i * (THREADS + THREADS / PERIOD) + thread_slot;
}

} // namespace warpsort

#endif /* WARPSORT_SMEM_LAYOUT_CUH */
