# Tessel top-level entry points. `make run` and `make test` work on a fresh machine.
BUILD ?= build
JOBS ?= $(shell nproc)
EXAMPLE ?= examples/conv_bias_relu.tc

.PHONY: deps build run test clean format

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
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

format:
	@find src include cli tests -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
