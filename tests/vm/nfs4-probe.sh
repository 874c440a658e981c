#!/bin/bash
# nfs4-probe.sh - guest scenario, run by hand (not in meson): how far the
# Linux kernel client gets with rnfsd's experimental NFSv4 ([nfsv4] enable =
# yes) over TCP or RDMA (--transport). NFSv4.1 and 4.2 mounts need
# EXCHANGE_ID, CREATE_SESSION, SEQUENCE, RECLAIM_COMPLETE, PUTROOTFH, LOOKUP,
# GETATTR, SECINFO_NO_NAME, ACCESS, READDIR. The namespace operations (ns41,
# ns42): mkdir, ln -s, mkfifo, ln, chmod, chown, touch -d, mv (in and across
# directories), rm, rmdir (ENOTEMPTY first), each checked on the server's
# side of the export. File I/O (io41, io42, io40) needs OPEN, CLOSE, READ,
# WRITE, COMMIT (4.0 also SETCLIENTID, OPEN_CONFIRM, RENEW): for each of
# vers=4.1, 4.2, 4.0: mount, read a small file, write 8 MiB with dd, read it
# back after dropping the page cache and compare (cmp), and compare the
# server's copy. lock41, lock40: fcntl locks on a vers=4.1 / 4.0 mount
# against a local process's on the server, both ways (LOCK, LOCKU). Run:
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
	mount -t nfs -o "vers=4.1,proto=$TRANSPORT,port=$NFS_PORT" "$ADDR:$EXPORT" "$MNT" || fail "vers=4.1 mount failed"
	grep " $MNT nfs4 " /proc/mounts || fail "not an nfs4 mount"
	grep " $MNT nfs4 .*proto=$TRANSPORT" /proc/mounts || fail "not over $TRANSPORT: $(grep " $MNT " /proc/mounts)"
}

check_list41() {
	ls -la "$MNT"
	[ "$(ls "$MNT" | sort | tr '\n' ' ')" = "dir hello link " ] || fail "listing: $(ls "$MNT" | tr '\n' ' ')"
	[ "$(stat -c %s "$MNT/hello")" = 6 ] || fail "size of hello"
	[ "$(readlink "$MNT/link")" = hello ] || fail "readlink"
	[ -d "$MNT/dir" ] || fail "dir is not a directory"
}


# The namespace operations on vers=4.$1 (CREATE, LINK, SETATTR, RENAME,
# REMOVE), each seen on the server.
check_ns() {
	local d=$MNT/ns$1 s=$EXPORT/ns$1 when
	mkdir "$d" || fail "mkdir"
	[ -d "$s" ] || fail "mkdir: not on the server"
	mkdir "$d/sub" && ln -s target "$d/sym" && mkfifo "$d/fifo" || fail "mkdir/ln -s/mkfifo"
	[ "$(readlink "$s/sym")" = target ] || fail "symlink on the server: $(readlink "$s/sym")"
	[ -p "$s/fifo" ] || fail "fifo on the server"
	chmod 0705 "$d/sub" || fail "chmod"
	[ "$(stat -c %a "$s/sub")" = 705 ] || fail "chmod on the server: $(stat -c %a "$s/sub")"
	chown 1000:1001 "$d/sub" || fail "chown"
	[ "$(stat -c %u:%g "$s/sub")" = 1000:1001 ] || fail "chown on the server: $(stat -c %u:%g "$s/sub")"
	[ "$(stat -c %u:%g "$d/sub")" = 1000:1001 ] || fail "owner as the client sees it: $(stat -c %u:%g "$d/sub")"
	touch -d '2001-02-03 04:05:06' "$d/sub" || fail "touch -d"
	when=$(date -d '2001-02-03 04:05:06' +%s)
	[ "$(stat -c %Y "$s/sub")" = "$when" ] || fail "touch -d on the server: $(stat -c %Y "$s/sub") != $when"
	mv "$d/sub" "$d/sub2" && mkdir "$d/sub3" && mv "$d/sub2" "$d/sub3/" || fail "mv"
	[ -d "$s/sub3/sub2" ] && [ ! -e "$s/sub" ] || fail "mv on the server"
	echo data > "$s/f"
	ln "$d/f" "$d/f2" || fail "ln"
	[ "$(stat -c %h "$s/f")" = 2 ] || fail "ln on the server: $(stat -c %h "$s/f") links"
	if rmdir "$d" 2>/dev/null; then fail "rmdir of a non-empty directory succeeded"; fi
	rm "$d/sym" "$d/fifo" "$d/f2" "$d/f" && rmdir "$d/sub3/sub2" "$d/sub3" || fail "rm/rmdir"
	rmdir "$d" || fail "rmdir"
	[ ! -e "$s" ] || fail "rmdir: still on the server"
}

check_ns41() { check_ns 1; }

check_umount41() {
	umount "$MNT" || fail "umount"
}

check_mount42() {
	mount -t nfs -o "vers=4.2,proto=$TRANSPORT,port=$NFS_PORT" "$ADDR:$EXPORT" "$MNT" || fail "vers=4.2 mount failed"
	grep " $MNT nfs4 .*vers=4.2.*proto=$TRANSPORT" /proc/mounts || fail "not 4.2 over $TRANSPORT: $(grep " $MNT " /proc/mounts)"
	ls "$MNT" | grep -q hello || fail "listing"
}

check_ns42() { check_ns 2; }

# vers=$1: mount, read hello, dd 8 MiB in and back out, cmp, umount.
check_io() {
	local v=$1 f=big-$1
	[ -f /tmp/nfs4-src ] || dd if=/dev/urandom of=/tmp/nfs4-src bs=1M count=8 status=none
	mount -t nfs -o "vers=$v,proto=$TRANSPORT,port=$NFS_PORT" "$ADDR:$EXPORT" "$MNT" ||
		fail "vers=$v mount failed"
	[ "$(timeout 20 cat "$MNT/hello")" = hello ] || fail "vers=$v: reading hello"
	timeout 120 dd if=/tmp/nfs4-src of="$MNT/$f" bs=1M conv=fsync status=none || fail "vers=$v: dd write"
	echo 3 > /proc/sys/vm/drop_caches
	timeout 120 cmp /tmp/nfs4-src "$MNT/$f" || fail "vers=$v: read back differs"
	cmp /tmp/nfs4-src "$EXPORT/$f" || fail "vers=$v: the server's copy differs"
	umount "$MNT" || fail "umount"
}
# vers=$1 byte-range locks (LOCK, LOCKU) against a local process's lock on the server, both ways.
check_lock() {
	local v=$1 lockctl srv
	lockctl="$(dirname "$(readlink -f "$0")")/lockctl.py"
	rm -f /tmp/l1 /tmp/l2 /tmp/l3 /tmp/l4
	mount -t nfs -o "vers=$v,proto=$TRANSPORT,port=$NFS_PORT" "$ADDR:$EXPORT" "$MNT" ||
		fail "vers=$v mount failed"
	: > "$EXPORT/lockf"
	timeout 100 python3 "$lockctl" "$EXPORT/lockf" "ex 0 100" "touch /tmp/l1" "wait /tmp/l2" "un 0 100" \
		"touch /tmp/l3" "wait /tmp/l4" "ex 0 5" > /tmp/lock-srv.out 2>&1 &
	srv=$!
	timeout 100 python3 "$lockctl" "$MNT/lockf" "wait /tmp/l1" "ex 0 10" "touch /tmp/l2" "wait /tmp/l3" \
		"ex 0 10" "touch /tmp/l4" "sleep 3" > /tmp/lock-cli.out 2>&1
	wait "$srv"
	cat /tmp/lock-srv.out /tmp/lock-cli.out
	[ "$(sed -n 1p /tmp/lock-cli.out)" = "ex 0 10 denied" ] || fail "NFS lock not refused under the local lock"
	[ "$(sed -n 2p /tmp/lock-cli.out)" = "ex 0 10 ok" ] || fail "NFS lock not granted after the local unlock"
	[ "$(sed -n 2p /tmp/lock-srv.out)" = "ex 0 5 denied" ] || fail "local lock not refused under the NFS lock"
	umount "$MNT" || fail "umount"
}
check_lock41() { check_lock 4.1; }
check_lock40() { check_lock 4.0; }
check_io41() { check_io 4.1; }
check_io42() { check_io 4.2; }
check_io40() { check_io 4.0; }

check_umount42() {
	umount "$MNT" || fail "umount"
}

guest_base
guest_net "$TRANSPORT"
guest_export
if run_check server-start 60 server_start rnfsd &&
   run_check mount41 60 check_mount41; then
	run_check list41 60 check_list41
	run_check ns41 120 check_ns41
	run_check umount41 30 check_umount41
	if run_check mount42 60 check_mount42; then
		run_check ns42 120 check_ns42
		run_check umount42 30 check_umount42
	fi
	run_check io41 300 check_io41
	run_check io42 300 check_io42
	run_check io40 300 check_io40
	run_check lock41 150 check_lock41
	run_check lock40 150 check_lock40
fi
run_check server-alive 30 server_alive
rnfsd_stop
guest_end
