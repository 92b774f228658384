/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bindgen reads for hook_bindings.rs: the headers the series adds to
 * rust/bindings/bindings_helper.h for kernel::sunrpc::rdma_cm.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/sunrpc/rpc_rdma_cm.h>
