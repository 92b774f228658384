#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make check': everything, in order, with one tally at the end, on both
# kernel bases: 7.3 (mainline, patches/7.3) and 6.12 (LTS, patches/6.12).
# One base runs the whole guest suite (CHECK_FULL_BASE), the other a cut
# (CHECK_CUT_PROGS; its two-guest test is 'make two-guest KBASE=...'); the
# cross rows of the interop matrix pair the two.
#
#   deps        scripts/kernel/deps.sh (idempotent; aborts the run if it fails)
#   host        cargo test --no-fail-fast of the workspace (each cargo test
#               counts; a test binary without a result is a failure)
#   script tests  scripts/tests/*.sh, the shell library's own tests with
#               stand-ins for the guests (each KTAP test counts)
#   per base:
#   kernel      the cached test kernel (one test); the full base's in the
#               foreground, the cut base's in the background (nice 19)
#               while the full base's guests run
#   module      rpcrdma_cm.ko (one test), kept in build/module/<base>/
#   lint        scripts/check/lint.sh (each check counts; fewer than its plan or
#               a non-zero exit without a failing check is a failure); the
#               host checks once, the module's clippy and checkpatch of the
#               base's series per base
#   tools       tools/target/release/rpcrdma-cm for the guests (one test)
#   selftests   the guest kselftests (each KTAP subtest counts; a program
#               that fails without a failing subtest of its own, or prints
#               no result, is a failure; a program skipped as a whole is a
#               failure unless RPCRDMA_CM_ALLOW_SKIP=prog1,prog2 allows it):
#               all of them on the full base, CHECK_CUT_PROGS on the other;
#               each base's in two one-vCPU guests side by side
#               (CHECK_LANE2_PROGS, CHECK_CUT_LANE2_PROGS in the second,
#               guest_suite says why)
#   conform mutant  scripts/check/conform-mutant.sh before the full base's
#               guest suite (one test: it builds); its conform_tool.sh then
#               runs the mutant and must catch it (one of its results;
#               not run when the build failed, so one fault counts once)
#   two-guest   scripts/guest/two-guest.sh on the full base (each KTAP test counts;
#               fewer than its plan or a non-zero exit without a failing
#               test is a failure)
#   bench-nfs-smoke  scripts/bench/bench-nfs-smoke.sh on the full base, the smoke
#               cut of 'make bench-nfs' (each KTAP test counts, as for two-guest)
#   stock kernels  scripts/kernel/build-kernel.sh stock per base, the unpatched peers
#               of the interop matrix, built incrementally from the test
#               kernel's tree (one test each), in the background after the
#               cut base's kernel (scripts/check/background.sh: the chain
#               of background builds, in a scheduler autogroup of its own)
#   interop     scripts/guest/interop.sh --cut on the full base and --cross, the
#               rows that pair 7.3 with 6.12 (each KTAP test counts); the
#               rows' files are kept in build/check/interop-kept, so that
#               'scripts/guest/interop.sh --recheck' can judge them again
#   stock conformance  scripts/guest/stock-conformance.sh on the full base: the
#               stock kernel fails exactly the checks of
#               stock_transports.sh the series fixes, and, where it has
#               KASAN (7.3), KASAN reports its over-read of short
#               private data (stock_overread.sh; each KTAP test counts)
#   judge-mutants  scripts/check/judge-mutants.sh: corrupted copies of the kept
#               rows and bench output (a swapped or size-ignoring
#               negotiation, a wrong kernel, another connection's REQ/REP,
#               an oops in a bench guest; and one for each judge alone:
#               the wire's padding, the data, the tracepoint, a side's
#               values, a stock client's value, a log after teardown) must
#               each be judged not ok, by the check named (on either
#               full base)
#   upstream-series  scripts/kernel/upstream-series.sh --preview: both series cut
#               into their mail sets, addressed, checkpatch'd and their
#               Fixes: tags checked (one result)
#
# The tally's rules are in scripts/check/tally.sh.
#
# Ends with one line "N passed, N failed, N skipped"; exits 1 if any failed.
# Logs are kept in build/check/.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tally.sh"
cd "$RPCRDMA_CM_TOP" || exit 1
require_root "make check"

# Every guest of this run carries this tag in its QEMU -name.
export RPCRDMA_CM_GUEST_TAG=check$$
logs=$RPCRDMA_CM_TOP/build/check
rm -rf "$logs"
mkdir -p "$logs"
passed=0 failed=0 skipped=0
failures=()
start=$(date +%s)

note() { echo "check: [$(($(date +%s) - start))s] $*"; }

note "deps"
if ! step_deps "$logs/deps.log"; then
	echo "0 passed, 1 failed"
	exit 1
fi

# The base that runs the whole guest suite; the other runs a cut of it
# (CHECK_CUT_PROGS below).
CHECK_FULL_BASE=${CHECK_FULL_BASE:-7.3}
case "$CHECK_FULL_BASE" in
6.12) cut_base=7.3 ;;
7.3) cut_base=6.12 ;;
*) rpcrdma_cm_die "CHECK_FULL_BASE=$CHECK_FULL_BASE: the bases are 7.3 and 6.12" ;;
esac

# The other kernels build in the background at the lowest CPU priority
# (scripts/check/background.sh: a session and scheduler autogroup of
# their own at nice 19, which is what lets the guests have the cores),
# started before the host and script tests (which leave a core idle: the
# script tests mostly wait for their stand-in guests; fresh make check of
# ec3820c waited 162 s for the cut base's kernel after the full base's
# guests) and before the full base's kernel, which builds in the foreground:
# a kernel build leaves a core idle in its serial stretches (the Rust
# crates, the link), which the background build takes; later the guests
# take the cores and the builds what the guests leave. In order, each
# after the one before: the cut base's test kernel, then (once the full
# base's kernel is built: the stock kernels build incrementally from the
# test kernels' trees) the stock kernels of both bases, then the
# distribution's modules. Each writes its exit status to
# build/check/bg-NAME.rc; wait_background reads it.
# Debian's 6.12 release in scripts/distro/debian.pins.
distro_lts=$(awk '!/^#/ && $1 ~ /^6[.]12[.]/ { print $1; exit }' scripts/distro/debian.pins)
setsid -w scripts/check/background.sh "$logs" "$CHECK_FULL_BASE" "$cut_base" "$distro_lts" \
	</dev/null >"$logs/background.log" 2>&1 &
background=$!
# kill_tree PID: PID and everything it started (the background builds when
# the run is interrupted or ends early).
kill_tree() {
	local child
	for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$child"
	done
	kill "$1" 2>/dev/null
}
# on_exit: what the run started in the background goes with it (the
# builds, a lane of guests, the distribution's guest).
lane_pid='' distro_test=''
on_exit() {
	local pid
	for pid in "$background" "$lane_pid" "$distro_test"; do
		[ -z "$pid" ] || kill_tree "$pid"
	done
}
trap on_exit EXIT
trap 'exit 130' INT TERM
note "kernel $cut_base, then stock kernel $CHECK_FULL_BASE, stock kernel $cut_base, the distribution's modules: building in the background (nice 19; logs build/check/kernel-$cut_base.log, stock-kernel-*.log, distro-build.log, distro-lts-build.log)"

note "host tests (cargo test; a few minutes when nothing is built yet)"
# --no-fail-fast: a failing test binary must not keep the later ones from
# running (and being counted).
run_step "host tests" "$logs/host.log" progress_last_line cargo test --manifest-path tools/Cargo.toml --workspace --release --no-fail-fast
tally_cargo "$logs/host.log" $?

note "script tests (scripts/tests/, no guest)"
for t in scripts/tests/*.sh; do
	name=$(basename "$t" .sh)
	"$t" >"$logs/script-$name.log" 2>&1
	tally_ktap "script $name" "$logs/script-$name.log" $?
done

# The cut the other base runs: module load and parameters, rxe, NFSv3
# and NFSv4.2 round trips, the negotiation matrix, the iWARP short private
# data and the kernel log; with them, what tests the hooks' C plumbing and
# the module's reaction to it (issue 36): the ERR_CHUNK path with the
# module, a hook's answer cross-checked by the C side, the latch, a
# hostile responder, reloads under I/O.
CHECK_CUT_PROGS=${CHECK_CUT_PROGS:-module_load.sh rxe_active.sh nfs_rdma_roundtrip.sh cm_negotiation.sh stock_transports.sh conform_tool.sh cm_err_chunk.sh cm_cross_check.sh cm_latch.sh cm_iwarp_short.sh cm_reload.sh cm_hostile_responder.sh dmesg_clean.sh}
# The programs of the second guest of each base's suite (guest_suite),
# about half of its time: of the whole suite, and of the cut. On the
# full base the second lane is the memory-safety lane: the programs that
# exercise the parse, hook, teardown and reload paths (make
# check-memory's MEMORY_PROGS), the only guest with kmemleak (which
# scans in its dmesg_clean.sh); the first runs with KASAN alone.
# kmemleak made the programs about 1.7 times slower under TCG (each
# prints its time, "# NAME: N s" in build/check/selftests-<base>-lane*.log:
# cm_reload.sh 164 s against 86, cm_responder_decode.sh 88 against 28,
# conform_tool.sh 352 against 277), so the lanes are balanced by what the
# first takes: cm_negotiation.sh's matrix moved there (128 s with
# kmemleak, at ec3820c) when conform_tool.sh's judging stopped starting
# jq for every check (lane 1 had 612 s of programs, lane 2 640; with
# both changes, fresh make check of 88207ff: 488 s and 479 s). The 6.12
# cut's lanes had 174 s and 130 s there: cm_err_chunk.sh (26 s) moved to
# the second. cm_recv_follow.sh (95 s without kmemleak) is in the second:
# it allocates, shrinks and frees Receive buffers on both sides.
CHECK_LANE2_PROGS=${CHECK_LANE2_PROGS:-cm_iwarp_short.sh cm_hostile_responder.sh cm_storm.sh cm_long_answer.sh cm_reload.sh cm_fault_injection.sh debugfs_unload.sh cm_cross_check.sh cm_backchannel.sh cm_recv_follow.sh}
CHECK_CUT_LANE2_PROGS=${CHECK_CUT_LANE2_PROGS:-conform_tool.sh cm_latch.sh cm_reload.sh cm_hostile_responder.sh cm_err_chunk.sh}

declare -A built=()

# build_base BASE LINT_SCOPE: the module of BASE, what it links, and the lint
# (its kernel is built by then); marks BASE built when kernel and module are.
build_base() {
	local base=$1 scope=$2 kernel_rc=$3 module_rc objects want kdir lint_rc
	kbase_set "$base"
	note "module $base"
	make -s KBASE="$base" module >"$logs/module-$base.log" 2>&1
	module_rc=$?
	count "module build $base (build/check/module-$base.log)" $module_rc
	# What the module links: on a kernel whose Rust crate has debugfs and
	# module parameters (7.3), its Rust crate alone, no C file; otherwise
	# the crate and the C shim.
	# (Kbuild writes them rust/x.o on 7.3, $PWD/rust/x.o on 6.12.)
	objects=$(tr -s ' ' '\n' <rust/rpcrdma_cm.mod 2>/dev/null | grep . |
		sed -e "s|^$PWD/||" -e 's|^\./||' -e 's|^rust/||' | sort | paste -sd ' ')
	want="rpcrdma_cm_main.o rpcrdma_cm_shim.o"
	kdir=$(scripts/kernel/build-kernel.sh --print-dir)
	[ -f "$kdir/rust/kernel/debugfs.rs" ] && [ -f "$kdir/rust/kernel/module_param.rs" ] &&
		want="rpcrdma_cm_main.o"
	[ "$objects" = "$want" ]
	local objects_rc=$?
	[ $objects_rc = 0 ] || echo "check: rpcrdma_cm.mod lists '$objects', want '$want'"
	count "module $base links $want" $objects_rc
	[ "$kernel_rc" -eq 0 ] && [ $module_rc -eq 0 ] && built[$base]=1

	note "lint $base"
	run_step "lint $base" "$logs/lint-$base.log" progress_last_line env LINT_SCOPE="$scope" scripts/check/lint.sh
	lint_rc=$?
	sed 's/^ok - /ok 0 /; s/^not ok - /not ok 0 /' "$logs/lint-$base.log" >"$logs/lint-$base.ktap"
	tally_ktap "lint $base" "$logs/lint-$base.ktap" "$lint_rc"
}


# The full base's kernel in the foreground: everything of that base waits
# for it.
kbase_set "$CHECK_FULL_BASE"
note "kernel $CHECK_FULL_BASE"
step_kernel "$logs/kernel-$CHECK_FULL_BASE.log"
full_kernel_rc=$?
echo $full_kernel_rc >"$logs/fg-kernel.rc"
count "kernel build $CHECK_FULL_BASE (build/check/kernel-$CHECK_FULL_BASE.log)" $full_kernel_rc
build_base "$CHECK_FULL_BASE" all $full_kernel_rc

# wait_background NAME: the background step NAME's exit status (1 if it
# never ran: the chain stopped before it), once it is done.
wait_background() {
	local rc_file=$logs/bg-$1.rc
	while [ ! -f "$rc_file" ] && kill -0 "$background" 2>/dev/null; do
		sleep 2
	done
	[ -f "$rc_file" ] || { echo "check: background step $1 never ran" >&2; return 1; }
	return "$(cat "$rc_file")"
}

note "tools"
# The guest tests run tools/target/release/rpcrdma-cm (cm_tools.sh, two-guest).
make -s tools >"$logs/tools.log" 2>&1
tools_rc=$?
echo $tools_rc >"$logs/fg-tools.rc"
count "tools build (build/check/tools.log)" $tools_rc

# Debian's own 7.3 kernel image, unchanged, with the modules built for it
# against its headers (scripts/distro/): one guest of one vCPU, started
# as soon as the background chain has built the modules (and the
# foreground the rpcrdma-cm tool its programs run), whatever the
# foreground is running then (on an empty cache, the interop cut's or
# cross rows' pair of guests: three vCPUs on the two cores for a minute
# or two). Fresh make check of e67cf7a started it after the cross rows,
# 66 s after its modules were built, and at the end waited 83 s for it
# with one core idle. The result is tallied near the end (the
# distribution kernel steps below).
(
	while { [ ! -f "$logs/bg-distro.rc" ] || [ ! -f "$logs/fg-tools.rc" ]; } &&
		kill -0 "$background" 2>/dev/null; do
		sleep 2
	done
	[ "$(cat "$logs/bg-distro.rc" 2>/dev/null)" = 0 ] || exit 0
	echo "$(($(date +%s) - start))" >"$logs/distro-test.started"
	RPCRDMA_CM_GUEST_CPUS=1 RPCRDMA_CM_NEGOTIATION_SIZES=${RPCRDMA_CM_NEGOTIATION_SIZES:-1024 65536} \
		scripts/distro/distro-test.sh >"$logs/distro-test.log" 2>&1
	echo $? >"$logs/distro-test.rc"
) </dev/null &
distro_test=$!

# lane_kmemleak LANE: whether LANE's guest boots with kmemleak (guest.sh's
# RPCRDMA_CM_GUEST_KMEMLEAK): in the second lane only, the memory-safety
# lane (CHECK_LANE2_PROGS), whatever attempt it is.
lane_kmemleak() {
	if [ "$1" = lane2 ]; then echo on; else echo off; fi
}

# guest_suite BASE WHAT LANE2 PROGS...: the guest selftests of BASE (all
# with no PROGS), those named in LANE2 in a second guest, tallied.
guest_suite() {
	local base=$1 what=$2 lane2_progs=$3 programs p lane1=() lane2=() dmesg=()
	shift 3
	kbase_set "$base"
	note "selftests $base ($what)"
	if [ $# -gt 0 ]; then
		programs=("$@")
	else
		read -r -a programs <<<"$(sed -n 's/^TEST_PROGS := //p' selftests/rpcrdma_cm/Makefile)"
	fi
	# Two lanes, two guests of one vCPU side by side: LANE2's programs in
	# the second, the rest in the first, dmesg_clean.sh last in both (each
	# guest's own kernel log). Measured on idle cores: three programs in
	# one two-vCPU guest 157 s, split over two one-vCPU guests 115 s (a
	# tie, 72 s against 69, where a background build takes what the
	# guests leave); two two-vCPU guests side by side took 232 s (TCG's
	# vCPUs preempted by each other): never more vCPUs than cores
	# (measurements.rst).
	for p in "${programs[@]}"; do
		if [ "$p" = dmesg_clean.sh ]; then
			dmesg=(dmesg_clean.sh)
		elif [[ " $lane2_progs " == *" $p "* ]]; then
			lane2+=("$p")
		else
			lane1+=("$p")
		fi
	done
	# The smoke cuts: the reload stress at 20 rmmod/insmod cycles under I/O
	# (cm_reload.sh's own default, 50, in make selftests, check-debug and
	# by hand), and the negotiation matrix at its corners (1 KB and 64 KB
	# each way) with the asymmetric pair (the 4x4 matrix by hand), about
	# 4 minutes less under TCG.
	local -x RPCRDMA_CM_RELOAD_CYCLES=${RPCRDMA_CM_RELOAD_CYCLES:-20}
	local -x RPCRDMA_CM_NEGOTIATION_SIZES=${RPCRDMA_CM_NEGOTIATION_SIZES:-1024 65536}
	if [ ${#lane2[@]} -gt 0 ] && [ ${#lane1[@]} -gt 0 ]; then
		local -x RPCRDMA_CM_GUEST_CPUS=1
		RPCRDMA_CM_GUEST_KMEMLEAK=$(lane_kmemleak lane2) run_step "selftests $base, lane 2" "$logs/selftests-$base-lane2.log" progress_ktap \
			scripts/guest/selftests.sh "${lane2[@]}" "${dmesg[@]}" &
		lane_pid=$!
		RPCRDMA_CM_GUEST_KMEMLEAK=$(lane_kmemleak lane1) run_step "selftests $base, lane 1" "$logs/selftests-$base-lane1.log" progress_ktap \
			scripts/guest/selftests.sh "${lane1[@]}" "${dmesg[@]}"
		echo $? >"$logs/selftests-$base-lane1.rc"
		wait "$lane_pid"
		echo $? >"$logs/selftests-$base-lane2.rc"
		lane_pid=
		rerun_lane "$base" lane1 "${lane1[@]}" "${dmesg[@]}"
		rerun_lane "$base" lane2 "${lane2[@]}" "${dmesg[@]}"
		tally_lane "$base" lane1 "${lane1[@]}" "${dmesg[@]}"
		tally_lane "$base" lane2 "${lane2[@]}" "${dmesg[@]}"
		# One log of the base for what reads it (conform_table.py).
		cat "$logs/selftests-$base-lane1.log" "$logs/selftests-$base-lane2.log" >"$logs/selftests-$base.log"
	else
		run_step "selftests $base" "$logs/selftests-$base.log" progress_ktap \
			scripts/guest/selftests.sh "${lane1[@]}" "${lane2[@]}" "${dmesg[@]}"
		echo $? >"$logs/selftests-$base.rc"
		tally_lane "$base" "" "${lane1[@]}" "${lane2[@]}" "${dmesg[@]}"
	fi
}

# rerun_lane BASE LANE PROGS...: a lane whose guest failed before the
# runner started (no "# selftests:" line in its log) runs once more,
# alone, with two vCPUs, so that its programs still give their results;
# its first log is kept beside it (.first.log) and its end printed last
# (log_tails). The first attempt is a failure of its own unless its log
# names a cause on the host, before any guest ran (HOST_CAUSES: the test
# modules or virtme-ng's module tree not built, no kernel, QEMU not
# starting): a guest that booted the kernel under test and died or hung
# before the runner is the kernel's failure, whatever the second attempt
# does. A lane that ran any program is never run again: its results
# stand. Seen once in CI (stop 44): one lane's 17 programs had no result,
# the other lane's all passed, and CI's output had no more.
HOST_CAUSES='could not build |virtme-prep-kdir-mods failed|no kernel in |missing: run |qemu-system[^ ]*: '
rerun_lane() {
	local base=$1 lane=$2 name=selftests-$1-$2 what="selftests $1, $2"
	shift 2
	[ "$(cat "$logs/$name.rc")" -ne 0 ] || return 0
	! grep -q '^# selftests: ' "$logs/$name.log" || return 0
	mv "$logs/$name.log" "$logs/$name.first.log"
	log_tails+=("$name.first")
	if grep -qE "$HOST_CAUSES" "$logs/$name.first.log"; then
		note "$what: the guest did not start, a cause on the host (build/check/$name.first.log); once more, alone"
	else
		count "$what: the guest failed before its runner started (build/check/$name.first.log; run again alone, its results below)" 1
		note "$what: the guest failed before its runner started (build/check/$name.first.log, counted); once more, alone"
	fi
	local -x RPCRDMA_CM_GUEST_CPUS=2
	local -x RPCRDMA_CM_GUEST_KMEMLEAK
	RPCRDMA_CM_GUEST_KMEMLEAK=$(lane_kmemleak "$lane")
	run_step "$what (again)" "$logs/$name.log" progress_ktap scripts/guest/selftests.sh "$@"
	echo $? >"$logs/$name.rc"
}

# tally_lane BASE LANE PROGS...: the selftests log of BASE's LANE (none:
# the whole suite in one guest) and its exit status (.rc beside it),
# tallied with the programs it ran.
tally_lane() {
	local base=$1 lane=$2 name=selftests-$1${2:+-$2} failed_before=$failed st_rc
	shift 2
	st_rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
	# Each subtest counts; each program's result is paired with its own
	# subtests; a whole-program skip fails unless RPCRDMA_CM_ALLOW_SKIP
	# names the program.
	# debugfs_unload.sh skips as a whole on a kernel whose Rust crate has
	# no debugfs (6.12), cm_fault_injection.sh on a kernel without
	# failslab (6.12's default variant, scripts/kernel/kconfig/base-7.3.config says
	# why), cm_in_tree.sh on one without the in-tree module and
	# cm_kunit.sh on one without the series' KUnit suites (it skips only
	# where neither is; 6.12): allowed there only.
	local allow=${RPCRDMA_CM_ALLOW_SKIP:-} tree
	tree=$(scripts/kernel/build-kernel.sh --print-dir)
	[ -f "$tree/rust/kernel/debugfs.rs" ] ||
		allow="${allow:+$allow,}debugfs_unload.sh"
	grep -qx 'CONFIG_FAILSLAB=y' "$tree/.config" ||
		allow="${allow:+$allow,}cm_fault_injection.sh"
	# cm_in_tree.sh on a kernel without the in-tree module (6.12: the
	# series' in-tree user is a mainline patch only).
	grep -qx 'CONFIG_SUNRPC_XPRT_RDMA_CM=m' "$tree/.config" ||
		allow="${allow:+$allow,}cm_in_tree.sh"
	grep -qx 'CONFIG_RUST_SUNRPC_RDMA_CM_KUNIT_TEST=y' "$tree/.config" ||
		allow="${allow:+$allow,}cm_kunit.sh"
	RPCRDMA_CM_ALLOW_SKIP=$allow tally_selftests "$logs/$name.log" "$@"
	# The guest's own end (selftests.sh says why on its last lines).
	if [ "$st_rc" -ne 0 ] && [ "$failed" -eq "$failed_before" ]; then
		count "selftests $base${lane:+ $lane}: guest or runner failed (build/check/$name.log)" 1
	fi
	# The log's end where a program of the lane gave no result (the
	# guest died or timed out): what CI's output can show of why.
	[ "$not_run" -eq 0 ] || log_tails+=("$name")
}
# The guest logs whose end make check prints last (log_tails): where a
# whole lane's programs did not run, the log's end is all a reader of
# CI's output (its last lines) has to tell why.
log_tails=()

if [ -n "${built[$CHECK_FULL_BASE]:-}" ]; then
	# A broken conform that conform_tool.sh must catch (about 40 s to
	# build when nothing is; its build failing is a failure, not a skip).
	note "conform mutant (scripts/check/conform-mutant.sh)"
	mutant=$RPCRDMA_CM_TOP/build/conform-mutant/rpcrdma-cm
	rm -f "$mutant"
	scripts/check/conform-mutant.sh "$mutant" >"$logs/conform-mutant.log" 2>&1
	mutant_rc=$?
	count "conform mutant built (build/check/conform-mutant.log)" $mutant_rc
	[ $mutant_rc = 0 ] || mutant=
	RPCRDMA_CM_CONFORM_MUTANT=$mutant \
		guest_suite "$CHECK_FULL_BASE" "the whole suite, two guests side by side, about 13 minutes under TCG" \
			"$CHECK_LANE2_PROGS"
else
	count "guest tests $CHECK_FULL_BASE (no kernel or module)" 1
fi
kbase_set "$CHECK_FULL_BASE"
if [ -n "${built[$CHECK_FULL_BASE]:-}" ]; then
	note "two-guest test $CHECK_FULL_BASE (two guests, about 3 minutes under TCG)"
	run_step "two-guest $CHECK_FULL_BASE" "$logs/two-guest-$CHECK_FULL_BASE.log" progress_ktap scripts/guest/two-guest.sh
	tally_ktap "two-guest $CHECK_FULL_BASE" "$logs/two-guest-$CHECK_FULL_BASE.log" $?
	note "bench-nfs smoke $CHECK_FULL_BASE (two guest pairs, about 2 minutes under TCG, 4 on busy cores)"
	run_step "bench-nfs smoke" "$logs/bench-nfs-smoke.log" progress_ktap scripts/bench/bench-nfs-smoke.sh
	tally_ktap bench-nfs-smoke "$logs/bench-nfs-smoke.log" $?
fi

note "kernel $cut_base (waiting for the background build)"
wait_background "kernel-$cut_base"
cut_kernel_rc=$?
tail -n 1 "$logs/kernel-$cut_base.log"
count "kernel build $cut_base (build/check/kernel-$cut_base.log)" $cut_kernel_rc
build_base "$cut_base" kernel $cut_kernel_rc

if [ -n "${built[$cut_base]:-}" ]; then
	# stock_transports.sh over rxe only there (siw: the full base's
	# suite and make check-lts), about 40 s less.
	reply_transports_was=${RPCRDMA_CM_REPLY_TRANSPORTS-}
	export RPCRDMA_CM_REPLY_TRANSPORTS=${RPCRDMA_CM_REPLY_TRANSPORTS:-rxe}
	conform_transports_was=${RPCRDMA_CM_CONFORM_TRANSPORTS-}
	export RPCRDMA_CM_CONFORM_TRANSPORTS=${RPCRDMA_CM_CONFORM_TRANSPORTS:-rxe}
	conform_responder_was=${RPCRDMA_CM_CONFORM_RESPONDER-}
	export RPCRDMA_CM_CONFORM_RESPONDER=${RPCRDMA_CM_CONFORM_RESPONDER:-no}
	# shellcheck disable=SC2086
	guest_suite "$cut_base" "the cut: $CHECK_CUT_PROGS" "$CHECK_CUT_LANE2_PROGS" $CHECK_CUT_PROGS
	RPCRDMA_CM_REPLY_TRANSPORTS=$reply_transports_was
	RPCRDMA_CM_CONFORM_TRANSPORTS=$conform_transports_was
	RPCRDMA_CM_CONFORM_RESPONDER=$conform_responder_was
else
	count "guest tests $cut_base (no kernel or module)" 1
fi

declare -A stock=()
for base in "$CHECK_FULL_BASE" "$cut_base"; do
	note "stock kernel $base (waiting for the background build)"
	wait_background "stock-$base"
	stock_rc=$?
	tail -n 1 "$logs/stock-kernel-$base.log" 2>/dev/null
	count "stock kernel build $base (build/check/stock-kernel-$base.log)" $stock_rc
	[ $stock_rc -eq 0 ] && stock[$base]=1
done

# interop_rows WHICH TABLE WHAT: scripts/guest/interop.sh --WHICH (cut or cross),
# its table in build/check/TABLE, its rows kept in build/check/interop-kept;
# tallied as interop-WHICH.
interop_rows() {
	note "interop $1 ($(scripts/guest/interop.sh "--$1" --list | grep -c .) pairs of guests, $3)"
	run_step "interop $1" "$logs/interop-$1.log" progress_ktap \
		env INTEROP_TABLE="$logs/$2" INTEROP_KEEP="$logs/interop-kept" scripts/guest/interop.sh "--$1"
	tally_ktap "interop-$1" "$logs/interop-$1.log" $?
}
kbase_set "$CHECK_FULL_BASE"
if [ -n "${stock[$CHECK_FULL_BASE]:-}" ]; then
	interop_rows cut interop-table.txt "$CHECK_FULL_BASE, about a minute each under TCG"
else
	count "interop cut (no stock $CHECK_FULL_BASE kernel)" 1
fi
if [ -n "${stock[7.3]:-}" ] && [ -n "${stock[6.12]:-}" ]; then
	interop_rows cross interop-cross-table.txt "7.3 with 6.12"
else
	count "interop across the bases (a stock kernel is missing)" 1
fi

# The distribution's modules (their guest started when they were built:
# after the tools step above).
note "distribution kernel: the modules (waiting for the background build)"
wait_background distro
distro_rc=$?
tail -n 3 "$logs/distro-build.log"
count "make distro: rpcrdma.ko and rpcrdma_cm.ko for Debian's 7.3 kernel (build/check/distro-build.log)" $distro_rc
if [ $distro_rc -eq 0 ]; then
	# The guest starts two seconds after the modules at most.
	while [ ! -f "$logs/distro-test.started" ] && kill -0 "$distro_test" 2>/dev/null; do
		sleep 1
	done
	note "distribution kernel: Debian's 7.3 image booted with them (one guest, about 4 minutes under TCG, started at $(cat "$logs/distro-test.started" 2>/dev/null || echo '?') s, in the background)"
fi

# The stock-conformance tests can fail: stock_transports.sh on the
# unpatched kernel of the full base fails exactly the checks the series
# fixes (scripts/guest/stock-conformance.sh; one guest, about 2 minutes).
if [ -n "${stock[$CHECK_FULL_BASE]:-}" ]; then
	kbase_set "$CHECK_FULL_BASE"
	note "stock conformance on the unpatched $CHECK_FULL_BASE kernel (one guest, about 2 minutes under TCG)"
	run_step "stock conformance" "$logs/stock-conformance.log" progress_ktap \
		env RPCRDMA_CM_GUEST_CPUS=1 STOCK_CONFORMANCE_KEEP="$logs/stock-conformance-guest.log" \
		scripts/guest/stock-conformance.sh
	tally_ktap stock-conformance "$logs/stock-conformance.log" $?
else
	count "stock conformance (no stock $CHECK_FULL_BASE kernel)" 1
fi

# While the distribution's guest may still run on the other core, the
# host-only checks.
# The judges can fail: corrupted copies of the rows and the bench output
# this run kept must each be judged not ok (rows of the full base).
# Without the rows or the bench output (their steps failed, counted
# there) one failure, not one for each mutant.
if [ -d "$logs/interop-kept" ] && [ -d "$logs/bench-smoke" ]; then
	note "the judges can fail (scripts/check/judge-mutants.sh: corrupted copies of the kept rows, seconds)"
	scripts/check/judge-mutants.sh "$logs/interop-kept" "$logs/bench-smoke" "$CHECK_FULL_BASE" \
		>"$logs/judge-mutants.log" 2>&1
	tally_ktap judge-mutants "$logs/judge-mutants.log" $?
else
	count "the judges can fail: no kept interop rows or bench smoke output to corrupt" 1
fi

# The mail the series would be: 'make upstream-series --preview' on both
# bases' trees (recipients, checkpatch, Fixes: against the evidence), so
# that the target cannot rot. One result.
note "upstream series preview (scripts/kernel/upstream-series.sh --preview, seconds)"
scripts/kernel/upstream-series.sh --preview 7.3 6.12 >"$logs/upstream-series.log" 2>&1
count "upstream-series --preview: both series cut, addressed and checked (build/check/upstream-series.log)" $?

if [ $distro_rc -eq 0 ]; then
	note "distribution kernel: waiting for its guest"
	wait "$distro_test"
	distro_test_rc=$(cat "$logs/distro-test.rc" 2>/dev/null || echo 1)
	grep -E '^(not )?ok [0-9]+ ' "$logs/distro-test.log" | tail -n 12
	# shellcheck disable=SC2046 # the program names, one word each
	tally_selftests "$logs/distro-test.log" $(scripts/distro/distro-test.sh --list)
	[ "$distro_test_rc" -eq 0 ] || count "distro test: guest or runner failed (build/check/distro-test.log)" 1
fi
wait_background distro-lts
distro_lts_rc=$?
tail -n 1 "$logs/distro-lts-build.log"
count "make distro ${distro_lts:-(no 6.12 release pinned)}: rpcrdma.ko (the 6.12 series' C patches) for Debian 12's 6.12 kernel (build/check/distro-lts-build.log; booted by make distro-check)" $distro_lts_rc
wait "$background"

# The conformance-by-server table of Documentation/tools.rst, from this
# run's conform_tool.sh verdicts ('make conform-table' copies it there).
scripts/check/conform_table.py "$logs" --commit "$(git rev-parse --short HEAD 2>/dev/null)" \
	>"$logs/conformance-by-server.inc" 2>"$logs/conform-table.log"
count "the conformance-by-server table made from this run's conform verdicts (build/check/conformance-by-server.inc)" $?

note "done in $(($(date +%s) - start)) s"
for f in "${failures[@]}"; do
	echo "FAILED: $f"
done
for f in "${log_tails[@]}"; do
	echo "check: the last lines of build/check/$f.log (a guest that failed):"
	tail -n 12 "$logs/$f.log" | cut -c1-200 | sed 's/^/  | /'
done
if pgrep -f "qemu-system.*-name [^ ]*-$RPCRDMA_CM_GUEST_TAG" >/dev/null; then
	echo "check: QEMU processes of this run left behind!" >&2
	count "no QEMU process outlives the run" 1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
