#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The hooks' in-tree user: the last patch of the 7.3 series adds this
# repository's rpcrdma_cm module to the kernel (net/sunrpc/xprtrdma/
# rpcrdma_cm/, CONFIG_SUNRPC_XPRT_RDMA_CM), generated from the one source
# the out-of-tree build compiles, so that the two cannot drift.
#
#   scripts/kernel/in-tree-user.sh check
#       Exit 0 when every file the in-tree patch adds equals its source in
#       this repository, stripped as below (KTAP, one test per file); the
#       drift check of 'make lint' and 'make check'. Needs no kernel tree.
#   scripts/kernel/in-tree-user.sh generate TREE
#       Write the patch again from the sources, on top of TREE, a git tree
#       of the 7.3 series (the test kernel's cache tree or any clone): its
#       commit of the series' patch before this one is the parent. Run it
#       after changing the module, then rebuild the kernel.
#
# The in-tree copy is the kernel crate build (what the out-of-tree Kbuild
# builds for Linux 7.3), without the out-of-tree scaffolding:
# scripts/kernel/in-tree-strip.awk drops the C shim's and the table benchmark's
# items, the host unit tests, the compile_error! for builds without Kbuild
# and the doctest lines naming the host crate, and the kernel crate
# boundary's cfg. The patch also adds a MAINTAINERS entry for the Rust
# files; its M: (and R:) lines are the submitter's, written by
# scripts/kernel/upstream-series.sh, since no name is invented here.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

SERIES=$RPCRDMA_CM_TOP/patches/7.3
DIR=net/sunrpc/xprtrdma/rpcrdma_cm
# in-tree path <- repository path
FILES=(
	"$DIR/rpcrdma_cm_main.rs rust/rpcrdma_cm_main.rs"
	"$DIR/table.rs rust/table.rs"
	"$DIR/stats.rs rust/stats.rs"
	"$DIR/callback_times.rs rust/callback_times.rs"
	"$DIR/counter.rs rust/counter.rs"
	"$DIR/policy.rs rust/policy.rs"
	"$DIR/debugfs_render.rs rust/debugfs_render.rs"
	"$DIR/boundary_kernel_crate.rs rust/boundary_kernel_crate.rs"
	"$DIR/kernel_crate_params.rs rust/kernel_crate_params.rs"
	"$DIR/kernel_crate_configfs.rs rust/kernel_crate_configfs.rs"
	"$DIR/proto/cm_private.rs rust/proto/cm_private.rs"
	"$DIR/proto/nonconformance.rs rust/proto/nonconformance.rs"
	"$DIR/proto/negotiation.rs rust/proto/negotiation.rs"
)

# the_patch: the series' file that adds the in-tree user.
the_patch() {
	local f
	for f in "$SERIES"/*.patch; do
		grep -q "^Subject: \[PATCH [0-9]*/[0-9]*\] SUNRPC: Add rpcrdma_cm," "$f" && { echo "$f"; return; }
	done
	return 1
}

# stripped SRC: the in-tree copy of the repository file SRC.
stripped() {
	awk -f "$RPCRDMA_CM_TOP/scripts/kernel/in-tree-strip.awk" "$RPCRDMA_CM_TOP/$1"
}

# The MAINTAINERS entry the patch adds (without M:/R:, see above).
MAINTAINERS_ENTRY="$RPCRDMA_CM_MAINTAINERS_HEAD
L:	linux-nfs@vger.kernel.org
L:	rust-for-linux@vger.kernel.org
S:	Maintained
F:	net/sunrpc/xprtrdma/rpcrdma_cm/
F:	rust/kernel/sunrpc/rdma_cm.rs"

# added_lines PATCH PATH: the lines PATCH adds to the existing file PATH
# (the MAINTAINERS entry and its blank line; the blank is left out).
added_lines() {
	added_file "$1" "$2" | sed '/^$/d'
}

# added_file PATCH PATH: the content PATCH gives the new file PATH.
added_file() {
	awk -v path="$2" '
		$0 == "diff --git a/" path " b/" path { inside = 1; next }
		inside && /^diff --git / { exit }
		inside && /^@@ / { body = 1; next }
		inside && body && /^\+/ { print substr($0, 2) }
		inside && body && /^-- $/ { exit }' "$1"
}

check() {
	local patch n=0 bad=0 pair intree src
	echo "TAP version 13"
	echo "1..$((${#FILES[@]} + 3))"
	if ! patch=$(the_patch); then
		echo "not ok 1 the 7.3 series has the in-tree user's patch (no \"SUNRPC: Add rpcrdma_cm,\" in patches/7.3)"
		return 1
	fi
	n=1
	if [ "$(basename "$patch")" = "$(ls "$SERIES"/*.patch | tail -1 | xargs basename)" ]; then
		echo "ok 1 the in-tree user is the series' last patch ($(basename "$patch"))"
	else
		echo "not ok 1 the in-tree user is not the series' last patch ($(basename "$patch"))"
		bad=1
	fi
	n=$((n + 1))
	local want got
	want=$({
		printf '%s\n' MAINTAINERS net/sunrpc/Kconfig net/sunrpc/xprtrdma/Makefile "$DIR/Makefile"
		for pair in "${FILES[@]}"; do echo "${pair%% *}"; done
	} | sort)
	got=$(sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$patch" | sort)
	if [ "$want" = "$got" ] &&
		grep -q '^+config SUNRPC_XPRT_RDMA_CM$' "$patch" &&
		grep -qF '+obj-$(CONFIG_SUNRPC_XPRT_RDMA_CM) += rpcrdma_cm/' "$patch" &&
		! grep -q '^+rustflags' "$patch" &&
		[ "$(added_lines "$patch" MAINTAINERS)" = "$MAINTAINERS_ENTRY" ]; then
		echo "ok $n the patch touches exactly MAINTAINERS, the Kconfig, the two Makefiles and the copied files"
	else
		echo "not ok $n the patch's files or its Kconfig/Makefile lines are not what generate writes"
		echo "$got" | sed 's/^/# /'
		bad=1
	fi
	for pair in "${FILES[@]}"; do
		read -r intree src <<<"$pair"
		n=$((n + 1))
		if ! stripped "$src" >/dev/null; then
			echo "not ok $n $src cannot be stripped (scripts/kernel/in-tree-strip.awk says why above)"
			bad=1
			continue
		fi
		if diff -u <(stripped "$src") <(added_file "$patch" "$intree") >/tmp/in-tree-user.diff.$$ 2>&1; then
			echo "ok $n $intree equals $src, stripped"
		else
			echo "not ok $n $intree differs from $src (run scripts/kernel/in-tree-user.sh generate TREE)"
			head -20 /tmp/in-tree-user.diff.$$ | sed 's/^/# /'
			bad=1
		fi
		rm -f /tmp/in-tree-user.diff.$$
	done
	# A new kind of scaffolding in the sources that the strip does not know.
	n=$((n + 1))
	local left
	left=$(for pair in "${FILES[@]}"; do
		read -r intree src <<<"$pair"
		stripped "$src" 2>/dev/null |
			grep -n -E 'cfg\((not\()?(any\()?rpcrdma_cm_|cfg\([^]]*\<test\>|cfg_attr\(|cfg!\(|compile_error!|rpcrdma_cm_proto|rpcrdma_cm_(bench|boundary_)' |
			sed "s|^|$intree:|" || true
	done)
	if [ -z "$left" ]; then
		echo "ok $n the in-tree copy has no out-of-tree cfg, test module, compile_error! or host crate name"
	else
		echo "not ok $n the in-tree copy still has out-of-tree scaffolding (extend scripts/kernel/in-tree-strip.awk)"
		echo "$left" | head -10 | sed 's/^/# /'
		bad=1
	fi
	return $bad
}

generate() {
	local tree=$1 existing prev='' f parent work idx pair intree src blob kconfig makefile out date
	# The patch as it stands, if any: its Date is kept, and it is replaced.
	existing=$(the_patch) || existing=
	for f in "$SERIES"/*.patch; do
		[ "$f" = "$existing" ] || prev=$f
	done
	parent=$(git -C "$tree" log --format=%H -1 --fixed-strings \
		--grep="$(sed -n 's/^Subject: \[PATCH [0-9]*\/[0-9]*\] //p' "$prev")")
	[ -n "$parent" ] || rpcrdma_cm_die "no commit of ${prev##*/} in $tree"
	work=$(mktemp -d)
	# shellcheck disable=SC2064 # work is local: expanded now, removed at exit
	trap "rm -rf '$work'" EXIT
	idx=$work/index
	export GIT_INDEX_FILE=$idx
	git -C "$tree" read-tree "$parent"
	for pair in "${FILES[@]}"; do
		read -r intree src <<<"$pair"
		blob=$(stripped "$src" | git -C "$tree" hash-object -w --stdin)
		git -C "$tree" update-index --add --cacheinfo "100644,$blob,$intree"
	done
	blob=$(git -C "$tree" hash-object -w --stdin <<'EOF'
# SPDX-License-Identifier: GPL-2.0
#
# rpcrdma_cm.ko, a Rust user of the RPC-over-RDMA CM private data hooks
# (include/linux/sunrpc/rpc_rdma_cm.h). Its module instance, parameters,
# configfs settings and debugfs come from the kernel crate
# (boundary_kernel_crate.rs, kernel_crate_params.rs,
# kernel_crate_configfs.rs).

obj-$(CONFIG_SUNRPC_XPRT_RDMA_CM) += rpcrdma_cm.o

rpcrdma_cm-y := rpcrdma_cm_main.o
EOF
)
	git -C "$tree" update-index --add --cacheinfo "100644,$blob,$DIR/Makefile"
	makefile=$(git -C "$tree" show "$parent:net/sunrpc/xprtrdma/Makefile")
	blob=$(printf '%s\n\nobj-$(CONFIG_SUNRPC_XPRT_RDMA_CM) += rpcrdma_cm/\n' "$makefile" |
		git -C "$tree" hash-object -w --stdin)
	git -C "$tree" update-index --add --cacheinfo "100644,$blob,net/sunrpc/xprtrdma/Makefile"
	kconfig=$(git -C "$tree" show "$parent:net/sunrpc/Kconfig")
	echo "$kconfig" | awk '
		{ print }
		/^config SUNRPC_XPRT_RDMA$/ { in_rdma = 1 }
		in_rdma && /^	  hardware platform, say N\.$/ {
			in_rdma = 0
			print ""
			print "config SUNRPC_XPRT_RDMA_CM"
			print "\ttristate \"RPC-over-RDMA inline threshold negotiation (Rust)\""
			print "\tdepends on SUNRPC_XPRT_RDMA && RUST"
			print "\thelp"
			print "\t  rpcrdma_cm builds and reads the RPC-over-RDMA Version One"
			print "\t  message (RFC 8797) in the RDMA-CM private data of every"
			print "\t  NFS/RDMA connection, so that client and server agree on"
			print "\t  inline thresholds larger than the 4KB default, or smaller,"
			print "\t  and on Remote Invalidation, within limits the administrator"
			print "\t  sets with its module parameters (changed at run time in"
			print "\t  configfs where CONFIGFS_FS=y). Unloaded, xprtrdma and"
			print "\t  svcrdma negotiate as before."
			print ""
			print "\t  To compile this support as a module, choose M. The module"
			print "\t  will be called rpcrdma_cm.ko. If unsure, say N."
		}' >"$work/Kconfig"
	grep -q '^config SUNRPC_XPRT_RDMA_CM$' "$work/Kconfig" ||
		rpcrdma_cm_die "net/sunrpc/Kconfig in $tree: no place found for the new option (the end of SUNRPC_XPRT_RDMA's help moved)"
	blob=$(git -C "$tree" hash-object -w "$work/Kconfig")
	git -C "$tree" update-index --add --cacheinfo "100644,$blob,net/sunrpc/Kconfig"
	# MAINTAINERS: between two entries whose names enclose its name (the
	# file is sorted only in runs), where the one before shares the
	# longest prefix with it.
	git -C "$tree" show "$parent:MAINTAINERS" | ENTRY=$MAINTAINERS_ENTRY LC_ALL=C awk '
		function common(a, b,   i) { for (i = 1; substr(a, i, 1) == substr(b, i, 1) && i <= length(a); i++); return i - 1 }
		BEGIN { entry = ENVIRON["ENTRY"]; name = entry; sub(/\n.*/, "", name); best = -1 }
		{ line[NR] = $0 }
		/^3C59X NETWORK DRIVER$/ { started = 1 }
		started && (NR == 1 || line[NR - 1] == "") && /^[A-Z0-9]/ {
			if (last && head[last] < name && $0 > name && common(head[last], name) > best) {
				best = common(head[last], name); at = NR
			}
			head[NR] = $0; last = NR
		}
		END {
			for (i = 1; i <= NR; i++) {
				if (i == at) { print entry; print "" }
				print line[i]
			}
		}' >"$work/MAINTAINERS"
	grep -qxF "${MAINTAINERS_ENTRY%%$'\n'*}" "$work/MAINTAINERS" ||
		rpcrdma_cm_die "MAINTAINERS in $tree: no place found for the entry"
	blob=$(git -C "$tree" hash-object -w "$work/MAINTAINERS")
	git -C "$tree" update-index --add --cacheinfo "100644,$blob,MAINTAINERS"
	cat >"$work/msg" <<'EOF'
SUNRPC: Add rpcrdma_cm, a Rust user of the RPC-over-RDMA CM hooks

The CM private data hooks need a user in the tree. rpcrdma_cm is the
one they were written for: it builds the RPC-over-RDMA Version One
message (RFC 8797) of every connect and accept from the inline sizes
and the Remote Invalidation policy an administrator sets as module
parameters, with the buffer sizes the transport provisions for them,
and reads the peer's; the transport then applies what RFC 8797 allows
for the two messages, as the peer does. It keeps a table of
live connections, shown with counters in debugfs (rpcrdma_cm/), and
its parameters can be changed at run time through configfs attributes
(rpcrdma_cm/), since module parameters of Rust modules are read-only
after load and have no sysfs file; configfs, not debugfs, so that a
kernel locked down by Secure Boot can still be configured.

The protocol logic in proto/ (cm_private.rs: the message, its
encoding and decoding; nonconformance.rs: why a message does not
conform; negotiation.rs: the thresholds of RFC 8797 section 3.1) has
no kernel dependency and is unit-tested on the host out of tree.
boundary_kernel_crate.rs (the module instance, debugfs, the clock),
kernel_crate_params.rs (the parameters) and kernel_crate_configfs.rs
(their configfs attributes) are the module's only contact with the
kernel beyond the hooks. The rest is a file per concern: the
connection table (table.rs), per-role counters (stats.rs, of the
kernel's atomics: counter.rs), callback timing, a debugging aid off by
default (callback_times.rs), the policy that turns the parameters and
the transport's settings into limits (policy.rs), the debugfs lines
(debugfs_render.rs), and the hook callbacks (rpcrdma_cm_main.rs). The
files are generated from the out-of-tree module's source, without its
scaffolding (another kernel's boundary, a benchmark, host unit tests);
that source builds out of tree for kernels with the hooks but without
this patch.

The MAINTAINERS entry covers the module and the abstraction's file.
EOF
	date=
	[ -z "$existing" ] || date=$(sed -n 's/^Date: //p' "$existing")
	[ -n "$date" ] || date=$(date -R)
	out=$(GIT_AUTHOR_NAME="rpcrdma_cm developers" GIT_AUTHOR_EMAIL="rpcrdma-cm@example.org" \
		GIT_COMMITTER_NAME="rpcrdma_cm developers" GIT_COMMITTER_EMAIL="rpcrdma-cm@example.org" \
		GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
		git -C "$tree" commit-tree "$(git -C "$tree" write-tree)" -p "$parent" \
		-F <(cat "$work/msg"; echo; echo "Assisted-by: LLM"))
	unset GIT_INDEX_FILE
	[ -z "$existing" ] || rm -f "$existing"
	local n
	n=$(($(ls "$SERIES"/*.patch | wc -l) + 1))
	git -C "$tree" format-patch -q --zero-commit -n --start-number "$n" -o "$SERIES" -1 "$out"
	rm -rf "$work"
	echo "in-tree-user: wrote $(the_patch) (commit $out in $tree, parent ${parent:0:12})"
}

case "${1:-}" in
check) check ;;
generate) [ -n "${2:-}" ] || rpcrdma_cm_die "usage: $0 generate TREE"; generate "$2" ;;
*) echo "usage: $0 check | generate TREE" >&2; exit 2 ;;
esac
