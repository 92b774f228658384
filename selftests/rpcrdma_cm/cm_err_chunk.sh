#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# With rpcrdma_cm loaded, the responder still honours the receive size the
# requester advertised (the hook's send threshold never raises it): the
# checks of reply_lib.sh over rxe and siw. cm_stock_conformance.sh runs the
# same checks without the module.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=reply_lib.sh
. "$DIR/reply_lib.sh"
skip_unless_root

ktap_print_header
require_pyverbs
require_module_ko
TRANSPORTS="rxe siw"
ktap_set_plan $((1 + 6 * 2))

trap reply_cleanup EXIT
reply_setup
ktap_test_result "the server's grace period ends: a 500-octet READ succeeds" grace_over
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
for tr in $TRANSPORTS; do
	reply_transport "$tr"
	reply_checks "$tr: rpcrdma_cm"
done

ktap_finished
