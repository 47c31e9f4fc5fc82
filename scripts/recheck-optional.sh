#!/usr/bin/env bash
# recheck-optional.sh: configures a build directory again when its last configure left out a peer baseline that may have been installed since.
#
#   scripts/recheck-optional.sh [BUILD_DIR]      (default: build)
#
# CMake looks for the demo's peers (oneTBB, Boost.Fiber, OpenMP, Go) when it
# configures. A build directory configured before `scripts/install-deps.sh
# bench` installed them (by `make test`, say) would keep them left out, and
# the demo table would lack their columns. CMake searches again, on every
# configure, for what its cache records as NOT-FOUND, so configuring again is
# enough; the one exception is a C++ compiler that was missing, which
# CheckLanguage never looks for again, so its NOT-FOUND entry is removed.
# This runs only while the last configure left something out (BUILD_DIR/bench/
# baselines.txt has a "skipped:" line, or is missing because the benchmarks
# were off), so a complete build directory is left as it is, and it does
# nothing without a build directory: the first configure looks for everything.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
cache=$build/CMakeCache.txt
report=$build/bench/baselines.txt

[ -f "$cache" ] || exit 0
if [ -f "$report" ] && ! grep -q '^skipped:' "$report"; then
    exit 0
fi
if [ -f "$report" ]; then
    echo "recheck-optional: $build was configured without: $(sed -n 's/^skipped: \([^:]*\):.*/\1/p' "$report" | tr '\n' ' ')- looking again"
else
    echo "recheck-optional: $build was configured without the benchmarks - configuring them"
fi
args=(-DWEFT_BUILD_BENCH=ON -DWEFT_BENCH_BASELINES=ON)
grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*NOTFOUND$' "$cache" && args+=(-UCMAKE_CXX_COMPILER)
cmake -S "$src" -B "$build" "${args[@]}" >"$build/recheck-optional.log" 2>&1 || {
    cat "$build/recheck-optional.log" >&2
    exit 1
}
if [ -f "$report" ]; then
    sed -n 's/^built: /recheck-optional: baselines now built: /p; s/^skipped: /recheck-optional: still skipped: /p' "$report"
fi
