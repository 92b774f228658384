#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `rpcrdma-cm conform` against this guest's nfsd, over rxe and siw, for
# each server kind this kernel has: with rpcrdma_cm loaded ("module") and
# without it ("series") on a kernel with the series, the kernel's own
# svcrdma on a stock kernel ("stock"), with rpcrdma_cm loaded with
# nonconforming_requester_1k=Y ("module-1k"), which holds a requester
# without a conforming message to RFC 8797's 1 KB, and with rpcrdma_cm
# configured to send and receive 64 KB ("module-64k", over rxe: the 16 KB
# and 64 KB requesters judged at 16 and 64 KB). The tool always gets
# --file, a 128 KB file in the export, so that a Reply of any size can be
# made (a READ where its COMPOUNDs do not reach). Every verdict the tool
# prints is one result here, judged against the verdict conform_expect.sh
# gives: RFC 8797 applied to the server's known behaviour, each exception
# said with where it comes from. The tool's checks must be exactly the list
# below, and its exit status 1 when a verdict is "fail", 3 when none is but
# one is "could not tell", 0 otherwise. The
# Accept checks, which no Linux server fails, are shown failing against
# `rpcrdma-cm respond` answering with a byte-swapped magic, reserved bits
# and (over siw, where lengths are exact) 16 octets (another magic and
# version 2 are "no message": n/a), and the
# "accepted" checks against one that rejects non-conforming requests; and
# over rxe against `respond --answer-rpc`, a userspace responder that
# follows RFC 8797 (every check as for a conforming server) and with each
# of its faults (a Reply within the threshold refused, the threshold off
# by -1 and by +4 octets, the requester's receive size ignored, Send With
# Invalidate without the R bits, With Invalidate of the previous call's
# STag instead of the one the call offered): the check the fault breaks fails
# (RPCRDMA_CM_CONFORM_RESPONDER=no skips these: make check's cut). The
# responder advertises 64 KB each way, so that its thresholds are 1, 4, 16
# and 64 KB; over siw the two threshold faults again, with the short
# request sent (request.short.below and .above fail too). Every message is a whole number of 4-octet XDR units, so +4
# is the smallest excess a requester can see; -1 already refuses a Reply
# exactly at the threshold. Over rxe also: an address with an unreachable
# route gives exit 4 (a local error), and (with the responder's cases) a
# responder that keeps each connection and never answers an RPC exit 3
# at --deadline.
#
# RPCRDMA_CM_CONFORM_TRANSPORTS: rxe, siw or both (the default).
# RPCRDMA_CM_CONFORM_MUTANT: a broken conform (scripts/check/conform-mutant.sh:
# its Replies within the threshold sized 28 octets short); with the
# responder's cases over rxe, one result more: run in place of the tool
# against respond --fault threshold-off=-1, that case must fail.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=conform_expect.sh
. "$DIR/conform_expect.sh"
selftest_begin conform_tool rxe nfsd

TOOL=${RPCRDMA_CM_TOOL:-$DIR/../../tools/target/release/rpcrdma-cm}
SIW_NIC=rcmconf0
SIW_ADDR=192.0.2.81
TRANSPORTS=${RPCRDMA_CM_CONFORM_TRANSPORTS:-rxe siw}
MUTANT=${RPCRDMA_CM_CONFORM_MUTANT:-}
WORK=$(mktemp -d /tmp/conform_tool.XXXXXX)
# The file conform READs (--file), in the export (the NFSv4 root).
BIG=conform-big
BIG_SIZE=131072
# What the module-64k server and the responder advertise each way.
SIZE_64K=65536

NO_ROUTE_NET=198.51.100.0/24

cleanup() {
	ip route del unreachable $NO_ROUTE_NET 2>/dev/null
	rmmod rpcrdma_cm 2>/dev/null
	rdma link delete siwconf0 2>/dev/null
	ip link del $SIW_NIC 2>/dev/null
	rm -f "$NFS_EXPORT/$BIG"
	rm -rf "$WORK"
	return 0
}

if [ ! -x "$TOOL" ] || ! command -v jq >/dev/null; then
	ktap_skip_all "$TOOL or jq missing (make tools)"
	exit "$KSFT_SKIP"
fi

head -c $BIG_SIZE /dev/urandom >"$NFS_EXPORT/$BIG" || ktap_exit_fail_msg "cannot write $NFS_EXPORT/$BIG"

# A kernel with the series has the series' tracepoint; stock has not.
if [ -d /sys/kernel/tracing/events/rpcrdma/svcrdma_cm_private ]; then
	KINDS="module module-1k module-64k series"
	require_module_ko
else
	KINDS=stock
fi

# check_ids TRANSPORT: the checks the tool makes here (every server here
# sends an RFC 8797 message).
check_ids() {
	conform_check_ids "$1" yes yes
}

# expected_verdict KIND TRANSPORT ID: what the server of KIND must get
# (conform_expect.sh, which says why): every server here but module-64k
# advertises 4 KB each way (svcrdma's default), so the thresholds the tool
# derives are 4 KB, 1 KB, 4 KB, 4 KB and 4 KB; module-64k's are 64, 1, 4,
# 16 and 64 KB.
expected_verdict() {
	local kind=$1 strict=no send=4096
	case $kind in
	module-1k) kind=module strict=yes ;;
	module-64k) kind=module send=$SIZE_64K ;;
	esac
	conform_expected "$kind" "$2" "$3" $send yes $strict yes
}

# run_conform KIND TRANSPORT ADDRESS: the tool's JSON in $WORK/KIND-TR.json,
# its exit status in $WORK/KIND-TR.rc.
run_conform() {
	local out=$WORK/$1-$2
	timeout 600 "$TOOL" conform --include-overread-probes --json --deadline 540 --file $BIG "$3" >"$out.json" 2>"$out.err"
	echo $? >"$out.rc"
}

# Accept cases: transport, the responder's private data, a check and its
# verdict. RFC 8797 section 5: private data without the magic, or of
# another version, is no message (the defaults are assumed), not a
# failure; a byte-swapped magic is a Version One message sent in the
# wrong byte order, reserved bits set and a length other than eight
# octets (over iWARP, where lengths are exact) break section 4.
BAD_ACCEPTS="rxe 180eabf601010303 accept.magic fail
rxe 0011223301010303 accept.magic not_applicable
rxe f6ab0e1802010303 accept.version not_applicable
rxe f6ab0e1801810303 accept.reserved-flags fail
siw f6ab0e18010103030000000000000000 accept.length fail"
RESPOND_PORT=$((NFS_PORT + 7))
RESPONDER=${RPCRDMA_CM_CONFORM_RESPONDER:-yes}
# The userspace responder's runs: its --fault ("-" none first) and the
# checks that fault must make fail; every other verdict must stay what it
# was without a fault.
# ids CHECK...: "request.KIND.CHECK" for every non-conforming request kind
# and each CHECK, comma-separated.
ids() {
	local c k
	for c in $CONFORM_NONCONFORMING; do
		for k in "$@"; do printf 'request.%s.%s,' "$c" "$k"; done
	done | sed 's/,$//'
}
# every_threshold CHECK: CHECK of every threshold case, comma-separated.
every_threshold() {
	local t
	for t in threshold.own-send threshold.1k threshold.4k threshold.16k threshold.64k request.reserved-flags; do
		printf '%s.%s,' $t "$1"
	done
	ids "$1"
}
RESPONDER_CASES="- -
refuse-above=600 $(every_threshold below)
threshold-off=-1 $(every_threshold below)
threshold-off=+4 $(every_threshold above)
refuse-null $(every_threshold accepted)
ignore-recv-size threshold.1k.above,threshold.4k.above,threshold.16k.above,request.reserved-flags.above,$(ids above)
invalidate ri.requester-without-r,ri.requester-without-message,ri.nonconforming-with-r
invalidate-previous ri.offered-stag"
# Over siw, where a request of four octets can be sent
# (--include-overread-probes: the responder is no svcrdma to over-read),
# the short request's thresholds too.
SIW_RESPONDER_CASES="threshold-off=-1 $(every_threshold below),request.short.below
threshold-off=+4 $(every_threshold above),request.short.above"

# rpc_responder TRANSPORT ADDRESS FAULT CHECKS: conform against respond
# --answer-rpc (with --fault FAULT). Without a fault: exactly the expected
# checks, each verdict what a server following RFC 8797 gets
# (conform_expect.sh: the module with nonconforming_requester_1k=Y), exit
# 0, and the responder reported no failed connection. With one: each of
# CHECKS (comma-separated) fails, every other verdict is the one without a
# fault, exit 1.
rpc_responder() {
	local tr=$1 addr=$2 fault=$3 checks=",$4," id got want ok=0 rc pid
	local out=$WORK/rpc-$1-$3
	local -A verdicts
	local args=(--answer-rpc --send "$SIZE_64K" --recv "$SIZE_64K") conform_args=(--json --file "$BIG")
	[ "$fault" = - ] || args+=(--fault "$fault")
	[ "$tr" = siw ] && conform_args+=(--include-overread-probes)
	timeout 300 "$TOOL" respond "${args[@]}" "$addr:$RESPOND_PORT" >"$out.respond" 2>&1 &
	pid=$!
	wait_for_line 30 "$out.respond" '^listening' ||
		{ ktap_print_msg "the responder did not listen: $(head -c 200 "$out.respond")"; kill $pid; return 1; }
	timeout 300 "$TOOL" conform "${conform_args[@]}" "$addr:$RESPOND_PORT" >"$out.json" 2>"$out.err"
	rc=$?
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	conform_read_verdicts "$out.json" got verdicts raw
	want=$(check_ids "$tr" | tr ' ' '\n' | paste -sd ' ')
	[ "$got" = "$want" ] || { ktap_print_msg "checks made: '${got:-none}'"; ok=1; }
	for id in $(check_ids "$tr"); do
		got=${verdicts[$id]:-}
		if [[ "$checks" == *",$id,"* ]]; then
			want=fail
		elif [ "$id" = ri.offered-stag ]; then
			# The responder sends With Invalidate only by a fault:
			# `invalidate` names the call's own STag.
			want=not_applicable
			[ "$fault" = invalidate ] && want=pass
		else
			want=$(conform_expected module "$tr" "$id" "$SIZE_64K" yes yes yes)
		fi
		[ "$got" = "$want" ] || { ktap_print_msg "$id: ${got:-missing}, want ${want:-?}"; ok=1; }
	done
	want=0
	[ "$fault" = - ] || want=1
	[ $rc = "$want" ] || { ktap_print_msg "exit $rc, want $want: $(head -c 200 "$out.err")"; ok=1; }
	if [ "$fault" = - ] && grep -q '^rpcrdma-cm: conn' "$out.respond"; then
		ktap_print_msg "the responder: $(grep '^rpcrdma-cm: conn' "$out.respond" | head -3)"
		ok=1
	fi
	return $ok
}

# against_responder ADDRESS RESPOND_ARGS...: conform --accept-only against
# rpcrdma-cm respond with RESPOND_ARGS, its JSON in $WORK/bad.json (its
# verdicts in bad_verdicts) and its exit status in bad_rc.
declare -A bad_verdicts
against_responder() {
	local out=$WORK/bad pid addr=$1
	shift
	bad_verdicts=()
	timeout 120 "$TOOL" respond "$@" "$addr:$RESPOND_PORT" >"$out.respond" 2>&1 &
	pid=$!
	wait_for_line 30 "$out.respond" '^listening' ||
		{ ktap_print_msg "the responder did not listen: $(head -c 200 "$out.respond")"; kill $pid; return 1; }
	timeout 120 "$TOOL" conform --accept-only --include-overread-probes --json "$addr:$RESPOND_PORT" >"$out.json" 2>"$out.err"
	bad_rc=$?
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	# shellcheck disable=SC2034 # filled by conform_read_verdicts, not read
	local ids
	conform_read_verdicts "$out.json" ids bad_verdicts raw
	return 0
}

# verdict_of ID: the verdict of ID in $WORK/bad.json.
verdict_of() {
	echo "${bad_verdicts[$1]:-}"
}

# bad_accept ADDRESS HEX CHECK VERDICT: against a responder accepting
# with HEX, CHECK has VERDICT; exit status 1 for a failure, 0 otherwise
# (every request is accepted).
bad_accept() {
	local got want_rc=0
	[ "$4" = fail ] && want_rc=1
	against_responder "$1" --pdata "$2" || return 1
	got=$(verdict_of "$3")
	[ "$got" = "$4" ] && [ "$bad_rc" = $want_rc ] && return 0
	ktap_print_msg "$3: ${got:-missing}, exit $bad_rc (want $4, exit $want_rc): $(head -c 300 "$WORK/bad.json") $(head -c 200 "$WORK/bad.err")"
	return 1
}

# silent_server ADDRESS: against a responder that accepts every connection,
# keeps it and answers no RPC (`respond --hold` without --answer-rpc),
# conform with a 30-second deadline ends inconclusive (exit 3, JSON
# outcome "inconclusive", no check failed, the deadline reached), at the
# deadline and within a margin.
silent_server() {
	local out=$WORK/silent pid addr=$1 t0 took rc ok=0
	timeout 300 "$TOOL" respond --hold 300 "$addr:$RESPOND_PORT" >"$out.respond" 2>&1 &
	pid=$!
	wait_for_line 30 "$out.respond" '^listening' ||
		{ ktap_print_msg "the responder did not listen: $(head -c 200 "$out.respond")"; kill $pid; return 1; }
	t0=$SECONDS
	timeout 300 "$TOOL" conform --json --timeout 3 --deadline 30 "$addr:$RESPOND_PORT" >"$out.json" 2>"$out.err"
	rc=$?
	took=$((SECONDS - t0))
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	[ $rc = 3 ] || { ktap_print_msg "exit $rc, want 3: $(head -c 200 "$out.err")"; ok=1; }
	[ "$(jq -r '"\(.outcome) \(.fail) \(.deadline_reached)"' "$out.json" 2>/dev/null)" = "inconclusive 0 true" ] ||
		{ ktap_print_msg "JSON: $(jq -c '{outcome, fail, could_not_tell, deadline_reached}' "$out.json" 2>&1 | head -c 200)"; ok=1; }
	# The deadline, plus one step (3 s) and the last disconnect (TCG).
	[ $took -ge 30 ] && [ $took -le 60 ] || { ktap_print_msg "took $took s with a 30 s deadline"; ok=1; }
	return $ok
}

# no_route: conform to an address this host's routing table declares
# unreachable (a route of type unreachable, added for the test; the test
# kernel has no network namespaces): a local error, exit 4, said as this
# host's, with a JSON document all the same.
no_route() {
	local out=$WORK/noroute rc ok=0
	ip route add unreachable $NO_ROUTE_NET || { ktap_print_msg "cannot add an unreachable route"; return 1; }
	timeout 60 "$TOOL" conform --json 198.51.100.7 >"$out.json" 2>"$out.err"
	rc=$?
	ip route del unreachable $NO_ROUTE_NET
	[ $rc = 4 ] || { ktap_print_msg "exit $rc, want 4: $(head -c 200 "$out.err")"; ok=1; }
	[ "$(jq -r .outcome "$out.json" 2>/dev/null)" = local_error ] ||
		{ ktap_print_msg "JSON: $(head -c 300 "$out.json")"; ok=1; }
	grep -q 'this host could not connect' "$out.err" ||
		{ ktap_print_msg "stderr: $(head -c 200 "$out.err")"; ok=1; }
	return $ok
}

# rejecting_responder ADDRESS TRANSPORT: against a responder that rejects
# every request without a conforming message (respond
# --reject-nonconforming), each such request's "accepted" check fails, the
# version 1 request with reserved flags is accepted, exit status 1.
rejecting_responder() {
	local c ok=0 got
	against_responder "$1" --reject-nonconforming || return 1
	for c in $CONFORM_NONCONFORMING $([ "$2" = siw ] && echo short); do
		got=$(verdict_of request.$c.accepted)
		[ "$got" = fail ] || { ktap_print_msg "request.$c.accepted: ${got:-missing}, want fail"; ok=1; }
	done
	got=$(verdict_of request.reserved-flags.accepted)
	[ "$got" = pass ] || { ktap_print_msg "request.reserved-flags.accepted: ${got:-missing}, want pass"; ok=1; }
	[ "$bad_rc" = 1 ] || { ktap_print_msg "exit $bad_rc, want 1"; ok=1; }
	return $ok
}

# mutant_caught ADDRESS: the threshold-off=-1 case of the responder run
# with the mutant conform in place of the tool fails, and for the reason
# the mutation gives: a `.below` check passed that the case wants failed
# (the mutant's Reply "within the threshold" is 28 octets short, so a
# limit one octet too small lets it through).
mutant_caught() {
	local out rc
	[ -x "$MUTANT" ] || { ktap_print_msg "no mutant at $MUTANT"; return 1; }
	out=$(TOOL=$MUTANT rpc_responder rxe "$1" threshold-off=-1 "$(every_threshold below)")
	rc=$?
	[ -n "$out" ] && echo "$out" | head -8
	[ $rc = 1 ] && grep -qE '\.below: pass, want fail' <<<"$out"
}

# kind_runs_on KIND TRANSPORT: module-1k changes only what the server
# assumes of a requester without a conforming message, module-64k only the
# sizes, which no transport changes: rxe only.
kind_runs_on() {
	case $1 in module-1k | module-64k) [ "$2" = rxe ] ;; esac
}

# Every result is in the transports' loop below, and what an iteration
# adds depends on its transport (the kinds that run on it, its checks,
# the cases over one transport only): each N is a sum over TRANSPORTS,
# not one product.
judged=0 accepts=0 per_transport=0 ntr=0
for tr in $TRANSPORTS; do
	ntr=$((ntr + 1))
	# judge, per kind that runs on tr: the checks made, one per check,
	# the exit status.
	n=$(check_ids "$tr" | wc -w)
	for kind in $KINDS; do
		kind_runs_on "$kind" "$tr" && judged=$((judged + n + 2))
	done
	# The BAD_ACCEPTS loop: one per case of tr.
	accepts=$((accepts + $(echo "$BAD_ACCEPTS" | grep -c "^$tr ")))
	# Over rxe: no_route; with the responder, silent_server and the
	# RESPONDER_CASES loop, one per case.
	[ "$tr" = rxe ] && per_transport=$((per_transport + 1))
	[ "$tr" = rxe ] && [ "$RESPONDER" = yes ] &&
		per_transport=$((per_transport + 1 + $(echo "$RESPONDER_CASES" | grep -c .)))
	# ... and with a mutant, mutant_caught.
	[ "$tr" = rxe ] && [ "$RESPONDER" = yes ] && [ -n "$MUTANT" ] &&
		per_transport=$((per_transport + 1))
	# Over siw, with the responder: the SIW_RESPONDER_CASES loop.
	[ "$tr" = siw ] && [ "$RESPONDER" = yes ] &&
		per_transport=$((per_transport + $(echo "$SIW_RESPONDER_CASES" | grep -c .)))
done
# ... and rejecting_responder, one per transport.
ktap_plan_counted "$judged" "$accepts" "$per_transport" "$ntr"

# judge KIND TRANSPORT: the results of one run.
judge() {
	local kind=$1 tr=$2 out=$WORK/$1-$2 id got want fails=0 unknown=0 want_ids got_ids
	local -A verdicts
	want_ids=$(check_ids "$tr" | tr ' ' '\n' | paste -sd ' ')
	conform_read_verdicts "$out.json" got_ids verdicts
	if [ "$got_ids" = "$want_ids" ]; then
		ktap_test_pass "$kind $tr: the tool made exactly the expected checks"
	else
		sed 's/^/# stderr: /' "$out.err" | head -5
		ktap_print_msg "checks made: ${got_ids:-none}"
		ktap_test_fail "$kind $tr: the tool made exactly the expected checks"
	fi
	for id in $(check_ids "$tr"); do
		want=$(expected_verdict "$kind" "$tr" "$id")
		got=${verdicts[$id]:-}
		case $want in fail | xfail) fails=$((fails + 1)) ;; esac
		[ "$want" = could_not_tell ] && unknown=$((unknown + 1))
		if [ "$got" = "$want" ]; then
			ktap_test_pass "$kind $tr: $id: $want"
		else
			jq -r --arg id "$id" '.checks[] | select(.id == $id) | "sent: \(.sent)", "got: \(.got)"' \
				"$out.json" 2>/dev/null | sed 's/^/# /'
			ktap_test_fail "$kind $tr: $id: ${got:-missing}, want $want"
		fi
	done
	# How the largest threshold was reached (a READ above about 4 KB).
	jq -r '.checks[] | select(.id == "threshold.64k.below" or .id == "threshold.64k.above") | "\(.id): \(.sent); got \(.got)"' \
		"$out.json" 2>/dev/null | sed "s/^/# $kind $tr: /"
	got=$(cat "$out.rc")
	want=$(conform_exit $fails $unknown)
	if [ "$got" = "$want" ] && [ "$(jq -r .exit "$out.json" 2>/dev/null)" = "$want" ]; then
		ktap_test_pass "$kind $tr: exit status $want ($fails checks fail, $unknown could not tell)"
	else
		ktap_test_fail "$kind $tr: exit status $got (JSON: $(jq -r .exit "$out.json" 2>/dev/null)), want $want ($fails checks fail, $unknown could not tell)"
	fi
}

for tr in $TRANSPORTS; do
	case $tr in
	rxe) addr=$ip ;;
	siw)
		modprobe siw 2>/dev/null
		siw_setup $SIW_NIC $SIW_ADDR siwconf0
		addr=$SIW_ADDR
		;;
	*) ktap_exit_fail_msg "unknown transport $tr" ;;
	esac
	for kind in $KINDS; do
		kind_runs_on "$kind" "$tr" || continue
		rmmod rpcrdma_cm 2>/dev/null
		case $kind in
		module) insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed" ;;
		module-1k)
			insmod "$RPCRDMA_CM_KO" nonconforming_requester_1k=Y ||
				ktap_exit_fail_msg "insmod nonconforming_requester_1k=Y failed"
			;;
		module-64k)
			insmod "$RPCRDMA_CM_KO" responder_send_size=$SIZE_64K responder_recv_size=$SIZE_64K ||
				ktap_exit_fail_msg "insmod responder_send_size=$SIZE_64K failed"
			;;
		esac
		run_conform "$kind" "$tr" "$addr"
		judge "$kind" "$tr"
	done
	while read -r t hex id verdict; do
		[ "$t" = "$tr" ] || continue
		ktap_test_result "$tr: against a responder accepting with $hex, $id: $verdict" bad_accept "$addr" "$hex" "$id" "$verdict"
	done <<<"$BAD_ACCEPTS"
	if [ "$tr" = rxe ]; then
		ktap_test_result "conform to an address with an unreachable route: exit 4, a local error" no_route
		# A test of the tool's deadline, about 35 s: with the responder's.
		[ "$RESPONDER" = yes ] &&
			ktap_test_result "rxe: against a responder that keeps connections and never answers an RPC, conform --deadline 30 exits 3 (inconclusive) at the deadline" \
				silent_server "$addr"
	fi
	ktap_test_result "$tr: against a responder rejecting requests without a conforming message, each one's accepted check fails" \
		rejecting_responder "$addr" "$tr"
	[ "$RESPONDER" = yes ] || continue
	cases=$RESPONDER_CASES
	[ "$tr" = siw ] && cases=$SIW_RESPONDER_CASES
	while read -r fault check; do
		if [ "$fault" = - ]; then
			ktap_test_result "$tr: against rpcrdma-cm respond --answer-rpc (RFC 8797 followed), every verdict as for a conforming server" \
				rpc_responder "$tr" "$addr" - -
		else
			ktap_test_result "$tr: against respond --answer-rpc --fault $fault, just ${check//,/, } fail" \
				rpc_responder "$tr" "$addr" "$fault" "$check"
		fi
	done <<<"$cases"
	[ "$tr" = rxe ] && [ -n "$MUTANT" ] &&
		ktap_test_result "rxe: a conform that sizes a Reply within the threshold 28 octets short (RPCRDMA_CM_CONFORM_MUTANT) is caught: against respond --fault threshold-off=-1 its .below checks pass" \
			mutant_caught "$addr"
done
ktap_finished
