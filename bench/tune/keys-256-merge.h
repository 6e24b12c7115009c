/* Tuning variant (scripts/gpu.sh stage-variant): keys-only merge passes with
 * 256-thread blocks, half the merge tile of tuning.cuh, so twice as many
 * blocks fit an SM (shared memory per block halves). */
#define WS_SHAPE_KEYS {256, 16, 512, 3, 256, 16, 6}
#define WS_SHAPE_KEYS_WIDE {256, 16, 512, 2, 256, 8, 5}
