#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of how scripts/guest/guest.sh hands its command to the guest,
# with a stand-in for virtme-ng (no guest boots; seconds). virtme-ng puts
# --exec on the guest kernel's command line, base64-encoded, and x86 keeps
# 2047 characters of that line (COMMAND_LINE_SIZE 2048 with its NUL): a
# longer one loses its tail (root=, init=) and the guest panics before
# its command starts, virtme-ng exiting 255 with nothing said. With make
# check's first 7.3 lane (17 programs) from /work/main the line was 1971
# characters, 1120 of them the --exec; virtme-ng's own parameters took the
# other 851 (904 measured in a guest with a short --exec), a tree's paths
# among them. So the --exec argument must stay short, however long the
# command, and the command must still arrive word for word.
#
# The stand-in runs --exec with sh -c in --cwd, as virtme-ng's init does in
# the guest, on the host: that the guest's /tmp shows the host's (where
# guest.sh writes the command) is virtme-ng's doing (its default writable
# overlays include /tmp) and is checked by every guest run, not here.
# KTAP; exit 0 only if every case holds.
#
#   scripts/tests/guest-exec.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/kdir/arch/x86/boot"
: >"$work/kdir/arch/x86/boot/bzImage"

# The stand-in virtme-ng: keeps its --exec argument, runs it, and exits
# with its status, or with STANDIN_RC when that is set (a panicked guest);
# STANDIN_HANG: it hangs first (a guest that outlives guest.sh's timeout).
cat >"$work/vng" <<'STANDIN'
#!/usr/bin/env bash
exec_arg='' cwd=.
while [ $# -gt 0 ]; do
	case "$1" in
	--exec) exec_arg=$2; shift 2 ;;
	--cwd) cwd=$2; shift 2 ;;
	*) shift ;;
	esac
done
printf '%s' "$exec_arg" >"$STANDIN_DIR/exec"
[ -z "${STANDIN_RC:-}" ] || exit "$STANDIN_RC"
[ -z "${STANDIN_HANG:-}" ] || sleep 30
cd "$cwd" && sh -c "$exec_arg"
STANDIN
chmod +x "$work/vng"

# run_guest CMD...: guest.sh with the stand-in; stdout in $work/out,
# stderr in $work/err, the status in $rc.
run_guest() {
	rc=0
	STANDIN_DIR=$work VNG=$work/vng RPCRDMA_CM_KVM=0 \
		"$top/scripts/guest/guest.sh" --kdir "$work/kdir" --timeout "${GUEST_TIMEOUT:-60}" -- "$@" \
		>"$work/out" 2>"$work/err" || rc=$?
}

echo "KTAP version 1"

# A command as long as make check's longest lane and longer, with words
# a shell could mangle: spaces, quotes, $, a glob, a newline, UTF-8.
words=(printf '%s\n' 'two words' "it's" '"quoted"' '$HOME' '*' $'line\nbreak' 'é' '')
for i in $(seq 1 40); do
	words+=("/check/work/main/selftests/rpcrdma_cm/program_number_$i.sh")
done
run_guest "${words[@]}"
printf '%s\n' "${words[@]:2}" >"$work/want"
len=$(stat -c %s "$work/exec" 2>/dev/null || echo none)
if [ "$rc" = 0 ] && cmp -s "$work/want" "$work/out"; then
	tap_result "the command's words arrive as given ($(stat -c %s "$work/want") octets)" ok
else
	tap_result "the command's words arrive as given" fail \
		"status $rc, output differs: $(diff "$work/want" "$work/out" | head -5 | tr '\n' ' ') $(head -c 300 "$work/err")"
fi
# base64 makes 4 characters of 3 octets: 192 of them are 256 on the
# kernel's command line, with virtme-ng's 851 far from 2047.
if [ "$len" != none ] && [ "$len" -le 192 ]; then
	tap_result "--exec is $len octets for a command of $(stat -c %s "$work/want")" ok
else
	tap_result "--exec is at most 192 octets" fail "it is $len octets"
fi
files=$(grep -o '/tmp/[^ ]*' "$work/exec")
left=$(for f in $files; do [ ! -e "$f" ] || echo "$f"; done)
if [ -n "$files" ] && [ -z "$left" ]; then
	tap_result "nothing of the command is left in /tmp after the guest" ok
else
	tap_result "nothing of the command is left in /tmp after the guest" fail "files named: '$files', left: '$left'"
fi
run_guest sh -c 'exit 7'
if [ "$rc" = 7 ]; then
	tap_result "the command's exit status is guest.sh's" ok
else
	tap_result "the command's exit status is guest.sh's" fail "status $rc, want 7"
fi
STANDIN_RC=255 run_guest true
if [ "$rc" = 255 ] && grep -q 'panicked' "$work/err"; then
	tap_result "a guest that died (virtme-ng's 255) is said to have" ok
else
	tap_result "a guest that died (virtme-ng's 255) is said to have" fail \
		"status $rc, stderr: $(head -c 300 "$work/err")"
fi
STANDIN_HANG=1 GUEST_TIMEOUT=2 run_guest true
files=$(grep -o '/tmp/[^ ]*' "$work/exec")
left=$(for f in $files; do [ ! -e "$f" ] || echo "$f"; done)
if [ "$rc" = 137 ] && [ -n "$files" ] && [ -z "$left" ]; then
	tap_result "a guest killed at its timeout (137) leaves no command file" ok
else
	tap_result "a guest killed at its timeout (137) leaves no command file" fail \
		"status $rc, files named: '$files', left: '$left'"
fi
tap_finish
