#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of scripts/distro/rust-exports-match.sh, the check that a rebuilt
# kernel crate exports exactly the Rust symbols a distribution's kernel
# exports: made-up Module.symvers and export lists, equal and not (a
# symbol of another crate disambiguator, as another rustc makes; one
# missing; one too many; no Rust symbol at all). Boots nothing. KTAP; exit
# 0 only if every case passes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
match=$top/scripts/distro/rust-exports-match.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Two symbols of the kernel crate, one of core, and a C symbol.
K1=_RNvNtCsb5MLIFMWygY_6kernel5print11call_printk
K2=_RNvNtNtCsb5MLIFMWygY_6kernel5alloc9allocator7realloc
C1=_RNvNtCs2lKf6AS60Zg_4core9panicking5panic
# The same path as K1 under another disambiguator (another rustc).
K1_OTHER=_RNvNtCsaaaaaaaaaaa_6kernel5print11call_printk

# symvers SYM...: a Module.symvers exporting SYM... and a C function.
symvers() {
	printf '0x00000000\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n'
	printf '0x00000000\t%s\tvmlinux\tEXPORT_SYMBOL_GPL\t\n' "$@"
}
# tree SYM...: a prepared tree whose export lists name SYM... (split over
# two lists, as kernel and core are).
tree() {
	rm -rf "$work/tree"
	mkdir -p "$work/tree/rust"
	printf 'EXPORT_SYMBOL_RUST_GPL(%s);\n' "${@:1:1}" >"$work/tree/rust/exports_core_generated.h"
	printf 'EXPORT_SYMBOL_RUST_GPL(%s);\n' "${@:2}" >"$work/tree/rust/exports_kernel_generated.h"
}

n=0 bad=0
echo "TAP version 13"
echo "1..5"
# case_ NAME WANT(0 match, 1 no match): runs the check on $work/symvers
# and $work/tree.
case_() {
	local rc=0
	"$match" "$work/symvers" "$work/tree" "$work" >"$work/out" 2>&1 || rc=$?
	n=$((n + 1))
	if [ "$rc" = "$2" ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1 # exit $rc, want $2"
		sed 's/^/# /' "$work/out"
		bad=$((bad + 1))
	fi
}

symvers "$K1" "$K2" "$C1" >"$work/symvers"
tree "$C1" "$K1" "$K2"
case_ "the same three symbols match" 0
tree "$C1" "$K1_OTHER" "$K2"
case_ "another crate disambiguator does not" 1
tree "$C1" "$K1"
case_ "a symbol the rebuilt crates lack does not" 1
tree "$C1" "$K1" "$K2" _RNvNtCsb5MLIFMWygY_6kernel5print4more
case_ "a symbol the kernel does not export does not" 1
symvers >"$work/symvers"
tree "$C1" "$K1" "$K2"
case_ "a Module.symvers without Rust symbols does not" 1
[ $bad = 0 ]
