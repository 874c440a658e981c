#!/bin/bash
# test_rdma_kernel_vm.sh - guest script for tests/vm/vmrun.sh (by hand; the
# meson VM suite runs tests/vm/kernel-client.sh over RDMA instead):
# rnfsd (this worktree's build/rnfsd) serving a tmpfs over RDMA (and TCP for
# MOUNT), the Linux kernel NFS client mounting it with proto=rdma, data
# written and read back with direct I/O, a directory listing big enough for a
# Reply chunk, symlinks. Result lines start with @@.
#   VM_WORK=/tmp/vm-rdma tests/vm/vmrun.sh $PWD/tests/unit/test_rdma_kernel_vm.sh 600 /tmp/vm-rdma-k.log
. "$(dirname "$(readlink -f "$0")")/../vm/guest-lib.sh"
guest_base; guest_rxe
B=$(dirname "$(readlink -f "$0")")/../../${RDMA_BUILD_DIR:-build}
EX=/export C=/run/rnfsd-test
mkdir -p $EX $C/state /mnt && mount -t tmpfs -o size=600m tmpfs $EX
echo "$EX *(rw,no_root_squash,insecure)" > $C/exports
cat > $C/rnfsd.conf <<CONF
[rnfsd]
exports = $C/exports
state-dir = $C/state
stats-socket = $C/rnfsd.sock
[rdma]
enable = yes
listen = $ADDR:20049
CONF
rpcbind -w
"$B/rnfsd" -f -v -c $C/rnfsd.conf > /run/rnfsd.log 2>&1 &
for _ in $(seq 1 50); do rpcinfo -p 127.0.0.1 2>/dev/null | grep -q ' 100005 ' && break; sleep 0.2; done
rpcinfo -p 127.0.0.1 | sed 's/^/@@ rpcinfo: /'
head -c 32M /dev/urandom > /tmp/src
if mount -t nfs -o vers=3,proto=rdma,port=20049,nolock $ADDR:$EX /mnt; then
	grep ' /mnt ' /proc/mounts | sed 's/^/@@ /'
	grep -q 'xprt:.*rdma' /proc/self/mountstats && echo "@@ mountstats: xprt rdma" || echo "@@ FAIL mountstats has no rdma xprt"
	dd if=/tmp/src of=/mnt/f bs=1M oflag=direct 2>&1 | tail -1 | sed 's/^/@@ write: /'
	dd if=/mnt/f of=/tmp/back bs=1M iflag=direct 2>&1 | tail -1 | sed 's/^/@@ read: /'
	cmp /tmp/src /tmp/back && echo "@@ PASS 32 MiB data" || echo "@@ FAIL data mismatch"
	dd if=/tmp/src of=/mnt/small bs=4k count=100 oflag=direct 2>/dev/null
	cmp -n 409600 /tmp/src /mnt/small && echo "@@ PASS 4 KiB writes" || echo "@@ FAIL 4 KiB writes"
	mkdir /mnt/d && for i in $(seq 1 400); do : > /mnt/d/file-with-a-long-name-number-$i; done
	n=$(ls -l /mnt/d | grep -c file-with); [ "$n" = 400 ] && echo "@@ PASS readdir 400" || echo "@@ FAIL readdir got $n"
	ln -s "$(printf 'x%.0s' $(seq 1 900))" /mnt/longlink && [ "$(readlink /mnt/longlink | wc -c)" = 901 ] &&
		echo "@@ PASS long symlink" || echo "@@ FAIL long symlink"
	"$B/daemon/rnfsctl" -s $C/rnfsd.sock stats 2>&1 | sed 's/^/@@ rnfsctl: /'
	umount /mnt && echo "@@ PASS umount" || echo "@@ FAIL umount"
else
	echo "@@ FAIL mount"
fi
rdma statistic show link rxe0/1 | sed 's/^/@@ /'
kill -TERM %1 2>/dev/null; sleep 1
tail -40 /run/rnfsd.log | sed 's/^/@@ rnfsd: /'
guest_end
