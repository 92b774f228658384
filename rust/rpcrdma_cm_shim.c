// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rpcrdma_cm: module parameters and debugfs files, which
 * 6.12's Rust kernel crate cannot provide, and which a distribution's 7.3
 * kernel crate provides without the series' debugfs fix. Everything else
 * is Rust.
 *
 * Module parameters:
 *
 * Sizes are in bytes. 0 means "what the transport is configured for"
 * (the xprtrdma inline sysctls on the client, svcrdma's max_req_size on
 * the server), so loading the module alone keeps stock sizes. Otherwise a
 * size must lie within 1024..65536, 65536 being the most either transport
 * allocates for an inline message (RPCRDMA_MAX_INLINE,
 * RPCRDMA_MAX_INLINE_THRESH), so that a size takes effect as given; it is
 * rounded down to a multiple of 1024 when advertised.
 */

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>

#include "rpcrdma_cm_shim.h"

#define RPCRDMA_CM_SIZE_MIN	1024U
#define RPCRDMA_CM_SIZE_MAX	(64U * 1024U)

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
		 "Client: inline send size to advertise (0: transport's; 1024..65536)");

static unsigned int requester_recv_size;
module_param_cb(requester_recv_size, &rpcrdma_cm_size_ops, &requester_recv_size, 0644);
MODULE_PARM_DESC(requester_recv_size,
		 "Client: inline receive size to advertise (0: transport's; 1024..65536)");

static unsigned int responder_send_size;
module_param_cb(responder_send_size, &rpcrdma_cm_size_ops, &responder_send_size, 0644);
MODULE_PARM_DESC(responder_send_size,
		 "Server: inline send size to advertise (0: transport's; 1024..65536)");

static unsigned int responder_recv_size;
module_param_cb(responder_recv_size, &rpcrdma_cm_size_ops, &responder_recv_size, 0644);
MODULE_PARM_DESC(responder_recv_size,
		 "Server: inline receive size to advertise (0: transport's; 1024..65536)");

static bool remote_invalidation = true;
module_param(remote_invalidation, bool, 0644);
MODULE_PARM_DESC(remote_invalidation,
		 "Offer (client), use (server) Remote Invalidation if the peer allows (Y)");

static bool send_private_data = true;
module_param(send_private_data, bool, 0644);
MODULE_PARM_DESC(send_private_data,
		 "Send RFC 8797 private data; N: as an RFC 8166 peer without it (Y)");

static bool nonconforming_requester_1k;
module_param(nonconforming_requester_1k, bool, 0644);
MODULE_PARM_DESC(nonconforming_requester_1k,
		 "Server: hold clients without RFC 8797 private data to 1KB inline (N)");

static bool callback_times;
module_param(callback_times, bool, 0644);
MODULE_PARM_DESC(callback_times,
		 "Debugging: time each hook callback, for debugfs callback_times (N)");

/* boundary_c_shim.rs's ParamsC has this layout; it asserts the same */
static_assert(sizeof(struct rpcrdma_cm_params) == 20);
static_assert(offsetof(struct rpcrdma_cm_params, requester_send_size) == 0);
static_assert(offsetof(struct rpcrdma_cm_params, requester_recv_size) == 4);
static_assert(offsetof(struct rpcrdma_cm_params, responder_send_size) == 8);
static_assert(offsetof(struct rpcrdma_cm_params, responder_recv_size) == 12);
static_assert(offsetof(struct rpcrdma_cm_params, remote_invalidation) == 16);
static_assert(offsetof(struct rpcrdma_cm_params, send_private_data) == 17);
static_assert(offsetof(struct rpcrdma_cm_params, nonconforming_requester_1k) == 18);
static_assert(offsetof(struct rpcrdma_cm_params, callback_times) == 19);

/* Each parameter read once; a racing write may show in some fields only */
void rpcrdma_cm_params_read(struct rpcrdma_cm_params *params)
{
	params->requester_send_size = READ_ONCE(requester_send_size);
	params->requester_recv_size = READ_ONCE(requester_recv_size);
	params->responder_send_size = READ_ONCE(responder_send_size);
	params->responder_recv_size = READ_ONCE(responder_recv_size);
	params->remote_invalidation = READ_ONCE(remote_invalidation);
	params->send_private_data = READ_ONCE(send_private_data);
	params->nonconforming_requester_1k = READ_ONCE(nonconforming_requester_1k);
	params->callback_times = READ_ONCE(callback_times);
}

/*
 * The @count'th connection of its role (the server's if @responder) left
 * to the stock code; the Rust side decides when to say so.
 */
void rpcrdma_cm_warn_no_memory(bool responder, u64 count)
{
	pr_warn("rpcrdma_cm: no memory to track a connection of the %s; left to the stock code (%llu so far, stats: no_memory)\n",
		responder ? "responder" : "requester", count);
}

static struct dentry *rpcrdma_cm_debugfs_dir;

/*
 * rpcrdma_cm/connections walks the connection table in cookie order, one
 * line at a time: the table's lock is taken for each line, never across a
 * read(), so a reader holds up connection setup for one line at most,
 * however many connections there are. The iterator keeps @next, the
 * smallest cookie the line at @pos may have: the cookie of the line
 * to show there, or one above the last line shown. A line whose
 * connection closes meanwhile is followed by its successor, not skipped,
 * and a read() after the end continues from the last cookie shown, so
 * that one open file never shows a connection twice. @pos 0 (a new open
 * or a seek to the start) walks from the first cookie; any other
 * position the iterator does not hold counts lines from there.
 */
struct rpcrdma_cm_conn_iter {
	const void	*state;
	bool		valid;
	bool		past_last;
	loff_t		pos;
	unsigned long	next;
	unsigned long	cookie;
};

static void *rpcrdma_cm_conn_seek(struct rpcrdma_cm_conn_iter *it, loff_t pos)
{
	unsigned long key = 0;
	loff_t at = 0;

	if (it->valid && pos != 0 && pos >= it->pos) {
		/* Cookies above ULONG_MAX do not exist */
		if (it->past_last)
			return NULL;
		key = it->next;
		at = it->pos;
	}
	it->valid = false;
	for (;;) {
		if (!rpcrdma_cm_conn_at_or_after(it->state, key, &key)) {
			/* The end: a later read() continues from here */
			it->valid = true;
			it->past_last = false;
			it->pos = at;
			it->next = key;
			return NULL;
		}
		if (at == pos)
			break;
		if (key == ULONG_MAX) {
			it->valid = true;
			it->past_last = true;
			it->pos = at + 1;
			return NULL;
		}
		key++;
		at++;
	}
	it->valid = true;
	it->past_last = false;
	it->pos = pos;
	it->next = key;
	it->cookie = key;
	return it;
}

static void *rpcrdma_cm_conn_start(struct seq_file *m, loff_t *pos)
{
	return rpcrdma_cm_conn_seek(m->private, *pos);
}

static void *rpcrdma_cm_conn_next(struct seq_file *m, void *v, loff_t *pos)
{
	struct rpcrdma_cm_conn_iter *it = v;

	++*pos;
	/* The line at *pos has a cookie above the one just shown */
	if (it->cookie == ULONG_MAX) {
		it->past_last = true;
		it->pos = *pos;
		return NULL;
	}
	it->pos = *pos;
	it->next = it->cookie + 1;
	return rpcrdma_cm_conn_seek(it, *pos);
}

static void rpcrdma_cm_conn_stop(struct seq_file *m, void *v)
{
}

static int rpcrdma_cm_conn_show(struct seq_file *m, void *v)
{
	struct rpcrdma_cm_conn_iter *it = v;

	rpcrdma_cm_show_connection(m, it->state, it->cookie);
	return 0;
}

static const struct seq_operations rpcrdma_cm_conn_sops = {
	.start	= rpcrdma_cm_conn_start,
	.next	= rpcrdma_cm_conn_next,
	.stop	= rpcrdma_cm_conn_stop,
	.show	= rpcrdma_cm_conn_show,
};

static int rpcrdma_cm_connections_open(struct inode *inode, struct file *file)
{
	struct rpcrdma_cm_conn_iter *it;

	it = __seq_open_private(file, &rpcrdma_cm_conn_sops, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->state = inode->i_private;
	return 0;
}

static const struct file_operations rpcrdma_cm_connections_fops = {
	.owner		= THIS_MODULE,
	.open		= rpcrdma_cm_connections_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= seq_release_private,
};

static int rpcrdma_cm_stats_show(struct seq_file *m, void *unused)
{
	rpcrdma_cm_show_stats(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rpcrdma_cm_stats);

static int rpcrdma_cm_callback_times_show(struct seq_file *m, void *unused)
{
	rpcrdma_cm_show_callback_times(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rpcrdma_cm_callback_times);

/*
 * Create <debugfs>/rpcrdma_cm/{connections,stats,callback_times}. @state
 * is handed back to the show functions; it must stay valid until
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
	debugfs_create_file("callback_times", 0444, dir, (void *)state,
			    &rpcrdma_cm_callback_times_fops);
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
