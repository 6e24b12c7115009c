# Sources of the CUDA backend, relative to the project root, by layer:
# the router and the batched calls, the host pipeline (calls the leaf), the
# leaf and below.
set(WARPSORT_CUDA_SOURCES
  src/cuda/backend.cu
  src/cuda/segmented.cu
  src/cuda/segmented/k4.cu
  src/cuda/segmented/k4_v4.cu
  src/cuda/segmented/k4_v8.cu
  src/cuda/segmented/k8.cu
  src/cuda/segmented/k8_v4.cu
  src/cuda/segmented/k8_v8.cu
  src/cuda/topk.cu
  src/cuda/topk/k4.cu
  src/cuda/topk/k8.cu
  src/cuda/pipeline/pipeline.cu
  src/cuda/pipeline/incore.cu
  src/cuda/pipeline/out_of_core.cu
  src/cuda/pipeline/spread.cu
  src/cuda/pipeline/split.cu
  src/cuda/pipeline/workers.cu
  src/cuda/pipeline/staging.cu
  src/cuda/pipeline/pipe.cu
  src/cuda/pipeline/trace.cu
  src/cuda/pipeline/merge2.cu
  src/cuda/device.cu
  src/cuda/workspace.cu
  src/cuda/side_streams.cu
  src/cuda/device_sort.cu
  src/cuda/plan.cu
  src/cuda/small_sort.cu
  src/cuda/coop_sort.cu
  src/cuda/merge_sort.cu
  src/cuda/sample_sort.cu
  src/cuda/iota.cu)
