# Quick start (see README): `make run` and `make test`.
PRESET ?= dev
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all setup configure build run cli screenshot test asan release fuzz format format-check clean

all: build

setup:
	@bash .ci/install-deps.sh

configure: setup
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The desktop app on the built-in default scenario. Without a display (ssh, CI) it says so and
# prints the command-line report instead.
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(BUILD_DIR)/app/moe-planner/moe-planner; \
	else \
		echo "make run: no display (DISPLAY/WAYLAND_DISPLAY unset); the report from the CLI instead:"; \
		$(BUILD_DIR)/app/moe-plan/moe-plan evaluate; \
	fi

# The command-line report of the built-in default scenario.
cli: build
	@$(BUILD_DIR)/app/moe-plan/moe-plan evaluate

# The desktop app's window under Xvfb, saved as build/moe-planner.png.
screenshot: build
	@xvfb-run -a --server-args="-screen 0 1600x1000x24" \
		$(BUILD_DIR)/app/moe-planner/moe-planner --screenshot build/moe-planner.png

test: build
	@ctest --preset $(PRESET) -j $(JOBS)

# The sanitizer suite (preset dev-asan; its ASAN_OPTIONS are in CMakePresets.json). They set
# intercept_tls_get_addr=0: up to GCC 13, the sanitizer runtime takes a library's dynamic TLS
# block for a pre-2.25 glibc header whenever the heap places it at one page offset, reads garbage
# bounds from it, and LeakSanitizer's exit check dies ("Tracer caught signal 11") or passes
# depending on heap layout alone (google/sanitizers#1322). Leaks are still checked; only the
# dynamic TLS of dlopen'd libraries is no longer scanned for pointers.
asan:
	@$(MAKE) --no-print-directory test PRESET=dev-asan

# A plain user's build: `cmake -DCMAKE_BUILD_TYPE=Release` without the presets, so warnings are
# not errors (MOE_WARNINGS_AS_ERRORS is OFF by default; GCC 12 at -O3 reports false positives).
# CI runs it to prove that a user on any compiler can build the three programs.
release: setup
	@cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build build/release -j $(JOBS) --target moe-plan moe-planner moe-live
	@build/release/app/moe-plan/moe-plan validate sample_clusters/*.yaml >/dev/null

# libFuzzer on the scenario loader, --set parsing and the routing CSV reader, FUZZ_SECONDS each
# (seeds: the samples, tests/fuzz/set_seeds, tests/data). A crash stops with a non-zero status
# and leaves crash-* in build/fuzz/; keep it under tests/fuzz/regressions/.
FUZZ_SECONDS ?= 60
fuzz: setup
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@mkdir -p build/fuzz/corpus-loader build/fuzz/corpus-set build/fuzz/corpus-csv
	@cd build/fuzz && ./tests/fuzz/fuzz_scenario_loader -max_total_time=$(FUZZ_SECONDS) \
		-max_len=16384 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
		corpus-loader ../../sample_clusters ../../sample_clusters/scale-up-vs-scale-out \
		../../tests/fuzz/regressions
	@cd build/fuzz && ./tests/fuzz/fuzz_set_override -max_total_time=$(FUZZ_SECONDS) \
		-max_len=1024 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
		corpus-set ../../tests/fuzz/set_seeds
	@cd build/fuzz && ./tests/fuzz/fuzz_routing_csv -max_total_time=$(FUZZ_SECONDS) \
		-max_len=65536 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
		corpus-csv ../../tests/data

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run --Werror

clean:
	@rm -rf build
