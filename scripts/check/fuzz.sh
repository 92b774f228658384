#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the libFuzzer targets of the protocol core with cargo-fuzz.
#   FUZZ_RUNS   executions per target (default 10000000)
#   FUZZ_TARGETS  which targets (default: all)
# The stable toolchain cannot build AddressSanitizer (-Zsanitizer), so the
# targets run with '--sanitizer none': coverage-guided, with debug
# assertions and overflow checks on. The core has no unsafe code.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
CARGO_FUZZ_VERSION=0.13.2
runs=${FUZZ_RUNS:-10000000}
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
	cargo install --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi
cd "$RPCRDMA_CM_TOP/crates/rpcrdma-cm-proto/fuzz"
targets=${FUZZ_TARGETS:-$(cargo fuzz list)}
for t in $targets; do
	mkdir -p "corpus/$t"
	echo "fuzz: $t, $runs runs"
	start=$(date +%s)
	log=$(mktemp)
	rc=0
	cargo fuzz run --sanitizer none "$t" "corpus/$t" -- -runs="$runs" -print_final_stats=1 >"$log" 2>&1 || rc=$?
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done|SUMMARY|thread)' "$log" || true
	if [ $rc -ne 0 ]; then
		tail -n 30 "$log"
		rm -f "$log"
		rpcrdma_cm_die "$t failed: see tools/rpcrdma-cm-proto/fuzz/artifacts/$t"
	fi
	rm -f "$log"
	echo "fuzz: $t done in $(($(date +%s) - start)) s"
done
