// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rpcrdma_cm: module parameters and debugfs files, which
 * 6.12's Rust kernel crate cannot provide. Everything else is Rust.
 *
 * Module parameters:
 *
 * Sizes are in bytes. 0 means "what the transport is configured for"
 * (the xprtrdma inline sysctls on the client, svcrdma's max_req_size on
 * the server), so loading the module alone keeps stock sizes. Otherwise a
 * size must lie within 1024..262144; it is rounded down to a multiple of
 * 1024 when advertised, and never above what the transport can receive.
 */

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>

#include "rpcrdma_cm_shim.h"

#define RPCRDMA_CM_SIZE_MIN	1024U
#define RPCRDMA_CM_SIZE_MAX	(256U * 1024U)

static int rpcrdma_cm_size_set(const char *val, const struct kernel_param *kp)
{
	unsigned int size;
	int ret;

	ret = kstrtouint(val, 0, &size);
	if (ret)
		return ret;
	if (size && (size < RPCRDMA_CM_SIZE_MIN || size > RPCRDMA_CM_SIZE_MAX))
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, size);
	return 0;
}

static const struct kernel_param_ops rpcrdma_cm_size_ops = {
	.set = rpcrdma_cm_size_set,
	.get = param_get_uint,
};

static unsigned int requester_send_size;
module_param_cb(requester_send_size, &rpcrdma_cm_size_ops, &requester_send_size, 0644);
MODULE_PARM_DESC(requester_send_size,
		 "Client: largest inline send advertised, bytes (0 = transport setting, else 1024..262144)");

static unsigned int requester_recv_size;
module_param_cb(requester_recv_size, &rpcrdma_cm_size_ops, &requester_recv_size, 0644);
MODULE_PARM_DESC(requester_recv_size,
		 "Client: largest inline receive advertised, bytes (0 = transport setting, else 1024..262144)");

static unsigned int responder_send_size;
module_param_cb(responder_send_size, &rpcrdma_cm_size_ops, &responder_send_size, 0644);
MODULE_PARM_DESC(responder_send_size,
		 "Server: largest inline send advertised, bytes (0 = transport setting, else 1024..262144)");

static unsigned int responder_recv_size;
module_param_cb(responder_recv_size, &rpcrdma_cm_size_ops, &responder_recv_size, 0644);
MODULE_PARM_DESC(responder_recv_size,
		 "Server: largest inline receive advertised, bytes (0 = transport setting, else 1024..262144)");

static bool remote_invalidation = true;
module_param(remote_invalidation, bool, 0644);
MODULE_PARM_DESC(remote_invalidation,
		 "Offer (client) and use (server) Remote Invalidation when the peer allows it (default Y)");

static bool send_private_data = true;
module_param(send_private_data, bool, 0644);
MODULE_PARM_DESC(send_private_data,
		 "Send RFC 8797 private data; N behaves like an RFC 8166 peer without it (default Y)");

u32 rpcrdma_cm_param_requester_send_size(void)
{
	return READ_ONCE(requester_send_size);
}

u32 rpcrdma_cm_param_requester_recv_size(void)
{
	return READ_ONCE(requester_recv_size);
}

u32 rpcrdma_cm_param_responder_send_size(void)
{
	return READ_ONCE(responder_send_size);
}

u32 rpcrdma_cm_param_responder_recv_size(void)
{
	return READ_ONCE(responder_recv_size);
}

bool rpcrdma_cm_param_remote_invalidation(void)
{
	return READ_ONCE(remote_invalidation);
}

bool rpcrdma_cm_param_send_private_data(void)
{
	return READ_ONCE(send_private_data);
}

static struct dentry *rpcrdma_cm_debugfs_dir;

static int rpcrdma_cm_connections_show(struct seq_file *m, void *unused)
{
	rpcrdma_cm_show_connections(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rpcrdma_cm_connections);

static int rpcrdma_cm_stats_show(struct seq_file *m, void *unused)
{
	rpcrdma_cm_show_stats(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rpcrdma_cm_stats);

/*
 * Create <debugfs>/rpcrdma_cm/{connections,stats}. @state is handed back
 * to the show functions; it must stay valid until
 * rpcrdma_cm_debugfs_remove() has returned, which waits for readers.
 *
 * debugfs is a debugging aid: when it is unavailable (debugfs=off,
 * CONFIG_DEBUG_FS=n) the module works without the files, as debugfs
 * users are expected to.
 */
void rpcrdma_cm_debugfs_create(const void *state)
{
	struct dentry *dir;

	dir = debugfs_create_dir("rpcrdma_cm", NULL);
	if (IS_ERR(dir)) {
		pr_info("rpcrdma_cm: no debugfs files (error %ld)\n",
			PTR_ERR(dir));
		return;
	}
	debugfs_create_file("connections", 0444, dir, (void *)state,
			    &rpcrdma_cm_connections_fops);
	debugfs_create_file("stats", 0444, dir, (void *)state,
			    &rpcrdma_cm_stats_fops);
	rpcrdma_cm_debugfs_dir = dir;
}

void rpcrdma_cm_debugfs_remove(void)
{
	debugfs_remove_recursive(rpcrdma_cm_debugfs_dir);
	rpcrdma_cm_debugfs_dir = NULL;
}

void rpcrdma_cm_seq_write(struct seq_file *m, const u8 *text, size_t len)
{
	seq_write(m, text, len);
}
