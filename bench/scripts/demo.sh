#!/usr/bin/env bash
# demo.sh: one command from a fresh checkout to the comparison table: installs missing packages, builds (Release), runs demo.py.
#
#   bench/scripts/demo.sh [BUILD_DIR] [demo.py options...]   (default BUILD_DIR: build)
#   e.g. bench/scripts/demo.sh build --quick
# Set WEFT_BENCH_NO_DEPS=1 to skip deps.sh, WEFT_BENCH_NO_BUILD=1 to use the build as it is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$src/$build ;; esac

if [ "${WEFT_BENCH_NO_DEPS:-0}" != 1 ]; then
    "$here/deps.sh"
fi
if [ "${WEFT_BENCH_NO_BUILD:-0}" != 1 ]; then
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    else
        # deps.sh may have installed peers the last configure left out.
        "$src/scripts/recheck-optional.sh" "$build"
    fi
    # Keep going past a failing target (the library, say) so that the
    # baselines that can build still do.
    keep_going=(-k)
    grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja' "$build/CMakeCache.txt" && keep_going=(-k 0)
    cmake --build "$build" -j"$(nproc)" -- "${keep_going[@]}" >"$build/bench-build.log" 2>&1 ||
        echo "demo: the build failed (see $build/bench-build.log); running what was built"
fi
exec python3 "$here/demo.py" "$build" "$@"
