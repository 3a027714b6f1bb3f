# Thin wrapper over CMake: the README's quick start is `make run` then `make test`.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?= -DCONVSEL_WERROR=ON

.PHONY: all deps build build-asan build-tsan build-fuzz run test test-release test-asan test-tsan fuzz format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DCONVSEL_SANITIZE=address,undefined $(CMAKE_FLAGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)

build-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVSEL_SANITIZE=thread $(CMAKE_FLAGS)
	cmake --build $(BUILD_TSAN) -j $(JOBS)

build-fuzz: deps
	cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCONVSEL_FUZZ=ON -DCONVSEL_SANITIZE=address,undefined -DBUILD_TESTING=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_model_loader fuzz_problem_key fuzz_metadata fuzz_csv fuzz_limits

# Bounded fuzzing runs: the model loader (FUZZ_SECONDS, default 60), the
# problem-key parser, the model-metadata reader and the CSV reader (a
# quarter of that each).
fuzz: build-fuzz
	bash scripts/run-fuzz.sh $(BUILD_FUZZ)/fuzz_model_loader $(FUZZ_SECONDS) model
	bash scripts/run-fuzz.sh $(BUILD_FUZZ)/fuzz_problem_key $$(( $(FUZZ_SECONDS) / 4 )) key
	bash scripts/run-fuzz.sh $(BUILD_FUZZ)/fuzz_metadata $$(( $(FUZZ_SECONDS) / 4 )) metadata
	bash scripts/run-fuzz.sh $(BUILD_FUZZ)/fuzz_csv $$(( $(FUZZ_SECONDS) / 4 )) csv
	bash scripts/run-fuzz.sh $(BUILD_FUZZ)/fuzz_limits $$(( $(FUZZ_SECONDS) / 4 )) limits

# The main job on the embedded default: ResNet-50's 3x3 layer, verified.
run: build
	./$(BUILD)/convsel conv -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -V 1

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS) -LE "torch|python"

# The concurrency tests under ThreadSanitizer (labelled `concurrency` in tests/CMakeLists.txt).
test-tsan: build-tsan
	cd $(BUILD_TSAN) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest --output-on-failure -L concurrency

test: test-release test-asan test-tsan fuzz

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ)
