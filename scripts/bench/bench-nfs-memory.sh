#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The memory phase of 'make bench-nfs', sourced by both guest halves:
# between memory_window_open and memory_window_close the kernel traces
# every kmalloc and kfree; bench_nfs_memory.py keeps what the RPC-over-RDMA
# transport allocated and did not free. MemFree (after a cache drop) and
# 'rdma resource show' are read at both ends of the window.

# The connections the client opens for the memory phase (nconnect).
MEMORY_CONNECTIONS=4

# trace_lost: events the trace buffer lost so far (all CPUs).
trace_lost() {
	cat /sys/kernel/tracing/per_cpu/cpu*/stats | awk '$1 == "overrun:" { n += $2 } END { print n + 0 }'
}

# memfree_kib: MemFree in KiB once the caches are dropped.
memfree_kib() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '$1 == "MemFree:" { print $2 }' /proc/meminfo
}

# rdma_line: the rxe device's line of 'rdma resource show'.
rdma_line() {
	rdma resource show | head -1
}

# memory_window_open: an empty trace of kmalloc and kfree, the "before"
# readings in /tmp/memory-before.
memory_window_open() {
	local t=/sys/kernel/tracing
	echo 0 >$t/tracing_on
	echo 32768 >$t/buffer_size_kb
	echo >$t/trace
	echo "$(memfree_kib)|$(rdma_line)|$(trace_lost)" >/tmp/memory-before
	echo 1 >$t/events/kmem/kmalloc/enable
	echo 1 >$t/events/kmem/kfree/enable
	echo 1 >$t/tracing_on
}

# memory_window_close SIDE OUT: stop the trace, read the "after" values and
# write OUT (bench_nfs_memory.py). Messages in /tmp/memory.err.
memory_window_close() {
	local t=/sys/kernel/tracing side=$1 out=$2 memfree rdma lost
	echo 0 >$t/events/kmem/kmalloc/enable
	echo 0 >$t/events/kmem/kfree/enable
	IFS='|' read -r memfree rdma lost </tmp/memory-before
	grep -E ' (kmalloc|kfree): ' $t/trace >/tmp/memory.trace
	/usr/bin/python3 "$DIR/bench_nfs_memory.py" --trace /tmp/memory.trace --side "$side" \
		--connections "$MEMORY_CONNECTIONS" \
		--memfree-before "$memfree" --memfree-after "$(memfree_kib)" \
		--rdma-before "$rdma" --rdma-after "$(rdma_line)" --lost $(($(trace_lost) - lost)) \
		--out "$out" 2>/tmp/memory.err
}
