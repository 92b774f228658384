#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate rpcrdma_cm's hook bindings (rust/hook_bindings.rs includes them)
# for a kernel whose bindings crate lacks them, with the kernel's own
# bindgen command: the one its build saved for rust/bindings/
# bindings_generated.rs, with the hook's header in place of
# bindings_helper.h, the series' include directory first, and only the
# hook's items (and what they name) kept.
#
#   scripts/distro/hook-bindings.sh TREE INCLUDE HEADER OUT
#     TREE     the prepared kernel tree whose rust/ the module builds against
#     INCLUDE  the series' include/ (with linux/sunrpc/rpc_rdma_cm.h)
#     HEADER   the header to read (rust/hook_bindings.h)
#     OUT      the Rust file to write
#
# Runs where TREE's bindgen ran (the distribution's build root).
set -euo pipefail

[ $# = 4 ] || { echo "usage: $0 TREE INCLUDE HEADER OUT" >&2; exit 2; }
tree=$1 include=$2 header=$3 out=$4
saved=$tree/rust/bindings/.bindings_generated.rs.cmd
[ -r "$saved" ] || { echo "hook-bindings: $saved missing: is $tree prepared with CONFIG_RUST?" >&2; exit 1; }

# The saved command: "savedcmd_<target> := bindgen <header> <options> -o
# <target> -- <clang flags>; <post-processing of target>", with make's
# $(pound) for '#' and $$ for '$'. Only the bindgen command is taken (the
# post-processing would rewrite the tree's own file); what the kernel's
# post-processing does to constants is not needed by the hook's items.
cmd=$(sed -n 's/^savedcmd_rust\/bindings\/bindings_generated\.rs := //p' "$saved")
cmd=${cmd%%; *}
cmd=${cmd//'$(pound)'/#}
cmd=${cmd//'$$'/$}
helper=' rust/bindings/bindings_helper.h '
target=' -o rust/bindings/bindings_generated.rs -- '
case "$cmd" in
bindgen*"$helper"*"$target"*) ;;
*) echo "hook-bindings: $saved is not a bindgen command of the form this script knows" >&2; exit 1 ;;
esac
keep="--allowlist-type rpcrdma_cm_.* --allowlist-function rpcrdma_cm_.* --allowlist-var RPCRDMA_CM_.*"
keep+=" --allowlist-type sockaddr_in6? --allowlist-var AF_INET6?"
keep+=" --allowlist-type __kernel_sockaddr_storage --allowlist-type __kernel_sa_family_t"
cmd=${cmd/"$helper"/ $(printf '%q' "$header") }
cmd=${cmd/"$target"/ $keep -o $(printf '%q' "$out") -- -I$(printf '%q' "$include") }
# The dependency file goes with the output.
cmd=${cmd/"-Wp,-MMD,rust/bindings/.bindings_generated.rs.d"/"-Wp,-MMD,$(printf '%q' "$out.d")"}
case "$cmd" in
*"rust/bindings/"*) echo "hook-bindings: the command still names the tree's own bindings: $cmd" >&2; exit 1 ;;
esac
cd "$tree"
sh -c "$cmd"
echo "hook-bindings: $out ($(grep -cE '^pub (fn|struct|union|const|type)' "$out") items)"
