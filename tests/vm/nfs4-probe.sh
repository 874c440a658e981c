#!/bin/bash
# nfs4-probe.sh - guest scenario, run by hand (not in meson): how far the
# Linux kernel client gets with rnfsd's experimental NFSv4 ([nfsv4] enable =
# yes) over TCP or RDMA (--transport). NFSv4.1 and 4.2 mounts need
# EXCHANGE_ID, CREATE_SESSION, SEQUENCE, RECLAIM_COMPLETE, PUTROOTFH, LOOKUP,
# GETATTR, SECINFO_NO_NAME, ACCESS, READDIR; file I/O needs OPEN, CLOSE,
# READ, WRITE, COMMIT (4.0 also SETCLIENTID, OPEN_CONFIRM, RENEW): all built.
# For each of vers=4.1, 4.2, 4.0: mount, read a small file, write 8 MiB with
# dd, read it back after dropping the page cache and compare (cmp), and
# compare the server's copy. Run:
#   flock /var/tmp/rnfsd-vm.lock tests/vm/run-vm.sh --build-dir build nfs4-probe
#   flock /var/tmp/rnfsd-vm.lock tests/vm/run-vm.sh --build-dir build --transport rdma nfs4-probe

. "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

SERVER=rnfsd
eval "$(declare -f rnfsd_write_config | sed '1s/rnfsd_write_config/base_rnfsd_write_config/')"
rnfsd_write_config() {
	base_rnfsd_write_config
	printf '[nfsv4]\nenable = yes\n' >> /etc/rnfsd/rnfsd.conf
}

check_mount41() {
	echo hello > "$EXPORT/hello"
	mkdir -p "$EXPORT/dir"
	ln -sf hello "$EXPORT/link"
	mount -t nfs -o vers=4.1,proto=$TRANSPORT,port=$NFS_PORT "$ADDR:$EXPORT" "$MNT" ||
		fail "vers=4.1 mount failed"
	grep " $MNT nfs4 " /proc/mounts || fail "not an nfs4 mount"
}

check_list41() {
	ls -la "$MNT"
	[ "$(ls "$MNT" | sort | tr '\n' ' ')" = "dir hello link " ] || fail "listing: $(ls "$MNT" | tr '\n' ' ')"
	[ "$(stat -c %s "$MNT/hello")" = 6 ] || fail "size of hello"
	[ "$(readlink "$MNT/link")" = hello ] || fail "readlink"
	[ -d "$MNT/dir" ] || fail "dir is not a directory"
}


check_umount41() {
	umount "$MNT" || fail "umount"
}

check_mount42() {
	mount -t nfs -o vers=4.2,proto=$TRANSPORT,port=$NFS_PORT "$ADDR:$EXPORT" "$MNT" ||
		fail "vers=4.2 mount failed"
	ls "$MNT" | grep -q hello || fail "listing"
	umount "$MNT" || fail "umount"
}

# vers=$1: mount, read hello, dd 8 MiB in and back out, cmp, umount.
check_io() {
	local v=$1 f=big-$1
	[ -f /tmp/nfs4-src ] || dd if=/dev/urandom of=/tmp/nfs4-src bs=1M count=8 status=none
	mount -t nfs -o vers=$v,proto=$TRANSPORT,port=$NFS_PORT "$ADDR:$EXPORT" "$MNT" ||
		fail "vers=$v mount failed"
	[ "$(timeout 20 cat "$MNT/hello")" = hello ] || fail "vers=$v: reading hello"
	timeout 120 dd if=/tmp/nfs4-src of="$MNT/$f" bs=1M conv=fsync status=none || fail "vers=$v: dd write"
	echo 3 > /proc/sys/vm/drop_caches
	timeout 120 cmp /tmp/nfs4-src "$MNT/$f" || fail "vers=$v: read back differs"
	cmp /tmp/nfs4-src "$EXPORT/$f" || fail "vers=$v: the server's copy differs"
	umount "$MNT" || fail "umount"
}
check_io41() { check_io 4.1; }
check_io42() { check_io 4.2; }
check_io40() { check_io 4.0; }

guest_base
guest_net "$TRANSPORT"
guest_export
if run_check server-start 60 server_start rnfsd &&
   run_check mount41 60 check_mount41; then
	run_check list41 60 check_list41
	run_check umount41 30 check_umount41
	run_check mount42 60 check_mount42
	run_check io41 300 check_io41
	run_check io42 300 check_io42
	run_check io40 300 check_io40
fi
run_check server-alive 30 server_alive
rnfsd_stop
guest_end
