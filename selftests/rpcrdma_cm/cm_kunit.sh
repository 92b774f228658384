#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' KUnit suites, each case reported from the kernel log as a
# result of its own, so that a failing KUnit case fails this program:
# - rust_sunrpc_rdma_cm, the abstraction's (kernel::sunrpc::rdma_cm,
#   CONFIG_RUST_SUNRPC_RDMA_CM_KUNIT_TEST): built into the 7.3 test
#   kernels, it ran at boot;
# - rpcrdma_cm_hook, the C checks of cm_hook.c (the private data search,
#   the bound RFC 8797 gives, the check of a hook's answer;
#   CONFIG_SUNRPC_XPRT_RDMA_KUNIT_TEST): in rpcrdma.ko, it runs when
#   rpcrdma loads (loaded here if it is not; reloaded with rmmod and
#   modprobe, nothing else unloaded, if its run is no longer in the log
#   and nothing uses rpcrdma).
# The 7.3 test kernels have both (scripts/kernel/kconfig/series-7.3.config):
# a kernel with one and not the other fails. Skipped on a kernel with
# neither (6.12: the series' tests are mainline patches only).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_kunit

# suite_log SUITE: the last run of SUITE in the kernel log, from its
# "# Subtest:" line to its own result line (prefixed "SUITE "), one level
# of indentation deeper than the suite's result. Timestamps and caller
# ids ("[    1.234567] [    T1] ") go first.
suite_log() {
	dmesg | sed -E 's/^(\[[^]]*\] *)+//' | awk -v s="$1" '
		$0 ~ "^ *# Subtest: " s "$" { inside = 1; cur = ""; next }
		inside && $0 ~ "^ *(not )?ok [0-9]+ " s "( |$)" { last = cur "SUITE " $0 "\n"; inside = 0; next }
		inside { cur = cur $0 "\n" }
		END { printf "%s", last }'
}

if [ -z "$(suite_log rust_sunrpc_rdma_cm)" ] && ! dmesg | grep -q 'Linux version'; then
	# The Rust suite ran at boot: a log that no longer reaches back there
	# cannot tell (make check runs this program early).
	ktap_exit_fail_msg "the kernel log no longer holds the boot, where the Rust KUnit suite ran"
fi
# rpcrdma's suite runs when rpcrdma loads.
reload_note=''
if ! lsmod | grep -q '^rpcrdma '; then
	modprobe rpcrdma || ktap_exit_fail_msg "modprobe rpcrdma failed"
elif [ -z "$(suite_log rpcrdma_cm_hook)" ]; then
	if rmmod rpcrdma 2>/dev/null; then
		modprobe rpcrdma || ktap_exit_fail_msg "modprobe rpcrdma failed"
	else
		reload_note="; rpcrdma is in use and could not be reloaded to run it again"
	fi
fi

# Each suite with the number of cases its patch adds.
SUITES="rust_sunrpc_rdma_cm 8
rpcrdma_cm_hook 7"
declare -A LOG CASES
found=0 total=0
while read -r suite _; do
	LOG[$suite]=$(suite_log "$suite")
	[ -n "${LOG[$suite]}" ] || continue
	CASES[$suite]=$(echo "${LOG[$suite]}" | grep -E '^ *(not )?ok [0-9]+ [a-z_]+' | grep -v '^SUITE')
	found=$((found + 1))
	# One result per case, and two for the suite.
	total=$((total + $(echo "${CASES[$suite]}" | grep -c .) + 2))
done <<<"$SUITES"
if [ $found = 0 ]; then
	ktap_skip_all "no KUnit suite of the series in the kernel log (a kernel without CONFIG_RUST_SUNRPC_RDMA_CM_KUNIT_TEST and CONFIG_SUNRPC_XPRT_RDMA_KUNIT_TEST)"
	exit "$KSFT_SKIP"
fi
# Both or neither: one result for each suite missing beside the other.
total=$((total + $(echo "$SUITES" | grep -c .) - found))
ktap_plan_counted "$total"

# report_suite SUITE CASES: each KUnit case of SUITE as a result, then
# that all its CASES (the patch's count) ran and the suite passed.
report_suite() {
	local suite=$1 want=$2 log=${LOG[$1]} cases=${CASES[$1]} name n planned
	kunit_case() { echo "$cases" | grep -qE "^ *ok [0-9]+ $1( |\$)"; }
	for name in $(echo "$cases" | sed -E 's/^ *(not )?ok [0-9]+ ([a-z_0-9]+).*/\2/'); do
		if ! kunit_case "$name"; then
			# KUnit's own lines about the case: where its expectation failed.
			echo "$log" | grep -E "^ *# ${name}[:.]" | grep -v '\.speed:' | head -10 | sed 's/^ */# /'
		fi
		ktap_test_result "KUnit $suite: $name" kunit_case "$name"
	done
	n=$(echo "$cases" | grep -c .)
	# KUnit's own plan for the suite ("1..N").
	planned=$(echo "$log" | sed -n 's/^ *1\.\.\([0-9]*\)$/\1/p' | head -1)
	all_cases_ran() { [ "$n" -ge "$want" ] && [ "$n" = "${planned:-0}" ]; }
	ktap_test_result "KUnit $suite ran all its cases ($n of KUnit's plan ${planned:-none}; the patch has $want)" \
		all_cases_ran
	suite_ok() { echo "$log" | grep -qE "^SUITE +ok [0-9]+ $suite"; }
	ktap_test_result "KUnit suite $suite passed as a whole" suite_ok
}

while read -r suite want; do
	if [ -n "${LOG[$suite]}" ]; then
		report_suite "$suite" "$want"
	else
		ktap_test_result "KUnit suite $suite in the kernel log (the other suite of the series is$reload_note)" false
	fi
done <<<"$SUITES"
ktap_finished
