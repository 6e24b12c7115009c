#!/usr/bin/env bash
# Installs warpsort into a scratch prefix, then builds the README example
# against it the two ways users do (CMake find_package, pkg-config) and runs it.
#
# usage: test_install.sh SOURCE_DIR WORK_DIR GENERATOR ENABLE_CUDA [CUDA_COMPILER]
set -euo pipefail
src=$1 work=$2 generator=$3 cuda=$4 nvcc=${5:-}
jobs=$(nproc 2>/dev/null || echo 2)
prefix=$work/prefix

rm -rf "$work"
mkdir -p "$work"

# step LOG CMD...: runs CMD quietly into LOG; on failure shows why and stops.
step() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "FAILED: $*"
    tail -n 40 "$log"
    exit 1
  fi
}
cuda_args=(-DWARPSORT_ENABLE_CUDA="$cuda")
[[ -n $nvcc ]] && cuda_args+=(-DCMAKE_CUDA_COMPILER="$nvcc")

echo "== the README's example is tests/install/example.c"
sed -n '/^```c$/,/^```$/p' "$src/README.md" | sed '1d;$d' | diff - "$src/tests/install/example.c"

echo "== build and install into $prefix"
step "$work/configure.log" cmake -S "$src" -B "$work/build" -G "$generator" \
  -DCMAKE_BUILD_TYPE=Release -DWARPSORT_BUILD_TESTS=OFF -DWARPSORT_BUILD_BENCH=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" "${cuda_args[@]}"
step "$work/build.log" cmake --build "$work/build" -j "$jobs"
step "$work/install.log" cmake --install "$work/build"

expect_sorted() { # the example prints its keys in order; check the order
  local out=$1
  echo "$out"
  [[ $out == *": -2(#3) -2(#7) -1e-09(#5) -0(#1) 0(#4) 3.5(#0) 7(#6) 1e+09(#2)" ]] ||
    { echo "unexpected example output"; exit 1; }
}

echo "== installed files"
test -f "$prefix/include/warpsort.h"
"$prefix/bin/warpsort" --version
"$prefix/bin/warpsort" run -n 4096 >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libwarpsort.so' -print -quit)")
pcdir=$(dirname "$(find "$prefix" -name 'warpsort.pc' -print -quit)")
test -f "$libdir/libwarpsort.a"
test -f "$(dirname "$(find "$prefix" -name 'warpsortConfig.cmake' -print -quit)")/warpsortTargets.cmake"

echo "== find_package(warpsort)"
step "$work/consumer-configure.log" cmake -S "$src/tests/install/consumer" -B "$work/consumer" \
  -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLE_SOURCE="$src/tests/install/example.c"
step "$work/consumer-build.log" cmake --build "$work/consumer"
expect_sorted "$("$work/consumer/example_shared")"
expect_sorted "$("$work/consumer/example_static")"
# The static build must not depend on libwarpsort.so at run time.
if ldd "$work/consumer/example_static" | grep -q libwarpsort; then
  echo "example_static loads libwarpsort.so"; exit 1
fi

echo "== pkg-config warpsort"
export PKG_CONFIG_PATH=$pcdir
test "$(pkg-config --modversion warpsort)" = "$("$prefix/bin/warpsort" --version | cut -d' ' -f2)"
cc -std=c11 -Wall -Wextra -Werror -o "$work/example_pc" "$src/tests/install/example.c" \
  $(pkg-config --cflags --libs warpsort) -Wl,-rpath,"$libdir"
expect_sorted "$("$work/example_pc")"
# Static link from the archive plus the private dependencies pkg-config lists.
cc -std=c11 -o "$work/example_pc_static" "$src/tests/install/example.c" \
  $(pkg-config --cflags warpsort) "$libdir/libwarpsort.a" \
  $(pkg-config --static --libs warpsort | sed 's/-lwarpsort//')
expect_sorted "$("$work/example_pc_static")"

if [[ $cuda == ON && -n $nvcc ]]; then
  # The device API: headers only, through find_package and pkg-config; an
  # example of examples/ built against the installed copy (run: 0 passes,
  # 77 means no device here).
  echo "== device API (warpsort::device, pkg-config warpsort-device)"
  test -f "$prefix/include/warpsort/device.cuh"
  test -f "$prefix/include/warpsort/keybits.h"
  run_device_example() {
    local rc=0
    "$1" || rc=$?
    [[ $rc == 0 || $rc == 77 ]] || { echo "$1 failed ($rc)"; exit 1; }
  }
  step "$work/device-consumer-configure.log" cmake -S "$src/tests/install/device_consumer" \
    -B "$work/device_consumer" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DEXAMPLE_SOURCE="$src/examples/block_sort_pairs.cu"
  step "$work/device-consumer-build.log" cmake --build "$work/device_consumer"
  run_device_example "$work/device_consumer/device_example"
  # Only the installed headers: nothing from the source tree on the path.
  step "$work/device-pc.log" "$nvcc" -std=c++17 -arch=sm_90 -Xcompiler=-Wall,-Wextra,-Werror \
    $(pkg-config --cflags warpsort-device) -o "$work/device_example_pc" \
    "$src/examples/warp_sort_32x4.cu"
  run_device_example "$work/device_example_pc"
fi

echo "install test passed"
