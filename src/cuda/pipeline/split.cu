/*
 * split.cu - exact cuts of sorted runs at a global rank (pipe.h, ws_runs):
 * the out-of-core path's ranges (runs in host scratch) and the spread
 * path's parts (runs left on the devices) both cut the order (key, run,
 * position) this way, so equal keys are dealt out in run order and the
 * result is stable.
 */
#include <string.h>

#include "core/keybits.h"
#include "pipe.h"

size_t ws_run_len(const ws_runs *r, size_t q) {
    if (r->dev) return r->dev_len[q];
    const size_t b = q * r->run;
    return r->n - b < r->run ? r->n - b : r->run;
}

/* Ordered key of item i of run q. A device run is read with one small
 * copy; a failed read records the first error and reads as 0 (the search
 * still ends; the caller must discard its result). */
static uint64_t ws_run_key(ws_runs *r, size_t q, size_t i) {
    const size_t kb = r->kb;
    unsigned char b[8] = {0};
    if (r->dev) {
        const cudaError_t e = cudaMemcpy(b, r->dev[q] + i * kb, kb, cudaMemcpyDefault);
        if (e != cudaSuccess && r->err == cudaSuccess) r->err = e;
    } else {
        memcpy(b, r->keys + (q * r->run + i) * kb, kb);
    }
    if (kb == 4) {
        uint32_t x;
        memcpy(&x, b, 4);
        return ws_to_ordered32(x, r->kind, r->desc);
    }
    uint64_t x;
    memcpy(&x, b, 8);
    return ws_to_ordered64(x, r->kind, r->desc);
}

/* First position of run q from `from` on whose ordered key is > v (upper)
 * or >= v. */
static size_t ws_run_bound(ws_runs *r, size_t q, uint64_t v, int upper, size_t from) {
    size_t lo = from, hi = ws_run_len(r, q);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const uint64_t k = ws_run_key(r, q, mid);
        if (upper ? k <= v : k < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Clamping every bound at from[q] changes nothing: keys below the earlier
 * split's key lie inside every run's prefix, and items equal to it that the
 * prefix holds are the first in (run, position) order. */
void ws_split_at(ws_runs *r, size_t k, const size_t *from, size_t *split) {
    if (k >= r->n) {
        for (size_t q = 0; q < r->count; q++) split[q] = ws_run_len(r, q);
        return;
    }
    /* The smallest ordered key v with more than k items <= v. */
    uint64_t lo = 0, hi = r->kb == 4 ? 0xFFFFFFFFull : ~0ull;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        size_t upto = 0;
        for (size_t q = 0; q < r->count; q++) upto += ws_run_bound(r, q, mid, 1, from[q]);
        if (upto > k)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t left = k;
    for (size_t q = 0; q < r->count; q++) {
        split[q] = ws_run_bound(r, q, lo, 0, from[q]);
        left -= split[q]; /* items < v: at most k of them */
    }
    /* Items equal to v, dealt out in run order (stable). */
    for (size_t q = 0; q < r->count && left; q++) {
        const size_t equal = ws_run_bound(r, q, lo, 1, split[q]) - split[q];
        const size_t take = equal < left ? equal : left;
        split[q] += take;
        left -= take;
    }
}
