#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install exactly what rpcrdma_cm needs to build its test kernel, its module,
# its host crates and to run its guests. Idempotent: a second run checks the
# pinned versions and installs nothing. Run as root (or via sudo).
set -euo pipefail

# Pinned versions. Two kernel bases: 6.12 LTS (the backport, from
# the host's own bookworm suites) and 7.3 (mainline, the series sent
# upstream, from trixie-backports through a private sources list: see
# fetch_linux_source_7_3 below). rustc 1.85 is the minimum of both.
# bindgen: one per base, each the version its series was built and tested
# with (0.69.5 for 6.12; 7.3 requires at least 0.71.1). 6.12 is not moved
# to 0.71.1 because its test kernel and every result of its suite were made
# with 0.69.5; a newer bindgen on an LTS base gains nothing and changes the
# generated bindings under a tested series.
# The versions are in scripts/lib.sh (LINUX_*_SOURCE_VERSION,
# BINDGEN_*_VERSION), which the kernel builds read too.
. "$(dirname "$0")/../lib.sh"
LINUX_SOURCE_VERSION=$LINUX_6_12_SOURCE_VERSION
# SHA256 of linux-source-7.3_7.3.4-1~bpo13+1_all.deb (checked after download;
# the signed Packages index says the same, this pins it against a rebuild).
LINUX_7_3_SOURCE_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
RUST_WEB_VERSION=1.85.0+dfsg3-1~deb12u3
BINDGEN_VERSION=$BINDGEN_6_12_VERSION
VIRTME_NG_VERSION=1.42

die() { echo "deps: $*" >&2; exit 1; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "run as root or install sudo"
	SUDO=sudo
fi

apt_pinned=(
	"linux-source-6.12=$LINUX_SOURCE_VERSION"
	"rustc-web=$RUST_WEB_VERSION"
	"rust-web-src=$RUST_WEB_VERSION"
	"libstd-rust-web-dev=$RUST_WEB_VERSION"
	"rust-web-clippy=$RUST_WEB_VERSION"
	"rustfmt-web=$RUST_WEB_VERSION"
)
apt_plain=(
	clang-19 lld-19 llvm-19 libclang-19-dev
	flex bison bc libelf-dev libssl-dev cpio kmod pahole make gcc
	qemu-system-x86 busybox-static
	rdma-core ibverbs-utils rdmacm-utils librdmacm-dev libibverbs-dev
	nfs-kernel-server nfs-common iproute2 tshark tcpdump procps jq shellcheck
	python3-pip xz-utils debootstrap debian-archive-keyring
)

# Which packages are missing or at another version?
need=()
for p in "${apt_pinned[@]}"; do
	name=${p%%=*} want=${p#*=}
	have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
	case "$have" in
	"install ok installed $want") ;;
	"install ok installed "*)
		echo "deps: $name is ${have##* }, want $want: reinstalling the pinned version"
		need+=("$p") ;;
	*) need+=("$p") ;;
	esac
done
for p in "${apt_plain[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		need+=("$p")
done

if [ ${#need[@]} -gt 0 ]; then
	echo "deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	if ! $SUDO apt-get install -y -qq --no-install-recommends --allow-downgrades -o Dpkg::Use-Pty=0 "${need[@]}" >/dev/null; then
		# Name the packages apt cannot install, one by one.
		bad=()
		for p in "${need[@]}"; do
			$SUDO apt-get install -s -qq --no-install-recommends --allow-downgrades "$p" >/dev/null 2>&1 ||
				bad+=("$p")
		done
		[ ${#bad[@]} -gt 0 ] || bad=("${need[@]}")
		die "apt-get cannot install: ${bad[*]}. See why with: apt-get install ${bad[*]}" \
			"(Debian bookworm and bookworm-security must be in the apt sources)"
	fi
fi

for p in "${apt_pinned[@]}"; do
	name=${p%%=*} want=${p#*=}
	have=$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)
	[ "$have" = "$want" ] ||
		die "$name is '$have', need $want: apt-get install $name=$want"
done

# bindgen-cli from crates.io, pinned and --locked.
BINDGEN_DIR=${RPCRDMA_CM_TOOLS:-/opt/rpcrdma-cm-tools}
BINDGEN=$BINDGEN_DIR/bin/bindgen
if ! "$BINDGEN" --version 2>/dev/null | grep -qx "bindgen $BINDGEN_VERSION"; then
	command -v cargo >/dev/null || die "cargo not found: install rustup (https://rustup.rs) for host crates"
	echo "deps: installing bindgen-cli $BINDGEN_VERSION into $BINDGEN_DIR"
	LIBCLANG_PATH=/usr/lib/llvm-19/lib $SUDO env "PATH=$PATH" cargo install --quiet --locked \
		--root "$BINDGEN_DIR" bindgen-cli --version "$BINDGEN_VERSION" ||
		die "cargo install bindgen-cli failed"
fi

# bindgen-cli for the 7.3 base, beside the 6.12 one.
BINDGEN_7_3=$BINDGEN_DIR/bindgen-$BINDGEN_7_3_VERSION/bin/bindgen
if ! "$BINDGEN_7_3" --version 2>/dev/null | grep -qx "bindgen $BINDGEN_7_3_VERSION"; then
	echo "deps: installing bindgen-cli $BINDGEN_7_3_VERSION into $BINDGEN_DIR/bindgen-$BINDGEN_7_3_VERSION"
	LIBCLANG_PATH=/usr/lib/llvm-19/lib $SUDO env "PATH=$PATH" cargo install --quiet --locked \
		--root "$BINDGEN_DIR/bindgen-$BINDGEN_7_3_VERSION" bindgen-cli --version "$BINDGEN_7_3_VERSION" ||
		die "cargo install bindgen-cli $BINDGEN_7_3_VERSION failed"
fi

# Linux 7.3 source: Debian's linux-source-7.3 from trixie-backports, fetched
# with apt's own client and a private sources list, lists directory and
# cache, so that the host's suites and installed packages stay as they are
# (nothing is installed; the .deb is unpacked into $BINDGEN_DIR). The
# version and the .deb's checksum are pinned: a newer Debian revision does
# not slip in, it stops here and says so.
LINUX_7_3_DIR=$BINDGEN_DIR/linux-source-7.3
fetch_linux_source_7_3() {
	local work deb stamp="$LINUX_7_3_SOURCE_VERSION $LINUX_7_3_SOURCE_SHA256"
	if [ -r "$LINUX_7_3_DIR/linux-source-7.3.tar.xz" ] &&
		[ "$(cat "$LINUX_7_3_DIR/pinned" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	echo "deps: fetching linux-source-7.3 $LINUX_7_3_SOURCE_VERSION (167 MB) from trixie-backports"
	work=$(mktemp -d)
	apt_fetch "$work" trixie-backports "linux-source-7.3=$LINUX_7_3_SOURCE_VERSION" ||
		die "linux-source-7.3=$LINUX_7_3_SOURCE_VERSION is not in trixie-backports any more:" \
			"update LINUX_7_3_SOURCE_VERSION and LINUX_7_3_SOURCE_SHA256 in scripts/kernel/deps.sh on purpose"
	deb=("$work"/linux-source-7.3_*_all.deb)
	echo "$LINUX_7_3_SOURCE_SHA256  ${deb[0]}" | sha256sum -c --quiet - ||
		die "${deb[0]##*/}: checksum differs from the pinned LINUX_7_3_SOURCE_SHA256"
	$SUDO rm -rf "$LINUX_7_3_DIR"
	$SUDO mkdir -p "$LINUX_7_3_DIR"
	dpkg-deb --fsys-tarfile "${deb[0]}" | $SUDO tar -x -C "$LINUX_7_3_DIR" --strip-components=3 \
		./usr/src/linux-source-7.3.tar.xz || die "unpacking ${deb[0]##*/} failed"
	echo "$stamp" | $SUDO tee "$LINUX_7_3_DIR/pinned" >/dev/null
	rm -rf "$work"
}
fetch_linux_source_7_3

# virtme-ng from PyPI, pinned, in its own venv so it cannot disturb the host's Python.
VNG_VENV=$BINDGEN_DIR/virtme-ng
if ! "$VNG_VENV/bin/vng" --version 2>/dev/null | grep -q "$VIRTME_NG_VERSION"; then
	echo "deps: installing virtme-ng $VIRTME_NG_VERSION into $VNG_VENV"
	/usr/bin/python3 -m venv "$VNG_VENV" 2>/dev/null || {
		$SUDO apt-get install -y -qq python3-venv >/dev/null
		/usr/bin/python3 -m venv "$VNG_VENV"
	}
	"$VNG_VENV/bin/pip" install --quiet "virtme-ng==$VIRTME_NG_VERSION" ||
		die "pip install virtme-ng==$VIRTME_NG_VERSION failed"
fi

# Host Rust (rustup) for the userspace crates; rustfmt and clippy for the checks.
if command -v rustup >/dev/null; then
	rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
	rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi

echo "deps: ok (linux-source $LINUX_SOURCE_VERSION and 7.3 $LINUX_7_3_SOURCE_VERSION," \
	"rustc $(/usr/bin/rustc --version | cut -d' ' -f2), $("$BINDGEN" --version) and $("$BINDGEN_7_3" --version)," \
	"virtme-ng $VIRTME_NG_VERSION)"
