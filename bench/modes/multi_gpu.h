/*
 * multi_gpu.h - the multi-gpu mode (multi_gpu.cu), present when the
 * harness is built with warpsort_nccl (WSB_HAVE_NCCL).
 */
#ifndef WSB_MODES_MULTI_GPU_H
#define WSB_MODES_MULTI_GPU_H

namespace wsb {

int multi_gpu_main(int argc, char **argv);

} // namespace wsb

#endif /* WSB_MODES_MULTI_GPU_H */
