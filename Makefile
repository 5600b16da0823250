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

.PHONY: all lib header check-header test rust-test c-test header-compile snippet valgrind crash-test demo bench clean

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

test: rust-test check-header header-compile snippet c-test valgrind crash-test

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

$(OUT)/tests_static: $(C_TEST_SRC) c_tests/harness.h include/ctxwin.h lib
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) $(C_TEST_SRC) $(LIB_A) $(STATIC_LIBS) -o $@

$(OUT)/tests_shared: $(C_TEST_SRC) c_tests/harness.h include/ctxwin.h lib
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) $(C_TEST_SRC) -L$(RELEASE) -Wl,-rpath,'$$ORIGIN/../release' -lctxwin -o $@

c-test: $(OUT)/tests_static $(OUT)/tests_shared
	@echo "== C tests, static library"
	$(OUT)/tests_static
	@echo "== C tests, shared library"
	$(OUT)/tests_shared

valgrind: $(OUT)/tests_shared
	@echo "== C tests under valgrind (leaks are errors)"
	CTXWIN_TEST_QUICK=1 $(VALGRIND) $(OUT)/tests_shared

# Kills a process repeatedly while it saves a window, then loads every file it left.
CRASH_KILLS ?= 40
$(OUT)/crash_save: c_tests/crash_save.c include/ctxwin.h lib
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) c_tests/crash_save.c $(LIB_A) $(STATIC_LIBS) -o $@

crash-test: $(OUT)/crash_save
	$(OUT)/crash_save $(CRASH_KILLS)

$(OUT)/%_demo: examples/%_demo.c include/ctxwin.h lib
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) $< $(LIB_A) $(STATIC_LIBS) -o $@

demo: $(OUT)/agent_demo $(OUT)/summary_demo
	$(OUT)/agent_demo
	$(OUT)/summary_demo

# Benchmarks print medians and ratios against peers measured in the same run.
bench:
	$(CARGO) bench

clean:
	$(CARGO) clean
