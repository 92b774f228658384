#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install exactly what rpcrdma_cm needs to build its test kernel, its module,
# its host crates and to run its guests. Idempotent: a second run checks the
# pinned versions and installs nothing. Run as root (or via sudo).
set -euo pipefail

# Pinned versions. The kernel's Rust support in 6.12 is tied to these.
LINUX_SOURCE_VERSION=6.12.118-1~deb12u1
RUST_WEB_VERSION=1.85.0+dfsg3-1~deb12u3
BINDGEN_VERSION=0.69.5
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
	rdma-core ibverbs-utils rdmacm-utils python3-pyverbs librdmacm-dev libibverbs-dev
	nfs-kernel-server nfs-common iproute2 tshark tcpdump procps jq
	python3-pip xz-utils
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

echo "deps: ok (linux-source $LINUX_SOURCE_VERSION, rustc $(/usr/bin/rustc --version | cut -d' ' -f2), $("$BINDGEN" --version), virtme-ng $VIRTME_NG_VERSION)"
