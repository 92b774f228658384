/* SPDX-License-Identifier: GPL-2.0 */
/* The headers src/bindings.rs is generated from (see regenerate.sh). */
#include <poll.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
