# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # settings for the scripts that source it
# Shared settings for the rpcrdma_cm scripts. Source it; do not run it.

RPCRDMA_CM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RPCRDMA_CM_TOOLS=${RPCRDMA_CM_TOOLS:-/opt/rpcrdma-cm-tools}
RPCRDMA_CM_CACHE=${RPCRDMA_CM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcrdma_cm}
# The MAINTAINERS entry the in-tree user adds for the Rust files
# (in-tree-user.sh writes it, upstream-series.sh gives it its people).
RPCRDMA_CM_MAINTAINERS_HEAD="SUNRPC RPC-OVER-RDMA CM PRIVATE DATA HOOKS [RUST]"
# The kernel base: 7.3 (mainline: patches/7.3, the series meant for
# upstream) or 6.12 (LTS: patches/6.12, the backport). Every kernel,
# module and guest script works on the base RPCRDMA_CM_KBASE names.
# The pinned kernel source and bindgen of each base; scripts/kernel/deps.sh
# installs exactly these (and says why each base has its own bindgen).
LINUX_6_12_SOURCE_VERSION=6.12.118-1~deb12u1
LINUX_7_3_SOURCE_VERSION=7.3.4-1~bpo13+1
BINDGEN_6_12_VERSION=0.69.5
BINDGEN_7_3_VERSION=0.71.1

# What the user set beside the base (kept across kbase_set).
RPCRDMA_CM_USER_TARBALL=${RPCRDMA_CM_USER_TARBALL-${LINUX_TARBALL:-}}
RPCRDMA_CM_USER_BINDGEN=${RPCRDMA_CM_USER_BINDGEN-${KERNEL_BINDGEN:-}}

# kbase_set BASE: make BASE the current base (RPCRDMA_CM_KBASE, exported)
# and set what belongs to it: KBASE_SOURCE_PKG, KBASE_SOURCE_VERSION,
# KBASE_PATCHES, LINUX_TARBALL and KERNEL_BINDGEN (the last two unless the
# user set them). A script that switches bases calls it, not only export.
kbase_set() {
	case "$1" in
	6.12)
		KBASE_SOURCE_PKG=linux-source-6.12
		KBASE_SOURCE_VERSION=$LINUX_6_12_SOURCE_VERSION
		LINUX_TARBALL=${RPCRDMA_CM_USER_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
		KERNEL_BINDGEN=${RPCRDMA_CM_USER_BINDGEN:-$RPCRDMA_CM_TOOLS/bin/bindgen}
		;;
	7.3)
		KBASE_SOURCE_PKG=linux-source-7.3
		KBASE_SOURCE_VERSION=$LINUX_7_3_SOURCE_VERSION
		LINUX_TARBALL=${RPCRDMA_CM_USER_TARBALL:-$RPCRDMA_CM_TOOLS/linux-source-7.3/linux-source-7.3.tar.xz}
		KERNEL_BINDGEN=${RPCRDMA_CM_USER_BINDGEN:-$RPCRDMA_CM_TOOLS/bindgen-$BINDGEN_7_3_VERSION/bin/bindgen}
		;;
	*)
		echo "RPCRDMA_CM_KBASE='$1': the kernel bases are 7.3 and 6.12" >&2
		exit 1
		;;
	esac
	RPCRDMA_CM_KBASE=$1
	export RPCRDMA_CM_KBASE
	KBASE_PATCHES=$RPCRDMA_CM_TOP/patches/$RPCRDMA_CM_KBASE
}
kbase_set "${RPCRDMA_CM_KBASE:-6.12}"
KERNEL_RUSTC=${KERNEL_RUSTC:-/usr/bin/rustc}

# module_ko [BASE]: the rpcrdma_cm.ko built for BASE (default the current
# one) by 'make KBASE=BASE module'.
module_ko() {
	echo "$RPCRDMA_CM_TOP/build/module/${1:-$RPCRDMA_CM_KBASE}/rpcrdma_cm.ko"
}

# kbase_source_version: the pinned source's version as installed (6.12: the
# Debian package; 7.3: the stamp deps.sh leaves beside the tarball).
kbase_source_version() {
	case "$RPCRDMA_CM_KBASE" in
	6.12) dpkg-query -W -f='${Version}' "$KBASE_SOURCE_PKG" 2>/dev/null || true ;;
	*) cut -d' ' -f1 "$(dirname "$LINUX_TARBALL")/pinned" 2>/dev/null || true ;;
	esac
}
KERNEL_LLVM=${KERNEL_LLVM:--19}
VNG=${VNG:-$RPCRDMA_CM_TOOLS/virtme-ng/bin/vng}
# What guest_pair boots its guests with (scripts/tests/ puts a stand-in here).
RPCRDMA_CM_GUEST_LAUNCHER=${RPCRDMA_CM_GUEST_LAUNCHER:-$RPCRDMA_CM_TOP/scripts/guest/guest.sh}

# The make arguments every kernel and module build uses.
kernel_make_args() {
	echo "LLVM=$KERNEL_LLVM RUSTC=$KERNEL_RUSTC BINDGEN=$KERNEL_BINDGEN"
}

# Debian's archive, where deps.sh and scripts/distro/ fetch what the host's
# own suites do not have (trixie and trixie-backports), and its security
# archive (the SUITE-security suites: bookworm-security has Debian 12's
# 6.12 kernels).
RPCRDMA_CM_DEBIAN_MIRROR=${RPCRDMA_CM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
RPCRDMA_CM_DEBIAN_SECURITY_MIRROR=${RPCRDMA_CM_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

# apt_fetch DIR SUITES PKG=VERSION...: download these exact packages into
# DIR with apt's own client and a private sources list, lists directory and
# cache (SUITES: space-separated, e.g. "trixie trixie-backports"), so that
# the host's suites and installed packages stay as they are. Signed by
# Debian's archive key, as the host's own lists.
apt_fetch() {
	local dir=$1 suites=$2 work s opts rc=0
	shift 2
	work=$(mktemp -d)
	for s in $suites; do
		case $s in
		*-security) echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $RPCRDMA_CM_DEBIAN_SECURITY_MIRROR $s main" ;;
		*) echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $RPCRDMA_CM_DEBIAN_MIRROR $s main" ;;
		esac
	done >"$work/sources.list"
	mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$dir"
	opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/nonexistent
		-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root -qq)
	if ! apt-get "${opts[@]}" update; then
		echo "apt_fetch: apt-get update of $suites (private list) failed" >&2
		rc=1
	elif ! (cd "$dir" && apt-get "${opts[@]}" download "$@"); then
		echo "apt_fetch: cannot download $* from $suites" >&2
		rc=1
	fi
	rm -rf "$work"
	return $rc
}

rpcrdma_cm_die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# vng runs virtme-run from its own venv; append (not prepend) that venv so
# that the guests' python3 stays the system one (direct_io.py and the RFC 8797 oracle run with it).
case ":$PATH:" in
*":$RPCRDMA_CM_TOOLS/virtme-ng/bin:"*) ;;
*) PATH=$PATH:$RPCRDMA_CM_TOOLS/virtme-ng/bin ;;
esac
export PATH

# Seconds between two progress lines of a long step.
RPCRDMA_CM_PROGRESS_SECS=${RPCRDMA_CM_PROGRESS_SECS:-30}

# progress_last_line LOG: the last non-empty line of LOG, shortened.
progress_last_line() {
	grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1 | cut -c1-100
}

# progress_kernel LOG: how far a kernel build is: the objects built since
# the step began and the newest of them. The tree is the one build-kernel.sh
# names on the log's "kernel: building ... in DIR" line.
progress_kernel() {
	local dir newest count
	dir=$(sed -n 's/^kernel: building [a-z-]* in //p' "$1" 2>/dev/null | tail -n 1)
	[ -n "$dir" ] && [ -d "$dir/linux" ] || { progress_last_line "$1"; return; }
	newest=$(find "$dir/linux" -name '*.o' -newer "$1.started" -printf '%T@ %P\n' 2>/dev/null | sort -n)
	count=$(printf '%s' "$newest" | grep -c .)
	if [ "$count" -eq 0 ]; then
		echo "unpacking and configuring the source"
	else
		echo "$count objects built, last ${newest##* }"
	fi
}

# progress_ktap LOG: the last KTAP result line of LOG (a guest test's log).
progress_ktap() {
	local last
	last=$(grep -E '^(# )?(not )?ok [0-9]+ ' "$1" 2>/dev/null | tail -n 1 | sed 's/^# //' | cut -c1-100)
	echo "${last:-booting the guest}"
}

# run_step WHAT LOG PROBE CMD...: run CMD with its output in LOG and, while
# it runs, print one line every RPCRDMA_CM_PROGRESS_SECS seconds with the
# elapsed time and what the function PROBE says about LOG. Returns CMD's
# status. The caller says beforehand what the step is and how long it takes.
run_step() {
	local what=$1 log=$2 probe=$3 ticker rc=0
	shift 3
	: >"$log"
	: >"$log.started"
	(
		# Ends with the step, or within a second of its caller (Ctrl-C).
		trap 'exit 0' TERM
		s=0
		while kill -0 $$ 2>/dev/null && sleep 1; do
			s=$((s + 1))
			[ $((s % RPCRDMA_CM_PROGRESS_SECS)) -eq 0 ] || continue
			printf '  ... %s: %dm%02ds, %s\n' "$what" $((s / 60)) $((s % 60)) "$("$probe" "$log")"
		done
	) &
	ticker=$!
	"$@" >"$log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null
	rm -f "$log.started"
	return "$rc"
}

# Free space a kernel build needs in $RPCRDMA_CM_CACHE: the tree with its
# objects takes 2.3 GiB (measured), plus room while the source unpacks.
KERNEL_BUILD_NEEDS_GIB=${KERNEL_BUILD_NEEDS_GIB:-5}

# step_kernel LOG [VARIANT]: the test kernel, reused from the cache or built
# with progress lines; says beforehand how long a build takes. A build that
# was interrupted is not reused (build-kernel.sh marks a tree built last).
step_kernel() {
	local log=$1 variant=${2:-default} dir where avail
	dir=$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir "$variant") || return 1
	if [ -f "$(dirname "$dir")/built" ]; then
		echo "kernel: cached in $(dirname "$dir")" | tee "$log"
		return 0
	fi
	where=$RPCRDMA_CM_CACHE
	while [ ! -d "$where" ]; do where=$(dirname "$where"); done
	avail=$(df -P -k "$where" | awk 'NR == 2 { print int($4 / 1048576) }')
	if [ "$avail" -lt "$KERNEL_BUILD_NEEDS_GIB" ]; then
		echo "kernel: $avail GiB free in $where, the build needs about $KERNEL_BUILD_NEEDS_GIB GiB:" \
			"free some space or point RPCRDMA_CM_CACHE at a larger disk" >&2
		return 1
	fi
	echo "kernel: building the $variant test kernel ($RPCRDMA_CM_KBASE: Debian $KBASE_SOURCE_PKG $KBASE_SOURCE_VERSION$(
		case $variant in stock*) ;; *) echo " + patches/$RPCRDMA_CM_KBASE" ;; esac), Rust on):" \
		"about 10 minutes on 2 idle cores (15 when they are busy; a stock one 2 minutes from a built patched tree), once; cached afterwards; log: $log"
	run_step "kernel build" "$log" progress_kernel \
		"$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" "$variant" || {
		echo "kernel: build failed; the end of $log:" >&2
		tail -n 20 "$log" >&2
		return 1
	}
	tail -n 1 "$log"
}

# step_deps LOG: scripts/kernel/deps.sh with progress lines.
step_deps() {
	echo "deps: checking and installing the pinned packages (about 3 minutes on a fresh machine," \
		"seconds otherwise); log: $1"
	run_step "deps" "$1" progress_last_line "$RPCRDMA_CM_TOP/scripts/kernel/deps.sh" || {
		echo "deps: failed; the end of $1:" >&2
		tail -n 20 "$1" >&2
		return 1
	}
	tail -n 1 "$1"
}

# require_root WHAT: stop with advice unless running as root.
require_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	rpcrdma_cm_die "$1 needs root: it installs packages and loads kernel modules in its guests; run 'sudo make ${1#make }'"
}

# Two guests on one virtual link (scripts/guest/two-guest.sh, scripts/guest/interop.sh).
# PAIR_SERVER_PID and PAIR_CLIENT_PID are the running guests' process
# groups' leaders; guest_pair_kill (from an EXIT trap) stops them.
PAIR_SERVER_PID='' PAIR_CLIENT_PID=''
guest_pair_kill() {
	[ -n "$PAIR_CLIENT_PID" ] && kill "$PAIR_CLIENT_PID" 2>/dev/null
	[ -n "$PAIR_SERVER_PID" ] && kill "$PAIR_SERVER_PID" 2>/dev/null
	wait 2>/dev/null
}

# guest_pair DIR NAME MAC TIMEOUT SERVER_KDIR CLIENT_KDIR SERVER_CMD CLIENT_CMD:
# boot a server guest (SERVER_KDIR, rpcrdma-NAME-server, MAC:01) and, once
# its QEMU listens on a fresh loopback port, a client guest (CLIENT_KDIR,
# rpcrdma-NAME-client, MAC:02) connected to it; both with 1 CPU, 1 GB, DIR
# writable, TIMEOUT seconds at most, running the commands in the arrays
# named SERVER_CMD and CLIENT_CMD. Consoles in DIR/{server,client}.console,
# complete when guest_pair returns: each goes through a FIFO (QEMU reopens a
# file given as its output and truncates it) to a cat that guest_pair waits
# for, 10 s at most after its guest ended. Exit statuses in
# DIR/{server,client}-exit. Without the server's socket after 120 s it says
# so in DIR/client-error (the client cannot start). While the client runs,
# the command PAIR_PROGRESS names (if set) is called every second with the
# seconds so far.
guest_pair() {
	local d=$1 name=$2 mac=$3 timeout=$4 skdir=$5 ckdir=$6 port listening=0
	local -n gp_server_cmd=$7 gp_client_cmd=$8
	local client_rc=0 server_rc=0 fifos server_cat client_cat
	mkdir -p "$d"
	chmod 777 "$d"
	fifos=$(mktemp -d)
	mkfifo "$fifos/server" "$fifos/client"
	cat "$fifos/server" >"$d/server.console" &
	server_cat=$!
	cat "$fifos/client" >"$d/client.console" &
	client_cat=$!
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$RPCRDMA_CM_GUEST_LAUNCHER" --kdir "$skdir" --name "rpcrdma-$name-server" --timeout "$timeout" \
		--cpus 1 --memory 1G --net "listen:$port" --mac "$mac:01" --rwdir "$d" -- \
		"${gp_server_cmd[@]}" >"$fifos/server" 2>&1 &
	PAIR_SERVER_PID=$!
	# Under load the server's QEMU can take long to open its socket.
	for _ in $(seq 1 600); do
		if ss -ltn "sport = :$port" | grep -q LISTEN; then
			listening=1
			break
		fi
		sleep 0.2
	done
	[ $listening = 1 ] || echo "the server's QEMU did not listen on port $port within 120 s" >"$d/client-error"
	"$RPCRDMA_CM_GUEST_LAUNCHER" --kdir "$ckdir" --name "rpcrdma-$name-client" --timeout "$timeout" \
		--cpus 1 --memory 1G --net "connect:$port" --mac "$mac:02" --rwdir "$d" -- \
		"${gp_client_cmd[@]}" >"$fifos/client" 2>&1 &
	PAIR_CLIENT_PID=$!
	if [ -n "${PAIR_PROGRESS:-}" ]; then
		local secs=0
		while kill -0 "$PAIR_CLIENT_PID" 2>/dev/null; do
			sleep 1
			secs=$((secs + 1))
			"$PAIR_PROGRESS" "$secs"
		done
	fi
	wait "$PAIR_CLIENT_PID" || client_rc=$?
	PAIR_CLIENT_PID=
	wait "$PAIR_SERVER_PID" || server_rc=$?
	PAIR_SERVER_PID=
	wait_bounded "$client_cat" 10
	wait_bounded "$server_cat" 10
	rm -rf "$fifos"
	echo "$client_rc" >"$d/client-exit"
	echo "$server_rc" >"$d/server-exit"
}

# wait_bounded PID SECS: wait for the child PID to end, SECS seconds at
# most; then stop it.
wait_bounded() {
	local pid=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# The host tests' TAP (scripts/tests/): tap_result DESC ok|fail [WHY]
# records a result, numbered in order; tap_finish prints the plan and the
# results, and returns non-zero if any failed.
TAP_RESULTS=()
TAP_FAILED=0
tap_result() {
	local n=$((${#TAP_RESULTS[@]} + 1))
	if [ "$2" = ok ]; then
		TAP_RESULTS+=("ok $n $1")
	else
		TAP_RESULTS+=("not ok $n $1 # ${3:-}")
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}
tap_finish() {
	echo "1..${#TAP_RESULTS[@]}"
	printf '%s\n' "${TAP_RESULTS[@]}"
	[ "$TAP_FAILED" = 0 ]
}

# The wire as a RoCEv2 capture shows it (two-guest.sh, interop.sh; they
# source kselftest's KTAP helpers).
# mountstats_rdma FILE N: the Nth number after "rdma" on the first RDMA
# transport line of a mountstats FILE (xprt_rdma_print_stats' order: 20
# bad_reply_count, 25 local_inv_needed); nothing when there is none.
mountstats_rdma() {
	awk -v n="$2" '/xprt:.*rdma/ { for (i = 1; i <= NF; i++) if ($i == "rdma") { print $(i + n); exit } }' \
		"$1" 2>/dev/null
}

# tshark_read PCAP TSHARK_ARGS...: tshark -r PCAP; fails, saying why, when
# tshark fails or complains (a missing, corrupt or truncated capture).
# Only its warning about running as root is not a complaint.
tshark_read() {
	local pcap=$1 err
	shift
	err=$(mktemp)
	if ! tshark -r "$pcap" "$@" 2>"$err" || grep -qv 'Running as user "root"' "$err"; then
		ktap_print_msg "tshark cannot read $pcap: $(grep -v 'Running as user "root"' "$err" | head -c 300)" >&2
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
}

# send_sizes PCAP SRC [TRANSPORT]: "MESSAGES LARGEST RESENT": how many
# SEND messages (Calls, Replies, backchannel) the host SRC sent in the
# capture, the largest in octets, and how many packets were
# retransmissions. TRANSPORT rxe (the default): RoCEv2 RC SENDs,
# reassembled from their packets (FIRST, MIDDLE, LAST per destination QP):
# a packet's payload is its UDP length less the UDP header (8), the BTH
# (12), the ICRC (4) and the IETH (4, the *_WITH_INVALIDATE opcodes 22 and
# 23) or ImmDt (4, opcodes 3 and 5), and the message less the BTH's pad
# count. A packet whose PSN its QP has already carried is a retransmission
# (rxe resends on a timeout or a NAK, and under TCG an ACK can be late):
# it is counted as such and left out, or a resent MIDDLE would add its
# payload to the message twice. TRANSPORT siw: iWARP's RDMAP Send
# messages (opcodes 3 to 6: Send, with Invalidate, with Solicited Event,
# both) over MPA/TCP (send_sizes_iwarp). Fails when tshark cannot read
# the capture or a message is left unfinished.
send_sizes() {
	local rows
	local src=ip.src
	case $2 in *:*) src=ipv6.src ;; esac
	case ${3:-rxe} in
	rxe) ;;
	siw) send_sizes_iwarp "$1" "$src == $2"; return ;;
	*) echo "send_sizes: no SEND decoder for transport '$3'"; return 1 ;;
	esac
	rows=$(tshark_read "$1" -Y "$src == $2 && (infiniband.bth.opcode <= 5 || infiniband.bth.opcode == 22 || infiniband.bth.opcode == 23)" \
		-T fields -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.opcode \
		-e infiniband.bth.padcnt -e udp.length 2>&1) ||
		{ echo "$rows"; return 1; }
	echo "$rows" | awk '
		NF == 0 { next }
		NF != 5 { print "a SEND packet without its five fields: " $0; bad = 1; exit 1 }
		{
			qp = $1; psn = $2; op = $3 + 0; pad = $4 + 0
			if ((qp, psn) in seen) { resent++; next }
			seen[qp, psn] = 1
			p = $5 - 8 - 12 - 4 - ((op == 22 || op == 23 || op == 3 || op == 5) ? 4 : 0)
			# A QP carries one message at a time: a FIRST while one is
			# open, or a MIDDLE or LAST with none, is a packet the capture
			# lost, and a size it cannot tell.
			if ((op == 0 && open[qp]) || ((op == 1 || op == 2 || op == 3 || op == 22) && !open[qp])) {
				print "the capture lost a packet of a SEND message to QP " qp " (PSN " psn ")"; bad = 1; exit 1
			}
			if (op == 0) { acc[qp] = p; open[qp] = 1; next }
			if (op == 1) { acc[qp] += p; next }
			if (op == 2 || op == 3 || op == 22) { m = acc[qp] + p - pad; open[qp] = 0 }
			else m = p - pad
			n++; if (m > max) max = m
		}
		END {
			if (bad) exit 1
			for (q in open) if (open[q]) { print "a SEND message to QP " q " has no last packet"; exit 1 }
			print n + 0, max + 0, resent + 0
		}'
}

# send_sizes_iwarp PCAP FILTER: send_sizes for iWARP: the untagged DDP
# segments of RDMAP Send messages that FILTER selects (queue 0), a
# message by its TCP connection and MSN. A segment's payload is its MPA
# ULPDU length less the untagged DDP and RDMAP headers (18 octets: the
# control octets, the invalidate STag, QN, MSN and MO); a message is
# whole when its segments' payloads reach, in order, the MO of its last
# segment (L set), whose MO plus payload is the message's size. TCP
# retransmissions (tshark's analysis) are counted; a segment
# whose MO is not what came before it is a segment the capture lost, and
# a message whose MSN does not follow its connection's last one (from 1)
# a message it lost. One TCP segment may carry several FPDUs: tshark lists
# their fields comma-separated.
send_sizes_iwarp() {
	local rows resent
	rows=$(tshark_read "$1" -Y "$2 && iwarp_ddp.tagged_flag == 0 && iwarp_rdma.opcode >= 3 && iwarp_rdma.opcode <= 6" \
		-T fields -E separator=/t -e tcp.stream -e iwarp_ddp.tagged_flag -e iwarp_ddp.last_flag \
		-e iwarp_mpa.ulpdulength -e iwarp_rdma.opcode -e iwarp_ddp.msn -e iwarp_ddp.mo 2>&1) ||
		{ echo "$rows"; return 1; }
	# tshark does not hand a retransmitted TCP segment's payload to the
	# iWARP dissector: the retransmissions are counted apart.
	resent=$(tshark_read "$1" -Y "$2 && tcp.analysis.retransmission && tcp.len > 0" -T fields -e frame.number 2>&1) ||
		{ echo "$resent"; return 1; }
	resent=$(grep -c . <<<"$resent")
	echo "$rows" | awk -F '\t' -v resent="$resent" '
		# hex: tshark prints the opcode as 0x03 (mawk and gawk read hex
		# numbers differently: parsed by hand).
		function hex(v,   d, i, n) {
			v = tolower(v); sub(/^0x/, "", v); n = 0
			for (i = 1; i <= length(v); i++) {
				d = index("0123456789abcdef", substr(v, i, 1)) - 1
				if (d < 0) return -1
				n = n * 16 + d
			}
			return n
		}
		# set: a flag as tshark prints it (1 or True).
		function set(v) { return v == "1" || v == "True" }
		$0 == "" { next }
		{
			# One field per FPDU of the frame, the MSN and MO per untagged
			# one: lists that do not match are a frame not understood.
			k = split($2, tagged, ","); split($3, last, ","); split($4, len, ",")
			split($5, op, ","); u = split($6, msn, ","); split($7, mo, ",")
			t = 0
			for (i = 1; i <= k; i++) t += !set(tagged[i])
			if ($1 == "" || k == 0 || length(last) != k || length(len) != k || length(op) != k || u != t) {
				print "a frame whose iWARP fields do not add up: " $0; bad = 1; exit 1
			}
			j = 0
			for (i = 1; i <= k; i++) {
				if (set(tagged[i])) continue
				j++
				o = hex(op[i])
				if (o < 3 || o > 6) continue
				key = $1 "/" msn[j]
				p = len[i] - 18
				if (p < 0 || got[key] + 0 != mo[j] + 0) {
					print "the capture lost a segment of Send message " msn[j] " (TCP stream " $1 ")"; bad = 1; exit 1
				}
				if (set(last[i])) {
					# The MSNs of a connection count its Sends from 1.
					if (msn[j] != (($1 in next_msn) ? next_msn[$1] : 1)) {
						print "the capture lost a Send message before MSN " msn[j] " (TCP stream " $1 ")"; bad = 1; exit 1
					}
					next_msn[$1] = msn[j] + 1
					m = mo[j] + p; delete got[key]; open[key] = 0
					n++; if (m > max) max = m
				} else {
					got[key] = mo[j] + p; open[key] = 1
				}
			}
		}
		END {
			if (bad) exit 1
			for (q in open) if (open[q]) { print "Send message " q " has no last segment"; exit 1 }
			print n + 0, max + 0, resent + 0
		}'
}
