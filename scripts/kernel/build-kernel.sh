#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) a test kernel: the one entry for every variant.
#
#   scripts/kernel/build-kernel.sh [--print-dir] [default|plain|debug|checked|stock|stock-plain|stock-debug|stock-checked]
#
# The kernel base is RPCRDMA_CM_KBASE (6.12 or 7.3, see lib.sh): its Debian
# source and, but for the stock variants, its series, patches/<base>/.
# default is the test kernel make check runs. On the bases of
# MEMORY_CHECKED_BASES (7.3) it has the memory checkers,
# kconfig/memory.config (beside this script: KASAN and kmemleak), with
# KASAN's checks compiled into the RDMA transports', the RDMA core's and
# the Rust kernel crate's objects only (KASAN_SCOPE_DIRS): kmemleak on the
# whole kernel, KASAN's allocator side (redzones, quarantine, shadow) for
# every allocation, so an over-read by instrumented code of memory anyone
# allocated is reported. plain is the same kernel without the checkers
# (for benchmarks: KASAN changes what kmalloc takes and what things cost).
# On the other bases (6.12) plain is default (the same tree). checked
# has memory.config, scoped, and kconfig/debug.config (lockdep); debug
# has both fragments with KASAN on the whole kernel.
# The stock variants are the same source, fragments and toolchain with
# no patch applied: the kernel users run next to a host with rpcrdma_cm, which the interop matrix
# and the stock conformance step boot as the unpatched peer (and on which,
# with KASAN, the defects the series fixes show as reports).
#
# The tree lives outside the repository, in
# $RPCRDMA_CM_CACHE/kernel-<base>-<variant>-<hash>, where <hash> covers
# every input: the source tarball and package version, each patch of the
# series (in order; none for stock), the kconfig fragments, the toolchain
# versions and this script. An unchanged input set reuses the tree; any
# change builds a new one. --print-dir prints that directory without
# building.
#
# A stock variant is built incrementally from the patched tree of the same
# base and configuration when that one is built: the tree is copied with
# its objects and timestamps, its git work tree is reset to the "Debian
# linux-source-<base>" commit (only the files the series touched get new
# timestamps), and make recompiles what depends on them. Otherwise it is
# built from the source like any other.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

print_only=0
variant=default
for a in "$@"; do
	case "$a" in
	--print-dir) print_only=1 ;;
	default | plain | debug | checked | stock | stock-plain | stock-debug | stock-checked) variant=$a ;;
	*) rpcrdma_cm_die "unknown argument '$a' (use --print-dir, default, plain, debug, checked, stock, stock-plain, stock-debug or stock-checked)" ;;
	esac
done
# The patched variant a stock one is derived from, and whether it is stock.
patched_variant=default
case $variant in
plain | stock-plain) patched_variant=plain ;;
debug | stock-debug) patched_variant=debug ;;
checked | stock-checked) patched_variant=checked ;;
esac
stock=0
case $variant in stock*) stock=1 ;; esac

# The configuration fragments, beside this script.
kconfig=$RPCRDMA_CM_TOP/scripts/kernel/kconfig
fragments=("$kconfig/rpcrdma_cm.config" "$kconfig/base-$RPCRDMA_CM_KBASE.config")
patches=()
if [ $stock = 0 ]; then
	shopt -s nullglob
	patches=("$KBASE_PATCHES"/*.patch)
	shopt -u nullglob
fi
# Options of the series itself (kconfig/series-<base>.config). A stock
# variant merges them too, so that built from the source it has the
# configuration it has when derived from the patched tree; the options only
# the series defines do not exist there and drop out (not checked below).
series_fragment=$kconfig/series-$RPCRDMA_CM_KBASE.config
if [ -f "$series_fragment" ]; then
	fragments+=("$series_fragment")
fi
# The memory checkers: on the bases whose test kernel has them, in every
# variant but plain; KASAN's checks scoped (below) but in debug.
MEMORY_CHECKED_BASES="7.3"
checked_base=0
[[ " $MEMORY_CHECKED_BASES " != *" $RPCRDMA_CM_KBASE "* ]] || checked_base=1
# plain where the test kernel has no checkers: the test kernel's tree.
if [ $checked_base = 0 ] && [ "$patched_variant" = plain ]; then
	patched_variant=default
	case $variant in plain) variant=default ;; stock-plain) variant=stock ;; esac
fi
memory=0
case $patched_variant in
default) memory=$checked_base ;;
debug | checked) memory=1 ;;
esac
[ $memory = 0 ] || fragments+=("$kconfig/memory.config")
case $patched_variant in debug | checked) fragments+=("$kconfig/debug.config") ;; esac
scoped=0
[ $memory = 0 ] || [ "$patched_variant" = debug ] || scoped=1

# The KASAN scope of default and checked (where they have KASAN): the
# directories (and the Rust kernel crate, which holds the sunrpc
# abstraction) whose objects get KASAN's checks; every other object is
# built without them. One make argument, KASAN_SANITIZE, evaluated per
# object with its path ($@): it takes the place of every directory's own
# KASAN_SANITIZE (a command-line variable wins over makefile assignments,
# and reaches the sub-makes), while an object's KASAN_SANITIZE_<name>.o
# := n in the tree still keeps that object uninstrumented (Kbuild reads
# it first). Kept in the tree's kasan-scope file: a stock tree built from
# it uses the same argument, and any other make in the tree must too
# (bisect-series.sh does; without it every object would be rebuilt with
# KASAN). Objects built outside the tree (rpcrdma_cm.ko, the test
# modules) are instrumented whole.
KASAN_SCOPE_DIRS="net/sunrpc/xprtrdma/ drivers/infiniband/core/ drivers/infiniband/sw/rxe/ drivers/infiniband/sw/siw/"
kasan_scope_arg() {
	local d pats=''
	for d in $KASAN_SCOPE_DIRS; do
		pats="$pats $d%"
	done
	echo "KASAN_SANITIZE=\$(if \$(filter$pats rust/kernel.o,\$@),y,n)"
}
# kasan_scope_check TREE: the scope took. Every object compiled from a
# source of the directories (a .cmd with a source_ line whose source is
# there: not a composite module's link, not a stale .cmd of a file a stock
# tree no longer has) and the kernel crate has KASAN's checks, but one
# that its Makefile keeps uninstrumented (KASAN_SANITIZE_<file>.o := n);
# no compiled object elsewhere has them, but one its Makefile asks for
# (KASAN_SANITIZE_<file>.o := y).
kasan_scope_check() {
	local tree=$1 f src obj dir stem d n=0 bad=() inscope
	while IFS= read -r f; do
		src=$(sed -n 's/^source_[^ ]* := //p' "$f" | head -n 1)
		[ -n "$src" ] && [ -f "$tree/$src" ] || continue
		obj=${f#"$tree"/}
		dir=${obj%/*}
		stem=$(basename "$obj" .o.cmd)
		stem=${stem#.}
		inscope=no
		for d in $KASAN_SCOPE_DIRS; do
			case "$obj" in "$d"*) inscope=yes ;; esac
		done
		[ "$obj" != rust/.kernel.o.cmd ] || inscope=yes
		if grep -q 'sanitize=kernel-address\|sanitizer=kernel-address' "$f"; then
			[ $inscope = yes ] && n=$((n + 1)) && continue
			grep -qsE "^KASAN_SANITIZE_$stem\.o[[:space:]]*:?=[[:space:]]*y" "$tree/$dir/Makefile" "$tree/$dir/Kbuild" ||
				bad+=("$obj (instrumented)")
		elif [ $inscope = yes ]; then
			grep -qsE "^KASAN_SANITIZE_$stem\.o[[:space:]]*:?=[[:space:]]*n" "$tree/$dir/Makefile" "$tree/$dir/Kbuild" ||
				bad+=("$obj (not instrumented)")
		fi
	done < <(find "$tree" -name '.*.o.cmd' ! -name '*.mod.o.cmd' ! -path '*/.virtme_mods/*')
	[ "$n" -gt 0 ] || bad+=("no object in $KASAN_SCOPE_DIRS")
	[ ${#bad[@]} -eq 0 ] || rpcrdma_cm_die "KASAN scope not as asked: ${bad[*]}"
	echo "kernel: KASAN in the $n objects of $KASAN_SCOPE_DIRS and rust/kernel.o, in no other"
}
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

# A stock variant from the built patched tree of its base, if there is one.
if [ $stock = 1 ]; then
	patched=$("$0" --print-dir "$patched_variant")
	if [ -f "$(dirname "$patched")/built" ] && [ -d "$patched/.git" ]; then
		base_subject="Debian $KBASE_SOURCE_PKG"
		start=$(date +%s)
		# (one line as a build from the source prints it: lib.sh's
		# progress_kernel reads it)
		echo "kernel: building $variant in $dir"
		echo "kernel: incrementally from $patched"
		tip=$(git -C "$patched" rev-parse HEAD)
		base=$(git -C "$patched" log --format='%H %s' | awk -v s="$base_subject" \
			'substr($0, 42) == s { print $1 }' | tail -n 1)
		[ -n "$base" ] || rpcrdma_cm_die "$patched has no commit '$base_subject'"
		rm -rf "$dir"
		mkdir -p "$dir/linux"
		# Objects and timestamps as they are; no .virtme_mods: its links
		# name the patched tree's modules, and vng rebuilds it for this tree.
		tar -C "$patched" --exclude=./.virtme_mods -cf - . | tar -C "$dir/linux" -xpf -
		cd "$dir/linux"
		git -c advice.detachedHead=false checkout -q --detach "$base"
		# What the series added is gone, what it changed is back to Debian's.
		[ -z "$(git status --porcelain --untracked-files=no)" ] ||
			rpcrdma_cm_die "the stock tree differs from '$base_subject' after the checkout"
		[ ! -e include/linux/sunrpc/rpc_rdma_cm.h ] ||
			rpcrdma_cm_die "include/linux/sunrpc/rpc_rdma_cm.h is still there: the checkout did not undo the series"
		echo "kernel: files the series touched (they recompile): $(git diff --name-only "$base" "$tip" | wc -l)"
		# The patched tree's KASAN scope, as it was built.
		scope=()
		if [ $scoped = 1 ]; then
			[ -s "$(dirname "$patched")/kasan-scope" ] ||
				rpcrdma_cm_die "$(dirname "$patched")/kasan-scope missing: build the $patched_variant variant again"
			scope=("$(cat "$(dirname "$patched")/kasan-scope")")
			cp "$(dirname "$patched")/kasan-scope" "$dir/kasan-scope"
		fi
		# shellcheck disable=SC2046 # the make arguments, one word each
		make -s -j"$(($(nproc) + 1))" $(kernel_make_args) "${scope[@]}" bzImage modules
		[ $scoped = 0 ] || kasan_scope_check "$dir/linux"
		touch "$dir/built"
		echo "kernel: $variant built incrementally in $(($(date +%s) - start)) s: $dir/linux"
		exit 0
	fi
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
	[ $stock = 1 ] && [ "$f" = "$series_fragment" ] && continue
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

scope=()
if [ $scoped = 1 ]; then
	scope=("$(kasan_scope_arg)")
	printf '%s\n' "${scope[0]}" >"$dir/kasan-scope"
fi
start=$(date +%s)
# shellcheck disable=SC2086
make -s -j"$(($(nproc) + 1))" $args "${scope[@]}" bzImage modules
[ $scoped = 0 ] || kasan_scope_check "$src"
touch "$dir/built"
echo "kernel: built in $(($(date +%s) - start)) s: $src"
