#!/bin/sh
# vm-systemd-check.sh - runs under the real systemd in the qemu
# guest (vm-systemd-guest.sh), as root, with BUILD and SRC set. Prints
# "@@ PASS name" / "@@ FAIL name: detail" per check; vm-systemd.sh on the
# host requires every name in vm-systemd.checks to PASS.
#
# What it exercises, as an admin would: rnfsd.service from this build
# (Type=notify, the sandbox, the capability bounding set), rpcbind
# registration, the Linux NFS client over TCP and over RPC-over-RDMA
# (soft-RoCE), systemctl reload with a good and a broken exports file,
# STATUS= text, rnfsctl, exports added and removed by rnfsctl while the
# kernel client holds files open on them, systemctl stop.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ADDR=192.0.2.1
EX=/srv/rnfsd-vm
RNFSCTL=$BUILD/daemon/rnfsctl

. "$SRC/tests/ops/vm-check-lib.sh"
status_text() { systemctl show -p StatusText --value rnfsd; }
wait_status() { # wait_status REGEX: StatusText matches within 20 s
	i=0
	while [ $i -lt 40 ]; do
		status_text | grep -Eq "$1" && return 0
		sleep 0.5; i=$((i + 1))
	done
	echo "StatusText is '$(status_text)', wanted /$1/"; return 1
}

# ---- the fabric and the export ----
modprobe rdma_rxe; modprobe rdma_ucm; modprobe ib_uverbs; modprobe dummy
ip link set lo up
ip link add dummy0 type dummy; ip link set dummy0 mtu 9000
ip addr add $ADDR/24 dev dummy0; ip link set dummy0 up
rdma link add rxe0 type rxe netdev dummy0
check rxe_device sh -c 'ibv_devices | grep -q rxe0'
modprobe nfs; modprobe nfsv3; modprobe rpcrdma
mkdir -p $EX /mnt/tcp /mnt/rdma
mount -t tmpfs -o size=256m tmpfs $EX
mkdir -p $EX/second
# Two file systems of their own for the live-export checks (exported at run time).
for d in /srv/live-a /srv/live-b /srv/live-c; do mkdir -p $d; mount -t tmpfs -o size=16m tmpfs $d; done
mkdir -p /mnt/la /mnt/lb /mnt/lc
# Where this build's rnfsd looks (/etc/rnfsd for prefix /usr, else PREFIX/etc/rnfsd).
ETC=$(sed -n 's/^#define RNFSD_SYSCONFDIR "\(.*\)"/\1/p' "$BUILD/rnfsd_build.h")
STATE=$(sed -n 's/^#define RNFSD_LOCALSTATEDIR "\(.*\)"/\1/p' "$BUILD/rnfsd_build.h")
mkdir -p "$ETC" "$(dirname "$STATE")"
cat > $ETC/rnfsd.conf <<EOF
[rnfsd]
threads = 4
[rdma]
enable = yes
listen = $ADDR:20049
EOF
echo "$EX *(rw,no_root_squash,insecure)" > $ETC/exports

# ---- start: Type=notify, systemctl start returns once READY=1 arrived ----
# (diagnostics: what a slow start waits for)
(sleep 15; systemctl list-jobs --no-pager | sed 's/^/@@ jobs /') &
check start systemctl start rnfsd
check active systemctl is-active -q rnfsd
check status_text wait_status '^1 export, 0 connections'
check listening_tcp sh -c 'ss -ltn | grep -q ":2049 "'
check rpcbind_nfs sh -c 'rpcinfo -p 127.0.0.1 | grep -q "100003 *3 *tcp *2049"'
check rpcbind_mount sh -c 'rpcinfo -p 127.0.0.1 | grep -q 100005'
check runtime_dir test -d /run/rnfsd
check stats_socket_mode sh -c '[ "$(stat -c %a /run/rnfsd/rnfsd.sock)" = 600 ]'
check state_dir test -s $STATE/fh.key
# The bounding set is exactly the unit's: CHOWN DAC_OVERRIDE DAC_READ_SEARCH
# FOWNER FSETID SETGID SETUID NET_BIND_SERVICE IPC_LOCK MKNOD = 0x80044df.
check capabilities sh -c "grep -q '^CapBnd:[[:space:]]*00000000080044df\$' /proc/\$(systemctl show -p MainPID --value rnfsd)/status"

# ---- the kernel client over TCP and over RDMA ----
check mount_tcp mount -t nfs -o vers=3,proto=tcp,nolock 127.0.0.1:$EX /mnt/tcp
check write_tcp dd if=/dev/urandom of=/mnt/tcp/tcp.bin bs=1M count=4 conv=fsync status=none
check read_tcp sh -c "cmp /mnt/tcp/tcp.bin $EX/tcp.bin"
check mount_rdma mount -t nfs -o vers=3,proto=rdma,port=20049,nolock $ADDR:$EX /mnt/rdma
check write_rdma dd if=/dev/urandom of=/mnt/rdma/rdma.bin bs=1M count=4 conv=fsync status=none
check read_rdma sh -c "echo 3 > /proc/sys/vm/drop_caches; cmp /mnt/rdma/rdma.bin $EX/rdma.bin"
check status_connections wait_status '2 connections \(1 tcp, 1 rdma\)'

# ---- rnfsctl: what an admin sees ----
echo "@@ ---- rnfsctl ----"
$RNFSCTL | sed 's/^/@@ | /'
echo "@@ ----"
check rnfsctl_table sh -c "$RNFSCTL | grep -Eq '^nfs +3 WRITE +[1-9]'"
check rnfsctl_rdma_conn sh -c "$RNFSCTL --json | grep -q '\"transport\": \"rdma\"'"
check rnfsctl_rdma_reads sh -c "$RNFSCTL --json | grep -Eq '\"rdma_reads\": [1-9]'"
check rnfsctl_rdma_writes sh -c "$RNFSCTL --json | grep -Eq '\"rdma_writes\": [1-9]'"

# ---- reload: a new export, then a broken file ----
echo "$EX/second *(rw,no_root_squash,insecure)" >> $ETC/exports
check reload systemctl reload rnfsd
check reload_status wait_status '^2 exports'
echo "$EX/third *(rw,bogus_option)" >> $ETC/exports
check reload_broken_cmd systemctl reload rnfsd
sleep 1
check reload_broken_active systemctl is-active -q rnfsd
check reload_broken_logged sh -c "journalctl -u rnfsd -o cat | grep -q '$ETC/exports:3'"
check reload_broken_kept wait_status '^2 exports'
check io_after_reload sh -c "echo still > /mnt/rdma/after-reload && cat /mnt/tcp/after-reload | grep -q still"

# ---- live exports: rnfsctl export add/remove while the kernel client holds files open ----
# Two exports added at run time (no reload), each mounted with NFSv4.2 (the
# client's default version) and a file held open on it. Removing one makes its
# client's handles STALE and ends its opens (rnfsctl(8), export remove); the
# other export's client goes on as before.
check export_add_a $RNFSCTL export add /srv/live-a '*(rw,no_root_squash,insecure)'
check export_add_b $RNFSCTL export add /srv/live-b '*(rw,no_root_squash,insecure)'
check export_list sh -c "$RNFSCTL export list | grep -q /srv/live-a && $RNFSCTL export list | grep -q /srv/live-b"
check mount_live_a mount -t nfs -o vers=4.2,proto=tcp 127.0.0.1:/srv/live-a /mnt/la
check mount_live_b mount -t nfs -o vers=4.2,proto=rdma,port=20049 $ADDR:/srv/live-b /mnt/lb
echo a > /mnt/la/held; echo b > /mnt/lb/held
exec 3<>/mnt/la/held 4<>/mnt/lb/held
echo "@@ ---- rnfsctl client list ----"
$RNFSCTL client list | sed 's/^/@@ | /'
check client_list sh -c "$RNFSCTL client list | grep -q nfs4"
check export_remove_a $RNFSCTL export remove /srv/live-a
check export_list_after sh -c "! $RNFSCTL export list | grep -q /srv/live-a"
check removed_stale sh -c 'echo 3 > /proc/sys/vm/drop_caches; out=$(timeout 60 stat /mnt/la/held 2>&1); echo "$out"; echo "$out" | grep -q "Stale file handle"'
# A write through the descriptor held open on the removed export fails (its
# open is gone, its handle STALE): the errno is printed (Linux 6.1 answers
# EBADF once the open's state is lost). The descriptor itself is proved to be
# there first, through /proc, which asks the server nothing.
write_held() { # write_held FD: 0 when the descriptor exists and pwrite + fsync fail
	timeout 60 python3 -c 'import errno, os, sys
fd = int(sys.argv[1])
print("fd", fd, "->", os.readlink("/proc/self/fd/%d" % fd))
try:
	os.pwrite(fd, b"x", 0); os.fsync(fd)
except OSError as e:
	print(errno.errorcode[e.errno]); sys.exit(0)
sys.exit("the write succeeded")' "$1"
}
check removed_open_ended write_held 3
check other_untouched sh -c 'timeout 60 python3 -c "import os; os.pwrite(4, b\"still\", 0); os.fsync(4)" && grep -q still /srv/live-b/held && stat /mnt/lb/held > /dev/null'
exec 3>&- 4>&-
timeout 60 umount /mnt/la || umount -f /mnt/la || umount -l /mnt/la
check umount_live_b timeout 60 umount /mnt/lb

# ---- a live export with the default options: what a new admin types first ----
# `rnfsctl export add PATH CLIENT` with no options is ro, root_squash, secure
# (rnfsd-exports(5), as exports(5)). The kernel client mounts from a reserved
# port and reads; its writes get EROFS; root is squashed (a root-only file
# cannot be read); a mount from an unreserved port (noresvport) is refused
# and logged.
chmod 1777 /srv/live-c # only ro can refuse the write
echo default > /srv/live-c/readable; echo secret > /srv/live-c/root-only; chmod 600 /srv/live-c/root-only
check export_add_default $RNFSCTL export add /srv/live-c '*'
check export_default_options sh -c "$RNFSCTL export list | grep /srv/live-c | grep -q 'ro,root_squash,secure,sync'"
check mount_default timeout 120 mount -t nfs -o proto=tcp 127.0.0.1:/srv/live-c /mnt/lc
check default_read grep -q default /mnt/lc/readable
check default_ro sh -c 'out=$(timeout 60 sh -c "echo x > /mnt/lc/new" 2>&1); echo "$out"; echo "$out" | grep -q "Read-only file system"'
check default_root_squash sh -c 'out=$(timeout 60 cat /mnt/lc/root-only 2>&1); echo "$out"; echo "$out" | grep -q "Permission denied"'
check umount_default timeout 60 umount /mnt/lc
# ($ADDR: no NFSv4 client of this address is left whose reserved-port connection could be shared)
check default_secure_refused sh -c "! timeout 120 mount -t nfs -o proto=tcp,noresvport,retry=0 $ADDR:/srv/live-c /mnt/lc"
check default_secure_logged sh -c "journalctl -u rnfsd -o cat | grep -q 'requires a privileged port (secure)'"
umount /mnt/lc 2>/dev/null
check export_remove_default $RNFSCTL export remove /srv/live-c

# ---- stop ----
umount /mnt/tcp; umount /mnt/rdma
check stop systemctl stop rnfsd
check stop_result sh -c '[ "$(systemctl show -p Result --value rnfsd)" = success ]'
check stop_status sh -c '[ "$(systemctl show -p ExecMainStatus --value rnfsd)" = 0 ]'
check stats_socket_gone sh -c '! test -e /run/rnfsd/rnfsd.sock'

echo "@@ ---- journal ----"
journalctl -u rnfsd -o short-monotonic --no-pager | tail -n 40 | sed 's/^/@@ j /'
echo "@@ ---- boot ----"
journalctl -b -o short-monotonic --no-pager | grep -E 'Start(ing|ed)|Reached|Finished' | sed 's/^/@@ b /'
echo "@@ ---- security ----"
systemd-analyze security rnfsd --no-pager 2>/dev/null | tail -n 1 | sed 's/^/@@ /'
echo "@@ DONE"
