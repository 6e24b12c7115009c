#!/usr/bin/env bash
# Installs an already-built warpsort tree into a scratch prefix, then builds
# the README example against it the two ways users do (CMake find_package,
# pkg-config) and runs it.
#
# usage: test_install.sh SOURCE_DIR BUILD_DIR CONFIG WORK_DIR GENERATOR VERSION CFLAGS
#                        ENABLE_CUDA [CUDA_COMPILER [CUDA_ARCHITECTURES]]
#   VERSION: MAJOR.MINOR that find_package asks for; CFLAGS: the build's C flags
#   (sanitizers), given to the consumers too.
set -euo pipefail
src=$1 build=$2 config=$3 work=$4 generator=$5 version=$6 cflags=$7 cuda=$8
nvcc=${9:-} cuda_archs=${10:-90}
cuda_arch=${cuda_archs%%;*}
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

echo "== the README's example is tests/install/example.c"
sed -n '/^```c$/,/^```$/p' "$src/README.md" | sed '1d;$d' | diff - "$src/tests/install/example.c"

echo "== install $build into $prefix"
config_args=()
[[ -n $config ]] && config_args=(--config "$config")
step "$work/install.log" cmake --install "$build" --prefix "$prefix" "${config_args[@]}"

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
  -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLE_SOURCE="$src/tests/install/example.c" \
  -DWARPSORT_VERSION="$version" -DCMAKE_C_FLAGS="$cflags"
step "$work/consumer-build.log" cmake --build "$work/consumer"
expect_sorted "$("$work/consumer/example_shared")"
expect_sorted "$("$work/consumer/example_static")"
# The static build must not depend on libwarpsort.so at run time.
if ldd "$work/consumer/example_static" | grep -q libwarpsort; then
  echo "example_static loads libwarpsort.so"; exit 1
fi

echo "== pkg-config warpsort"
# The .pc files name the configured prefix; a relocated install overrides it
# as users of a moved tree would.
export PKG_CONFIG_PATH=$pcdir
pc() { pkg-config --define-variable=prefix="$prefix" "$@"; }
test "$(pc --modversion warpsort)" = "$("$prefix/bin/warpsort" --version | cut -d' ' -f2)"
# shellcheck disable=SC2086 # word splitting of flags is intended
cc -std=c11 -Wall -Wextra -Werror $cflags -o "$work/example_pc" "$src/tests/install/example.c" \
  $(pc --cflags --libs warpsort) -Wl,-rpath,"$libdir"
expect_sorted "$("$work/example_pc")"
# Static link from the archive plus the private dependencies pkg-config lists.
# shellcheck disable=SC2086
cc -std=c11 $cflags -o "$work/example_pc_static" "$src/tests/install/example.c" \
  $(pc --cflags warpsort) "$libdir/libwarpsort.a" \
  $(pc --static --libs warpsort | sed 's/-lwarpsort//')
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
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch" \
    -DWARPSORT_VERSION="$version" \
    -DEXAMPLE_SOURCE="$src/examples/block_sort_pairs.cu"
  step "$work/device-consumer-build.log" cmake --build "$work/device_consumer"
  run_device_example "$work/device_consumer/device_example"
  # Only the installed headers: nothing from the source tree on the path.
  arch_flag=-arch=sm_${cuda_arch%%-*}
  [[ $cuda_arch == native || $cuda_arch == all* ]] && arch_flag=-arch=$cuda_arch
  step "$work/device-pc.log" "$nvcc" -std=c++17 "$arch_flag" \
    -Xcompiler=-Wall,-Wextra,-Werror $(pc --cflags warpsort-device) -o "$work/device_example_pc" \
    "$src/examples/warp_sort_32x4.cu"
  run_device_example "$work/device_example_pc"
fi

echo "install test passed"
