#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The stock-conformance tests can fail: selftests/rpcrdma_cm/
# stock_transports.sh (RFC 8797 in svcrdma itself, no module) on the
# unpatched kernel of RPCRDMA_CM_KBASE (scripts/kernel/build-kernel.sh stock;
# it must be built). The series' kernel passes every subtest (the guest
# suite runs the program there); the stock kernel must fail exactly the
# checks the series fixes, per transport (rxe, siw):
#   - the Accept to a requester offering Remote Invalidation says flags 01
#     (stock: 00, though it sends With Invalidate);
#   - a 3000-octet Reply to a 1 KB requester is ERR_CHUNK (stock: inline);
#   - one octet above the 1 KB threshold is ERR_CHUNK (stock: inline);
#   - a 6000-octet Reply, above the server's own 4 KB, is ERR_CHUNK for a
#     16 KB requester and for one that sent nothing (stock: inline, it
#     maps onto few Send SGEs);
#   - a client at rdma_max_inline_read 5119 takes 4096 as its receive
#     threshold from an 8 KB server, as it advertised (stock: 5119);
#   - with max_req_size 5000, a 4300-octet Reply to a 16 KB requester is
#     ERR_CHUNK, the Accept having advertised 4 KB (stock: inline; rxe
#     only);
# and pass the others (the grace period, the Replies that fit, a requester
# that sent nothing). Prints KTAP, one test per subtest of the program.
# On a stock kernel with KASAN (7.3's test kernels have it in the RDMA
# paths), selftests/rpcrdma_cm/stock_overread.sh runs too, the guest
# booted with kasan_multi_shot: KASAN must report the server's reads past
# 1 and 3 octets of private data over siw (the over-read the series
# fixes), and none for 7. conform_tool.sh's short requests over siw have
# KASAN report the same over-read earlier in that guest (nothing judges
# its log for reports): without kasan_multi_shot KASAN would print only
# that first report, and stock_overread.sh would see none.
#
#   scripts/guest/stock-conformance.sh   (STOCK_KDIR: another unpatched tree)
#   STOCK_CONFORMANCE_LOG=SAVED scripts/guest/stock-conformance.sh   (judge a saved run)
#   STOCK_CONFORMANCE_KEEP=FILE: keep the guest's output there (make check:
#   scripts/check/conform_table.py reads the stock kernel's conform verdicts)
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${STOCK_KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir stock)}
[ -f "$kdir/arch/x86/boot/bzImage" ] || rpcrdma_cm_die "no stock $RPCRDMA_CM_KBASE kernel in $kdir: run 'make stock-kernel'"
# shellcheck source=/dev/null
. "$kdir/tools/testing/selftests/kselftest/ktap_helpers.sh"
# 1 when the stock kernel has KASAN: stock_overread.sh must then run (a
# saved log: when it ran there).
kasan=0
if [ -n "${STOCK_CONFORMANCE_LOG:-}" ]; then
	! grep -q 'selftests: .*stock_overread.sh' "$STOCK_CONFORMANCE_LOG" || kasan=1
else
	! grep -q '^CONFIG_KASAN=y' "$kdir/.config" || kasan=1
fi
log=$(mktemp /tmp/rpcrdma-cm-stock-conformance.XXXXXX)
trap 'rm -f "$log" "$log.section"' EXIT

# STOCK_CONFORMANCE_LOG: judge that saved run of the program instead of
# booting the stock kernel (for the judge's own tests).
if [ -n "${STOCK_CONFORMANCE_LOG:-}" ]; then
	cp "$STOCK_CONFORMANCE_LOG" "$log"
else
	progs=(stock_transports.sh conform_tool.sh)
	append=${RPCRDMA_CM_GUEST_APPEND:-}
	if [ $kasan = 1 ]; then
		progs+=(stock_overread.sh)
		append="${append:+$append }kasan_multi_shot"
	fi
	KDIR=$kdir RPCRDMA_CM_CONFORM_RESPONDER=no RPCRDMA_CM_GUEST_APPEND=$append \
		RPCRDMA_CM_STOCK_OVERREAD_REQUIRED=$kasan \
		"$RPCRDMA_CM_TOP/scripts/guest/selftests.sh" "${progs[@]}" >"$log" 2>&1
fi
[ -z "${STOCK_CONFORMANCE_KEEP:-}" ] || cp "$log" "$STOCK_CONFORMANCE_KEEP"
# The log without the console's carriage returns (read whole by grep -q
# below: a grep -q at the end of a pipe under pipefail would fail the
# pipe when it stops reading early).
tr -d '\r' <"$log" >"$log.clean" && mv "$log.clean" "$log"
# The subtests the program printed: "ok|not ok NAME", in order.
results=$(tr -d '\r' <"$log" | sed -n 's/^# \(not ok\|ok\) [0-9]\{1,\} \(.*\)$/\1 \2/p')

ktap_print_header
ktap_set_plan 26
ktap_print_msg "stock $RPCRDMA_CM_KBASE kernel: $kdir"
# No subtest came out: the guest's own words say why.
if [ -z "$results" ]; then
	ktap_print_msg "the guest printed no subtest; the end of its output:"
	tail -n 40 "$log" | sed 's/^/# /'
fi
# outcome NAME: "ok" or "not ok" as the program said, "missing" if it did not.
outcome() {
	local line
	line=$(echo "$results" | grep -F -x -e "ok $1" -e "not ok $1" | head -n 1)
	case "$line" in
	"not ok "*) echo "not ok" ;;
	"ok "*) echo ok ;;
	*) echo missing ;;
	esac
}
# judge N WANT: the program's subtest NAMES[N] came out WANT ("ok" or
# "not ok") on stock. (ktap_test_result splits its command's arguments on
# spaces: the names go by index.)
NAMES=()
judge() {
	local name=${NAMES[$1]} got want=$2
	[ "$want" = not ] && want="not ok"
	got=$(outcome "$name")
	[ "$got" = "$want" ] || ktap_print_msg "'$name': $got on the stock kernel, want $want"
	[ "$got" = "$want" ]
}
# check WANT DESCRIPTION SUBTEST: one KTAP test.
check() {
	NAMES+=("$3")
	ktap_test_result "$2" judge $((${#NAMES[@]} - 1)) "$1"
}
check ok "stock: the grace period ends (passes)" \
	"the server's grace period ends: a 500-octet READ succeeds"
check not "stock: a client at rdma_max_inline_read 5119 keeps 5119, though it advertised 4096 (fails)" \
	"a client with rdma_max_inline_read 5119 (advertised 4 KB) takes 4096 from an 8 KB server"
for tr in rxe siw; do
	w="$tr: without rpcrdma_cm"
	check not "stock $tr: the Accept does not advertise the Remote Invalidation it uses (fails)" \
		"$tr: to a requester offering Remote Invalidation the Accept advertises it (flags 01)"
	check not "stock $tr: a 3000-octet Reply goes inline to a 1 KB requester (fails)" \
		"$w: a 3000-octet Reply to a 1 KB requester is answered with ERR_CHUNK"
	check ok "stock $tr: a 500-octet Reply comes inline (passes)" \
		"$w: a 500-octet READ still comes inline within 1 KB"
	check ok "stock $tr: a 4 KB requester gets the 3000-octet Reply inline (passes)" \
		"$w: a 4 KB requester gets the 3000-octet Reply inline"
	check ok "stock $tr: a Reply of exactly 1 KB comes inline (passes)" \
		"$w: a Reply of exactly the 1 KB threshold comes inline"
	check not "stock $tr: one octet more also goes inline (fails)" \
		"$w: one octet more to read is answered with ERR_CHUNK"
	check ok "stock $tr: a requester without private data gets 3000 octets inline (passes)" \
		"$w: a requester that sent no private data gets the 3000-octet Reply inline"
	check not "stock $tr: a 6000-octet Reply, above its own 4 KB, goes inline to a 16 KB requester (fails)" \
		"$w: a 16 KB requester gets ERR_CHUNK for a 6000-octet Reply (the server sends 4 KB)"
	check not "stock $tr: the same to a requester without private data (fails)" \
		"$w: a requester that sent no private data gets ERR_CHUNK for a 6000-octet Reply"
done
check not "stock rxe: with max_req_size 5000 it advertises 4 KB and sends 4300 octets inline (fails)" \
	"with max_req_size 5000 the Accept advertises 4 KB and a 4300-octet Reply to a 16 KB requester is ERR_CHUNK"
# The client rounding fails on stock for its reason, not for any: the
# client's own threshold was the unrounded 5119.
stock_client_unrounded() {
	grep -q "^# # the client's receive threshold: 5119 " "$log"
}
ktap_test_result "stock: the client's receive threshold was the unrounded 5119 (why it fails)" stock_client_unrounded
# To its end: the program's own totals line, and no runner timeout.
ran_to_end() {
	grep -q "^# # Totals: " "$log" && grep -qE "^(not )?ok 1 selftests: .*stock_transports.sh" "$log" &&
		! grep -qE "^(not )?ok 1 selftests: .*stock_transports.sh.*# TIMEOUT" "$log"
}
ktap_test_result "stock: the guest ran the program to its end" ran_to_end
# rpcrdma-cm conform on the same stock server (selftests/rpcrdma_cm/
# conform_tool.sh: every verdict the one its table expects of stock svcrdma,
# the failures included: the 1 KB and 4 KB Reply limits, the R bit).
# program_passed PROG PASS: the guest's PROG passed as a whole, PASS (a
# number, or "some": one or more) of its subtests passing and none
# failing; its failures printed. (No pattern as an argument:
# ktap_test_result expands its command's words unquoted.)
program_passed() {
	local ktap=$log.section pass=$2
	[ "$pass" != some ] || pass='[1-9][0-9]*'
	sed -n "/selftests: .*$1\$/,/selftests: .*$1/p" "$log" >"$ktap"
	grep -E '^# not ok [0-9]+ ' "$ktap" | head -5
	grep -qE "^# # Totals: pass:$pass fail:0 " "$ktap" &&
		grep -qE "^ok [0-9]+ selftests: .*$1\$" "$ktap"
}
ktap_test_result "stock: rpcrdma-cm conform gives every verdict conform_tool.sh expects of stock" \
	program_passed conform_tool.sh some
stock_conform_fails() {
	grep -qE '^# ok [0-9]+ stock rxe: threshold.1k.above: fail$' "$log" &&
		grep -qE '^# ok [0-9]+ stock (rxe|siw): ri.server-without-r: fail$' "$log"
}
ktap_test_result "stock: conform fails it on the 1 KB Reply limit and the R bit (named)" stock_conform_fails
if [ $kasan = 1 ]; then
	ktap_test_result "stock siw: KASAN reports the server reading past 1 and 3 octets of private data, not 7 (stock_overread.sh)" \
		program_passed stock_overread.sh 3
else
	ktap_test_skip "stock siw: KASAN reports the server's over-read (a stock kernel without KASAN)"
fi
ktap_finished
