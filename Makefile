# ctxwin: build, test and demo. `make demo` and `make test` are the two commands a newcomer needs.

CARGO   ?= cargo
CC      ?= cc
CXX     ?= c++
RELEASE := target/release
LIB_A   := $(RELEASE)/libctxwin.a
LIB_SO  := $(RELEASE)/libctxwin.so
OUT     := target/c
# Native libraries a Rust static library needs on Linux (rustc --print native-static-libs).
STATIC_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
CFLAGS_TEST := -std=c11 -O1 -g -Wall -Wextra -Wpedantic -Werror -Iinclude
HEADER_STRICT := -std=c99 -Wall -Wextra -Wpedantic -Wconversion -Wstrict-prototypes -Werror
VALGRIND := valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=1
C_TEST_SRC := $(sort $(wildcard c_tests/test_*.c))
# The NULL-argument suite, generated from the header at build time (c_tests/gen_null_args.py).
NULL_ARGS_C := $(OUT)/null_args.c
C_TESTS := $(C_TEST_SRC) $(NULL_ARGS_C)
C_TEST_DEPS := $(C_TESTS) c_tests/harness.h include/ctxwin.h lib
CFLAGS_HARNESS := $(CFLAGS_TEST) -Ic_tests -pthread
# The harness built with AddressSanitizer (LeakSanitizer included) and UBSan; the Rust code
# stays uninstrumented, but ASan intercepts every allocation, so its leaks are seen too.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
HELGRIND := valgrind --quiet --tool=helgrind --error-exitcode=1
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them.
FUZZ_SECONDS ?= 60
FUZZ_ENV := RUSTC_BOOTSTRAP=1

.PHONY: all lib header check-header test check-all rust-test c-test header-compile snippet valgrind asan helgrind fuzz bench-memory demo clean

all: lib

lib:
	$(CARGO) build --release --lib

# The header cbindgen generated into OUT_DIR during the last build.
GENERATED_HEADER = $$($(CARGO) build --release --lib --message-format=json 2>/dev/null \
	| grep '"reason":"build-script-executed"' | grep 'ctxwin@' \
	| sed -n 's/.*"out_dir":"\([^"]*\)".*/\1/p')/ctxwin.h

header: lib
	cp "$(GENERATED_HEADER)" include/ctxwin.h

# Fails when the committed header differs from what the sources generate.
check-header: lib
	@diff -u include/ctxwin.h "$(GENERATED_HEADER)" \
	  || { echo "include/ctxwin.h is stale: run 'make header' and commit it"; exit 1; }

test: rust-test check-header header-compile snippet c-test valgrind asan

# make test plus the slow checks: the thread checker and a fuzzing run of every target.
check-all: test helgrind fuzz

rust-test:
	$(CARGO) test --release

header-compile: lib
	mkdir -p $(OUT)
	printf '#include "ctxwin.h"\nint main(void) { return ctxwin_version_number() == CTXWIN_VERSION_NUMBER ? 0 : 1; }\n' > $(OUT)/header_only.c
	$(CC) $(HEADER_STRICT) -Iinclude -c $(OUT)/header_only.c -o $(OUT)/header_only.o
	@if command -v $(CXX) >/dev/null 2>&1; then \
	  $(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude -x c++ -c $(OUT)/header_only.c -o $(OUT)/header_only_cpp.o && \
	  $(CXX) -std=c++17 -Wall -Wextra -Wpedantic -Werror -Iinclude -x c++ -c $(OUT)/header_only.c -o $(OUT)/header_only_cpp17.o && \
	  echo "header compiles as C++11 and C++17"; \
	else echo "WARNING: no C++ compiler ($(CXX)): the header's C++ check was skipped (.ci/run installs g++)"; fi

# The README's usage snippet, extracted and compiled with -Werror and run.
snippet: lib
	mkdir -p $(OUT)
	sed -n '/^```c$$/,/^```$$/p' README.md | sed '1d;$$d' > $(OUT)/readme_snippet.c
	$(CC) $(CFLAGS_TEST) $(OUT)/readme_snippet.c $(LIB_A) $(STATIC_LIBS) -o $(OUT)/readme_snippet
	$(OUT)/readme_snippet > /dev/null

$(NULL_ARGS_C): include/ctxwin.h c_tests/gen_null_args.py
	mkdir -p $(OUT)
	python3 c_tests/gen_null_args.py include/ctxwin.h > $@.tmp
	mv $@.tmp $@

$(OUT)/tests_static: $(C_TEST_DEPS)
	$(CC) $(CFLAGS_HARNESS) $(C_TESTS) $(LIB_A) $(STATIC_LIBS) -o $@

$(OUT)/tests_shared: $(C_TEST_DEPS)
	$(CC) $(CFLAGS_HARNESS) $(C_TESTS) -L$(RELEASE) -Wl,-rpath,'$$ORIGIN/../release' -lctxwin -o $@

# Fails unless the sanitizer runtime really is linked in.
$(OUT)/tests_asan: $(C_TEST_DEPS)
	$(CC) $(CFLAGS_HARNESS) $(SANITIZE) $(C_TESTS) $(LIB_A) $(STATIC_LIBS) -o $@
	@nm $@ | grep -q ' __asan_init' || { echo "$@: AddressSanitizer is not linked"; rm -f $@; exit 1; }
	@nm $@ | grep -q ' __ubsan_handle' || { echo "$@: UBSan is not linked"; rm -f $@; exit 1; }

c-test: $(OUT)/tests_static $(OUT)/tests_shared
	@echo "== C tests, static library"
	$(OUT)/tests_static
	@echo "== C tests, shared library"
	$(OUT)/tests_shared

valgrind: $(OUT)/tests_shared
	@echo "== C tests under valgrind (leaks are errors)"
	CTXWIN_TEST_QUICK=1 $(VALGRIND) $(OUT)/tests_shared

asan: $(OUT)/tests_asan
	@echo "== C tests with AddressSanitizer, LeakSanitizer and UBSan, static library"
	$(ASAN_ENV) $(OUT)/tests_asan

# The threads suite under valgrind's thread checker (ThreadSanitizer would need a std built
# with it, which needs a nightly toolchain's rust-src).
helgrind: $(OUT)/tests_shared
	@echo "== threads suite under helgrind"
	CTXWIN_TEST_QUICK=1 CTXWIN_TEST_SUITE=threads $(HELGRIND) $(OUT)/tests_shared

# Runs every fuzz target for FUZZ_SECONDS (make fuzz FUZZ_SECONDS=600 for the long run).
# Seeds come from fuzz/seeds/<target>; what the fuzzer learns goes to target/fuzz-corpus.
fuzz:
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked
	@for target in $$($(FUZZ_ENV) $(CARGO) fuzz list); do \
	  echo "== fuzzing $$target for $(FUZZ_SECONDS)s"; \
	  mkdir -p target/fuzz-corpus/$$target; \
	  $(FUZZ_ENV) $(CARGO) fuzz run $$target target/fuzz-corpus/$$target fuzz/seeds/$$target -- \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 || exit 1; \
	done

# Memory per message of a counts-only window (10 million messages).
bench-memory: lib
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) -O2 benches/memory.c $(LIB_A) $(STATIC_LIBS) -o $(OUT)/bench_memory
	$(OUT)/bench_memory

$(OUT)/agent_demo: examples/agent_demo.c include/ctxwin.h lib
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) examples/agent_demo.c $(LIB_A) $(STATIC_LIBS) -o $@

demo: $(OUT)/agent_demo
	$(OUT)/agent_demo

clean:
	$(CARGO) clean
