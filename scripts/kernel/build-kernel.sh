#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the rpcrdma_cm test kernel.
#
#   scripts/kernel/build-kernel.sh [--print-dir] [default|debug]
#
# The kernel base is RPCRDMA_CM_KBASE (6.12 or 7.3, see lib.sh): its Debian
# source and its series, patches/<base>/. The tree lives outside the
# repository, in $RPCRDMA_CM_CACHE/kernel-<base>-<variant>-<hash>, where
# <hash> covers every input: the source tarball and package version, each
# patch of the series (in order), the kconfig fragments, the toolchain versions and
# this script. An unchanged input set reuses the tree; any change builds a new
# one. --print-dir prints that directory without building.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

print_only=0
variant=default
for a in "$@"; do
	case "$a" in
	--print-dir) print_only=1 ;;
	default|debug) variant=$a ;;
	*) rpcrdma_cm_die "unknown argument '$a' (use default or debug)" ;;
	esac
done

fragments=("$RPCRDMA_CM_TOP/kconfig/rpcrdma_cm.config" "$RPCRDMA_CM_TOP/kconfig/base-$RPCRDMA_CM_KBASE.config")
shopt -s nullglob
patches=("$KBASE_PATCHES"/*.patch)
shopt -u nullglob
# Options of the series itself (kconfig/series-<base>.config), only with it.
if [ ${#patches[@]} -gt 0 ] && [ -f "$RPCRDMA_CM_TOP/kconfig/series-$RPCRDMA_CM_KBASE.config" ]; then
	fragments+=("$RPCRDMA_CM_TOP/kconfig/series-$RPCRDMA_CM_KBASE.config")
fi
[ "$variant" = debug ] && fragments+=("$RPCRDMA_CM_TOP/kconfig/debug.config")

input_hash() {
	{
		echo "base $RPCRDMA_CM_KBASE tarball $(kbase_source_version)"
		stat -c '%s %Y' "$LINUX_TARBALL" 2>/dev/null || echo "no tarball"
		echo "variant $variant"
		echo "make $(kernel_make_args)"
		for f in "${fragments[@]}" "${patches[@]}" "$0"; do
			echo "== $(basename "$f")"
			cat "$f"
		done
		"$KERNEL_RUSTC" --version 2>/dev/null || echo "no rustc"
		"$KERNEL_BINDGEN" --version 2>/dev/null || echo "no bindgen"
		"clang$KERNEL_LLVM" --version 2>/dev/null | head -1 || echo "no clang"
	} | sha256sum | cut -c1-16
}

dir=$RPCRDMA_CM_CACHE/kernel-$RPCRDMA_CM_KBASE-$variant-$(input_hash)
if [ $print_only = 1 ]; then
	echo "$dir/linux"
	exit 0
fi

if [ -f "$dir/built" ]; then
	echo "kernel: cached $dir/linux"
	exit 0
fi

[ -r "$LINUX_TARBALL" ] || rpcrdma_cm_die "$LINUX_TARBALL missing: run 'make deps'"
[ -x "$KERNEL_BINDGEN" ] || rpcrdma_cm_die "$KERNEL_BINDGEN missing: run 'make deps'"

echo "kernel: building $variant in $dir"
rm -rf "$dir"
mkdir -p "$dir"
tar -C "$dir" -xf "$LINUX_TARBALL"
mv "$dir/$KBASE_SOURCE_PKG" "$dir/linux"
src=$dir/linux
args=$(kernel_make_args)

if [ ${#patches[@]} -gt 0 ]; then
	# Apply the series the way a maintainer would: git am on a tree.
	(
		cd "$src"
		git init -q
		git add -A -f
		git -c user.name=rpcrdma_cm -c user.email=rpcrdma_cm@localhost \
			commit -q -m "Debian $KBASE_SOURCE_PKG"
		git -c user.name=rpcrdma_cm -c user.email=rpcrdma_cm@localhost \
			am -q "${patches[@]}"
	) || rpcrdma_cm_die "patch series does not apply with git am"
fi

cd "$src"
# shellcheck disable=SC2086
make -s $args tinyconfig >/dev/null
# shellcheck disable=SC2086
KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m -O . .config "${fragments[@]}" >/dev/null
# shellcheck disable=SC2086
make -s $args olddefconfig >/dev/null

# Every requested option must have survived olddefconfig.
missing=0
for f in "${fragments[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qx "$line" .config || { echo "kernel: $line did not stick" >&2; missing=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			! grep -q "^$opt=[ym]" .config || { echo "kernel: $opt should be off" >&2; missing=1; } ;;
		esac
	done <"$f"
done
[ $missing = 0 ] || rpcrdma_cm_die "configuration incomplete (see above): check the dependencies of those options"

# shellcheck disable=SC2086
make -s $args rustavailable >/dev/null || rpcrdma_cm_die "Rust toolchain not usable: run 'make deps'"
start=$(date +%s)
# shellcheck disable=SC2086
make -s -j"$(($(nproc) + 1))" $args bzImage modules
touch "$dir/built"
echo "kernel: built in $(($(date +%s) - start)) s: $src"
