#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the stock test kernel: the same Debian source (of the
# base RPCRDMA_CM_KBASE names, see lib.sh),
# kconfig fragment and toolchain as the default test kernel, with no patch
# applied. It is the kernel users run next to a host with rpcrdma_cm, and
# the interop matrix (scripts/guest/interop.sh) boots it as the unpatched peer.
#
#   scripts/kernel/build-stock-kernel.sh [--print-dir] [default|debug]
#
# debug adds kconfig/debug.config (KASAN, kmemleak, lockdep), as
# build-kernel.sh debug does: the unpatched kernel on which the stock
# defects the series fixes show as reports (kernel-<base>-stock-debug-<hash>).
#
# The tree lives in $RPCRDMA_CM_CACHE/kernel-stock-<hash>/linux. <hash>
# covers the source package, the fragment, the make arguments, the
# toolchain versions and this script, and NOT patches/: the series may
# change, the stock kernel stays the same (built once).
#
# Built incrementally from the default test tree (scripts/kernel/build-kernel.sh
# --print-dir; it must be built): the tree is copied with its objects and
# timestamps, its git work tree is reset to the "Debian linux-source-<base>"
# commit (only the files the series touched get new timestamps), and make
# recompiles what depends on them (sunrpc, xprtrdma, the Rust bindings).
# Without a built default tree it builds from scratch with
# scripts/kernel/build-kernel.sh's own steps on a copy of the repository's
# scripts and kconfig with an empty patches/.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

print_only=0
variant=default
for a in "$@"; do
	case "$a" in
	--print-dir) print_only=1 ;;
	default|debug) variant=$a ;;
	*) rpcrdma_cm_die "unknown argument '$a' (use --print-dir, default or debug)" ;;
	esac
done

fragments=("$RPCRDMA_CM_TOP/kconfig/rpcrdma_cm.config" "$RPCRDMA_CM_TOP/kconfig/base-$RPCRDMA_CM_KBASE.config")
[ "$variant" = debug ] && fragments+=("$RPCRDMA_CM_TOP/kconfig/debug.config")
stock=stock
[ "$variant" = debug ] && stock='stock-debug'
input_hash() {
	{
		echo "base $RPCRDMA_CM_KBASE tarball $(kbase_source_version)"
		stat -c '%s %Y' "$LINUX_TARBALL" 2>/dev/null || echo "no tarball"
		echo "variant $stock"
		echo "make $(kernel_make_args)"
		for f in "${fragments[@]}" "$0"; do
			echo "== $(basename "$f")"
			cat "$f"
		done
		"$KERNEL_RUSTC" --version 2>/dev/null || echo "no rustc"
		"$KERNEL_BINDGEN" --version 2>/dev/null || echo "no bindgen"
		"clang$KERNEL_LLVM" --version 2>/dev/null | head -1 || echo "no clang"
	} | sha256sum | cut -c1-16
}

dir=$RPCRDMA_CM_CACHE/kernel-$RPCRDMA_CM_KBASE-$stock-$(input_hash)
if [ $print_only = 1 ]; then
	echo "$dir/linux"
	exit 0
fi
if [ -f "$dir/built" ]; then
	echo "kernel: cached $dir/linux"
	exit 0
fi

base_subject="Debian $KBASE_SOURCE_PKG"
default=$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir "$variant")
start=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir"
if [ -f "$(dirname "$default")/built" ] && [ -d "$default/.git" ]; then
	# (one line as build-kernel.sh prints it: lib.sh's progress_kernel reads it)
	echo "kernel: building $stock in $dir"
	echo "kernel: incrementally from $default"
	tip=$(git -C "$default" rev-parse HEAD)
	base=$(git -C "$default" log --format='%H %s' | awk -v s="$base_subject" \
		'substr($0, 42) == s { print $1 }' | tail -n 1)
	[ -n "$base" ] || rpcrdma_cm_die "$default has no commit '$base_subject'"
	# Objects and timestamps as they are (-a); no .virtme_mods: its links
	# name the default tree's modules, and vng rebuilds it for this tree.
	mkdir "$dir/linux"
	tar -C "$default" --exclude=./.virtme_mods -cf - . | tar -C "$dir/linux" -xpf -
	src=$dir/linux
	cd "$src"
	git -c advice.detachedHead=false checkout -q --detach "$base"
	# What the series added is gone, what it changed is back to Debian's.
	[ -z "$(git status --porcelain --untracked-files=no)" ] ||
		rpcrdma_cm_die "the stock tree differs from '$base_subject' after the checkout"
	[ ! -e include/linux/sunrpc/rpc_rdma_cm.h ] ||
		rpcrdma_cm_die "include/linux/sunrpc/rpc_rdma_cm.h is still there: the checkout did not undo the series"
	args=$(kernel_make_args)
	echo "kernel: files the series touched (they recompile): $(git diff --name-only "$base" "$tip" | wc -l)"
	# shellcheck disable=SC2086
	make -s -j"$(($(nproc) + 1))" $args bzImage modules
	touch "$dir/built"
	echo "kernel: stock built incrementally in $(($(date +%s) - start)) s: $src"
	exit 0
fi

echo "kernel: building $stock in $dir"
echo "kernel: from scratch (no built default tree at $default)"
# build-kernel.sh's own steps, on a copy of the scripts and the fragments
# with no patches, into a scratch cache; then moved here.
scratch=$(mktemp -d "$RPCRDMA_CM_CACHE/stock-scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/top/scripts" "$scratch/top/patches/$RPCRDMA_CM_KBASE" "$scratch/cache"
cp "$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" "$RPCRDMA_CM_TOP/scripts/lib.sh" "$scratch/top/scripts/"
cp -r "$RPCRDMA_CM_TOP/kconfig" "$scratch/top/"
RPCRDMA_CM_CACHE=$scratch/cache "$scratch/top/scripts/kernel/build-kernel.sh" "$variant"
built=$(RPCRDMA_CM_CACHE=$scratch/cache "$scratch/top/scripts/kernel/build-kernel.sh" --print-dir "$variant")
rmdir "$dir"
mv "$(dirname "$built")" "$dir"
echo "kernel: stock built from scratch in $(($(date +%s) - start)) s: $dir/linux"
