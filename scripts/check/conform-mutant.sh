#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a broken `rpcrdma-cm conform`, for showing that the suite catches a
# conformance tool that would pass a broken server: a copy of tools/ whose
# threshold checks size the Reply "within the threshold" 28 octets short
# (the RPC-over-RDMA transport header forgotten), so that a server whose
# limit is one octet too small passes its `.below` checks. conform_tool.sh
# runs it against `respond --fault threshold-off=-1` and must see that case
# fail (RPCRDMA_CM_CONFORM_MUTANT).
#
#   scripts/check/conform-mutant.sh OUT
#
# OUT: where the mutant binary goes (build/conform-mutant/rpcrdma-cm in
# make check). Its own target directory sits beside OUT (kept, so that a
# later run builds only what changed). Exit 1 if the mutation no longer
# applies (the code it breaks has changed: update the pattern).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

out=${1:?OUT}
dir=$(dirname "$out")
src=$dir/src
mkdir -p "$dir"
rm -rf "$src"
mkdir -p "$src"
# The workspace's files as git knows them (tracked, and new ones not
# ignored: no build output), and the module's protocol core beside it as
# in the tree (rpcrdma-cm-proto includes rust/proto/).
git -C "$RPCRDMA_CM_TOP" ls-files -co --exclude-standard -z tools rust |
	tar -C "$RPCRDMA_CM_TOP" --null -T - -cf - | tar -C "$src" -xf -
file=$src/tools/rpcrdma-cm/src/cmd/conform/threshold.rs
from='(Edge::Below, at)'
to='(Edge::Below, at - 28)'
grep -qF "$from" "$file" || rpcrdma_cm_die "conform-mutant: '$from' not in $file: the mutation no longer applies"
sed -i "s/(Edge::Below, at)/(Edge::Below, at - 28)/" "$file"
grep -qF "$to" "$file" || rpcrdma_cm_die "conform-mutant: the mutation did not apply to $file"
cargo build --quiet --release --manifest-path "$src/tools/Cargo.toml" --target-dir "$dir/target" -p rpcrdma-cm-tools
cp "$dir/target/release/rpcrdma-cm" "$out"
echo "conform-mutant: $out (threshold.rs: $from -> $to)"
