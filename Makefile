# SPDX-License-Identifier: GPL-2.0
#
# rpcrdma_cm: RFC 8797 CM private data negotiation for NFS over RDMA.
# 'make help' lists the targets. The module is in rust/, reached from the
# root Kbuild as any out-of-tree module is: make -C <kernel tree> M=$PWD.
# The host crates and the rpcrdma-cm tool are the Cargo workspace in tools/.

SHELL := /bin/bash
KCONFIG ?= default
# The kernel base: 6.12 (LTS, patches/6.12, the backport) or 7.3
# (mainline, patches/7.3). Every target below works on the one named here.
KBASE ?= 6.12
export RPCRDMA_CM_KBASE := $(KBASE)
SCRIPTS := $(CURDIR)/scripts
KDIR ?= $(shell RPCRDMA_CM_KBASE=$(KBASE) $(SCRIPTS)/kernel/build-kernel.sh --print-dir $(KCONFIG))
KMAKE_ARGS := $(shell RPCRDMA_CM_KBASE=$(KBASE) && . $(SCRIPTS)/lib.sh && kernel_make_args)

.PHONY: all help deps kernel module modules clean check test-host lint \
	selftests two-guest check-debug check-memory check-lts run bench bench-table bisect-series upstream-series conform-table bench-nfs fuzz tools install-tools \
	stock-kernel stock-conformance interop distro distro-install distro-uninstall distro-test distro-check distro-dkms

all: module

help:
	@echo 'rpcrdma_cm targets:'
	@echo '  make deps         install the pinned toolchain, QEMU, rdma-core, nfs tools (root)'
	@echo '  KBASE=6.12|7.3    the kernel base of every target below (default 6.12: LTS, patches/6.12;'
	@echo '                   7.3: mainline, patches/7.3)'
	@echo '  make kernel       build the test kernel (cached; on 7.3 with KASAN in the RDMA transports and'
	@echo '                   core, and kmemleak; KCONFIG=plain without them, KCONFIG=checked adds lockdep,'
	@echo '                   KCONFIG=debug has KASAN on the whole kernel, kmemleak and lockdep)'
	@echo '  make              build rpcrdma_cm.ko against it (KDIR=... for another tree)'
	@echo '  make test-host    cargo tests of the protocol core and tools, scripts/tests/'
	@echo '  make tools        build the rpcrdma-cm tool and bench-nfs-report (tools/target/release/)'
	@echo '  make install-tools  install rpcrdma-cm, its man pages and the Wireshark dissector'
	@echo '  make lint         rustfmt, clippy (host and CLIPPY=1 module build), shellcheck, checkpatch of patches/'
	@echo '  make selftests    kselftests in one guest (module, rxe, NFS over RDMA; PROGS="a.sh b.sh" runs some)'
	@echo '  make two-guest    the two-guest capture test (CM private data on the wire)'
	@echo '  make stock-kernel the same kernel without patches (cached): the interop matrix peer'
	@echo '  make stock-conformance  stock_transports.sh must fail on the stock kernel exactly where the series fixes it'
	@echo '                   (KCONFIG=debug: unpatched with KASAN, kmemleak, lockdep)'
	@echo '  make interop      the full interop matrix (every pair, transport, family, NFS version),'
	@echo '                   the hostile responder and the 1000-connection storms (matrix 34 min measured)'
	@echo '  make check        all of the above but make interop (it runs a cut of the matrix);'
	@echo '                   ends with "N passed, N failed"'
	@echo '  make check-lts    make check with the whole guest suite on 6.12 and the cut on 7.3'
	@echo '  make check-debug  the guest tests on the debug kernel (KASAN, kmemleak, lockdep; hours under TCG; PROGS= as above)'
	@echo '  make check-memory the memory-safety programs on the checked kernel (KASAN in the RPC-over-RDMA'
	@echo '                   paths, kmemleak, lockdep; MEMORY_PROGS=; KBASE=7.3): planted bugs and, on the'
	@echo '                   unpatched kernel, the over-read the series fixes must be reported'
	@echo '  make run          demo (installs deps, builds kernel and module first): NFS over RDMA'
	@echo '                   stock and with rpcrdma_cm at 64 KB, negotiation and chunks side by side'
	@echo '  make bench        record receiver benchmark (prints numbers)'
	@echo '  make bench-table  connection table benchmark in a guest: connect+teardown at 10/1000/10000 live'
	@echo '  make bisect-series  build and boot after every patch of both series, 7.3 and 6.12'
	@echo '                   (stock NFS/RDMA each time)'
	@echo '  make conform-table  Documentation/conformance-by-server.inc from the last make check'
	@echo '  make upstream-series  both series as mail (your git identity; UPSTREAM_SERIES_ARGS=--preview to read;'
	@echo '                   RPCRDMA_CM_RUST_REVIEWER="Name <addr>" adds a consenting Rust reviewer to MAINTAINERS)'
	@echo '  make bench-nfs    NFS over RDMA per RPC, stock vs rpcrdma_cm, two guests: what larger thresholds'
	@echo '                   save (RDMA operations) and cost (memory per connection, copies); tables, plots,'
	@echo '                   CSV and JSON in build/bench/ (BENCH_N=200 ops per workload;'
	@echo '                   about 50 min under TCG, see Documentation/performance.rst)'
	@echo '  make fuzz         run the cargo-fuzz targets (FUZZ_RUNS=N per target)'
	@echo '  make distro       rpcrdma.ko (the series C part) and rpcrdma_cm.ko for a distribution kernel,'
	@echo '                   against its own headers, no kernel rebuild (DISTRO_RELEASE=, default'
	@echo '                   7.3.4+deb13-amd64; 6.12.118+deb12-amd64: rpcrdma.ko alone, no Rust there;'
	@echo '                   see scripts/distro/debian.pins); build/distro/<release>/'
	@echo '  make distro-install  into /lib/modules/<release>/updates/ (DESTDIR=), then depmod'
	@echo '  make distro-uninstall  the stock rpcrdma again'
	@echo '  make distro-test  boot the distribution image with them in a guest: the guest programs there'
	@echo '  make distro-check make distro and distro-test for every release in debian.pins (about 10 min;'
	@echo '                   make check boots the 7.3 one and builds the 6.12 one)'
	@echo '  make distro-dkms  this tree in /usr/src and added to DKMS (scripts/distro/dkms.conf)'
	@echo '  make clean        remove module build outputs and tools/target/'

deps:
	$(SCRIPTS)/kernel/deps.sh

kernel:
	$(SCRIPTS)/kernel/build-kernel.sh $(KCONFIG)

# Kbuild writes the objects into rust/, next to the sources, whatever
# the kernel (the root gets Kbuild's module lists only); they are removed
# when the kernel tree changes (another base or variant). The module is
# kept per base in build/module/<base>/ so that guests of both bases (the
# cross-kernel interop rows) find theirs.
MODULE_STAMP := build/module/.built-against
MODULE_OBJECTS := $(addprefix rust/,*.o *.ko *.mod *.mod.c .*.cmd modules.order) \
	modules.order Module.symvers .modules.order.cmd .Module.symvers.cmd
module modules:
	@test -f $(KDIR)/vmlinux || { echo "no kernel at $(KDIR): run 'make KBASE=$(KBASE) kernel'" >&2; exit 1; }
	@if [ "$$(cat $(MODULE_STAMP) 2>/dev/null)" != "$(KDIR)" ]; then rm -f $(MODULE_OBJECTS); fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KMAKE_ARGS) modules
	@mkdir -p build/module && echo "$(KDIR)" >$(MODULE_STAMP)
	install -D -m 0644 rust/rpcrdma_cm.ko build/module/$(KBASE)/rpcrdma_cm.ko

test-host:
	cd tools && cargo test --workspace --release
	for t in $(SCRIPTS)/tests/*.sh; do $$t || exit 1; done

lint:
	$(SCRIPTS)/check/lint.sh

# PROGS: run only these selftests programs (default: all of TEST_PROGS), e.g.
# make check-debug PROGS="cm_latch.sh cm_reload.sh dmesg_clean.sh".
selftests: module tools
	KDIR=$(KDIR) $(SCRIPTS)/guest/selftests.sh $(PROGS)

two-guest: module tools
	KDIR=$(KDIR) $(SCRIPTS)/guest/two-guest.sh

# The unpatched kernel built as KCONFIG's (stock, stock-plain, ...).
STOCK_VARIANT = $(if $(filter default,$(KCONFIG)),stock,stock-$(KCONFIG))
STOCK_KDIR = $(shell RPCRDMA_CM_KBASE=$(KBASE) $(SCRIPTS)/kernel/build-kernel.sh --print-dir $(STOCK_VARIANT))
stock-kernel:
	$(SCRIPTS)/kernel/build-kernel.sh $(STOCK_VARIANT)

# stock_transports.sh on the unpatched kernel: it must fail exactly the
# checks the series fixes (make check runs it on the full base).
stock-conformance: module tools stock-kernel
	STOCK_KDIR=$(STOCK_KDIR) $(SCRIPTS)/guest/stock-conformance.sh

# The whole interop matrix (make check runs its cut and the cross rows),
# then the hostile responder and the storms with 1000 connects each way.
# Its rows pair the two bases too: both bases' kernels, modules and stock
# kernels are built first.
interop: tools
	for b in 7.3 6.12; do $(MAKE) KBASE=$$b kernel module stock-kernel || exit 1; done
	KDIR=$(KDIR) STOCK_KDIR=$(STOCK_KDIR) INTEROP_TABLE=$(CURDIR)/build/interop/interop-table.txt \
		$(SCRIPTS)/guest/interop.sh --full
	RPCRDMA_CM_HOSTILE_STORM=1000 RPCRDMA_CM_STORM=1000 RPCRDMA_CM_TEST_TIMEOUT=2400 KDIR=$(KDIR) \
		$(SCRIPTS)/guest/selftests.sh cm_hostile_responder.sh cm_storm.sh dmesg_clean.sh

# The guest tests once more on the debug kernel; the module is rebuilt
# against it (and is rebuilt against the default kernel by the next 'make').
# KASAN under TCG is several times slower: longer limits, same tests. The
# limits are generous on purpose (a program took 23 min beside other guests);
# each may be overridden from the environment.
DEBUG_SELFTESTS_TIMEOUT ?= 14400
DEBUG_TEST_TIMEOUT ?= 5400
DEBUG_TWO_GUEST_TIMEOUT ?= 2400
check-debug:
	$(SCRIPTS)/kernel/build-kernel.sh debug
	SELFTESTS_TIMEOUT=$(DEBUG_SELFTESTS_TIMEOUT) RPCRDMA_CM_TEST_TIMEOUT=$(DEBUG_TEST_TIMEOUT) \
		TWO_GUEST_TIMEOUT=$(DEBUG_TWO_GUEST_TIMEOUT) \
		$(MAKE) KCONFIG=debug selftests two-guest

# The memory-safety programs (issue 36) on the checked kernel: the 7.3
# test kernel's KASAN (its checks compiled into the RDMA transports and
# core only, build-kernel.sh's KASAN_SCOPE_DIRS) and kmemleak, with
# lockdep (debug.config), which make check's kernel lacks; the module
# and the test modules are rebuilt against it, instrumented whole.
# dmesg_clean.sh ends the run: the session's log, a kmemleak scan, and the
# planted over-read and leaks the checkers must report.
MEMORY_PROGS ?= cm_iwarp_short.sh cm_hostile_responder.sh cm_storm.sh cm_long_answer.sh \
	cm_reload.sh cm_fault_injection.sh debugfs_unload.sh cm_cross_check.sh cm_backchannel.sh cm_recv_follow.sh \
	dmesg_clean.sh
# cm_reload.sh at make check's 20 cycles (each about four times slower
# here under TCG than on a kernel without checkers).
MEMORY_RELOAD_CYCLES ?= 20
# Then the unpatched kernel built the same way (stock-checked, from the
# checked tree in about 90 s), booted with kasan_multi_shot: KASAN must
# report the stock server's over-reads of short private data
# (stock_overread.sh; a skip there is a failure here). 7.3 only: the
# numbers in Documentation/measurements.rst are 7.3's.
check-memory:
	@[ "$(KBASE)" = 7.3 ] || { echo "make check-memory KBASE=7.3 (measured on 7.3 only)" >&2; exit 1; }
	$(SCRIPTS)/kernel/build-kernel.sh checked
	RPCRDMA_CM_RELOAD_CYCLES=$(MEMORY_RELOAD_CYCLES) SELFTESTS_TIMEOUT=$(DEBUG_SELFTESTS_TIMEOUT) \
		RPCRDMA_CM_TEST_TIMEOUT=$(DEBUG_TEST_TIMEOUT) $(MAKE) KCONFIG=checked PROGS="$(MEMORY_PROGS)" selftests
	$(SCRIPTS)/kernel/build-kernel.sh stock-checked
	kdir=$$(RPCRDMA_CM_KBASE=$(KBASE) $(SCRIPTS)/kernel/build-kernel.sh --print-dir stock-checked) || exit 1; \
	KDIR=$$kdir RPCRDMA_CM_KO=$(CURDIR)/build/module/$(KBASE)/rpcrdma_cm.ko RPCRDMA_CM_GUEST_APPEND=kasan_multi_shot \
		RPCRDMA_CM_STOCK_OVERREAD_REQUIRED=1 SELFTESTS_TIMEOUT=$(DEBUG_SELFTESTS_TIMEOUT) \
		RPCRDMA_CM_TEST_TIMEOUT=$(DEBUG_TEST_TIMEOUT) $(SCRIPTS)/guest/selftests.sh stock_overread.sh

check:
	$(SCRIPTS)/check/check.sh

# make check with the roles of the bases swapped: the whole guest suite on
# 6.12 LTS, the cut on 7.3.
check-lts:
	CHECK_FULL_BASE=6.12 $(SCRIPTS)/check/check.sh

# The userspace tool (needs librdmacm-dev and libibverbs-dev: make deps) and
# the report of make bench-nfs.
tools:
	cd tools && cargo build --release -p rpcrdma-cm-tools -p bench-nfs-report

# PREFIX/bin/rpcrdma-cm, its man pages in MANDIR/man1 and the Lua dissector
# in WIRESHARK_PLUGINS (Wireshark's personal plugin directory by default).
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
WIRESHARK_PLUGINS ?= $(HOME)/.local/lib/wireshark/plugins
install-tools: tools
	install -D -m 0755 tools/target/release/rpcrdma-cm $(DESTDIR)$(PREFIX)/bin/rpcrdma-cm
	tools/target/release/rpcrdma-cm man $(DESTDIR)$(MANDIR)/man1
	install -D -m 0644 tools/wireshark/rpcrdma_cm.lua $(DESTDIR)$(WIRESHARK_PLUGINS)/rpcrdma_cm.lua

run:
	$(SCRIPTS)/demo/run-demo.sh

# The benchmarks in guests run on a kernel without the memory checkers
# (KASAN changes what kmalloc takes and what everything costs): the plain
# variant (on 6.12 the test kernel itself), built first, then the module
# against it, one after the other. KCONFIG= on the command line still
# picks another. The module in build/module/<base>/ is then built against
# that kernel: the next 'make' rebuilds it against the test kernel.
BENCH_KCONFIG := $(if $(filter command line,$(origin KCONFIG)),$(KCONFIG),plain)

bench:
	cd tools && cargo bench -p rpcrdma-cm-proto --bench record_receiver

bench-table: KCONFIG := $(BENCH_KCONFIG)
bench-table:
	$(SCRIPTS)/kernel/build-kernel.sh $(KCONFIG)
	KDIR=$(KDIR) $(SCRIPTS)/bench/bench-table.sh

# The series as mail (scripts/kernel/upstream-series.sh): From and Signed-off-by
# are your git identity (refused if a placeholder); UPSTREAM_SERIES_ARGS
# may say --preview or a base. Output in build/upstream/.
# The conformance-by-server table of Documentation/tools.rst, as the last
# make check made it from its conform verdicts.
conform-table:
	@test -s build/check/conformance-by-server.inc || { echo "no build/check/conformance-by-server.inc: run make check" >&2; exit 1; }
	cp build/check/conformance-by-server.inc Documentation/conformance-by-server.inc

upstream-series:
	RPCRDMA_CM_KBASE=7.3 $(SCRIPTS)/kernel/build-kernel.sh default
	RPCRDMA_CM_KBASE=6.12 $(SCRIPTS)/kernel/build-kernel.sh default
	$(SCRIPTS)/kernel/upstream-series.sh $(UPSTREAM_SERIES_ARGS)

# Both series, each on its own base (KBASE has no say here).
bisect-series:
	RPCRDMA_CM_KBASE=7.3 $(SCRIPTS)/kernel/build-kernel.sh default
	RPCRDMA_CM_KBASE=7.3 KDIR= $(SCRIPTS)/kernel/bisect-series.sh
	RPCRDMA_CM_KBASE=6.12 $(SCRIPTS)/kernel/build-kernel.sh default
	RPCRDMA_CM_KBASE=6.12 KDIR= $(SCRIPTS)/kernel/bisect-series.sh

# Not part of 'make check' (its smoke cut, on the test kernel, is).
# BENCH_N, BENCH_CONNECTS and BENCH_ARGS (e.g. --configs stock-4k,cm-64k
# --workloads create) narrow it.
bench-nfs: KCONFIG := $(BENCH_KCONFIG)
bench-nfs: tools
	$(SCRIPTS)/kernel/build-kernel.sh $(KCONFIG)
	$(MAKE) KCONFIG=$(KCONFIG) module
	BENCH_N=$(or $(BENCH_N),200) KDIR=$(KDIR) $(SCRIPTS)/bench/bench-nfs.sh $(BENCH_ARGS)

fuzz:
	$(SCRIPTS)/check/fuzz.sh

# A distribution's own kernel, unchanged (scripts/distro/distro.sh): its
# release is DISTRO_RELEASE (not KERNELRELEASE, which Kbuild reads).
DISTRO_RELEASE ?=
distro:
	$(SCRIPTS)/distro/distro.sh build $(DISTRO_RELEASE)

distro-install:
	$(SCRIPTS)/distro/distro.sh install $(DISTRO_RELEASE)

distro-uninstall:
	$(SCRIPTS)/distro/distro.sh uninstall $(DISTRO_RELEASE)

distro-test: distro tools
	$(SCRIPTS)/distro/distro-test.sh $(DISTRO_RELEASE)

# Every release of scripts/distro/debian.pins, built and booted.
DISTRO_RELEASES := $(shell awk '!/^[#]/ && NF { print $$1 }' scripts/distro/debian.pins | uniq)
distro-check: tools
	@[ -n "$(DISTRO_RELEASES)" ] || { echo "distro-check: no release in scripts/distro/debian.pins"; exit 1; }
	failed=''; for r in $(DISTRO_RELEASES); do \
		{ $(SCRIPTS)/distro/distro.sh build $$r && $(SCRIPTS)/distro/distro-test.sh $$r; } || failed="$$failed $$r"; \
	done; \
	[ -z "$$failed" ] || { echo "distro-check: failed:$$failed"; exit 1; }; \
	echo "distro-check: passed: $(DISTRO_RELEASES)"

# This tree in /usr/src/rpcrdma_cm-<version> with scripts/distro/dkms.conf
# at its top, added to DKMS (version: git describe, or DKMS_VERSION=).
DKMS_VERSION ?= $(or $(shell git describe --always --dirty 2>/dev/null | tr -c '[:alnum:].\n' .),0)
DKMS_KERNELS := $(shell awk '!/^[#]/ && NF { print $$1 }' scripts/distro/debian.pins | sort -u | sed 's/[.+]/[&]/g' | paste -sd '|')
# The releases built with Rust, for dkms.conf's rpcrdma_cm.ko (evaluated
# only by distro-dkms: it may fetch their headers).
DKMS_RUST_KERNELS = $(or $(shell for r in $(DISTRO_RELEASES); do \
	[ "$$($(SCRIPTS)/distro/distro.sh rust $$r)" = y ] && echo $$r; done | sed 's/[.+]/[&]/g' | paste -sd '|'),^$$)
distro-dkms:
	-dkms remove rpcrdma_cm/$(DKMS_VERSION) --all 2>/dev/null
	rm -rf /usr/src/rpcrdma_cm-$(DKMS_VERSION)
	mkdir -p /usr/src/rpcrdma_cm-$(DKMS_VERSION)
	git ls-files -z | xargs -0 cp --parents -t /usr/src/rpcrdma_cm-$(DKMS_VERSION)
	sed -e 's/@VERSION@/$(DKMS_VERSION)/' -e 's/@KERNELS@/^($(DKMS_KERNELS))$$/' \
		-e 's/@RUST_KERNELS@/^($(DKMS_RUST_KERNELS))$$/' \
		scripts/distro/dkms.conf >/usr/src/rpcrdma_cm-$(DKMS_VERSION)/dkms.conf
	dkms add rpcrdma_cm/$(DKMS_VERSION)

clean:
	-test -d $(KDIR) && $(MAKE) -C $(KDIR) M=$(CURDIR) $(KMAKE_ARGS) clean
	-test -d $(KDIR) && $(MAKE) -C selftests/rpcrdma_cm/test_modules KDIR=$(KDIR) $(KMAKE_ARGS) clean
	cd tools && cargo clean
