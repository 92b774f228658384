#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Whether a rebuilt kernel crate exports exactly the Rust symbols a
# distribution's kernel exports (scripts/distro/distro.sh runs it before it
# builds rpcrdma_cm.ko against the rebuilt crates).
#
#   scripts/distro/rust-exports-match.sh SYMVERS TREE OUTDIR
#     SYMVERS  the distribution's Module.symvers (its headers package)
#     TREE     the rebuilt tree: its rust/exports_*_generated.h are the
#              export lists the kernel's own rule made from the crates
#     OUTDIR   where rust-exports.txt and rust-rebuilt.txt are left
#
# Prints one line with the counts; exit 0 when the two sets are equal,
# else 1, with the first names that differ (< the kernel's only, > the
# rebuilt crates' only). A v0 name carries its crate's disambiguator
# (rustc's version and the crate's name) and the item's path, not its
# signature: equal sets show the same compiler and the same exported
# items.
set -euo pipefail

[ $# = 3 ] || { echo "usage: $0 SYMVERS TREE OUTDIR" >&2; exit 2; }
symvers=$1 tree=$2 out=$3
shopt -s nullglob
lists=("$tree"/rust/exports_*_generated.h)
[ ${#lists[@]} -gt 0 ] || { echo "rust-exports-match: no export lists in $tree/rust: not a prepared Rust tree" >&2; exit 1; }
awk '$2 ~ /^_R/ { print $2 }' "$symvers" | sort -u >"$out/rust-exports.txt"
sed -n 's/^EXPORT_SYMBOL_RUST_GPL(\(_R.*\));$/\1/p' "${lists[@]}" | sort -u >"$out/rust-rebuilt.txt"
[ -s "$out/rust-exports.txt" ] || { echo "rust-exports-match: $symvers exports no Rust symbol" >&2; exit 1; }
missing=$(comm -23 "$out/rust-exports.txt" "$out/rust-rebuilt.txt" | wc -l)
extra=$(comm -13 "$out/rust-exports.txt" "$out/rust-rebuilt.txt" | wc -l)
echo "rust symbols: $(wc -l <"$out/rust-exports.txt") exported by the kernel; of them $missing not in the rebuilt crates, and $extra there not exported by the kernel"
if [ "$missing" != 0 ] || [ "$extra" != 0 ]; then
	diff "$out/rust-exports.txt" "$out/rust-rebuilt.txt" | grep '^[<>]' | head -n 5
	exit 1
fi
