# The two set-up commands of the README: `make demo` and `make test`.
# Both install missing Debian packages first, then configure and build.

BUILD      ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc)
GENERATOR  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CMAKE_ARGS ?=

.PHONY: all deps build test demo sanitize asan tsan bench-io bench-posix bench-sync bench-seeds bench-tasks bench-dist scale-model scale-calibrate bench-prio bench-trace install clean \
        check-format format

all: build

deps:
	@scripts/install-deps.sh build

# Configure once (the generator is fixed by the first configure).
$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j2 --timeout 600

# install-deps.sh bench may have just installed peers (oneTBB, Boost.Fiber,
# Go) that a build directory configured earlier, by `make test` say, left
# out: recheck-optional.sh configures it again while something is missing,
# so the table has every column whichever command ran first.
demo: deps
	@scripts/recheck-optional.sh $(BUILD)
	@$(MAKE) --no-print-directory build
	WEFT_BENCH_NO_DEPS=1 WEFT_BENCH_NO_BUILD=1 bench/scripts/demo.sh $(BUILD)
	$(BUILD)/bench/bench_idle -w 0
	@if [ -f $(BUILD)/libweft-pthread.so ] && [ -x $(BUILD)/bench/bench_posix_pthread ]; then \
	    echo; echo "### pthreads (drop-in): one unmodified pthread program, glibc pinned to 1 CPU vs libweft-pthread on 1 worker"; \
	    bench/posix/run.sh $(BUILD) 3 | grep -E '^(create|yield|handoff|yield_loop) '; \
	fi

# Sanitizer passes (CI runs both): ASan+UBSan, then TSan.
asan: deps
	cmake -S . -B build-asan $(GENERATOR) -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=asan-ubsan -DWEFT_WERROR=ON -DWEFT_BUILD_BENCH=OFF
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j2 --timeout 600

tsan: deps
	cmake -S . -B build-tsan $(GENERATOR) -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=tsan -DWEFT_WERROR=ON -DWEFT_BUILD_BENCH=OFF
	cmake --build build-tsan -j$(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j2 --timeout 600

sanitize: asan tsan

# Longer benchmarks, not part of the demo.
# Task graphs: weft tasks vs OpenMP depend vs oneTBB flow graph (ns per task).
bench-tasks: deps
	@$(MAKE) --no-print-directory build
	bench/scripts/tasks.sh $(BUILD)

# Unmodified Debian programs under the drop-in vs natively (bench/README.md).
bench-posix: deps
	@$(MAKE) --no-print-directory build
	bench/posix/civetweb.sh $(BUILD)
	bench/posix/sysbench.sh $(BUILD)
	bench/posix/mariadb.sh $(BUILD)
	bench/posix/apache.sh $(BUILD)

bench-dist: deps
	@$(MAKE) --no-print-directory build
	bench/scripts/dist.sh $(BUILD)

# The scale model of weft_dist, 16 to 4,096 ranks (bench/scale/model.py,
# docs/distributed.md "How far it scales"): the calibration, three checks,
# the prediction table and $(BUILD)/scale/efficiency.png, from the costs in
# bench/scale/calibration.txt; scale-calibrate measures them again here.
# The Python that has matplotlib draws the figure (Debian's python3-matplotlib
# is for /usr/bin/python3); without it the model writes a plain PNG itself.
SCALE_PY = $(shell for p in python3 /usr/bin/python3; do $$p -c 'import matplotlib' 2>/dev/null && { echo $$p; exit 0; }; done; echo python3)
scale-model:
	$(SCALE_PY) bench/scale/model.py --build $(BUILD)

scale-calibrate: deps
	@$(MAKE) --no-print-directory build
	bench/scale/calibrate.sh $(BUILD)

bench-io: deps
	@$(MAKE) --no-print-directory build
	bench/scripts/httpd.sh $(BUILD)
	bench/scripts/chatroom.sh $(BUILD)
	$(BUILD)/bench/bench_io_batch
	$(BUILD)/bench/bench_blocking -k 64

bench-seeds: deps
	@$(MAKE) --no-print-directory build
	bench/seeds/run.sh $(BUILD)

bench-sync: build
	bench/scripts/sync-bench.sh -b $(BUILD)

# Priorities and time quanta (bench/micro/prio.c, results in bench/README.md).
bench-prio: build
	bench/scripts/prio-bench.sh $(BUILD)

# What WEFT_TRACE costs (bench/micro/trace.c): fib(30) spawn-per-call traced
# against untraced, alternated in one run, on 1 worker and all; then
# instructions per event (callgrind).
bench-trace: build
	$(BUILD)/bench/bench_trace
	bench/scripts/trace_instr.py $(BUILD)

# The style of .clang-format: check-format fails on a diff (CI), format fixes it.
check-format:
	@scripts/check-format.sh

format:
	@scripts/check-format.sh --fix

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

clean:
	rm -rf $(BUILD) build-asan build-tsan
