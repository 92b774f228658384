#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Style checks. Prints a plan "1..N" (the number of checks) first, then
# "ok - NAME" or "not ok - NAME" per check; the exit status is the number of
# failed checks. check.sh counts the results against the plan, so a run
# that dies early fails.
#   rustfmt     host crates (cargo fmt) and the module's Rust files, with the
#               kernel's rustfmt settings (.rustfmt.toml)
#   clippy      host crates, warnings are errors
#   clippy-kmod the module built with CLIPPY=1 (the kernel's lint set) against
#               the test kernel; any warning fails
#   bench-kmod  the connection table benchmark's build of the module
#               (scripts/bench/bench-table.sh --build-only), which nothing
#               else compiles
#   checkpatch  scripts/checkpatch.pl --strict on every patch of the base's
#               series, patches/$RPCRDMA_CM_KBASE (the kernel tree's own checkpatch)
#   unsafe      the shared protocol core (rust/proto) contains no 'unsafe'
#   in-tree-user  the 7.3 series' in-tree copy of the module equals rust/
#               (scripts/kernel/in-tree-user.sh check)
#   scripts     every script and selftest program through shellcheck,
#               warnings and errors (.shellcheckrc: follow what they source)
#   selftests-listed  every file of selftests/rpcrdma_cm/ that kselftest
#               installs is named once in its Makefile (TEST_PROGS, the
#               programs run by scripts of the host in TEST_PROGS_EXTENDED,
#               the rest in TEST_FILES), and every name there exists
# All of them on the base RPCRDMA_CM_KBASE names; LINT_SCOPE=kernel runs only
# what depends on the base (clippy-kmod, checkpatch), for a second base.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$RPCRDMA_CM_TOP" || exit 1
export CARGO_TERM_COLOR=never

failed=0
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok - $name"
	else
		echo "not ok - $name"
		echo "$out" | tail -n 40 | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}

kdir=${KDIR:-$(scripts/kernel/build-kernel.sh --print-dir)}
shopt -s nullglob
patches=(patches/"$RPCRDMA_CM_KBASE"/*.patch)
scope=${LINT_SCOPE:-all}
case "$scope" in all | kernel) ;; *) rpcrdma_cm_die "LINT_SCOPE=$scope: all or kernel" ;; esac
# rustfmt-host, rustfmt-kmod, clippy-host, unsafe-free-core, in-tree-user,
# the scripts' check, selftests-listed (scope all), clippy-kmod, bench-kmod, and checkpatch once
# per patch (or one skip).
host_checks=7
[ "$scope" = all ] || host_checks=0
echo "1..$((host_checks + 2 + (${#patches[@]} > 0 ? ${#patches[@]} : 1)))"

if [ "$scope" = all ]; then
	check rustfmt-host cargo fmt --manifest-path tools/Cargo.toml --all -- --check
	# rustfmt follows the crate root's mod declarations into every file of rust/.
	check rustfmt-kmod /usr/bin/rustfmt --check --edition 2021 --config-path .rustfmt.toml rust/rpcrdma_cm_main.rs \
		selftests/rpcrdma_cm/test_modules/debugfs_kinds.rs selftests/rpcrdma_cm/test_modules/long_answer/cm_long_answer.rs
	check clippy-host cargo clippy --manifest-path tools/Cargo.toml --workspace --all-targets --release -- -D warnings
fi

kmod_clippy() {
	local out
	# shellcheck disable=SC2046
	out=$(make -s -C "$kdir" M="$RPCRDMA_CM_TOP" $(kernel_make_args) \
		CLIPPY=1 CLIPPY_DRIVER=/usr/bin/clippy-driver W=1 modules 2>&1) || { echo "$out"; return 1; }
	if echo "$out" | grep -E "warning|error"; then
		return 1
	fi
	# Leave a normal build behind.
	# shellcheck disable=SC2046 # the make arguments, one word each
	make -s -C "$kdir" M="$RPCRDMA_CM_TOP" $(kernel_make_args) modules >/dev/null
}
if [ -f "$kdir/vmlinux" ]; then
	# Force the Rust object to be rebuilt under clippy.
	rm -f rust/rpcrdma_cm_main.o
	check "clippy-kmod $RPCRDMA_CM_KBASE" kmod_clippy
	check "bench-kmod $RPCRDMA_CM_KBASE" env KDIR="$kdir" scripts/bench/bench-table.sh --build-only
else
	echo "ok - clippy-kmod $RPCRDMA_CM_KBASE # SKIP no kernel at $kdir"
	echo "ok - bench-kmod $RPCRDMA_CM_KBASE # SKIP no kernel at $kdir"
fi

# Only grep's "no match" (status 1) passes: a missing or unreadable
# directory (status 2) fails, and so does a core without Rust files.
no_unsafe() {
	local files
	files=(rust/proto/*.rs)
	if [ ! -f "${files[0]:-}" ]; then
		echo "no Rust files in rust/proto"
		return 1
	fi
	grep -Rn unsafe rust/proto
	[ $? -eq 1 ]
}
[ "$scope" = all ] && check unsafe-free-core no_unsafe
# The in-tree copy of the module (the 7.3 series' last patch) is this
# repository's source, file for file (scripts/kernel/in-tree-user.sh).
[ "$scope" = all ] && check in-tree-user scripts/kernel/in-tree-user.sh check
[ "$scope" = all ] && check shellcheck shellcheck -x -S warning scripts/*.sh scripts/*/*.sh selftests/rpcrdma_cm/*.sh

# selftests_listed: the .sh and .py files of selftests/rpcrdma_cm/ and the
# names its Makefile lists (TEST_PROGS, TEST_PROGS_EXTENDED, TEST_FILES)
# are the same set, each named once: a program missing from TEST_PROGS is
# never run by kselftest (nor tallied by make check).
selftests_listed() {
	local mk=selftests/rpcrdma_cm/Makefile listed files rc=0
	listed=$(sed -n 's/^TEST_\(PROGS\|PROGS_EXTENDED\|FILES\) *+\{0,1\}:\{0,1\}= *//p' "$mk" | tr ' ' '\n' | grep -E '\.(sh|py)$' | sort)
	files=$(cd selftests/rpcrdma_cm && ls -1 -- *.sh *.py | sort)
	[ -n "$listed" ] || { echo "$mk lists no program"; return 1; }
	if [ -n "$(uniq -d <<<"$listed")" ]; then
		echo "named twice in $mk: $(uniq -d <<<"$listed" | paste -sd ' ')"
		rc=1
	fi
	if ! diff <(uniq <<<"$listed") <(echo "$files") >/dev/null; then
		echo "in selftests/rpcrdma_cm but not in $mk: $(comm -13 <(uniq <<<"$listed") <(echo "$files") | paste -sd ' ')"
		echo "in $mk but not in selftests/rpcrdma_cm: $(comm -23 <(uniq <<<"$listed") <(echo "$files") | paste -sd ' ')"
		rc=1
	fi
	return $rc
}
[ "$scope" = all ] && check selftests-listed selftests_listed

# UNKNOWN_COMMIT_ID: the test kernel's git history is one commit (the
# Debian source), so the Fixes: tags of the stock fixes name commits it
# cannot know; their form is still checked. MISSING_SIGN_OFF: the patches
# carry an Assisted-by: trailer and no Signed-off-by, as the kernel's
# Documentation/process/coding-assistants.rst asks (an AI agent must not
# add one); the submitter's is added by scripts/kernel/upstream-series.sh,
# which runs checkpatch again on the mail with it.
run_checkpatch() {
	(cd "$kdir" && scripts/checkpatch.pl --strict --no-tree -q \
		--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID,MISSING_SIGN_OFF "$1")
}

if [ ${#patches[@]} -eq 0 ]; then
	# The series is what the module needs: its absence is no pass.
	echo "not ok - checkpatch: no patches in patches/$RPCRDMA_CM_KBASE"
	failed=$((failed + 1))
elif [ -x "$kdir/scripts/checkpatch.pl" ]; then
	for p in "${patches[@]}"; do
		# FILE_PATH_CHANGES only asks whether MAINTAINERS needs an update
		# for new files; those of patch 1 are covered by the existing
		# include/linux/sunrpc/ and net/sunrpc/ patterns. checkpatch runs
		# from the kernel tree: inside this repository it would take the
		# patch files for files of the repository's own history.
		check "checkpatch $(basename "$p")" run_checkpatch "$RPCRDMA_CM_TOP/$p"
	done
else
	echo "ok - checkpatch # SKIP no kernel tree"
fi
exit "$failed"
