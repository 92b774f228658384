/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rpcrdma_cm: what 6.12's Rust kernel crate lacks, and
 * what a distribution's 7.3 kernel crate lacks the series' debugfs fix for.
 *
 * Module parameters: each accessor returns the current value with
 * READ_ONCE(); values take effect for connections set up afterwards.
 *
 * debugfs: rpcrdma_cm/connections, rpcrdma_cm/stats and
 * rpcrdma_cm/callback_times, whose contents the Rust side writes through
 * rpcrdma_cm_seq_write().
 */
#ifndef RPCRDMA_CM_SHIM_H
#define RPCRDMA_CM_SHIM_H

#include <linux/types.h>

struct seq_file;

u32 rpcrdma_cm_param_requester_send_size(void);
u32 rpcrdma_cm_param_requester_recv_size(void);
u32 rpcrdma_cm_param_responder_send_size(void);
u32 rpcrdma_cm_param_responder_recv_size(void);
bool rpcrdma_cm_param_remote_invalidation(void);
bool rpcrdma_cm_param_send_private_data(void);
bool rpcrdma_cm_param_nonconforming_requester_1k(void);

void rpcrdma_cm_warn_no_memory(void);
void rpcrdma_cm_debugfs_create(const void *state);
void rpcrdma_cm_debugfs_remove(void);
void rpcrdma_cm_seq_write(struct seq_file *m, const u8 *text, size_t len);

/* Implemented in Rust (boundary_c_shim.rs). */
bool rpcrdma_cm_conn_at_or_after(const void *state, unsigned long key,
				 unsigned long *found);
void rpcrdma_cm_show_connection(struct seq_file *m, const void *state,
				unsigned long cookie);
void rpcrdma_cm_show_stats(struct seq_file *m, const void *state);
void rpcrdma_cm_show_callback_times(struct seq_file *m, const void *state);

#endif /* RPCRDMA_CM_SHIM_H */
