#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make distro': the series' rpcrdma.ko and rpcrdma_cm.ko for a
# distribution's own kernel, built against its headers, without rebuilding
# or touching the kernel image.
#
#   scripts/distro/distro.sh build [RELEASE]
#   scripts/distro/distro.sh install [RELEASE]     (DESTDIR: another root)
#   scripts/distro/distro.sh uninstall [RELEASE]   (DESTDIR as for install)
#   scripts/distro/distro.sh boot-root [RELEASE]   prints the directory that
#       holds the distribution's own kernel image and modules, unpacked
#       from its packages (for the test that boots them)
#   scripts/distro/distro.sh tree [RELEASE]   prints the prepared source tree
#       of RELEASE (its kselftest helpers, for that test)
#   scripts/distro/distro.sh version [RELEASE]   prints RELEASE and the Debian
#       version of its packages
#   scripts/distro/distro.sh suite [RELEASE]   prints the Debian release of
#       RELEASE's build root (distro-test.sh takes its lock,
#       ~/.cache/rpcrdma_cm/distro/lock-SUITE)
#   scripts/distro/distro.sh rust [RELEASE]   prints y when RELEASE was built
#       with Rust (CONFIG_RUST in its headers' .config: rpcrdma_cm.ko too),
#       n when not (rpcrdma.ko only)
#
# RELEASE is a kernel release listed in scripts/distro/debian.pins
# (default: the first there, Debian's 7.3.4+deb13-amd64).
#
# rpcrdma.ko (net/sunrpc/xprtrdma, itself a module: vmlinux is not touched)
# is built from Debian's linux-source of the very version of the headers,
# with the series' patches that change only net/sunrpc/xprtrdma and
# include/ (the stock fixes, the hooks, the tracepoints; nothing under
# rust/), against the distribution's headers package, and installed in
# /lib/modules/RELEASE/updates/, which depmod prefers to the stock module.
# The headers changed are used by rpcrdma.ko alone, so nothing else
# depends on their layout.
#
# On a kernel built with Rust, rpcrdma_cm.ko too. Debian's headers have no
# rust/ (no metadata of the kernel crate): it is rebuilt from the same
# source, with the distribution's .config and the compiler whose version
# text the kernel carries (trixie's rustc), which is what a linux-librust
# package would hold; then every Rust symbol the kernel exports
# (Module.symvers) must be defined by that name in the rebuilt crates,
# crate disambiguators included, or the build stops and names the symbols
# that differ. The module compiles the series' abstraction
# (rust/kernel/sunrpc/rdma_cm.rs of 7.3 patch 0019, the same file) and
# bindings bindgen generates for the hook's header (hook-bindings.sh); see
# rust/Kbuild for RPCRDMA_CM_DISTRO.
#
# Everything runs in a build root of the distribution's own release (a
# debootstrap of Debian's packages, cached), so that the compilers are the
# ones the kernel was built with whatever the host runs.
#
# Outputs: build/distro/RELEASE/{rpcrdma.ko,rpcrdma_cm.ko,report.txt}.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

PINS=$RPCRDMA_CM_TOP/scripts/distro/debian.pins
DISTRO_CACHE=$RPCRDMA_CM_CACHE/distro
# The build root: the Debian release the kernel was built in (the suite of
# its pinned packages, without -backports or -security), with that
# release's compilers. Debian 13 (the 7.3 backports): rustc, rust-src and
# rustfmt are pinned to the version whose text Debian's 7.3 kernels carry
# (checked against the headers' .config below), bindgen to trixie's.
# Debian 12 (its 6.12 kernels, no Rust): gcc-12, the compiler of those.
root_packages() {
	case $1 in
	trixie)
		echo "rustc=$ROOT_RUSTC rust-src=$ROOT_RUSTC rustfmt=$ROOT_RUSTC bindgen=0.71.1-6" \
			clang-19 llvm-19 lld-19 libclang-19-dev gcc-14 gcc make flex bison bc libelf-dev \
			libssl-dev python3 cpio kmod dwarves openssl xz-utils ;;
	bookworm)
		echo gcc-12 gcc make flex bison bc libelf-dev libssl-dev python3 cpio kmod dwarves \
			openssl xz-utils ;;
	*) rpcrdma_cm_die "no build root is known for Debian $1 (scripts/distro/distro.sh root_packages)" ;;
	esac
}
ROOT_RUSTC=1.85.1+dfsg1-1+deb13u1

usage() {
	sed -n '/^#   scripts/,/^# RELEASE/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
[ $# -ge 1 ] || usage
action=$1
release=${2:-$(awk '!/^#/ && NF { print $1; exit }' "$PINS")}
awk -v r="$release" '$1 == r { f = 1 } END { exit !f }' "$PINS" ||
	rpcrdma_cm_die "no kernel release '$release' in $PINS (a new release is added there on purpose, with its checksums)"
case $release in
*[!A-Za-z0-9.+_~-]*) rpcrdma_cm_die "'$release' is not a kernel release" ;;
esac
out=$RPCRDMA_CM_TOP/build/distro/$release
ROOT_SUITE=$(awk -v r="$release" '$1 == r && $6 == "build" { sub(/-(backports|security|updates)$/, "", $2); print $2; exit }' "$PINS")
read -r -a ROOT_PACKAGES <<<"$(root_packages "$ROOT_SUITE")"
[ ${#ROOT_PACKAGES[@]} -gt 0 ] || exit 1
mkdir -p "$RPCRDMA_CM_CACHE/distro"
# One build, install or test at a time per build root (its trees, and the
# releases built in it); releases of another Debian release go on beside
# them. distro-test.sh holds the lock for its whole run and says so
# (RPCRDMA_CM_DISTRO_LOCKED=1): the calls it makes do not take it again.
if [ -z "${RPCRDMA_CM_DISTRO_LOCKED:-}" ]; then
	exec 9>"$RPCRDMA_CM_CACHE/distro/lock-$ROOT_SUITE"
	flock 9
fi

# pins ROLE: the pinned packages of the release for ROLE, one line each:
# SUITE PACKAGE VERSION SHA256.
pins() {
	awk -v r="$release" -v role="$1" '$1 == r && $6 == role { print $2, $3, $4, $5 }' "$PINS"
}

# pinned_version: the Debian version of the release's packages (its
# headers', which is its image's).
pinned_version() {
	pins build | awk 'NR == 1 { print $3 }'
}

# fetch ROLE: the release's packages for ROLE in $DISTRO_CACHE/debs,
# downloaded unless there, each checked against its pinned SHA256.
fetch() {
	local suite suites pkg ver sum deb
	mkdir -p "$DISTRO_CACHE/debs"
	while read -r suite pkg ver sum; do
		deb=$(printf '%s/debs/%s_%s_' "$DISTRO_CACHE" "$pkg" "${ver//:/%3a}")
		if ! ls "$deb"*.deb >/dev/null 2>&1; then
			echo "distro: fetching $pkg $ver from $suite" >&2
			# A security update leaves the security suite when the next
			# one comes, and reaches the release's own suite at its point
			# release: both are asked (the checksum fixes the content).
			suites=$suite
			case $suite in *-security) suites="$suite ${suite%-security}" ;; esac
			apt_fetch "$DISTRO_CACHE/debs" "$suites" "$pkg=$ver" ||
				rpcrdma_cm_die "$pkg=$ver is not in $suite any more: update $PINS on purpose"
		fi
		echo "$sum  $(ls "$deb"*.deb)" | sha256sum -c --quiet - ||
			rpcrdma_cm_die "$(ls "$deb"*.deb): checksum differs from the one pinned in $PINS"
		ls "$deb"*.deb
	done < <(pins "$1")
}

# unpack DEB DIR: DEB's files into DIR, through DIR's links to directories
# (dpkg-deb -x would replace a merged-/usr root's lib -> usr/lib with the
# package's lib/, as Debian 12's headers have one, and so break the root).
unpack() {
	dpkg-deb --fsys-tarfile "$1" | tar -x --keep-directory-symlink -C "$2"
}

# rust_kernel: y or n, CONFIG_RUST of the release's headers (read from
# their package, fetched if need be). grep reads to the end (no -q): under
# pipefail, a grep that stopped early would fail the pipe by tar's SIGPIPE.
rust_kernel() {
	local debs deb config
	debs=$(fetch build) || exit 1
	for deb in $debs; do
		config=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/linux-headers-$release/.config" 2>/dev/null) ||
			continue
		if grep -x 'CONFIG_RUST=y' >/dev/null <<<"$config"; then
			echo y
		else
			echo n
		fi
		return
	done
	rpcrdma_cm_die "no .config of $release in its headers packages"
}

# The build root, made once for its package list and reused.
ROOT=$DISTRO_CACHE/root-$ROOT_SUITE-$(echo "$ROOT_SUITE ${ROOT_PACKAGES[*]}" | sha256sum | cut -c1-12)
make_root() {
	[ -f "$ROOT/.complete" ] && return 0
	command -v debootstrap >/dev/null || rpcrdma_cm_die "debootstrap missing: run 'make deps'"
	local tmp=$ROOT.tmp
	rm -rf --one-file-system "$tmp"
	echo "distro: making a $ROOT_SUITE build root in $ROOT (about 2 minutes)"
	debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$ROOT_SUITE" "$tmp" "$RPCRDMA_CM_DEBIAN_MIRROR" >"$DISTRO_CACHE/debootstrap.log" 2>&1 ||
		rpcrdma_cm_die "debootstrap of $ROOT_SUITE failed: see $DISTRO_CACHE/debootstrap.log"
	chroot "$tmp" sh -c "apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends ${ROOT_PACKAGES[*]}" >"$DISTRO_CACHE/root-packages.log" 2>&1 ||
		rpcrdma_cm_die "installing the build root's packages failed: see $DISTRO_CACHE/root-packages.log"
	touch "$tmp/.complete"
	rm -rf --one-file-system "$ROOT"
	mv "$tmp" "$ROOT"
}

# in_root CMD: run CMD (a shell command) in the build root, with /proc
# (objtool reads it) mounted in a mount namespace of its own, so that it
# goes with the command, however that ends.
in_root() {
	unshare --mount --propagation private /bin/sh -c \
		'mount -t proc proc "$1/proc" && exec chroot "$1" /bin/sh -c "$2"' in-root "$ROOT" "$1"
}

# config KEY: the value of CONFIG_KEY in the distribution's .config.
config() {
	sed -n "s/^CONFIG_$1=//p" "$ROOT$HEADERS/.config" | tr -d '"'
}

# The files of the series a distribution's rpcrdma.ko may take: those only
# rpcrdma includes (checked in the prepared tree of a Rust kernel below).
C_FILES='net/sunrpc/xprtrdma/*.[ch] net/sunrpc/xprtrdma/Makefile include/linux/sunrpc/rpc_rdma.h
include/linux/sunrpc/rpc_rdma_cm.h include/linux/sunrpc/svc_rdma.h include/trace/events/rpcrdma.h'
# The Kconfig of those: a patch may add an option that only rpcrdma's
# files use, which the distribution's configuration does not have; its
# rpcrdma.ko is built without it, and the Kconfig change is left out
# (report.txt says so). Only added KUnit test options (kconfig_left_out
# checks every line): any other change would alter what the module does.
KCONFIG_FILES='net/sunrpc/Kconfig'

# kconfig_left_out PATCH: the options PATCH adds in KCONFIG_FILES, one
# line; fails when one is not a KUnit test option (*_KUNIT_TEST).
kconfig_left_out() {
	local f out options=()
	for f in $KCONFIG_FILES; do
		# Every line the patch adds or removes in f must be part of an
		# added "config *_KUNIT_TEST" entry (or an added blank line);
		# prints those options, or the first line that is not and fails.
		out=$(awk -v f="$f" '
			/^diff --git / { inside = ($3 == "a/" f); entry = ""; next }
			!inside || /^(\+\+\+|---) / { next }
			/^\+[ \t]*$/ { next }
			/^\+config / { entry = $2 }
			/^[-+]/ {
				if (entry !~ /_KUNIT_TEST$/ || /^-/) { print; bad = 1; exit }
				if (/^\+config /) print entry
				next
			}
			{ entry = "" }
			END { exit bad }' "$1") || { echo "$out"; return 1; }
		# shellcheck disable=SC2206 # option names, one word each
		options+=($out)
	done
	echo "${options[*]}"
}

# patch_part PATCH: "c" when every file PATCH changes is one of C_FILES
# (or KCONFIG_FILES or under Documentation/, with one of C_FILES at
# least; the documentation is left out),
# "abstraction" for the kernel crate's rdma_cm.rs (taken alone),
# "in-tree" for the in-tree copy of rpcrdma_cm (built from rust/ here
# instead), "kernel" when it changes none of them (the kernel image's); a
# patch that mixes rpcrdma's files with others stops the build.
patch_part() {
	local f pat inside=0 outside=0 abstraction=0
	if grep -q '^+++ b/net/sunrpc/xprtrdma/rpcrdma_cm/' "$1"; then
		echo in-tree
		return
	fi
	for f in $(sed -n 's|^+++ b/||p' "$1"); do
		[ "$f" = rust/kernel/sunrpc/rdma_cm.rs ] && abstraction=1
		for pat in $KCONFIG_FILES; do
			[ "$f" = "$pat" ] && continue 2
		done
		case $f in Documentation/*) continue ;; esac
		for pat in $C_FILES; do
			# shellcheck disable=SC2254 # the pattern is meant
			case $f in $pat) inside=$((inside + 1)); continue 2 ;; esac
		done
		outside=$((outside + 1))
	done
	if [ $abstraction = 1 ]; then
		echo abstraction
	elif [ $inside -gt 0 ] && [ $outside -eq 0 ]; then
		echo c
	elif [ $inside -eq 0 ]; then
		echo kernel
	else
		rpcrdma_cm_die "${1##*/} changes rpcrdma's files and others: it cannot go into rpcrdma.ko alone"
	fi
}

build() {
	local debs deb tarball base ver work patched cc rust p part left applied=()
	require_root "make distro"
	rm -f "$out/rpcrdma.ko" "$out/rpcrdma_cm.ko"
	debs=$(fetch build) || exit 1
	make_root
	for deb in $debs; do unpack "$deb" "$ROOT"; done
	HEADERS=/usr/src/linux-headers-$release
	[ -f "$ROOT$HEADERS/.config" ] || rpcrdma_cm_die "no .config in $HEADERS: not a headers package?"
	# The source: Debian's of the same version, and the series of its base.
	ver=$(pinned_version)
	base=$(sed -n 's/^# Linux\/x86 \([0-9]*\.[0-9]*\)\..*/\1/p' "$ROOT$HEADERS/.config" | head -n 1)
	kbase_set "$base"
	[ "$ver" = "$KBASE_SOURCE_VERSION" ] ||
		rpcrdma_cm_die "headers $ver but the pinned $KBASE_SOURCE_PKG is $KBASE_SOURCE_VERSION: the source must be the kernel's own"
	tarball=$LINUX_TARBALL
	[ -r "$tarball" ] || rpcrdma_cm_die "$tarball missing: run 'make deps'"
	# The compiler the kernel was built with, by its version text (Kbuild
	# only warns about another, in a log nobody reads).
	cc=$(config CC_VERSION_TEXT | cut -d' ' -f1)
	[ "$(in_root "$cc --version" | head -n 1)" = "$(config CC_VERSION_TEXT)" ] ||
		rpcrdma_cm_die "the kernel was built by '$(config CC_VERSION_TEXT)'; the build root has '$(in_root "$cc --version" | head -n 1)'"
	rust=$(config RUST)
	work=/build/$release
	mkdir -p "$ROOT$work" "$out"
	: >"$out/report.txt"

	# The series' C part, on the stock files it changes.
	patched=$work/patched
	rm -rf "$ROOT$patched"
	mkdir -p "$ROOT$patched"
	echo "distro: $KBASE_SOURCE_PKG $ver with the C patches of patches/$base"
	tar -xJf "$tarball" -C "$ROOT$patched" --strip-components=1 \
		"$KBASE_SOURCE_PKG/net/sunrpc/xprtrdma" "$KBASE_SOURCE_PKG/include/linux/sunrpc" \
		"$KBASE_SOURCE_PKG/include/trace/events/rpcrdma.h"
	# git apply outside any repository (no parent's, whatever the cache's
	# place): as patch(1), relative to the directory.
	export GIT_CEILING_DIRECTORIES=$ROOT$work
	for p in "$KBASE_PATCHES"/*.patch; do
		part=$(patch_part "$p") || exit 1
		case $part in
		c)
			left=$(kconfig_left_out "$p") ||
				rpcrdma_cm_die "${p##*/} changes net/sunrpc/Kconfig beyond a KUnit test option ('$left'), which rpcrdma.ko would be built without"
			# shellcheck disable=SC2046,SC2086 # one --exclude per file
			(cd "$ROOT$patched" && git apply $(printf -- '--exclude=%s ' $KCONFIG_FILES 'Documentation/*') "$p") ||
				rpcrdma_cm_die "${p##*/} does not apply"
			applied+=("${p##*/}")
			echo "rpcrdma.ko: ${p##*/}${left:+ (its option $left left out: not in the configuration of $release)}" ;;
		abstraction)
			if [ "$rust" = y ]; then
				(cd "$ROOT$patched" && git apply --include=rust/kernel/sunrpc/rdma_cm.rs "$p") ||
					rpcrdma_cm_die "${p##*/} does not apply"
				echo "rpcrdma_cm.ko (its rust/kernel/sunrpc/rdma_cm.rs): ${p##*/}"
			else
				echo "not taken (the Rust abstraction; no Rust in $release): ${p##*/}"
			fi ;;
		in-tree) echo "not taken (the in-tree rpcrdma_cm; rust/ is built instead): ${p##*/}" ;;
		kernel) echo "not taken (the kernel image's): ${p##*/}" ;;
		esac >>"$out/report.txt"
	done
	# The series' headers before the kernel's (as out-of-tree builds of
	# in-tree modules do), then the kernel's own Makefile; and in the
	# module's information, what it is (modinfo rpcrdma: rpcrdma_cm_series)
	# and a version: Debian's rpcrdma has none, and DKMS refuses to install
	# a module whose version equals the installed one's ("exactly matches":
	# both empty), so without one 'dkms install' left Debian's in place.
	cat >"$ROOT$patched/net/sunrpc/xprtrdma/Kbuild" <<-EOF
		NOSTDINC_FLAGS += -I$patched/include
		include $patched/net/sunrpc/xprtrdma/Makefile
		rpcrdma-y += rpcrdma_cm_series.o
	EOF
	local describe
	# (RPCRDMA_CM_VERSION: DKMS's package version, its tree has no .git)
	describe=${RPCRDMA_CM_VERSION:-$(git -C "$RPCRDMA_CM_TOP" describe --always --dirty 2>/dev/null || echo unknown)}
	cat >"$ROOT$patched/net/sunrpc/xprtrdma/rpcrdma_cm_series.c" <<-EOF
		// SPDX-License-Identifier: GPL-2.0
		#include <linux/module.h>
		MODULE_INFO(rpcrdma_cm_series, "patches/$base $describe: ${applied[*]%%-*}");
		MODULE_VERSION("rpcrdma_cm-$base-$describe");
	EOF
	echo "distro: rpcrdma.ko against $HEADERS"
	in_root "make -s -C $HEADERS M=$patched/net/sunrpc/xprtrdma CC=$cc -j$(nproc) modules" >"$out/rpcrdma.log" 2>&1 ||
		{ cat "$out/rpcrdma.log" >&2; rpcrdma_cm_die "rpcrdma.ko did not build (see $out/rpcrdma.log)"; }
	install -m 0644 "$ROOT$patched/net/sunrpc/xprtrdma/rpcrdma.ko" "$out/rpcrdma.ko"

	if [ "$rust" != y ]; then
		echo "no Rust in $release (CONFIG_RUST unset): rpcrdma.ko only" | tee -a "$out/report.txt"
		# The whole source, unprepared, once per source tarball: for the
		# check below and the kselftest helpers of distro-test.sh (on a
		# Rust kernel, the metadata's tree serves both).
		local tree=$work/linux stamp
		stamp="$(sha256sum <"$tarball" | cut -c1-16) source"
		if [ "$(cat "$ROOT$tree.stamp" 2>/dev/null)" != "$stamp" ]; then
			rm -rf "$ROOT$tree" "$ROOT$tree.stamp"
			mkdir -p "$ROOT$tree"
			tar -xJf "$tarball" -C "$ROOT$tree" --strip-components=1
			echo "$stamp" >"$ROOT$tree.stamp"
		fi
		header_users "$ROOT$tree"
		return 0
	fi
	build_rust "$work" "$patched" "$cc" "$base"
}

# header_users TREE: the series' headers that rpcrdma.ko takes must be
# included by rpcrdma alone in the kernel's source TREE: nothing else of
# the kernel depends on their layout. (Module.symvers does not show it:
# modpost records the versions of what rpcrdma imports from the
# distribution's file, and genksyms versions only what it exports.)
header_users() {
	local h users
	for h in linux/sunrpc/rpc_rdma.h linux/sunrpc/svc_rdma.h trace/events/rpcrdma.h; do
		users=$(cd "$1" && grep -rl --include='*.[ch]' "#include <$h>" . |
			grep -v '^\./net/sunrpc/xprtrdma/' | grep -v '^\./include/linux/sunrpc/svc_rdma\.h$' || true)
		[ -z "$users" ] || rpcrdma_cm_die "$h is included outside rpcrdma ($users): the rebuilt rpcrdma.ko would not match them"
	done
}

# build_rust WORK PATCHED CC BASE: the kernel crate's metadata, the symbol
# check, rpcrdma_cm.ko.
build_rust() {
	local work=$1 patched=$2 cc=$3 base=$4 tree have want stamp cm kargs
	want=$(config RUSTC_VERSION_TEXT)
	have=$(chroot "$ROOT" rustc --version)
	[ "$have" = "$want" ] ||
		rpcrdma_cm_die "the kernel was built by '$want'; the build root has '$have'"
	tree=$work/linux
	kargs="CC=$cc KERNELRELEASE=$release"
	stamp="$(sha256sum <"$LINUX_TARBALL" | cut -c1-16) $(sha256sum <"$ROOT$HEADERS/.config" | cut -c1-16) ${ROOT##*/}"
	if [ "$(cat "$ROOT$tree.stamp" 2>/dev/null)" != "$stamp" ]; then
		echo "distro: the kernel crate's metadata of $release (a few minutes)"
		rm -rf "$ROOT$tree" "$ROOT$tree.stamp"
		mkdir -p "$ROOT$tree"
		tar -xJf "$LINUX_TARBALL" -C "$ROOT$tree" --strip-components=1
		cp "$ROOT$HEADERS/.config" "$ROOT$tree/.config"
		# The signing key of Debian's build is not here, nor needed.
		sed -i 's|^CONFIG_MODULE_SIG_KEY=.*|CONFIG_MODULE_SIG_KEY="certs/signing_key.pem"|' "$ROOT$tree/.config"
		in_root "cd $tree && make -s $kargs olddefconfig" >"$out/metadata.log" 2>&1 ||
			rpcrdma_cm_die "olddefconfig failed (see $out/metadata.log)"
		# The same configuration: a difference would change the headers
		# bindgen reads and so the crates' symbols.
		if diff <(grep -v '^CONFIG_MODULE_SIG_KEY=' "$ROOT$HEADERS/.config" | grep -v '^#') \
			<(grep -v '^CONFIG_MODULE_SIG_KEY=' "$ROOT$tree/.config" | grep -v '^#') >"$out/config.diff"; then
			rm -f "$out/config.diff"
		else
			rpcrdma_cm_die "the build root's olddefconfig changed $release's configuration (see $out/config.diff)"
		fi
		in_root "cd $tree && make -s $kargs -j$(nproc) prepare && make -s $kargs modules_prepare" \
			>>"$out/metadata.log" 2>&1 || rpcrdma_cm_die "prepare failed (see $out/metadata.log)"
		# The distribution's exports, and its vmlinux for the modules' BTF.
		cp "$ROOT$HEADERS/Module.symvers" "$ROOT$tree/Module.symvers"
		[ ! -f "$ROOT$HEADERS/vmlinux" ] || cp "$ROOT$HEADERS/vmlinux" "$ROOT$tree/vmlinux"
		echo "$stamp" >"$ROOT$tree.stamp"
	fi
	# The Rust symbols the kernel exports and the ones the rebuilt crates
	# export must be the same set; the same source and the same .config
	# (checked above) are what make their code the same.
	"$RPCRDMA_CM_TOP/scripts/distro/rust-exports-match.sh" "$ROOT$HEADERS/Module.symvers" "$ROOT$tree" "$out" |
		tee -a "$out/report.txt"
	[ "${PIPESTATUS[0]}" = 0 ] ||
		rpcrdma_cm_die "the rebuilt kernel crate does not match $release: rpcrdma_cm.ko would not load (rpcrdma.ko is built)"
	header_users "$ROOT$tree"

	cm=$work/rpcrdma_cm
	rm -rf "$ROOT$cm"
	mkdir -p "$ROOT$cm"
	# The module's sources (not what a build left beside them).
	(cd "$RPCRDMA_CM_TOP/rust" && git ls-files -z . | xargs -0 cp --parents -t "$ROOT$cm")
	cp "$ROOT$patched/rust/kernel/sunrpc/rdma_cm.rs" "$ROOT$cm/sunrpc_rdma_cm.rs"
	cp "$RPCRDMA_CM_TOP/scripts/distro/hook-bindings.sh" "$ROOT$work/hook-bindings.sh"
	in_root "$work/hook-bindings.sh $tree $patched/include $cm/hook_bindings.h $cm/hook_bindings_generated.rs" \
		>"$out/rpcrdma_cm.log" 2>&1 || rpcrdma_cm_die "bindgen failed (see $out/rpcrdma_cm.log)"
	echo "distro: rpcrdma_cm.ko against $release's kernel crate (rebuilt)"
	in_root "make -s -C $tree $kargs M=$cm RPCRDMA_CM_DISTRO=1 \
		KBUILD_EXTRA_SYMBOLS=$patched/net/sunrpc/xprtrdma/Module.symvers modules" >>"$out/rpcrdma_cm.log" 2>&1 ||
		{ cat "$out/rpcrdma_cm.log" >&2; rpcrdma_cm_die "rpcrdma_cm.ko did not build (see $out/rpcrdma_cm.log)"; }
	if grep -E '^(warning|error)' "$out/rpcrdma_cm.log"; then
		rpcrdma_cm_die "rpcrdma_cm.ko built with warnings (see $out/rpcrdma_cm.log)"
	fi
	install -m 0644 "$ROOT$cm/rpcrdma_cm.ko" "$out/rpcrdma_cm.ko"
	echo "rpcrdma_cm.ko references $(nm -u "$out/rpcrdma_cm.ko" | awk '$2 ~ /^_R/' | wc -l) Rust symbols, all exported by $release (modpost)" |
		tee -a "$out/report.txt"
}

# moddir: /lib/modules/RELEASE under DESTDIR (or /usr/lib/modules, where
# only that exists), and the base depmod takes for it.
moddir() {
	local d=${DESTDIR:-}
	if [ -d "$d/lib/modules/$release" ]; then
		echo "$d/lib/modules/$release ${d:-/}"
	elif [ -d "$d/usr/lib/modules/$release" ]; then
		echo "$d/usr/lib/modules/$release $d/usr"
	else
		rpcrdma_cm_die "no $d/lib/modules/$release: is that kernel installed?"
	fi
}

install_modules() {
	local dir base m want
	read -r dir base < <(moddir)
	[ -f "$out/rpcrdma.ko" ] || rpcrdma_cm_die "$out/rpcrdma.ko missing: run 'make distro' first"
	# Into the running kernel: the very build the headers were (the release
	# stays the same across Debian revisions of it).
	want=$(pinned_version)
	if [ -z "${DESTDIR:-}" ] && [ "$(uname -r)" = "$release" ] && ! grep -qF " $want " /proc/version; then
		rpcrdma_cm_die "the running $release is not Debian's $want ($(cat /proc/version)): update $PINS first"
	fi
	for m in rpcrdma rpcrdma_cm; do
		[ -f "$out/$m.ko" ] || continue
		install -d "$dir/updates"
		# Without debug information, as the distribution's own.
		strip --strip-debug -o "$dir/updates/$m.ko" "$out/$m.ko"
		chmod 0644 "$dir/updates/$m.ko"
		echo "distro: installed $dir/updates/$m.ko"
	done
	depmod -b "$base" "$release"
}

uninstall_modules() {
	local dir base
	read -r dir base < <(moddir)
	rm -f "$dir/updates/rpcrdma.ko" "$dir/updates/rpcrdma_cm.ko"
	depmod -b "$base" "$release"
	echo "distro: removed rpcrdma.ko and rpcrdma_cm.ko from $dir/updates (the stock rpcrdma is used again)"
}

# The distribution's kernel image and modules, unpacked from its packages.
boot_root() {
	local dir=$DISTRO_CACHE/boot-$release debs deb
	if [ ! -f "$dir/.complete" ]; then
		debs=$(fetch boot) || exit 1
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		for deb in $debs; do unpack "$deb" "$dir.tmp"; done
		# /lib as on a merged-/usr system, so that depmod -b finds lib/modules.
		[ -e "$dir.tmp/lib" ] || ln -s usr/lib "$dir.tmp/lib"
		touch "$dir.tmp/.complete"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

case "$action" in
build) build ;;
install) require_root "make distro-install"; install_modules ;;
uninstall) require_root "make distro-uninstall"; uninstall_modules ;;
boot-root) boot_root ;;
tree) ls -d "$ROOT/build/$release/linux" ;;
version) echo "$release $(pinned_version)" ;;
rust) rust_kernel ;;
suite) echo "$ROOT_SUITE" ;;
*) usage ;;
esac
