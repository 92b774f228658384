#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The abstraction's KUnit tests (kernel::sunrpc::rdma_cm, suite
# rust_sunrpc_rdma_cm, CONFIG_RUST_SUNRPC_RDMA_CM_KUNIT_TEST): built into
# the 7.3 test kernels, they ran at boot; this reports each of their
# results from the kernel log as one of its own, so that a failing KUnit
# case fails the suite. Skipped on a kernel without them (6.12: the
# abstraction's tests need the kernel crate's #[kunit_tests]).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_kunit

SUITE=rust_sunrpc_rdma_cm
# The suite's block: from its "# Subtest:" line to its own result line,
# one level of indentation deeper than the suite's result.
# Timestamps and caller ids ("[    1.234567] [    T1] ") go first.
log=$(dmesg | sed -E 's/^(\[[^]]*\] *)+//' | awk -v s="$SUITE" '
	$0 ~ "^ *# Subtest: " s "$" { inside = 1; next }
	inside && $0 ~ "^ *(not )?ok [0-9]+ " s "( |$)" { print "SUITE " $0; exit }
	inside { print }')
if [ -z "$log" ] && ! dmesg | grep -q 'Linux version'; then
	# The suite ran at boot: a log that no longer reaches back there
	# cannot tell (make check runs this program early).
	ktap_exit_fail_msg "the kernel log no longer holds the boot, where the KUnit suite ran"
fi
if [ -z "$log" ]; then
	ktap_skip_all "no KUnit suite $SUITE in the kernel log (kernel without CONFIG_RUST_SUNRPC_RDMA_CM_KUNIT_TEST)"
	exit "$KSFT_SKIP"
fi
cases=$(echo "$log" | grep -E '^ *(not )?ok [0-9]+ [a-z_]+' | grep -v '^SUITE')
n=$(echo "$cases" | grep -c .)
# KUnit's own plan for the suite ("1..N").
planned=$(echo "$log" | sed -n 's/^ *1\.\.\([0-9]*\)$/\1/p' | head -1)
# The loop over the KUnit cases: one result each.
ktap_plan_counted "$n"
kunit_case() { echo "$cases" | grep -qE "^ *ok [0-9]+ $1( |\$)"; }
for name in $(echo "$cases" | sed -E 's/^ *(not )?ok [0-9]+ ([a-z_0-9]+).*/\2/'); do
	if ! kunit_case "$name"; then
		# KUnit's own lines about the case: where its assertion failed.
		echo "$log" | grep -E "^ *# ${name}[:.]" | grep -v '\.speed:' | head -10 | sed 's/^ */# /'
	fi
	ktap_test_result "KUnit $SUITE: $name" kunit_case "$name"
done
# The eight cases the patch adds, all run: a suite that lost some fails.
all_cases_ran() { [ "$n" -ge 8 ] && [ "$n" = "${planned:-0}" ]; }
ktap_test_result "the suite ran all its cases ($n of KUnit's plan ${planned:-none}; the patch has 8)" all_cases_ran
suite_ok() { echo "$log" | grep -qE "^SUITE +ok [0-9]+ $SUITE"; }
ktap_test_result "KUnit suite $SUITE passed as a whole" suite_ok
ktap_finished
