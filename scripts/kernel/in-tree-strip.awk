# SPDX-License-Identifier: GPL-2.0
#
# The in-tree copy of a module source without its out-of-tree scaffolding
# (scripts/kernel/in-tree-user.sh runs it on each copied file):
#  - items under #[cfg(rpcrdma_cm_boundary_c_shim)], #[cfg(rpcrdma_cm_bench)],
#    #[cfg(rpcrdma_cm_abstraction_in_module)] (a distribution's kernel),
#    #[cfg(not(rpcrdma_cm_lkmm_atomics))] (a kernel crate without the
#    kernel's atomics), #[cfg(test)] (host unit tests) and the compile_error! for a build
#    without Kbuild go, with their attributes and the comments (// and ///)
#    right above them;
#  - #[cfg(rpcrdma_cm_boundary_kernel_crate)],
#    #[cfg(rpcrdma_cm_lkmm_atomics)] and
#    #[cfg(not(rpcrdma_cm_abstraction_in_module))] go, their items stay (the
#    only boundary in the tree, its atomics, and the kernel crate's
#    abstraction);
#  - hidden doctest lines that import from the host crate go
#    ("/// # use rpcrdma_cm_proto::"); the rendered docs are the same.
# A dropped item ends where its brackets close: on its first line if that
# balances and ends in ';' or '}', else on the first line after a bracket
# opened that brings the depth back to zero and ends in ';' or '}'
# (brackets in string literals and // comments are not counted). It fails
# (exit 1) on an item still open at the end of the file, on one whose
# brackets close elsewhere, on an attribute above a dropped cfg, and on a
# line indented less than the dropped item while inside it.
# Blank lines never double and never end the file.

function indent_of(l) { match(l, /^[ \t]*/); return RLENGTH }
function depth_of(l,   t, o, c) {
	t = l
	gsub(/"([^"\\]|\\.)*"/, "", t)
	sub(/\/\/.*/, "", t)
	o = gsub(/[[({]/, "", t); c = gsub(/[]})]/, "", t)
	return o - c
}
function emit(l) {
	if (l == "") { blank = 1; return }
	if (blank && printed) print ""
	blank = 0; printed = 1
	print l
}
function flush_pending(   i) { for (i = 1; i <= np; i++) emit(pend[i]); np = 0 }
function fail(why) { printf "in-tree-strip: %s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"; failed = 1; exit 1 }
BEGIN {
	drop = "^[ \t]*#\\[cfg\\((rpcrdma_cm_bench|rpcrdma_cm_boundary_c_shim|rpcrdma_cm_abstraction_in_module|test|" \
		"not\\(rpcrdma_cm_lkmm_atomics\\)|" \
		"not\\(any\\(rpcrdma_cm_boundary_c_shim, rpcrdma_cm_boundary_kernel_crate\\)\\))\\)\\]$"
}
# Inside a dropped item: its attributes and comments, then its lines.
skipping == 1 {
	if ($0 ~ /^[ \t]*(#\[|\/\/)/) next
	if (indent_of($0) < ind) fail("a dropped item's first line is indented less than its cfg")
	depth = depth_of($0)
	if (depth == 0 && $0 ~ /[;}][ \t]*$/) { skipping = 0; next }
	if (depth < 0) fail("brackets close more than they open in a dropped item")
	opened = depth > 0
	skipping = 2; next
}
skipping == 2 {
	if ($0 != "" && indent_of($0) < ind) fail("a line indented less than the dropped item inside it")
	depth += depth_of($0)
	if (depth < 0) fail("brackets close more than they open in a dropped item")
	if (depth > 0) opened = 1
	if (depth == 0 && opened) {
		if ($0 !~ /[;}][ \t]*$/) fail("a dropped item's brackets close on a line that does not end it")
		skipping = 0
	}
	next
}
$0 ~ drop {
	if (np > 0 && pend[np] ~ /^[ \t]*#\[/) fail("an attribute above a dropped cfg")
	np = 0; ind = indent_of($0); skipping = 1; next
}
/^[ \t]*#\[cfg\((rpcrdma_cm_boundary_kernel_crate|rpcrdma_cm_lkmm_atomics|not\(rpcrdma_cm_abstraction_in_module\))\)\]$/ { flush_pending(); next }
/^[ \t]*\/\/\/ # use rpcrdma_cm_proto::/ { next }
# Comments and attributes wait: they go with the item below if it goes.
/^[ \t]*\/\/( |\/ |\/$|$)/ || /^[ \t]*#\[/ { pend[++np] = $0; next }
{ flush_pending(); emit($0) }
END {
	if (failed) exit 1
	if (skipping) { printf "in-tree-strip: %s: a dropped item is still open at the end\n", FILENAME > "/dev/stderr"; exit 1 }
	flush_pending()
}
