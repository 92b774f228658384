#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make bisect-series': every patch of the series of the base
# RPCRDMA_CM_KBASE names (patches/<base>/; the make target runs both bases)
# must build and behave as
# stock without the module. In a copy of the cached default kernel tree
# (whose git history is the Debian source followed by the series, applied
# with git am), check out each commit in turn, from the bare Debian source
# to the whole series, build it incrementally (only what the commit changes
# recompiles), boot it and run nfs_rdma_roundtrip.sh (NFSv3 and NFSv4.2
# over RDMA, no module). Prints KTAP, one result per step. A tree whose
# KASAN is scoped (7.3's: kasan-scope beside it) is built with the same
# make argument, and its steps boot with KASAN (kmemleak off: a step
# scans nothing).
#
# The copy lives in $RPCRDMA_CM_CACHE/bisect-<base> (2.3 GB) and is reused.
#
# BISECT_STEPS="6 9" runs only those steps (0 is the bare Debian source,
# N the tree with patches 1..N), e.g. to rerun one that a loaded machine
# failed for reasons of its own; the plan is then their number.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
# A tree whose KASAN is scoped by a make argument (build-kernel.sh's
# kasan-scope: the 7.3 test kernel) builds only with that argument:
# without it every step would rebuild every object with KASAN.
scope=()
[ ! -s "$(dirname "$kdir")/kasan-scope" ] || scope=("$(cat "$(dirname "$kdir")/kasan-scope")")
[ -f "$kdir/vmlinux" ] || rpcrdma_cm_die "no kernel at $kdir: run 'make kernel'"
KSFT_DIR=$kdir/tools/testing/selftests
# shellcheck source=/dev/null
. "$KSFT_DIR/kselftest/ktap_helpers.sh"
T=$RPCRDMA_CM_TOP/selftests/rpcrdma_cm
tree=$RPCRDMA_CM_CACHE/bisect-$RPCRDMA_CM_KBASE/linux
logs=$RPCRDMA_CM_TOP/build/bisect/$RPCRDMA_CM_KBASE
mkdir -p "$logs"

# The copy is of this tree (its configuration and objects): another one
# (a new hash of build-kernel.sh's) is copied afresh.
if [ ! -d "$tree/.git" ] || [ "$(cat "$(dirname "$tree")/from" 2>/dev/null)" != "$kdir" ]; then
	echo "bisect: copying $kdir to $tree"
	rm -rf "$(dirname "$tree")"
	mkdir -p "$(dirname "$tree")"
	cp -a "$kdir" "$tree" || rpcrdma_cm_die "copy failed"
	echo "$kdir" >"$(dirname "$tree")/from"
fi
# The copy has new inodes and ctimes: refresh the index, or git takes every
# file for changed and rewrites it at the first checkout, and every object
# is rebuilt.
git -C "$tree" update-index -q --refresh >/dev/null
# The commits of the series as applied in $kdir, oldest first.
base=$(git -C "$kdir" rev-list --max-parents=0 HEAD)
mapfile -t commits < <(git -C "$kdir" rev-list --reverse "$base..HEAD")
[ ${#commits[@]} -gt 0 ] || rpcrdma_cm_die "no patches applied in $kdir"
git -C "$tree" fetch -q "$kdir" HEAD || rpcrdma_cm_die "cannot fetch the series from $kdir"

all=("$base" "${commits[@]}")
# shellcheck disable=SC2206 # a list of step numbers, split on purpose
steps=(${BISECT_STEPS:-$(seq 0 ${#commits[@]})})
for step in "${steps[@]}"; do
	[[ "$step" =~ ^[0-9]+$ ]] && [ "$step" -le ${#commits[@]} ] ||
		rpcrdma_cm_die "BISECT_STEPS: no step '$step' (0..${#commits[@]})"
done

ktap_print_header
ktap_set_plan ${#steps[@]}
for step in "${steps[@]}"; do
	c=${all[$step]}
	subject=$(git -C "$tree" log -1 --format=%s "$c")
	log=$logs/step$step.log
	ktap_print_msg "step $step: $subject"
	if ! git -C "$tree" checkout -q "$c" >"$log" 2>&1; then
		ktap_test_fail "step $step builds and runs NFS over RDMA: $subject (checkout failed)"
		continue
	fi
	start=$(date +%s)
	# shellcheck disable=SC2046
	if ! make -s -C "$tree" -j"$(($(nproc) + 1))" $(kernel_make_args) "${scope[@]}" bzImage modules >>"$log" 2>&1; then
		tail -5 "$log" | sed 's/^/# /'
		ktap_test_fail "step $step builds and runs NFS over RDMA: $subject (build failed, $log)"
		continue
	fi
	ktap_print_msg "built in $(($(date +%s) - start)) s; booting"
	# Through tee: QEMU reopens a file given as stdout and would
	# overwrite what the build wrote to the log.
	"$RPCRDMA_CM_TOP/scripts/guest/guest.sh" --kdir "$tree" --timeout "${BISECT_GUEST_TIMEOUT:-1800}" -- \
		env "KSFT_DIR=$KSFT_DIR" "RPCRDMA_CM_KO=/nonexistent" \
		"$T/run_guest_tests.sh" nfs_rdma_roundtrip.sh 2>&1 | tee -a "$log" >/dev/null
	# A program skipped as a whole ("ok N ... # SKIP") is no pass.
	if grep -E '^ok [0-9]+ selftests:.*nfs_rdma_roundtrip' "$log" | grep -qv '# SKIP'; then
		ktap_test_pass "step $step builds and runs NFS over RDMA: $subject"
	else
		grep -E '^# (not ok|ok|Bail out|# )' "$log" | tail -5
		ktap_test_fail "step $step builds and runs NFS over RDMA: $subject ($log)"
	fi
done
ktap_finished
