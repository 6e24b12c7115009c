#!/usr/bin/env bash
# One recipe for every GPU run.
#
#   scripts/gpu.sh stage            (here, with nvcc; no GPU needed)
#       builds build-gpu/ for sm_90 and copies the binaries the GPU machine
#       runs, plus libcmocka.so.0, into .gpu/ (ignored by git; carry it);
#       also build-gpu-jit80/ with compute_80 PTX alone, its GPU test as
#       .gpu/test_gpu_props-jit80 (stripped), for 'run jit80'.
#   scripts/gpu.sh stage-variant NAME HEADER   (here, after stage)
#       one tuning variant: HEADER's WS_SHAPE_* rows force-included into sort.cu
#   scripts/gpu.sh pack [NAME...]   (here, after stage)
#       the named binaries of .gpu/ (default: all), stripped, plus libcmocka
#       and plot.py, xz-packed into .gpu-pack/bins.tar.xz: stripped binaries
#       are 11-27 MB each, so .gpu whole does not fit a device call's 64 MiB
#       carry (xz -9e, XZ_LEVEL to change: its window spans binaries, so the
#       copies of the library they share pack once; four fit in ~38 MB). Carry .gpu-pack (ignored by git; add '/.gpu-pack/' to
#       .git/info/exclude) instead of .gpu; 'run' unpacks it.
#   scripts/gpu.sh run WHAT...      (on the GPU machine, from the repo root)
#       WHAT: info | tests | quick | jit80 | sanitize | device-tests | examples |
#             sanitize-device | bench-collectives | bench-quick | bench-sweep | bench-full |
#             bench-tune | bench-variants | profile | profile-sass | main | pipeline |
#             pipeline-sanitize | sanitize-split | cli-gpu | bench-host | bench-wide |
#             bench-targets | bench-issues | kernel-times | kernel-times-issues
#       every bench step runs the one harness, .gpu/warpsort_bench MODE (bench/README.md)
#       logs go to $OUT (or ./gpu-logs when OUT is unset), and are also
#       tarred into $OUT/logs.tgz after every step (a call brings back only a
#       few files); a summary table of each step's exit status is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true

stage() {
    set -e
    # The committed tuning table always: a failed stage-variant may have left a header set.
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DWARPSORT_BUILD_TESTS=ON -DWARPSORT_BUILD_BENCH=ON -DWARPSORT_TUNING_HEADER= >/dev/null
    ninja -C build-gpu warpsort test_gpu_props test_gpu_pipeline test_gpu_topk test_gpu_segmented \
        test_gpu_fuzz test_radix_tile test_cli warpsort_bench test_device example_warp_sort_32x4 example_block_sort_pairs \
        example_warp_compact
    rm -rf .gpu && mkdir -p .gpu
    cp build-gpu/tools/warpsort/warpsort build-gpu/tests/gpu/test_gpu_props \
       build-gpu/tests/gpu/test_gpu_pipeline build-gpu/tests/gpu/test_gpu_topk \
       build-gpu/tests/gpu/test_gpu_segmented build-gpu/tests/gpu/test_gpu_fuzz \
       build-gpu/tests/gpu/test_radix_tile \
       build-gpu/tests/cli/test_cli \
       build-gpu/bench/warpsort_bench build-gpu/tests/device/test_device \
       build-gpu/examples/example_* .gpu/
    cp bench/plot.py .gpu/
    # The GPU suite through the JIT: no machine code, PTX for compute_80 only,
    # so the driver compiles it for the H100 as it would for a chip newer than
    # the build ('run jit80' adds the shared-memory limits of 8.x chips).
    cmake -S . -B build-gpu-jit80 -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=80-virtual -DWARPSORT_BUILD_TESTS=ON -DWARPSORT_BUILD_BENCH=OFF \
        -DWARPSORT_TUNING_HEADER= >/dev/null
    ninja -C build-gpu-jit80 test_gpu_props
    strip -o .gpu/test_gpu_props-jit80 build-gpu-jit80/tests/gpu/test_gpu_props
    # awk reads to the end: an early exit would SIGPIPE ldconfig and fail pipefail
    cmocka=$(ldconfig -p | awk '/libcmocka\.so\.0 / && !f {print $NF; f = 1}')
    [ -n "$cmocka" ] || { echo "libcmocka.so.0 not found: apt-get install libcmocka-dev" >&2; exit 1; }
    cp -L "$cmocka" .gpu/libcmocka.so.0
    du -sh .gpu
}

# A tuning variant: build-gpu reconfigured with HEADER force-included into
# sort.cu (WS_SHAPE_* overrides), its bench binary copied (stripped) to
# .gpu/warpsort_bench-NAME, then build-gpu put back as it was (run the
# variants with 'run bench-variants'). The bench's byte columns come from the
# library's plan (ws_plan_passes), so a variant reports its own passes.
stage_variant() {
    set -e
    local name=$1 header
    header=$(realpath "$2")
    [ -d .gpu ] || { echo "run 'scripts/gpu.sh stage' first" >&2; exit 1; }
    # Put the committed table back even when the variant fails to build.
    trap 'cmake -S . -B build-gpu -DWARPSORT_TUNING_HEADER= >/dev/null' EXIT
    cmake -S . -B build-gpu -DWARPSORT_TUNING_HEADER="$header" >/dev/null
    ninja -C build-gpu warpsort_bench
    strip -o ".gpu/warpsort_bench-$name" build-gpu/bench/warpsort_bench
    cmake -S . -B build-gpu -DWARPSORT_TUNING_HEADER= >/dev/null
    ninja -C build-gpu warpsort_bench
    du -sh .gpu
}

pack() {
    set -e
    [ -d .gpu ] || { echo "run 'scripts/gpu.sh stage' first" >&2; exit 1; }
    local tmp names=("$@")
    tmp=$(mktemp -d)
    [ ${#names[@]} -gt 0 ] || names=($(cd .gpu && ls))
    for b in "${names[@]}"; do
        case $b in
        *.py | *.so.*) cp ".gpu/$b" "$tmp/" ;;
        *) strip -o "$tmp/$b" ".gpu/$b" ;;
        esac
    done
    cp .gpu/libcmocka.so.0 .gpu/plot.py "$tmp/"
    mkdir -p .gpu-pack
    tar cf - -C "$tmp" . | xz -T0 -${XZ_LEVEL:-9e} >.gpu-pack/bins.tar.xz
    rm -rf "$tmp"
    ls -l .gpu-pack/bins.tar.xz
}

run() {
    local out=${OUT:-gpu-logs}
    mkdir -p "$out"
    if [ ! -d .gpu ] && [ -f .gpu-pack/bins.tar.xz ]; then
        mkdir -p .gpu && tar xJf .gpu-pack/bins.tar.xz -C .gpu
    fi
    export LD_LIBRARY_PATH="$PWD/.gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    local summary=""
    step() { # name, command...
        local name=$1; shift
        local t0=$SECONDS
        "$@" >"$out/$name.log" 2>&1
        local rc=$?
        local line
        line=$(printf '%-22s rc=%-3d %4ds' "$name" "$rc" $((SECONDS - t0)))
        summary+=$line$'\n'
        echo "$line" >>"$out/steps.txt" # steps run in the background report here
        tail -n 5 "$out/$name.log"
        local part
        part=$(mktemp) && tar czf "$part" -C "$out" --exclude=logs.tgz --exclude='*.nsys-rep' \
            --exclude='*.ncu-rep' . && mv "$part" "$out/logs.tgz"
    }
    # The device API tests under every sanitizer tool (SANITIZE_TOOLS narrows;
    # SANITIZE_DEVICE_FILTER picks cases by name substring).
    run_sanitize_device() {
        local tool
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
            step "sanitize-device-$tool" compute-sanitizer --tool "$tool" --error-exitcode 99 \
                .gpu/test_device --quick ${SANITIZE_DEVICE_FILTER:+--filter "$SANITIZE_DEVICE_FILTER"}
        done
    }
    for what in "$@"; do
        case $what in
        info) step info nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv ;;
        tests) step gpu-tests .gpu/test_gpu_props
            step radix-tile .gpu/test_radix_tile
            step fuzz .gpu/test_gpu_fuzz ;;
        quick) step gpu-tests-quick .gpu/test_gpu_props --quick
            step radix-tile-quick .gpu/test_radix_tile --quick ;;
        jit80) # compute_80 PTX JIT-compiled, with the shared-memory limits (test hook,
               # src/cuda/sort.cu) of an 8.6/8.9 chip (99 KB per block) and an A100 (163 KB):
               # the sm_86 and sm_80 rows of src/cuda/tuning.cuh run the quick suite
            step jit80-sm86 env WARPSORT_SMEM_LIMIT=101376 .gpu/test_gpu_props-jit80 --quick
            step jit80-sm80 env WARPSORT_SMEM_LIMIT=166912 .gpu/test_gpu_props-jit80 --quick ;;
        sanitize) # SANITIZE_TOOLS / SANITIZE_FILTERS narrow it (racecheck is slow);
                  # the device API tests too unless SANITIZE_DEVICE=0
            for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
                for filter in ${SANITIZE_FILTERS:-"*"}; do
                    step "sanitize-$tool-${filter//[^a-z0-9]/}" compute-sanitizer --tool "$tool" \
                        --error-exitcode 99 .gpu/test_gpu_props --quick --filter "$filter"
                done
                step "sanitize-$tool-radix-tile" compute-sanitizer --tool "$tool" \
                    --error-exitcode 99 .gpu/test_radix_tile --quick
            done
            [ "${SANITIZE_DEVICE:-1}" = 0 ] || run_sanitize_device ;;
        sanitize-device) run_sanitize_device ;;
        device-tests) step device-tests .gpu/test_device ;;
        examples)
            for ex in .gpu/example_*; do step "${ex#.gpu/}" "$ex"; done ;;
        bench-collectives) # the device API vs CUB's collectives, in-kernel
            step bench-collectives .gpu/warpsort_bench collectives --json "$out/bench-collectives.json" ;;
        bench-quick) step bench-quick .gpu/warpsort_bench device --quick --json "$out/bench-quick.json" ;;
        bench-full) step bench-full .gpu/warpsort_bench device --full --json "$out/bench-full.json" ;;
        bench-sweep) # the issue-4 regimes that fit a short lease: no cliff up to 2^30,
                     # every dtype, and the non-random distributions at 2^27
            step bench-sweep .gpu/warpsort_bench device --dtype u32,u64 --kind keys --dist random \
                --min-log 20 --max-log 30 --rivals warpsort,cub-radix,cub-merge \
                --repeat 7 --json "$out/bench-sweep.json"
            step bench-dists .gpu/warpsort_bench device --dtype u32 --kind keys --dist all \
                --min-log 27 --max-log 27 --rivals warpsort,cub-radix,cub-merge \
                --json "$out/bench-dists.json" ;;
        bench-targets) # the sample sort's closing set (issue 10), warpsort and CUB in one process
                       # per step: target rows, the 2^16..2^30 sweep with its plots, every
                       # distribution at 2^27, stable against unstable, 64-bit pairs
            local R=warpsort,cub-radix,cub-radix-i32,cub-merge
            step targets-27 .gpu/warpsort_bench device --rivals $R --dtype u32,f32 --kind keys,pairs \
                --min-log 27 --max-log 27 --repeat 7 --json "$out/targets-27.json"
            step targets-26 .gpu/warpsort_bench device --rivals $R --dtype u64,f64 --kind keys,pairs \
                --min-log 26 --max-log 26 --repeat 7 --json "$out/targets-26.json"
            step sweep .gpu/warpsort_bench device --rivals $R --dtype u32,u64 --kind keys --dist random \
                --min-log 16 --max-log 30 --repeat 7 --json "$out/sweep.json"
            step plot-sweep python3 .gpu/plot.py "$out/sweep.json"
            step dists .gpu/warpsort_bench device --rivals $R --dtype u32 --kind keys --dist all \
                --min-log 27 --max-log 27 --repeat 7 --json "$out/dists.json"
            step stable .gpu/warpsort_bench device --rivals warpsort --stable --dtype u32,u64 \
                --kind keys,pairs --min-log 27 --max-log 27 --repeat 7 --json "$out/stable.json"
            step stable-baseline .gpu/warpsort_bench device --rivals warpsort --dtype u32,u64 \
                --kind keys,pairs --min-log 27 --max-log 27 --repeat 7 --json "$out/stable-baseline.json"
            step bench-wide .gpu/warpsort_bench wide-pairs --repeat 7 --json "$out/bench-wide.json" ;;
        main) step main .gpu/warpsort run ;;
        bench-issues) # the speed rows of issues 23 and 24, rivals in the same run (~3 min, H100):
                      # segmented (2^24 keys: equal 2^5..2^16 and 2^22, random 1..2048 / 1..65536,
                      # one 2^24 sort) vs CUB segmented / segmented radix; single small arrays
                      # 2^5..2^16 vs CUB radix / merge; top-k vs CUB sort-then-k and torch.topk
                      # (bench/torch_topk.py from the tree: it says so and exits 0 without torch)
            step bench-segmented .gpu/warpsort_bench segmented --repeat 5 --json "$out/bench-segmented.json"
            step bench-small .gpu/warpsort_bench device --rivals warpsort,cub-radix,cub-radix-i32,cub-merge \
                --dtype u32,f32 --kind keys,pairs --log 5,6,7,8,9,10,11,12,13,14,15,16 --repeat 5 \
                --json "$out/bench-small.json"
            step bench-topk .gpu/warpsort_bench topk --repeat 5 --json "$out/bench-topk.json"
            step torch-topk python3 bench/torch_topk.py --repeat 5 --json "$out/torch-topk.json"
            step plot-segments python3 bench/plot.py "$out/bench-segmented.json" --out "$out" ;;
        bench-wide) # 64-bit keys with 64-bit values against CUB radix and merge pairs
            step bench-wide .gpu/warpsort_bench wide-pairs --repeat 7 --json "$out/bench-wide.json" ;;
        pipeline) # host arrays: memory kinds, out of core, forced failures (issue 11)
            step gpu-pipeline .gpu/test_gpu_pipeline ;;
        sanitize-split) # racecheck is too slow for one process over a quick suite: every
                        # (tool, test group) in a process of its own, all at once, each
                        # capped at SANITIZE_LIMIT seconds (default 540); rc 124 = cut off
            local tool f pids=()
            set -f # the patterns are for cmocka, not for the shell
            for tool in ${SANITIZE_TOOLS:-racecheck synccheck}; do
                # cmocka's filters know * and ? only: the other tests one prefix each
                for f in ${SANITIZE_SPLIT:-'gpu_*_u32_*' 'gpu_*_i32_*' 'gpu_*_f32_*' 'gpu_*_u64_*' \
                         'gpu_*_i64_*' 'gpu_*_f64_*' 'test_d*' 'test_p*' 'test_c*' 'test_u*' \
                         'test_r*' 'test_n*' 'test_sample_plan_255*' 'test_sample_plan_15*' \
                         'test_sample_plan_3_splitters' 'test_sample_plan_3_splitters_one*' \
                         'pipe:test_small*' 'pipe:test_default*' 'pipe:test_mixed*' \
                         'pipe:test_host*' 'pipe:test_staging*' 'pipe:test_out*' \
                         'pipe:test_failure_in*' 'pipe:test_failure_out*' 'pipe:test_budget*'}; do
                    # pipe:PATTERN: the pipeline's tests; PATTERN@DTYPE: a sample plan, one dtype
                    local bin=.gpu/test_gpu_props pat=$f dt=
                    [ "${f#pipe:}" = "$f" ] || { bin=.gpu/test_gpu_pipeline; pat=${f#pipe:}; }
                    [ "${pat%@*}" = "$pat" ] || { dt=${pat#*@}; pat=${pat%@*}; }
                    step "split-$tool-${bin##*_}-${pat//[^a-z0-9]/}$dt" env WARPSORT_TEST_DTYPE="$dt" \
                        timeout "${SANITIZE_LIMIT:-540}" compute-sanitizer --tool "$tool" \
                        --error-exitcode 99 "$bin" --quick --filter "$pat" &
                    pids+=($!)
                done
            done
            set +f
            wait "${pids[@]}"
            summary+=$(grep '^split-' "$out/steps.txt")$'\n' ;;
        pipeline-sanitize)
            for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
                step "sanitize-pipeline-$tool" compute-sanitizer --tool "$tool" \
                    --error-exitcode 99 .gpu/test_gpu_pipeline --quick
            done ;;
        cli-gpu) # the CLI's sort group on the GPU, including the out-of-core file sort
            mkdir -p "$out/cli-scratch"
            step cli-gpu env WARPSORT_CLI_PATH="$PWD/.gpu/warpsort" \
                WARPSORT_TEST_TMP="$out/cli-scratch" .gpu/test_cli sort ;;
        bench-host) # host-to-host rows (pageable, pinned, out of core) and the timeline picture
            step bench-host .gpu/warpsort_bench host --sizes 10M,100M,1000M --repeat 5 \
                --ooc-n 2^32 --ooc-budget 4294967296 --json "$out/bench-host.json"
            # small host arrays against the pre-pipeline copy-sort-copy
            step bench-host-small .gpu/warpsort_bench host --sizes 2^10,2^12,2^14,2^16,2^18,2^20 \
                --repeat 11 --no-cpu --json "$out/bench-host-small.json"
            # the library's own trace (WARPSORT_TRACE) of one 100M pinned and pageable
            # sort and two out-of-core sorts of 2^30 keys under a 1 GiB budget
            step host-timeline .gpu/warpsort_bench host --timeline 100M --ooc-n 2^30 \
                --ooc-budget 1073741824 --trace "$out/host-timeline.csv"
            step plot-timeline python3 .gpu/plot.py --timeline "$out/host-timeline.csv" \
                -o "$out/host-timeline.png" ;;
        bench-variants) # the base build and every staged variant, same regimes
            for b in .gpu/warpsort_bench .gpu/warpsort_bench-*; do
                [ -x "$b" ] || continue
                local v=${b#.gpu/warpsort_bench}; v=${v#-}
                step "variant-${v:-base}" "$b" device --rivals warpsort --dtype u32,u64 --kind keys,pairs \
                    --min-log 24 --max-log 28 --repeat 7 --json "$out/variant-${v:-base}.json"
            done ;;
        bench-tune) # warpsort alone over the target regimes: the quick tuning loop
            step bench-tune .gpu/warpsort_bench device --rivals warpsort --dtype u32,f32,u64 \
                --kind keys,pairs --min-log 20 --max-log 28 --repeat 7 \
                --json "$out/bench-tune.json" ;;
        kernel-times) # per-kernel time of the sample sort (ncu at the chip's own clocks):
                      # 2^27 u32 keys and 2^26 u64 keys, one warm-up and one timed sort each
            local dt n
            for dt in u32 u64; do
                n=27; [ "$dt" = u64 ] && n=26
                step "kernel-times-$dt" ncu --clock-control none --metrics gpu__time_duration.sum \
                    -k regex:'ws_' .gpu/warpsort_bench device --rivals warpsort --dtype "$dt" --kind keys \
                    --min-log "$n" --max-log "$n" --repeat 1 --warmup 1 --no-json
            done ;;
        kernel-times-issues) # per-kernel time (ncu, chip clocks) of the top-k and segmented
                             # cases of issues 23/24: one warm-up and one timed run each
            local k
            for k in 1 32 1024 4096 65536; do
                step "ktime-topk-$k" ncu --clock-control none --metrics gpu__time_duration.sum \
                    -k regex:'^ws_' .gpu/warpsort_bench topk --rivals warpsort --n 2^24 --k "$k" \
                    --repeat 1 --warmup 1 --no-json
            done
            step ktime-topk-rows ncu --clock-control none --metrics gpu__time_duration.sum \
                -k regex:'^ws_' .gpu/warpsort_bench topk --rivals warpsort \
                --rows 4096x4096,1024x16384 --k 32,128 --repeat 1 --warmup 1 --no-json
            step ktime-segmented ncu --clock-control none --metrics gpu__time_duration.sum \
                -k regex:'^ws_' .gpu/warpsort_bench segmented --rivals warpsort --dtype u32 \
                --kind keys --seg-size 512,4096,65536,4194304 --seg-random 2048 --repeat 1 \
                --warmup 1 --no-json ;;
        profile) # per-kernel time of one 2^27 u32 device sort (the sample sort's kernels),
                 # then ncu's full sections for its count, scatter and bucket sorts
            step profile ncu --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
                -k regex:'ws_' --launch-count 20 .gpu/warpsort_bench device --rivals warpsort --dtype u32 \
                --kind keys --min-log 27 --max-log 27 --repeat 1 --warmup 1
            step profile-full ncu --set full --import-source no -f -o "$out/prof-sample" \
                -k regex:'ws_dist_count|ws_dist_scatter|ws_bucket_sort' --launch-count 6 \
                .gpu/warpsort_bench device --rivals warpsort --dtype u32 --kind keys --min-log 27 \
                --max-log 27 --repeat 1 --warmup 1
            step profile-details ncu -i "$out/prof-sample.ncu-rep" --page details ;;
        profile-sass) # ncu source counters (instructions, stalls per SASS line) of the
                      # tile sort, one cut launch and one merge pass: u32 2^27, u64 2^26
            for dt in u32 u64; do
                local n=2^27; [ "$dt" = u64 ] && n=2^26
                step "ncu-$dt" ncu --set full --import-source no -f -o "$out/prof-$dt" \
                    -k regex:'block_sort_kernel|merge4_cuts|merge4_pass' --launch-count 5 \
                    .gpu/warpsort bench --backend cuda --dtype "$dt" -n "$n" --repeat 1 --warmup 0
                step "sass-$dt" ncu -i "$out/prof-$dt.ncu-rep" --page source --csv --print-source sass
                step "details-$dt" ncu -i "$out/prof-$dt.ncu-rep" --page details --csv
            done ;;
        *) echo "unknown step: $what" >&2; return 2 ;;
        esac
    done
    printf '\n%s' "$summary"
}

case $mode in
stage) stage ;;
stage-variant) stage_variant "$@" ;;
pack) pack "$@" ;;
run) run "$@" ;;
*) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 2 ;;
esac
