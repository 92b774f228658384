#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The guests' reader of 'rdma resource show' (selftests/rpcrdma_cm/lib.sh:
# rdma_device_resources for one device, rdma_resources summed over all,
# which the teardown waits of two-guest, interop and the bench compare
# before and after): each count is found by its name, a device line
# without one of the five counts is an error (not a zero that would let a
# leak pass), and no device or a failing command is an error. Fed with
# lines in the forms iproute2's rdma tool prints ("IDX: DEV: name N ...",
# older releases without ctx and srq, a count as N/MAX); boots nothing.
# KTAP; exit 0 only if every case holds.
#
#   scripts/tests/rdma-counts.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# lib.sh sources the kernel tree's KTAP helpers; none of them is used here.
ksft=$(mktemp -d)
trap 'rm -rf "$ksft"' EXIT
mkdir "$ksft/kselftest" && : >"$ksft/kselftest/ktap_helpers.sh"
# shellcheck source=/dev/null
KSFT_DIR=$ksft . "$top/selftests/rpcrdma_cm/lib.sh"

# The output the next 'rdma' call prints, and its exit status.
shown='' shown_rc=0
rdma() {
	[ "$*" = "resource show" ] || return 2
	[ -z "$shown" ] || printf '%s\n' "$shown"
	return "$shown_rc"
}

n=0 bad=0
# case WHAT EXPECT CMD...: CMD's output, or "false" when it fails, is EXPECT.
case_() {
	local what=$1 expect=$2 got
	shift 2
	n=$((n + 1))
	got=$("$@" 2>/dev/null) || got=false
	if [ "$got" = "$expect" ]; then
		echo "ok $n $what: $got"
	else
		echo "not ok $n $what: '$got', expected '$expect'"
		bad=$((bad + 1))
	fi
}

echo "TAP version 13"
echo "1..9"
shown=$'0: rxe0: pd 1 cq 1 qp 1 cm_id 2 mr 0 ctx 0 srq 0\n1: siw0: pd 3 cq 4 qp 5 cm_id 1 mr 7 ctx 0 srq 0'
case_ "two devices summed" "pd=4 cq=5 qp=6 cm_id=3 mr=7" rdma_resources
case_ "one device of two" "pd=3 cq=4 qp=5 cm_id=1 mr=7" rdma_device_resources siw0
case_ "a device not listed" false rdma_device_resources mlx5_0
shown='0: rxe0: pd 1/32768 cq 2 qp 3 cm_id 0 mr 4'
case_ "an older release, a count with its maximum" "pd=1 cq=2 qp=3 cm_id=0 mr=4" rdma_resources
shown='0: rxe0: ctx 0 qp 3 pd 1 mr 4 cq 2 cm_id 5'
case_ "counts in another order, another field first" "pd=1 cq=2 qp=3 cm_id=5 mr=4" rdma_resources
shown=$'0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0\n1: siw0: pd 1 cq 1 qp 1 mr 9'
case_ "a device without its CM ID count" false rdma_resources
case_ "the same device alone" false rdma_device_resources siw0
shown=''
case_ "no device" false rdma_resources
shown='0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0' shown_rc=1
case_ "the command failing" false rdma_resources
[ $bad -eq 0 ]
