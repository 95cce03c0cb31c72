# stagebench -- one plain GNU Makefile.
#   make                 build ./stagebench
#   make test            install missing Debian packages, build with ASan/UBSan, run every test
#   make test-fresh      the README's commands in fresh Debian 12 and 13 roots (root, mmdebstrap)
#   make test-vm         the cgroup cases on a systemd Debian 13 machine under qemu (root, docs/testing.md)
#   make test-vm-ci      the same, fewer contexts and runs (what .ci/run runs)
#   make bench           measure, write BENCHMARKS.md
#   make fuzz            run the libFuzzer harnesses of fuzz/ (clang) for FUZZ_TIME s each
#   make install PREFIX=/usr/local
#   make completions     rewrite completions/ from the option tables (after changing an option)
#   make SANITIZE=address,undefined   sanitizer build;  make V=1  show command lines
PREFIX ?= /usr/local
CC ?= cc
PKG_CONFIG ?= pkg-config
PYTHON ?= /usr/bin/python3
BUILD ?= build
UNAME_S := $(shell uname -s)

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS := libzstd jansson
# SHA-256 of latents: libcrypto on Linux; macOS has CommonCrypto in its libSystem.
ifneq ($(UNAME_S),Darwin)
PKGS += libcrypto
endif
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libcrypto is opened with dlopen() on the first digest (platform/linux/sha256.c): its
# headers are needed, not its link flags.
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(filter-out libcrypto,$(PKGS)) 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter -Wformat=2 -Wvla
CPPFLAGS += -D_GNU_SOURCE -I.
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP
LDLIBS += $(PKG_LIBS) -ldl -lm -lpthread

# Sanitizer objects live apart from plain ones: OUT = BUILD, or BUILD-san.
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
OUT := $(BUILD)-san
else
OUT := $(BUILD)
endif

# The version, and the commit this tree is (common/version.c, rebuilt alone when they change).
SB_VERSION ?= 0.1.0
ifeq ($(origin SB_COMMIT),undefined)
SB_COMMIT := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && \
	{ git diff --quiet HEAD 2>/dev/null && echo "$$c" || echo "$$c-dirty"; } || echo unknown)
endif

MODULES := common traces platform meter meter/gpu runner runner/record runner/compare analyze plots
# One platform directory per OS (platform/platform.h); any other OS is refused.
# platform/darwin/meter.c holds no macOS call (they go through a table) and is
# built into the unit tests everywhere, so the macOS meter is tested on Linux.
ifeq ($(UNAME_S),Linux)
OS_SRC := $(wildcard platform/linux/*.c)
TEST_OS_SRC := platform/darwin/meter.c platform/darwin/mapped.c
else ifeq ($(UNAME_S),Darwin)
OS_SRC := $(wildcard platform/darwin/*.c)
TEST_OS_SRC :=
else
$(error stagebench builds on Linux and macOS only, not on '$(UNAME_S)' (docs/platforms.md))
endif
LIB_SRC := $(foreach m,$(MODULES),$(wildcard $(m)/*.c)) $(OS_SRC)
TEST_OS_OBJ := $(TEST_OS_SRC:%.c=$(OUT)/%.o)
.SECONDARY: $(TEST_OS_OBJ)
CLI_SRC := $(wildcard cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(OUT)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(OUT)/%.o)
BIN := $(OUT)/stagebench

TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(OUT)/tests/%)
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(OUT)/helpers/%)
# Stand-ins for libnvidia-ml.so (tests only; STAGEBENCH_NVML_LIB selects one).
NVML_FAKE := $(OUT)/helpers/libnvidia-ml-fake.so $(OUT)/helpers/libnvidia-ml-fake-v2.so
HELPER_BIN += $(NVML_FAKE)

.PHONY: all check-deps deps test code-checks unit-test cli-test py-test e2e-test e2e-py-test bench install clean helpers charts test-slurm \
	portability macos completions
.PHONY: test-fresh test-vm test-vm-ci

all: check-deps stagebench

check-deps:
	@for p in $(PKGS); do $(PKG_CONFIG) --exists $$p 2>/dev/null || { \
	  case $$p in libzstd) d=libzstd-dev;; jansson) d=libjansson-dev;; libcrypto) d=libssl-dev;; esac; \
	  echo "stagebench: missing $$p: install the Debian package $$d (or run 'scripts/deps.sh build')" >&2; exit 1; }; done

stagebench: $(BIN)
	$(Q)ln -sf $(BIN) stagebench

$(BIN): $(CLI_OBJ) $(LIB_OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(OUT)/tests/%: tests/unit/%.c $(LIB_OBJ) $(TEST_OS_OBJ)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_CLI_OBJ) $(LIB_OBJ) $(TEST_OS_OBJ) $(LDLIBS) -lcriterion

# test_opt tests the option tables of cli/opt.c, which the library does not hold.
$(OUT)/tests/test_opt: TEST_CLI_OBJ = $(OUT)/cli/opt.o
$(OUT)/tests/test_opt: $(OUT)/cli/opt.o

# Helpers are standalone programs: their .c plus the strict parsers of common/parse.c.
$(OUT)/helpers/%: tests/helpers/%.c common/parse.c common/parse.h
	@mkdir -p $(dir $@)
	@echo "  HELPER  $@"
	$(Q)$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) -O1 -g -I. -o $@ $< common/parse.c -lm

$(OUT)/helpers/libnvidia-ml-fake.so: tests/nvml/fake_nvml.c
	@mkdir -p $(dir $@)
	@echo "  HELPER  $@"
	$(Q)$(CC) -std=gnu11 $(WARN) -Wno-missing-prototypes -O1 -g -shared -fPIC -o $@ $<

$(OUT)/helpers/libnvidia-ml-fake-v2.so: tests/nvml/fake_nvml.c
	@mkdir -p $(dir $@)
	@echo "  HELPER  $@"
	$(Q)$(CC) -std=gnu11 $(WARN) -Wno-missing-prototypes -O1 -g -shared -fPIC -DFAKE_NVML_NO_V3 -o $@ $<

helpers: $(HELPER_BIN)

# Only version.o sees the version and commit; the stamp changes when they do.
.PHONY: FORCE
$(OUT)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SB_VERSION) $(SB_COMMIT)' | cmp -s - $@ 2>/dev/null || echo '$(SB_VERSION) $(SB_COMMIT)' >$@
$(OUT)/common/version.o: $(OUT)/version.stamp
$(OUT)/common/version.o: CPPFLAGS += -DSB_VERSION='"$(SB_VERSION)"' -DSB_COMMIT='"$(SB_COMMIT)"'

# The portability gate: every platform-neutral source (all but platform/linux/)
# builds as plain POSIX.1-2008 C (with its XSI option, for realpath: macOS is
# certified to it) under clang, without _GNU_SOURCE, warnings as errors, so
# that GNU-only calls (memrchr, strverscmp, pipe2, ...) cannot come back.
PORTABLE_SRC := $(filter-out platform/linux/%,$(LIB_SRC) $(CLI_SRC)) platform/darwin/meter.c
PORTABLE_CC ?= clang
portability:
	@echo "  PORTABLE $(words $(sort $(PORTABLE_SRC))) sources: $(PORTABLE_CC) -std=c11 -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700"
	$(Q)bad=0; for f in $(sort $(PORTABLE_SRC)); do \
	  $(PORTABLE_CC) -std=c11 -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 -I. $(WARN) $(PKG_CFLAGS) -fsyntax-only $$f || \
	  { echo "stagebench: $$f is not portable (see docs/platforms.md)" >&2; bad=1; }; done; exit $$bad

# macOS arm64 and x86_64 binaries (build-macos/), cross-built here: scripts/cross-macos.sh.
macos:
	$(Q)scripts/cross-macos.sh $(abspath build-macos)

deps:
	$(Q)scripts/deps.sh test

# The test run: sanitizer build, unit tests, CLI golden tests, end-to-end, pytest, fuzzing.
# The builds use JOBS compilers at once (every core); the tests of each part run one after
# another as before. Each part prints its time ("  TIME    e2e-test 212 s"), and the whole.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SAN := SANITIZE=address,undefined
# $(call timed,NAME,COMMAND): run COMMAND, then print how long it took
timed = t=$$(date +%s); $(2) || exit 1; echo "  TIME    $(1) $$(($$(date +%s) - t)) s"
test: deps
	$(Q)t0=$$(date +%s); set -e; \
	$(call timed,portability,$(MAKE) --no-print-directory portability); \
	$(call timed,build (sanitizers),$(MAKE) --no-print-directory -j$(JOBS) $(SAN) test-build); \
	$(call timed,code-checks,$(MAKE) --no-print-directory $(SAN) code-checks); \
	$(call timed,unit-test,$(MAKE) --no-print-directory $(SAN) unit-test); \
	$(call timed,cli-test,$(MAKE) --no-print-directory $(SAN) cli-test); \
	$(call timed,build (plain),$(MAKE) --no-print-directory -j$(JOBS) stagebench); \
	$(call timed,e2e-test and py-test,$(MAKE) --no-print-directory $(SAN) e2e-py-test); \
	$(call timed,build (fuzzers),$(MAKE) --no-print-directory -j$(JOBS) fuzz-build); \
	$(call timed,fuzz-test,$(MAKE) --no-print-directory fuzz-test); \
	echo "  TIME    make test $$(($$(date +%s) - t0)) s"

# Everything the test parts run, built (with -j: make test-build -j2).
.PHONY: test-build
test-build: $(LIB_OBJ) $(CLI_OBJ) $(TEST_OS_OBJ) $(BIN) $(TEST_BIN) $(HELPER_BIN)

# The shape of the code (docs/architecture.md): no function outside tests over 100 lines,
# no source file outside tests over 700 (C, Python and shell); the modules link in one
# order (nm over this build's objects), no files need each other in a circle (symbols,
# #includes, the probe's imports), only cli/ includes the command table, runner/'s wings
# need only the ones below them, no two functions share a name, every relative link of the
# Markdown files leads somewhere, docs/architecture.md names every source file; and those
# checks' own tests.
code-checks: $(LIB_OBJ) $(CLI_OBJ) $(TEST_OS_OBJ)
	@echo "  CHECK   function length, file length, module order, circles of files, wings, names, doc links, file index"
	$(Q)scripts/check-function-length.py
	$(Q)scripts/check-file-length.py
	$(Q)scripts/check-layers.py $(OUT)
	$(Q)scripts/check-duplicate-names.py
	$(Q)scripts/check-doc-links.py
	$(Q)scripts/check-file-index.py
	$(Q)tests/code/check_lengths.sh
	$(Q)tests/code/check_doc_links.sh
	$(Q)tests/code/check_file_index.sh
	$(Q)tests/code/check_layers.sh
	$(Q)tests/code/check_duplicate_names.sh

unit-test: $(TEST_BIN) $(HELPER_BIN) $(BIN)
	$(Q)set -e; export FIXTURES=$(abspath tests/fixtures); for t in $(TEST_BIN); do echo "  RUN     $$t"; \
	  LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
	  SB_BIN=$(abspath $(BIN)) SB_HELPERS=$(abspath $(OUT)/helpers) $$t --jobs 2 || exit 1; done

cli-test: $(BIN) $(HELPER_BIN)
	$(Q)SB_BIN=$(abspath $(BIN)) SB_HELPERS=$(abspath $(OUT)/helpers) tests/cli/run.sh

E2E_SCRIPTS = $(filter-out tests/e2e/run.sh,$(wildcard tests/e2e/*.sh))
e2e-test: $(BIN) $(HELPER_BIN)
	$(Q)SB_BIN=$(abspath $(BIN)) SB_HELPERS=$(abspath $(OUT)/helpers) tests/e2e/run.sh $(E2E_SCRIPTS)

py-test: stagebench
	$(Q)PY_SB_BIN=$(abspath $(BIN)) PYTHON=$(PYTHON) tests/python/run.sh

# make test's step: e2e-test on this (sanitizer) build and py-test on the plain one
# ($(BUILD)/stagebench, built first), E2E_JOBS scripts at a time (tests/e2e/run.sh)
e2e-py-test: $(BIN) $(HELPER_BIN)
	$(Q)SB_BIN=$(abspath $(BIN)) SB_HELPERS=$(abspath $(OUT)/helpers) \
	  PY_SB_BIN=$(abspath $(BUILD)/stagebench) PYTHON=$(PYTHON) tests/e2e/run.sh $(E2E_SCRIPTS) tests/python/run.sh

# The README's two commands in fresh minimal Debian 12 and 13 roots (needs root; scripts/deps.sh ci).
test-fresh:
	$(Q)scripts/test-fresh.sh

# The memory readers' cases in a systemd Debian 13 guest under qemu, in a user's login session,
# its systemd-run scope, root's session and a container (root; scripts/deps.sh vm; tests/vm/).
test-vm:
	$(Q)scripts/deps.sh vm
	$(Q)tests/vm/run.sh

# test-vm within CI's time: its contexts but root-top, one reader each, one demo run in two.
test-vm-ci:
	$(Q)scripts/deps.sh vm
	$(Q)tests/vm/run.sh --ci

bench: stagebench $(HELPER_BIN)
	$(Q)SB_BIN=$(abspath $(BIN)) SB_HELPERS=$(abspath $(OUT)/helpers) bench/run.sh

# The published charts of README.md, regenerated from the shipped stageload fixtures.
PUB := tests/fixtures/stageload
QWEN := $(PUB)/2026-10-06-qwen-image
charts: stagebench
	$(Q)./stagebench plot -o docs/published/qwen-image --ram 48G \
	  --title 'Qwen-Image-2.1 at 1024 px: eager against staged' \
	  --note 'stageload traces of 2026-10-06 (tests/fixtures/stageload), Apple M5 Pro, 48 GB' \
	  $(QWEN)/eager-1.trace.jsonl $(QWEN)/staged-1.trace.jsonl $(QWEN)/staged-2.trace.jsonl
	$(Q)./stagebench plot -o docs/published/qwen-supplement --ram 48G --supplement $(QWEN)/eager-1.trace.jsonl \
	  --title 'Qwen-Image-2.1: the first eager attempt, the full one as a supplement' \
	  --note 'stageload traces of 2026-10-06 (tests/fixtures/stageload), Apple M5 Pro, 48 GB' \
	  $(QWEN)/first-attempt/eager-1.trace.jsonl $(QWEN)/staged-1.trace.jsonl $(QWEN)/staged-2.trace.jsonl
	$(Q)./stagebench plot -o docs/published/qwen-offload --ram 48G \
	  --title 'Qwen-Image-2.1: model CPU offload against eager' \
	  --note 'stageload traces of 2026-10-06 and 2026-10-08 (tests/fixtures/stageload), Apple M5 Pro, 48 GB' \
	  $(QWEN)/eager-1.trace.jsonl $(PUB)/2026-10-08-qwen-image-offload/offload-1.trace.jsonl

# A real single-node Slurm cluster (root; started and stopped by the test):
# compare as a job array, merged, on one node (tests/slurm/compare.sh) and on three nodes,
# each a set of namespaces of this machine, with faults (tests/slurm/nodes.sh); docs/slurm.md.
test-slurm: stagebench $(HELPER_BIN)
	$(Q)scripts/deps.sh slurm
	$(Q)SB_BIN=$(abspath $(BIN)) tests/slurm/compare.sh
	$(Q)SB_BIN=$(abspath $(BIN)) SB_HELPERS=$(abspath $(OUT)/helpers) tests/slurm/nodes.sh

# ---- fuzzing: libFuzzer harnesses in fuzz/ (clang), ASan and UBSan --------
#   make fuzz [FUZZ_TIME=60]   each harness for FUZZ_TIME seconds
#   make fuzz-test             each for FUZZ_RUNS executions (part of make test)
.PHONY: fuzz fuzz-build fuzz-test
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_RUNS ?= 3000
FUZZ_OUT := $(BUILD)-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=gnu11 $(filter-out -Werror,$(WARN)) -Wno-format-nonliteral -O1 -g $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_OUT)/%.o)
FUZZ_BIN := $(patsubst fuzz/%.c,$(FUZZ_OUT)/%,$(wildcard fuzz/fuzz_*.c))
.SECONDARY: $(FUZZ_LIB_OBJ)

$(FUZZ_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_OUT)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(FUZZ_LIB_OBJ)
	@echo "  FUZZER  $@"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	$(Q)fuzz/run.sh $(FUZZ_OUT) time $(FUZZ_TIME)

fuzz-test: fuzz-build
	$(Q)fuzz/run.sh $(FUZZ_OUT) runs $(FUZZ_RUNS)

# The completions' data, every command's options, from the binary's option tables (cli/opt.h,
# scripts/completions.sh); tests/e2e/completion.sh fails when the checked-in files differ.
completions: $(BIN)
	$(Q)scripts/completions.sh $(BIN) completions

# The man pages are made from the installed binary's --help texts (scripts/help2man.sh);
# INSTALL_BIN: install another build of it (tests/e2e/man.sh installs the sanitizer build).
INSTALL_BIN ?= $(BIN)
MANDIR ?= $(PREFIX)/share/man
BASH_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPDIR ?= $(PREFIX)/share/zsh/site-functions
install: $(INSTALL_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/stagebench
	install -m 0755 $(INSTALL_BIN) $(DESTDIR)$(PREFIX)/bin/stagebench
	scripts/help2man.sh $(INSTALL_BIN) $(DESTDIR)$(MANDIR)/man1
	install -d $(DESTDIR)$(BASH_COMPDIR) $(DESTDIR)$(ZSH_COMPDIR)
	install -m 0644 completions/stagebench.bash $(DESTDIR)$(BASH_COMPDIR)/stagebench
	install -m 0644 completions/_stagebench $(DESTDIR)$(ZSH_COMPDIR)/_stagebench
	cp -R probe demo $(DESTDIR)$(PREFIX)/share/stagebench/
	install -m 0755 scripts/bisect-run.sh $(DESTDIR)$(PREFIX)/share/stagebench/bisect-run.sh
	install -d $(DESTDIR)$(PREFIX)/include
	install -m 0644 probe/stagebench_probe.h $(DESTDIR)$(PREFIX)/include/

clean:
	rm -rf build build-san build-macos build-fuzz stagebench

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(FUZZ_LIB_OBJ:.o=.d) $(TEST_OS_OBJ:.o=.d) $(TEST_BIN:%=%.d)
