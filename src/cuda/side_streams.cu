/*
 * side_streams.cu - fork and join of side streams (side_streams.h).
 */
#include "side_streams.h"

static cudaError_t ws_sides_create(ws_cuda_state *st) {
    cudaError_t err = cudaEventCreateWithFlags(&st->fork, cudaEventDisableTiming);
    for (int i = 0; i < WS_SIDE_STREAMS && err == cudaSuccess; i++) {
        err = cudaStreamCreateWithFlags(&st->side[i], cudaStreamNonBlocking);
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&st->join[i], cudaEventDisableTiming);
    }
    if (err == cudaSuccess) {
        st->sides = 1;
        return cudaSuccess;
    }
    ws_sides_destroy(st); /* what was made */
    return err;
}

int ws_fork(ws_cuda_state *st, int one_stream, cudaError_t *err) {
    *err = cudaSuccess;
    if (one_stream) return 0;
    if (!st->sides) {
        /* Side streams are a speed-up: when they cannot be made (or the
         * capture state cannot be read), the call runs on one stream. */
        cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(st->stream, &cap) != cudaSuccess ||
            cap != cudaStreamCaptureStatusNone || ws_sides_create(st) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
    }
    *err = cudaEventRecord(st->fork, st->stream);
    for (int i = 0; i < WS_SIDE_STREAMS && *err == cudaSuccess; i++)
        *err = cudaStreamWaitEvent(st->side[i], st->fork, 0);
    return *err == cudaSuccess;
}

cudaError_t ws_join(ws_cuda_state *st) {
    cudaError_t first = cudaSuccess;
    for (int i = 0; i < WS_SIDE_STREAMS; i++) {
        cudaError_t err = cudaEventRecord(st->join[i], st->side[i]);
        if (err == cudaSuccess) err = cudaStreamWaitEvent(st->stream, st->join[i], 0);
        if (first == cudaSuccess) first = err;
    }
    return first;
}

void ws_sides_destroy(ws_cuda_state *st) {
    for (int i = 0; i < WS_SIDE_STREAMS; i++) {
        if (st->join[i]) (void)cudaEventDestroy(st->join[i]);
        if (st->side[i]) (void)cudaStreamDestroy(st->side[i]);
        st->join[i] = NULL;
        st->side[i] = NULL;
    }
    if (st->fork) (void)cudaEventDestroy(st->fork);
    st->fork = NULL;
    st->sides = 0;
}
