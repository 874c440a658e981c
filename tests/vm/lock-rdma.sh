# lock-rdma.sh - sourced by kernel-lock.sh (its last part): the same NLM
# locks for a mount with proto=rdma, made without nolock, in the guest's
# initial network namespace.
#
# Why there, and the one trick it needs. Soft-RoCE in Debian's 6.1 kernel
# works only in the initial network namespace (rdma_rxe's UDP tunnel socket
# lives in init_net), so this RDMA client shares that namespace, its
# rpcbind and its rpc.statd with rnfsd: one host playing both roles, which a
# real deployment never is. The client's kernel lockd starts with the mount
# and registers NLM with that rpcbind (lockd_up unregisters every NLM
# version first, rnfsd's registration included), so the kernel's NLM client,
# asking that rpcbind for the server's lock manager, would find its own
# lockd. On a real network the client asks the server's rpcbind. One nft
# rule stands in for that network: the kernel's NLM calls (from a reserved
# port) to the server address at the kernel lockd's port (fixed at 4045 with
# fs.nfs.nlm_tcpport) are redirected to rnfsd's port 2049, while rnfsd's
# GRANTED calls to the client (rnfsd connects from an unreserved port) reach
# the kernel lockd at 4045 just as they would on a network. Nothing in rnfsd
# knows about it: the NLM calls arrive over TCP, as the Linux client sends
# them for RDMA mounts (INTEROP.md), from the client's address.
#
# Restart recovery works here too: statd calls back "NLM procedure 16" for
# both, but the kernel lockd asked for version 3 (Linux's nsm_mon) and
# rnfsd for version 4, and once rnfsd restarts it registers NLM version 4
# again (so version 3 stays the kernel lockd's): each gets its own. Not
# here: a client reboot, which on one host would also tell the kernel lockd
# that its server rebooted (one statd, one sm-notify); it is tested over
# TCP above with the client in its own namespace (the server's side does
# not depend on the transport that carried the NFS mount).

RMNT=/mnt/rdma
NLM_KPORT=4045
rclk() { python3 "$LOCKCTL" "$RMNT/$F" "$@"; }

check_rdma_lock_mount() {
	local line
	modprobe lockd
	sysctl -w fs.nfs.nlm_tcpport=$NLM_KPORT || fail "cannot fix the kernel lockd's port"
	nft -f - <<EON || fail "nft rule"
table ip rnfsd_vm_nlm {
	chain out {
		type nat hook output priority -100; policy accept;
		ip daddr $ADDR tcp dport $NLM_KPORT tcp sport < 1024 redirect to :2049
	}
}
EON
	mkdir -p "$RMNT"
	mount -t nfs -o vers=3,proto=rdma,port=20049 "$ADDR:$EXPORT" "$RMNT" || fail "proto=rdma mount without nolock failed"
	line=$(grep " $RMNT nfs " /proc/mounts) || fail "$RMNT not mounted"
	echo "$line"
	case $line in *proto=rdma*) ;; *) fail "not an RDMA mount: $line";; esac
	case $line in *nolock*) fail "mounted with nolock: $line";; esac
	case $line in *local_lock=none*) ;; *) fail "locks are not sent to the server: $line";; esac
	rpcinfo -p 127.0.0.1 | awk '$1 == 100021'
	expect_eq "the RDMA client reads the file" 0123456789abcdef "$(cat "$RMNT/$F")"
}

# Two lock owners on the RDMA mount and a local process on the server: the
# conflicts are rnfsd's (the client's kernel sends every F_SETLK to it).
check_rdma_lock_owners() {
	local out
	rm -f "$SCRATCH"/q*
	out=$(rclk "ex 0 100" "touch $SCRATCH/q1" "wait $SCRATCH/q2" "un 0 100" "sh 0 100" "touch $SCRATCH/q3" \
		"wait $SCRATCH/q4" "un 0 100" &
		rclk "wait $SCRATCH/q1" "ex 50 10" "sh 99 1" "ex 100 10" "un 100 10" "touch $SCRATCH/q2" \
		"wait $SCRATCH/q3" "sh 50 10" "ex 60 1" "un 50 10" "touch $SCRATCH/q4"; wait)
	echo "$out"
	expect_eq "two owners over RDMA" "ex 0 100 ok
ex 50 10 denied
sh 99 1 denied
ex 100 10 ok
sh 0 100 ok
sh 50 10 ok
ex 60 1 denied" "$out"
	out=$(rclk "ex 200 10" "touch $SCRATCH/q5" "wait $SCRATCH/q6" "un 200 10" &
		python3 "$LOCKCTL" "$EXPORT/$F" "wait $SCRATCH/q5" "ex 205 1" "ex 210 1" "un 210 1" \
		"touch $SCRATCH/q6"; wait)
	echo "$out"
	expect_eq "a local process on the server meets the RDMA client's lock" "ex 200 10 ok
ex 205 1 denied
ex 210 1 ok" "$out"
	grep -c "nlm: SM_MON\|monitor" "$RNFSD_LOG" || true
}

# F_SETLKW over RDMA against a local holder: BLOCKED, then rnfsd's GRANTED
# call reaches the kernel lockd (the client's own poll would take 30 s).
check_rdma_lock_blocking() {
	local out n0 i
	rm -f "$SCRATCH"/y*
	n0=$(granted_count)
	out=$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 100" "touch $SCRATCH/y1" "wait $SCRATCH/y0" "sleep 3" "un 0 100" &
		rclk "wait $SCRATCH/y1" "touch $SCRATCH/y0" "exw 50 10" "un 50 10"; wait)
	echo "$out"
	expect_granted_wait "$out" "blocking lock over RDMA" "the blocking lock did not wait for the holder" \
		"the client's poll, not rnfsd's GRANTED"
	for i in $(seq 50); do
		[ "$(granted_count)" -gt "$n0" ] && return 0
		sleep 0.1
	done
	fail "rnfsd's log has no new accepted GRANTED callback"
}

# The RDMA client's NLM locks and client B's NFSv4.1 locks (over TCP, in its
# namespace) are the same backend locks: they refuse each other both ways.
check_rdma_lock_v4() {
	local out
	rm -f "$SCRATCH"/z*
	cnsb mount -t nfs -o vers=4.1,proto=tcp,port=2049 "$SRV_IP_B:$EXPORT" "$MNT" || fail "client B: vers=4.1 mount"
	out=$(rclk "ex 0 100" "touch $SCRATCH/z1" "wait $SCRATCH/z2" "un 0 100" "touch $SCRATCH/z3" \
		"wait $SCRATCH/z4" "ex 300 10" "touch $SCRATCH/z5" &
		clkb "wait $SCRATCH/z1" "ex 50 10" "sh 99 1" "ex 300 10" "touch $SCRATCH/z2" "wait $SCRATCH/z3" \
		"ex 0 100" "touch $SCRATCH/z4" "wait $SCRATCH/z5" "un 0 400"; wait)
	echo "$out"
	cnsb umount "$MNT" || fail "client B: umount"
	expect_eq "NFSv3 over RDMA (A) / NFSv4.1 over TCP (B)" "ex 0 100 ok
ex 50 10 denied
sh 99 1 denied
ex 300 10 ok
ex 0 100 ok
ex 300 10 denied" "$out"
}

# rnfsd restarts while the RDMA client holds a lock: sm-notify tells the
# host's statd (the server's name, vmguest, is also 192.0.2.1 here), which
# calls the kernel lockd back (NLM version 3), and its reclaim reaches rnfsd
# within the grace period. Last: from here on rnfsd holds NLM version 4 in
# rpcbind again, so its later GRANTED calls would find itself.
check_rdma_lock_restart() {
	local n0 i apid
	rm -f "$SCRATCH"/k*
	grep -q "^$ADDR vmguest" /etc/hosts || { echo "$ADDR vmguest" | cat - /etc/hosts > "$SCRATCH/hosts2" &&
		cat "$SCRATCH/hosts2" > /etc/hosts; }
	n0=$(grep -c "reclaimed \[400, +10)" "$RNFSD_LOG" || true)
	rclk "ex 400 10" "touch $SCRATCH/k1" "wait $SCRATCH/k2" "un 400 10" > "$SCRATCH/k-a.out" 2>&1 &
	apid=$!
	trap 'touch "$SCRATCH/k2"' EXIT
	python3 "$LOCKCTL" /dev/null "wait $SCRATCH/k1"
	expect_eq "a local process before the restart" "ex 400 10 denied" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 400 10")"
	rnfsd_stop || fail "rnfsd did not stop"
	RNFSD_EXTRA="grace-period = 20" rnfsd_start || fail "rnfsd did not start again"
	for i in $(seq 450); do      # 45 s: sm-notify's first four tries (kernel-lock.sh's restart-reclaim)
		[ "$(grep -c "reclaimed \[400, +10)" "$RNFSD_LOG" || true)" -gt "$n0" ] && break
		sleep 0.1
	done
	grep "sm-notify\|reclaimed \[400" "$RNFSD_LOG" | tail -n 3
	rpcinfo -p 127.0.0.1 | awk '$1 == 100021'
	[ "$(grep -c "reclaimed \[400, +10)" "$RNFSD_LOG" || true)" -gt "$n0" ] ||
		fail "the RDMA client did not reclaim [400, +10) within 45 s of the restart"
	expect_eq "a local process after the reclaim" "ex 400 10 denied" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 400 10")"
	touch "$SCRATCH/k2"
	wait "$apid"
}

check_rdma_lock_umount() {
	umount "$RMNT" || fail "umount of the RDMA mount"
	nft delete table ip rnfsd_vm_nlm || fail "nft delete"
}
