/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rpcrdma_cm: what 6.12's Rust kernel crate lacks, and
 * what a distribution's 7.3 kernel crate lacks the series' debugfs fix for.
 *
 * Module parameters: rpcrdma_cm_params_read() copies the current values,
 * each read once with READ_ONCE(); values take effect for connections set
 * up afterwards.
 *
 * debugfs: rpcrdma_cm/connections, rpcrdma_cm/stats and
 * rpcrdma_cm/callback_times, whose contents the Rust side writes through
 * rpcrdma_cm_seq_write().
 */
#ifndef RPCRDMA_CM_SHIM_H
#define RPCRDMA_CM_SHIM_H

#include <linux/types.h>

struct seq_file;

/* The parameters; sizes in bytes, 0 for the transport's setting */
struct rpcrdma_cm_params {
	u32	requester_send_size;
	u32	requester_recv_size;
	u32	responder_send_size;
	u32	responder_recv_size;
	bool	remote_invalidation;
	bool	send_private_data;
	bool	nonconforming_requester_1k;
	bool	callback_times;
};

void rpcrdma_cm_params_read(struct rpcrdma_cm_params *params);

void rpcrdma_cm_warn_no_memory(bool responder, u64 count);
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
