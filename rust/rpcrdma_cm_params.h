/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rpcrdma_cm module parameters, read by the Rust side of the module.
 *
 * 6.12's Rust `module!` macro has no parameters, so they live in
 * rpcrdma_cm_params.c. Each accessor returns the current value with
 * READ_ONCE(); values take effect for connections set up afterwards.
 */
#ifndef RPCRDMA_CM_PARAMS_H
#define RPCRDMA_CM_PARAMS_H

#include <linux/types.h>

u32 rpcrdma_cm_param_requester_send_size(void);
u32 rpcrdma_cm_param_requester_recv_size(void);
u32 rpcrdma_cm_param_responder_send_size(void);
u32 rpcrdma_cm_param_responder_recv_size(void);
bool rpcrdma_cm_param_remote_invalidation(void);
bool rpcrdma_cm_param_send_private_data(void);

#endif /* RPCRDMA_CM_PARAMS_H */
