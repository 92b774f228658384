# SPDX-License-Identifier: GPL-2.0
#
# The in-tree copy of a module source without its out-of-tree scaffolding
# (scripts/in-tree-user.sh runs it on each copied file):
#  - items under #[cfg(rpcrdma_cm_boundary_c_shim)], #[cfg(rpcrdma_cm_bench)],
#    #[cfg(test)] (host unit tests) and the compile_error! for a build
#    without Kbuild go, with their attributes and the plain // comment right
#    above them;
#  - #[cfg(rpcrdma_cm_boundary_kernel_crate)] goes, its item stays (the only
#    boundary in the tree);
#  - hidden doctest lines that import from the host crate go
#    ("/// # use rpcrdma_cm_proto::"); the rendered docs are the same.
# An item ends with its first line when that ends in ';', else at the line
# that closes it at its own indentation ('}' or '};'), as rustfmt writes it.
# Blank lines never double and never end the file.

function indent_of(l) { match(l, /^[ \t]*/); return substr(l, 1, RLENGTH) }
function emit(l) {
	if (l == "") { blank = 1; return }
	if (blank && printed) print ""
	blank = 0; printed = 1
	print l
}
function flush_comments(   i) { for (i = 1; i <= nc; i++) emit(cbuf[i]); nc = 0 }
BEGIN {
	drop = "^[ \t]*#\\[cfg\\((rpcrdma_cm_bench|rpcrdma_cm_boundary_c_shim|test|" \
		"not\\(any\\(rpcrdma_cm_boundary_c_shim, rpcrdma_cm_boundary_kernel_crate\\)\\))\\)\\]$"
}
skipping == 1 {
	if ($0 ~ /^[ \t]*#\[/) next
	if ($0 ~ /;[ \t]*$/) { skipping = 0; next }
	skipping = 2; next
}
skipping == 2 { if ($0 == ind "}" || $0 == ind "};") skipping = 0; next }
$0 ~ drop { nc = 0; ind = indent_of($0); skipping = 1; next }
/^[ \t]*#\[cfg\(rpcrdma_cm_boundary_kernel_crate\)\]$/ { flush_comments(); next }
/^[ \t]*\/\/\/ # use rpcrdma_cm_proto::/ { next }
/^[ \t]*\/\/ / || /^[ \t]*\/\/$/ { cbuf[++nc] = $0; next }
{ flush_comments(); emit($0) }
END { flush_comments() }
