#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The two decoders of RFC 8797 private data agree: the protocol core the
# module runs (rust/proto/cm_private.rs, through `rpcrdma-cm decode
# --json`) and the oracle that judges the guests' wire captures
# (selftests/rpcrdma_cm/rfc8797_oracle.py decode), written apart from it. For
# each case of a corpus (every length 0 to 9 of all-zero data, the padded
# IB/RoCE areas, short and long prefixes of a message, a wrong magic and a
# byte-swapped one, versions 0 and 2, reserved flags, the size codes'
# edges, padding after a message): the same cause of non-conformance (or
# none) and the same send size, receive size and Remote Invalidation the
# receiver goes on with. Boots nothing. KTAP; exit 0 only if every case
# agrees, 4 (skip) without the tool or jq.
#
#   scripts/tests/decoders-agree.sh
#   RPCRDMA_CM_TOOL=PATH RFC8797_ORACLE=PATH scripts/tests/decoders-agree.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=${RPCRDMA_CM_TOOL:-$top/tools/target/release/rpcrdma-cm}
ORACLE=${RFC8797_ORACLE:-$top/selftests/rpcrdma_cm/rfc8797_oracle.py}
if ! command -v jq >/dev/null || [ ! -x "$TOOL" ]; then
	echo "1..0 # SKIP jq or $TOOL missing (cargo build --release in tools/)"
	exit 4
fi

zeros() { printf '0%.0s' $(seq $((2 * $1))); }
corpus=("")
for n in 1 2 3 4 5 6 7 8 9; do corpus+=("$(zeros "$n")"); done
corpus+=(
	"$(zeros 56)"
	"$(zeros 196)"
	f6 f6ab f6ab0e f6ab0e18 f6ab0e1801 f6ab0e180101 f6ab0e18010103
	f6ab0e1801010303
	f6ab0e180101030300
	"f6ab0e1801010303$(zeros 48)"
	"f6ab0e1801000f0f$(zeros 188)"
	180eabf601010303
	f6ab0e1901010303
	f6ab0e1800010303
	f6ab0e1802010303
	f6ab0e1801fe0303
	f6ab0e1801ff0000
	f6ab0e1801003fff
	f6ab0e180101ff00
	00ab0e1801010303
	"0000000000000001"
)

echo "TAP version 13"
echo "1..${#corpus[@]}"
n=0 bad=0
for hex in "${corpus[@]}"; do
	n=$((n + 1))
	core=$("$TOOL" decode --json "$hex" 2>/dev/null |
		jq -r '[.conformance, .effective.max_send, .effective.max_recv, .effective.remote_invalidation] | join(" ")')
	oracle=$(python3 "$ORACLE" decode "$hex" 2>/dev/null |
		jq -r '[.conformance, .peer.send, .peer.recv, .peer.remote_invalidation] | join(" ")')
	what="'${hex:0:24}$([ ${#hex} -le 24 ] || echo ...)' ($((${#hex} / 2)) octets)"
	if [ -n "$core" ] && [ "$core" = "$oracle" ]; then
		echo "ok $n $what: $core"
	else
		echo "not ok $n $what: core '$core', oracle '$oracle'"
		bad=$((bad + 1))
	fi
done
[ $bad -eq 0 ]
