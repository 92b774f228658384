#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFSv3 and NFSv4.2 mounts over RDMA (rxe, one guest): the mount shows
# proto=rdma, and files of sizes around the inline thresholds and large
# ones round-trip byte-exact after the caches are dropped.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin nfs_rdma_roundtrip

SIZES="0 1 1023 1024 1025 4095 4096 4097 65535 65536 65537 1048576 16777216"
VERSIONS="3 4.2"

for t in rdma mount.nfs rpc.nfsd exportfs sha256sum; do
	if ! command -v $t >/dev/null; then
		ktap_skip_all "$t missing (make deps installs it)"
		exit "$KSFT_SKIP"
	fi
done
guest_setup rxe
# The versions' loop: mount, proto=rdma, one test per size, unmount (on
# either branch of its if).
ktap_plan_counted $(( $(wc -w <<<"$VERSIONS") * ($(wc -w <<<"$SIZES") + 3) ))

ktap_test_result "nfsd listens on rdma $NFS_PORT" start_nfsd

src=$(mktemp -d)
for s in $SIZES; do
	head -c "$s" /dev/urandom >"$src/f$s"
done

roundtrip() {
	local s=$1 want got served
	want=$(sha256sum <"$src/f$s")
	cp "$src/f$s" "$MNT/f$s" || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	got=$(sha256sum <"$MNT/f$s")
	served=$(sha256sum <"$NFS_EXPORT/f$s")
	if [ "$got" != "$want" ] || [ "$served" != "$want" ]; then
		ktap_print_msg "size $s: want $want, read back $got, server holds $served"
		return 1
	fi
	rm -f "$MNT/f$s"
}

has_proto_rdma() {
	case ",$1," in
	*,proto=rdma,*) return 0 ;;
	esac
	return 1
}

for v in $VERSIONS; do
	umount_rdma
	if ! mount_rdma "$ip" "$v"; then
		ktap_test_fail "NFSv$v mount over RDMA"
		ktap_test_skip "NFSv$v mount shows proto=rdma (not mounted)"
		for s in $SIZES; do ktap_test_skip "NFSv$v $s-byte file (not mounted)"; done
		ktap_test_skip "NFSv$v unmount (not mounted)"
		continue
	fi
	ktap_test_pass "NFSv$v mount over RDMA"
	opts=$(mount_options)
	ktap_print_msg "NFSv$v: $opts"
	ktap_test_result "NFSv$v mount shows proto=rdma" has_proto_rdma "$opts"
	for s in $SIZES; do
		ktap_test_result "NFSv$v $s-byte file round-trips byte-exact" roundtrip "$s"
	done
	ktap_test_result "NFSv$v unmount" umount "$MNT"
done

rm -rf "$src"
stop_nfsd
ktap_finished
