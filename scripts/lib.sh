# SPDX-License-Identifier: GPL-2.0
# Shared settings for the rpcrdma_cm scripts. Source it; do not run it.

RPCRDMA_CM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RPCRDMA_CM_TOOLS=${RPCRDMA_CM_TOOLS:-/opt/rpcrdma-cm-tools}
RPCRDMA_CM_CACHE=${RPCRDMA_CM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcrdma_cm}
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
KERNEL_RUSTC=${KERNEL_RUSTC:-/usr/bin/rustc}
KERNEL_BINDGEN=${KERNEL_BINDGEN:-$RPCRDMA_CM_TOOLS/bin/bindgen}
KERNEL_LLVM=${KERNEL_LLVM:--19}
VNG=${VNG:-$RPCRDMA_CM_TOOLS/virtme-ng/bin/vng}

# The make arguments every kernel and module build uses.
kernel_make_args() {
	echo "LLVM=$KERNEL_LLVM RUSTC=$KERNEL_RUSTC BINDGEN=$KERNEL_BINDGEN"
}

rpcrdma_cm_die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# vng runs virtme-run from its own venv; append (not prepend) that venv so
# that the guests' python3 stays the system one (pyverbs lives there).
case ":$PATH:" in
*":$RPCRDMA_CM_TOOLS/virtme-ng/bin:"*) ;;
*) PATH=$PATH:$RPCRDMA_CM_TOOLS/virtme-ng/bin ;;
esac
export PATH
