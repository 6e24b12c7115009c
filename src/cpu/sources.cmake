# Sources of the CPU backend, relative to the project root.
set(WARPSORT_CPU_SOURCES src/cpu/cpu_sort.c src/cpu/cpu_topk.c src/cpu/cpu_segmented.c)
