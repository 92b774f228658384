#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the guest: run TEST_PROGS (or the tests named as arguments) with the
# kernel's kselftest runner, which prints KTAP and enforces 'settings'.

DIR=$(dirname "$(readlink -f "$0")")
: "${KSFT_DIR:?}"
export BASE_DIR=$KSFT_DIR
# shellcheck source=/dev/null
. "$KSFT_DIR/kselftest/runner.sh"

if [ $# -gt 0 ]; then
	tests=("$@")
else
	read -r -a tests <<<"$(sed -n 's/^TEST_PROGS := //p' "$DIR/Makefile")"
fi
cd "$DIR" || exit 1
# The runner looks for 'settings' under BASE_DIR; this directory is outside
# the kernel tree, so pass its timeout explicitly.
# RPCRDMA_CM_TEST_TIMEOUT overrides it (slow kernels: KASAN under TCG).
kselftest_override_timeout=${RPCRDMA_CM_TEST_TIMEOUT:-$(sed -n 's/^timeout=//p' "$DIR/settings")}
export kselftest_override_timeout
run_many "${tests[@]/#/$DIR/}"
