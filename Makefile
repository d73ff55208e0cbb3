# gotraced — one entry point.  `make` builds into build/; `make check` builds an
# AddressSanitizer+UBSan variant into build/san/ and runs every test;
# `make deps` installs what the build and the tests need (Debian 12); `make
# image` makes the container image localhost/gotraced (deploy/image/).
# `make check-kernels` (after `make deps-kernels`) boots Debian's 5.10, 6.1
# and 6.12 kernels and an arm64 6.1 under qemu and records in each.
# Cross build: make ARCH=arm64 CC=aarch64-linux-gnu-gcc BUILD=build/arm64
#
# Quiet by default; `make V=1` shows the commands.

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
PREFIX   ?= /usr/local
DESTDIR  ?=

CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-field-initializers \
            -fno-omit-frame-pointer -MMD -MP
CPPFLAGS += -Iformat -Ibpf -Idaemon -Itests/lib -I$(BUILD)/bpf -I$(BUILD)/gen
LDLIBS   += -lbpf -lelf -ldw -lz -llzma -lpthread -lm

ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:

# ---- sources ---------------------------------------------------------------
# format/ and daemon/ are layered (lowest first); each program links its own
# folder and the layers below it: gotraced no CLI code, gotracectl no server
# code.  format/'s folders (util/ lowest, then wire/, then writer/, check/
# and analyze/ beside each other) make one library.
FORMAT_DIRS  := util wire v2 writer check analyze gomerge
FORMAT_SRCS  := $(foreach d,$(FORMAT_DIRS),$(wildcard format/$(d)/*.c))
CORE_DIRS    := common sym capture translate memtrack engine
CORE_SRCS    := $(foreach d,$(CORE_DIRS),$(wildcard daemon/$(d)/*.c))
SERVER_SRCS  := $(filter-out daemon/server/gotraced.c,$(wildcard daemon/server/*.c))
CTL_SRCS     := $(filter-out daemon/ctl/gotracectl.c,$(wildcard daemon/ctl/*.c))
BPF_SRCS     := $(wildcard bpf/*.bpf.c)
SKELS        := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
TEST_SRCS    := $(wildcard tests/unit/test_*.c)
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
WORKLOAD_SRCS:= $(wildcard tests/workloads/*.c)
BENCH_SRCS   := $(wildcard tests/bench/bench_*.c)
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)

# The objects that include a BPF skeleton (they need clang and bpftool).
SKEL_USERS   := $(shell grep -l '\.skel\.h"' $(CORE_SRCS) $(SERVER_SRCS) $(CTL_SRCS) \
                  $(TEST_SRCS) $(BENCH_SRCS))
SKEL_OBJS    := $(SKEL_USERS:%.c=$(BUILD)/obj/%.o)
FORMAT_OBJS  := $(FORMAT_SRCS:%.c=$(BUILD)/obj/%.o)
CORE_OBJS    := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
SERVER_OBJS  := $(SERVER_SRCS:%.c=$(BUILD)/obj/%.o)
CTL_OBJS     := $(CTL_SRCS:%.c=$(BUILD)/obj/%.o)
ifeq ($(NOBPF),1)
CORE_OBJS    := $(filter-out $(SKEL_OBJS),$(CORE_OBJS))
SERVER_OBJS  := $(filter-out $(SKEL_OBJS),$(SERVER_OBJS))
CTL_OBJS     := $(filter-out $(SKEL_OBJS),$(CTL_OBJS))
endif
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIBFORMAT    := $(BUILD)/libgtformat.a
LIBCORE      := $(BUILD)/libgtcore.a
LIBSERVER    := $(BUILD)/libgtserver.a
LIBCTL       := $(BUILD)/libgtctl.a
# Tests reach every layer.
TEST_LIBS    := $(LIBSERVER) $(LIBCTL) $(LIBCORE) $(LIBFORMAT)
PROGRAMS     := $(BUILD)/gotracectl $(BUILD)/gotraced $(BUILD)/libgotraced-heap.so
TESTS        := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# The unit tier (make check-unit): every test without a line
# `// tier: system` (BPF, root or real programs), built without BPF:
# the objects that include a skeleton are left out of the libraries.
UNIT_TESTS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,\
                  $(shell grep -L '^// tier: system' $(TEST_SRCS)))
WORKLOADS    := $(WORKLOAD_SRCS:tests/workloads/%.c=$(BUILD)/workloads/%)
BENCHES      := $(BENCH_SRCS:tests/bench/%.c=$(BUILD)/bench/%)
# make bench's own gotracectl (tests/bench/bpf_parts.sh): the installed one
# plus a knob to leave parts of the BPF programs out (tests/bench/parts_off.c).
# In a folder of its own: tests/bench/run.sh runs the files of bench/.
BENCH_CTL    := $(BUILD)/bench/parts/gotracectl
FUZZERS      := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)

.PHONY: FORCE all tests unit-tests fuzz check check-unit check-kernels bench deps deps-kernels demo image install clean

all: $(PROGRAMS)

tests: all $(TESTS) $(WORKLOADS) $(BENCHES) $(BENCH_CTL)

unit-tests: $(UNIT_TESTS) $(WORKLOADS)

# ---- BPF: CO-RE objects -> skeletons ----------------------------------------
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
              -Ivmlinux/$(ARCH) -Ibpf -I$(BUILD)/bpf

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)llvm-strip -g $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- generated sources -------------------------------------------------------
# The syscall names of the target architecture, from the kernel's own
# <asm/unistd.h> as the compiler sees it (a cross compiler sees arm64's).
$(BUILD)/gen/syscall_names.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)echo '#include <asm/unistd.h>' | $(CC) -dM -E - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/GT_SYSCALL(\1)/p' | \
		grep -v '^GT_SYSCALL(syscalls)$$' | sort > $@

# The version `--version` prints: `git describe` at build time, else the
# VERSION file (a release tarball), else "unknown".  The header is rewritten
# only when the version changes, so an unchanged tree rebuilds nothing.
GT_VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || cat VERSION 2>/dev/null || echo unknown)
$(BUILD)/gen/gt_version.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '#define GT_VERSION "$(GT_VERSION)"' > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
.PHONY: FORCE
FORCE:

$(BUILD)/obj/daemon/ctl/gotracectl.o $(BUILD)/obj/daemon/server/gotraced.o: $(BUILD)/gen/gt_version.h

# ---- user space --------------------------------------------------------------
# Only the objects that include a BPF skeleton wait for clang and bpftool
# (the first time: the .d files name every header after that).
$(SKEL_OBJS): | $(SKELS)

$(BUILD)/obj/%.o: %.c | $(BUILD)/gen/syscall_names.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Each library's member list, rewritten only when it changes: a source
# removed or renamed leaves every object older than the library, which
# would otherwise keep the stale member (and its duplicate symbols).
$(BUILD)/%.members: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '%s\n' $(sort $($(members_of_$*))) | cmp -s - $@ || \
		printf '%s\n' $(sort $($(members_of_$*))) > $@
members_of_libgtformat := FORMAT_OBJS
members_of_libgtcore   := CORE_OBJS
members_of_libgtserver := SERVER_OBJS
members_of_libgtctl    := CTL_OBJS
FORCE:

$(LIBFORMAT): $(FORMAT_OBJS) $(LIBFORMAT:.a=.members)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)

$(LIBCORE): $(CORE_OBJS) $(LIBCORE:.a=.members)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)

$(LIBSERVER): $(SERVER_OBJS) $(LIBSERVER:.a=.members)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)

$(LIBCTL): $(CTL_OBJS) $(LIBCTL:.a=.members)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)

$(BUILD)/gotraced: $(BUILD)/obj/daemon/server/gotraced.o $(LIBSERVER) $(LIBCORE) $(LIBFORMAT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/gotracectl: $(BUILD)/obj/daemon/ctl/gotracectl.o $(LIBCTL) $(LIBCORE) $(LIBFORMAT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The heap interposer preloaded into `record -- CMD` (daemon/interpose/):
# libc only, never the daemon's code, never a sanitizer (it runs inside the
# traced program, before and under its allocator).
$(BUILD)/libgotraced-heap.so: daemon/interpose/preload.c daemon/interpose/heap_shm.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -fPIC -shared \
		-fvisibility=hidden -ftls-model=initial-exec -fno-builtin-malloc \
		$< -o $@

# Format tests link the format library alone, so they build while the
# engine is being changed (format/ knows nothing of BPF); `inspect` is
# gotracectl's one command that needs nothing else (its objects link
# before the library they use).
$(BUILD)/tests/test_format_broken: $(BUILD)/obj/daemon/ctl/inspect.o $(BUILD)/obj/daemon/ctl/inspect_v2.o \
	$(BUILD)/obj/daemon/ctl/trace_map.o
# test_format_big counts the checker's heap through wrapped allocator calls.
$(BUILD)/tests/test_format_big: LDFLAGS += \
	-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
$(BUILD)/tests/test_format_%: $(BUILD)/obj/tests/unit/test_format_%.o $(TESTLIB_OBJS) $(LIBFORMAT)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(filter-out %.a,$^) $(filter %.a,$^) $(LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(TESTLIB_OBJS) $(TEST_LIBS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(TESTLIB_OBJS) $(TEST_LIBS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BENCH_CTL): $(BUILD)/obj/daemon/ctl/gotracectl.o $(BUILD)/obj/tests/bench/parts_off.o \
		$(LIBCTL) $(LIBCORE) $(LIBFORMAT)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Workloads are plain programs the tests trace: no sanitizer (they are the
# traced subject, not our code), frame pointers on so their stacks unwind.
# nofp_*: built as Debian builds its libc, without frame pointers (the
# DWARF unwinder's subject, tests/integration/record_dwarf.sh).
WL_CFLAGS := -O1 -fno-omit-frame-pointer -fno-inline
$(BUILD)/workloads/nofp_%: WL_CFLAGS := -O2 -fomit-frame-pointer
$(BUILD)/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -g $(WL_CFLAGS) \
		-Wall -Wextra -Werror -pthread $< -o $@

# ---- fuzzing (libFuzzer needs clang) -----------------------------------------
# Each fuzz target links the format library (FORMAT_SRCS, as the main build)
# plus the daemon sources it names in a line `// fuzz-links: ...`: a folder
# (every .c file in it, as the main build takes a folder, so a file added
# there is linked too), a pattern (daemon/ctl/report_*.c) or a file; and the
# libraries a line `// fuzz-libs: ...` names (-lelf -ldw -lz).
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
               -Iformat -Ibpf -Idaemon -Itests/lib -Ibuild/gen

# The sources fuzz target $(1) names, each folder or pattern expanded (a
# name that matches nothing is kept, for the compiler to say so).
fuzz_links = $(foreach w,$(shell sed -n 's|^// fuzz-links: ||p' $(1)),\
	$(or $(wildcard $(w)/*.c),$(wildcard $(w)),$(w)))
fuzz_libs = $(shell sed -n 's|^// fuzz-libs: ||p' $(1))

fuzz: $(FUZZERS)

build/fuzz/%: tests/fuzz/%.c $(FORMAT_SRCS) $(wildcard format/*/*.h daemon/*/*.h daemon/*/*.c tests/fuzz/*.h) build/gen/syscall_names.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FORMAT_SRCS) $(call fuzz_links,$<) $(call fuzz_libs,$<) -o $@

# ---- entry points ------------------------------------------------------------
check:
	$(Q)$(MAKE) --no-print-directory BUILD=build/san SAN=1 tests
	$(Q)$(MAKE) --no-print-directory fuzz
	$(Q)tests/run.sh build/san

# The quick tier for the inner loop: lint and the tests that need no BPF,
# no root and no real program, built without clang or bpftool.
check-unit:
	$(Q)$(MAKE) --no-print-directory BUILD=build/unit NOBPF=1 unit-tests
	$(Q)TIER=unit tests/run.sh build/unit

# The kernel matrix (tests/kernels/run.sh): this BUILD for x86 guests, a
# cross build in build/arm64 for the arm64 one.
check-kernels: all $(BUILD)/workloads/demo $(BUILD)/workloads/spin
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 CC=aarch64-linux-gnu-gcc BUILD=build/arm64 \
		all build/arm64/workloads/demo build/arm64/workloads/spin
	$(Q)GT_BUILD=$(BUILD) GT_BUILD_ARM64=build/arm64 tests/kernels/run.sh

bench: tests
	$(Q)tests/bench/run.sh $(BUILD)

demo: all $(BUILD)/workloads/demo
	$(Q)tests/demo.sh $(BUILD)

deps:
	$(Q)tests/deps.sh

# localhost/gotraced (deploy/image/build.sh): this build's programs and the
# libraries they load, imported with podman; nothing pulled, nothing
# written outside $(BUILD)/image.  IMAGE=... names it otherwise.
IMAGE ?= localhost/gotraced
image: all
	$(Q)deploy/image/build.sh $(BUILD) $(IMAGE)

deps-kernels:
	$(Q)tests/kernels/deps.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin \
		$(DESTDIR)/lib/systemd/system $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/gotracectl $(DESTDIR)$(PREFIX)/bin/gotracectl
	install -m 0755 $(BUILD)/gotraced $(DESTDIR)$(PREFIX)/sbin/gotraced
	install -d $(DESTDIR)$(PREFIX)/lib/gotraced
	install -m 0644 $(BUILD)/libgotraced-heap.so $(DESTDIR)$(PREFIX)/lib/gotraced/
	for f in systemd/*.service systemd/*.socket; do [ -f "$$f" ] || continue; \
		sed 's|@PREFIX@|$(PREFIX)|g' "$$f" > $(DESTDIR)/lib/systemd/system/$$(basename $$f); done
	for f in systemd/*.8; do [ -f "$$f" ] || continue; \
		install -m 0644 "$$f" $(DESTDIR)$(PREFIX)/share/man/man8/; done
	for f in systemd/*.1; do [ -f "$$f" ] || continue; \
		install -m 0644 "$$f" $(DESTDIR)$(PREFIX)/share/man/man1/; done
	@# The socket's group; only on a real install, not into a staging DESTDIR.
	@if [ -z "$(DESTDIR)" ] && ! getent group gotrace >/dev/null; then \
		groupadd --system gotrace && echo "install: created group gotrace"; fi
	@[ -n "$(DESTDIR)" ] || echo "install: now run: systemctl daemon-reload && systemctl start gotraced"

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
