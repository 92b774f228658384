#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of guest_pair (scripts/lib.sh) with a stand-in for guest.sh: no
# guest boots, so it runs anywhere in a few seconds. KTAP output; exit 0 when
# every test passes, 1 otherwise.
#
# What it checks: when guest_pair returns, each console file holds the
# whole of what its guest printed, including output written after the guest
# launcher itself exited by a process that inherited its stdout (as QEMU and
# virtme-ng's helpers can), and the exit statuses are the launchers'.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The stand-in: prints LINES numbered lines, leaves a child that prints one
# more line a second after the launcher has exited, and exits with the
# status named by its command. A server also listens on its port, as QEMU
# does with -netdev socket,listen.
cat >"$work/fake-guest.sh" <<'FAKE'
#!/usr/bin/env bash
port= cmd=()
while [ $# -gt 0 ]; do
	case "$1" in
	--net) case "$2" in listen:*) port=${2#listen:} ;; esac; shift 2 ;;
	--) shift; cmd=("$@"); break ;;
	*) shift 2 ;;
	esac
done
if [ -n "$port" ]; then
	python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(5)' "$port" &
fi
seq 1 "${cmd[0]}"
(sleep 1; echo "last line") &
exit "${cmd[1]}"
FAKE
chmod +x "$work/fake-guest.sh"
RPCRDMA_CM_GUEST_LAUNCHER=$work/fake-guest.sh

echo "KTAP version 1"
echo "1..5"
failed=0
result() {
	if [ "$2" = ok ]; then
		echo "ok $1"
	else
		echo "not ok $1 # $3"
		failed=$((failed + 1))
	fi
}

# shellcheck disable=SC2034 # read by guest_pair through namerefs
server_cmd=(20000 0) client_cmd=(30000 3)
guest_pair "$work/pair" test 52:54:00:00:09 60 /nonexistent /nonexistent server_cmd client_cmd
num=1
for side in server client; do
	if [ $side = server ]; then want=20001; else want=30001; fi
	got=$(wc -l <"$work/pair/$side.console")
	last=$(tail -n 1 "$work/pair/$side.console")
	if [ "$got" = "$want" ] && [ "$last" = "last line" ]; then
		result "$num $side console complete when guest_pair returns" ok
	else
		result "$num $side console complete when guest_pair returns" fail \
			"$got of $want lines, last line '$last'"
	fi
	num=$((num + 1))
done
for side in server client; do
	if [ $side = server ]; then want=0; else want=3; fi
	got=$(cat "$work/pair/$side-exit")
	if [ "$got" = "$want" ]; then
		result "$num $side exit status kept" ok
	else
		result "$num $side exit status kept" fail "$side-exit says '$got', want $want"
	fi
	num=$((num + 1))
done
# PAIR_PROGRESS: called every second while the client runs, with the
# seconds so far (the bench prints its progress from it). The stand-in
# client sleeps 3 s: at least 2 calls, counting 1, 2, ...
ticks=()
tick() { ticks+=("$1"); }
# shellcheck disable=SC2034
server_cmd=(1 0) client_cmd=(1 0)
sed -i 's/^seq 1 "${cmd\[0\]}"$/seq 1 "${cmd[0]}"; [ "${cmd[0]}" = 1 ] \&\& sleep 3/' "$work/fake-guest.sh"
PAIR_PROGRESS=tick guest_pair "$work/pair2" test 52:54:00:00:09 60 /nonexistent /nonexistent server_cmd client_cmd
if [ "${#ticks[@]}" -ge 2 ] && [ "${ticks[0]}" = 1 ] && [ "${ticks[1]}" = 2 ]; then
	result "$num PAIR_PROGRESS called every second with the seconds so far" ok
else
	result "$num PAIR_PROGRESS called every second with the seconds so far" fail "calls: ${ticks[*]:-none}"
fi
[ "$failed" -eq 0 ]
