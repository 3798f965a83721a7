# Tessel top-level entry points. `make run` and `make test` work on a fresh machine.
BUILD ?= build
JOBS ?= $(shell nproc)
EXAMPLE ?= examples/conv_bias_relu.tc
# Fuzzing and sanitizer builds (docs/user-guide.md, "Fuzzing and sanitizers").
FUZZ_BUILD ?= build-fuzz
ASAN_BUILD ?= build-asan
ASAN_SMOKE_BUILD ?= build-asan-smoke
ASAN_SMOKE_FUZZ_SECONDS ?= 90
FUZZ_SECONDS ?= 300
FUZZ_CXX ?= clang++-14
FUZZ_CC ?= clang-14

.PHONY: deps build run test clean format fuzz fuzz-parser test-asan test-asan-smoke

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job on a built-in example: compile a fused operator, check it against
# the reference interpreter, time it.
run: build
	./$(BUILD)/tessel run $(EXAMPLE) --check --time

test: build
	cd $(BUILD) && { ctest --output-on-failure -j $(JOBS) || { bash $(CURDIR)/scripts/ctest-failure-digest.sh; exit 1; }; }

# The random-program differential fuzzer (`tessel fuzz`), a longer run than the one in `make test`.
fuzz: build
	./$(BUILD)/tessel fuzz --count 5000 --seed 1 --jobs $(JOBS)

# libFuzzer on the TC front end (parse, lower, compile to C), clang-14 with ASan + UBSan.
# Runs on a scratch copy of the seed corpus, so the repository's corpus only changes by hand;
# crash-*, leak-* and timeout-* reproducers land in $(FUZZ_BUILD)/artifacts/.
fuzz-parser: deps
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DTESSEL_FUZZER=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target tessel_parser_fuzzer
	rm -rf $(FUZZ_BUILD)/corpus && mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/artifacts
	cp tests/fuzz/corpus/* $(FUZZ_BUILD)/corpus/
	./$(FUZZ_BUILD)/tessel_parser_fuzzer $(FUZZ_BUILD)/corpus -dict=tools/fuzz/tc.dict \
	  -max_len=4096 -timeout=10 -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/

# The whole test suite with ASan + UBSan, generated kernels included: TESSEL_CFLAGS makes the
# kernels instrumented too (they load into the already-sanitized test process). The kernel cache
# is $(ASAN_BUILD)/kernel-cache (tests/CMakeLists.txt gives each build folder its own), and the
# flags are part of the cache key, so instrumented and plain kernels never mix.
# halt_on_error: a UBSan report fails the test instead of scrolling by.
test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSEL_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && TESSEL_CFLAGS="-fsanitize=address,undefined" \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# What CI affords of test-asan, whose whole run takes about 35 minutes on two cores from
# scratch: the compiler alone built with ASan + UBSan (at -O1, assertions on, no debug info), every
# example compiled, run and checked with instrumented kernels, then a short differential fuzz run
# (seed 3, ASAN_SMOKE_FUZZ_SECONDS) whose kernels are instrumented too. It never benchmarks, so
# the benchmark harness and its peers are not built.
test-asan-smoke: deps
	@cmake -S . -B $(ASAN_SMOKE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1 -DTESSEL_CLI_BUILDS_BENCH=OFF >/dev/null
	@cmake --build $(ASAN_SMOKE_BUILD) -j $(JOBS) --target tessel
	export TESSEL_CFLAGS="-fsanitize=address,undefined" TESSEL_CACHE_DIR=$(ASAN_SMOKE_BUILD)/kernel-cache \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 && \
	for example in examples/*.tc; do \
	  ./$(ASAN_SMOKE_BUILD)/tessel run $$example --check --threads $(JOBS) || exit 1; \
	done && \
	./$(ASAN_SMOKE_BUILD)/tessel fuzz --seed 3 --count 1000 --time-budget $(ASAN_SMOKE_FUZZ_SECONDS) --jobs $(JOBS)

format:
	@find src include cli tests tools -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) $(ASAN_BUILD) $(ASAN_SMOKE_BUILD)
