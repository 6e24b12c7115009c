/* Tuning variant (scripts/gpu.sh stage-variant): key-value merge passes with
 * half the merge tile of tuning.cuh, so twice as many blocks fit an SM. */
#define WS_SHAPE_PAIRS_NARROW {256, 16, 512, 2, 256, 8, 6}
#define WS_SHAPE_PAIRS_WIDE {256, 8, 256, 2, 128, 8, 6}
