// SPDX-License-Identifier: GPL-2.0
/*
 * A CM private data hook whose answers disagree with the octets it
 * writes, for cm_cross_check.sh: the transports must decode what a hook
 * wrote and refuse or clamp an answer that would make the peer send more
 * than this host provisioned, or make this host send more than it
 * advertised. Never load it anywhere else.
 *
 * lie=recv           requester: advertises 64 KB receive, provisions 1 KB
 * lie=send           requester: advertises 1 KB send, provisions 16 KB
 *                    send
 * lie=accept         responder: advertises 64 KB receive, provisions 4 KB
 * lie=len57          requester: 57 octets of private data
 * lie=len7           requester: the first 7 octets of a 16 KB message
 * lie=small          requester: provisions 512-octet buffers
 * lie=big            requester: provisions 128 KB receive buffers
 * lie=reserved       requester: sets a reserved flag bit (0x02)
 * lie=accept_ri      responder: its octets say no Remote Invalidation
 *                    (flags 0), its limits keep it on
 * lie=accept_send_over responder: advertises 16 KB send, provisions 4 KB
 *
 * The hooks take no thresholds from a module (its octets and sizes are
 * its whole answer), so these are all the lies one can tell. The role it
 * does not lie for is left to the stock code.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sunrpc/xdr.h>
#include <linux/sunrpc/rpc_rdma.h>
#include <linux/sunrpc/rpc_rdma_cm.h>

static char *lie = "recv";
module_param(lie, charp, 0444);
MODULE_PARM_DESC(lie, "recv, send, accept, accept_ri, accept_send_over, len57, len7, small, big or reserved");

static int cm_lying_write_flags(u8 *pdata, u32 send, u32 recv, u8 flags)
{
	struct rpcrdma_connect_private msg = {
		.cp_magic	= rpcrdma_cmp_magic,
		.cp_version	= RPCRDMA_CMP_VERSION,
		.cp_flags	= flags,
		.cp_send_size	= rpcrdma_encode_buffer_size(send),
		.cp_recv_size	= rpcrdma_encode_buffer_size(recv),
	};

	memcpy(pdata, &msg, sizeof(msg));
	return sizeof(msg);
}

static int cm_lying_write(u8 *pdata, u32 send, u32 recv)
{
	return cm_lying_write_flags(pdata, send, recv,
				    RPCRDMA_CMP_F_SND_W_INV_OK);
}

static int cm_lying_prepare_connect(void *priv,
				    const struct rpcrdma_cm_conn *conn,
				    struct rpcrdma_cm_local *local,
				    u8 *pdata, size_t size)
{
	if (!strcmp(lie, "recv")) {
		local->max_send = 1024;
		local->max_recv = 1024;
		return cm_lying_write(pdata, 1024, 65536);
	}
	if (!strcmp(lie, "send")) {
		local->max_send = 16384;
		local->max_recv = 4096;
		return cm_lying_write(pdata, 1024, 4096);
	}
	if (!strcmp(lie, "len57")) {
		cm_lying_write(pdata, 4096, 4096);
		return RPCRDMA_CM_PDATA_MAX + 1;
	}
	if (!strcmp(lie, "len7")) {
		/* Padded with zeros on IB/RoCE: 16 KB send, 1 KB receive */
		local->max_send = 16384;
		cm_lying_write(pdata, 16384, 4096);
		return 7;
	}
	if (!strcmp(lie, "small")) {
		local->max_send = 512;
		local->max_recv = 512;
		return cm_lying_write(pdata, 1024, 1024);
	}
	if (!strcmp(lie, "big")) {
		local->max_recv = 131072;
		return cm_lying_write(pdata, 4096, 65536);
	}
	if (!strcmp(lie, "reserved"))
		return cm_lying_write_flags(pdata, 4096, 4096,
					    RPCRDMA_CMP_F_SND_W_INV_OK | 0x02);
	return -ENOENT;
}

static void cm_lying_established(void *priv,
				 const struct rpcrdma_cm_conn *conn,
				 const struct rpcrdma_cm_local *local,
				 const u8 *pdata, size_t len)
{
}

static int cm_lying_prepare_accept(void *priv,
				   const struct rpcrdma_cm_conn *conn,
				   const u8 *peer_pdata, size_t peer_len,
				   struct rpcrdma_cm_local *local,
				   u8 *pdata, size_t size)
{
	if (strcmp(lie, "accept") && strcmp(lie, "accept_ri") &&
	    strcmp(lie, "accept_send_over"))
		return -ENOENT;
	local->max_send = 4096;
	local->max_recv = 4096;
	local->remote_inv = true;
	if (!strcmp(lie, "accept_send_over"))
		return cm_lying_write(pdata, 16384, 4096);
	if (!strcmp(lie, "accept_ri"))
		return cm_lying_write_flags(pdata, 4096, 4096, 0);
	return cm_lying_write(pdata, 4096, 65536);
}

static const struct rpcrdma_cm_ops cm_lying_ops = {
	.prepare_connect	= cm_lying_prepare_connect,
	.established		= cm_lying_established,
	.prepare_accept		= cm_lying_prepare_accept,
};

static int __init cm_lying_init(void)
{
	return rpcrdma_cm_register(&cm_lying_ops, NULL);
}

static void __exit cm_lying_exit(void)
{
	rpcrdma_cm_unregister(&cm_lying_ops, NULL);
}

module_init(cm_lying_init);
module_exit(cm_lying_exit);
MODULE_DESCRIPTION("rpcrdma_cm selftest: a CM private data hook that lies");
MODULE_LICENSE("GPL");
