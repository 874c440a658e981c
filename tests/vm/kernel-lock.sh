#!/bin/bash
# kernel-lock.sh - guest scenario: the Linux kernel NFSv3 client takes
# fcntl(2) locks through NLM v4 on an rnfsd mount made WITHOUT nolock.
# Booted by tests/vm/run-vm.sh as PID 1; expected checks: kernel-lock.checks.
#
# One kernel serves both sides, but lockd and rpcbind are per network
# namespace: rnfsd, rpcbind and rpc.statd run in the guest's init namespace;
# the client lives in its own network + mount namespace (a private /run and
# /var/lib/nfs) with its own rpcbind and rpc.statd, joined to the server by a
# veth pair (198.51.100.1 server end, 198.51.100.2 client end, guest-local).
# The client's kernel lockd then registers with the client's rpcbind only, its
# LOCK calls reach rnfsd (nlockmgr on 2049 at the server's rpcbind) and
# rnfsd's GRANTED calls reach the client's lockd. A local process on the
# server's tmpfs takes part in the conflicts too: rnfsd's locks are the
# backend's, the client's kernel lockd could not see a local lock there.

. "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

SERVER=rnfsd
SRV_IP=198.51.100.1
CLI_IP=198.51.100.2
LOCKCTL=$(dirname "$(readlink -f "$0")")/lockctl.py
CLIENT_NS_PID=
F=lockfile      # the locked file, $MNT/$F on the client, $EXPORT/$F on the server

# Run a command in the client's network and mount namespaces.
cns() { nsenter -t "$CLIENT_NS_PID" -n -m -- "$@"; }

# lockctl in the client namespace on the mounted file (one lock owner).
clk() { cns python3 "$LOCKCTL" "$MNT/$F" "$@"; }

check_server_start() {
	guest_rpcbind
	rpc.statd --no-notify || fail "rpc.statd did not start in the init namespace"
	server_start rnfsd || fail "rnfsd did not start"
	rpcinfo -p 127.0.0.1 | awk '$1 == 100024' | grep -q . || fail "rpc.statd (status) not registered"
}

# The client namespace: a holder process, veth, private /run and /var/lib/nfs,
# its own rpcbind and statd.
check_client_ns() {
	modprobe veth
	unshare --net --mount --propagation private sleep infinity < /dev/null > /dev/null 2>&1 &
	CLIENT_NS_PID=$!
	echo "$CLIENT_NS_PID" > "$SCRATCH/client-ns.pid"
	local i
	for i in $(seq 100); do      # until unshare(2) has run
		[ "$(readlink "/proc/$CLIENT_NS_PID/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	ip link add vsrv type veth peer name vcli netns "$CLIENT_NS_PID" || fail "veth pair"
	ip addr add "$SRV_IP/24" dev vsrv
	ip link set vsrv up
	cns ip link set lo up
	cns ip addr add "$CLI_IP/24" dev vcli
	cns ip link set vcli up
	cns mount -t tmpfs tmpfs /run
	cns mount -t tmpfs tmpfs /var/lib/nfs
	cns mkdir -p /run/rpcbind /run/lock /var/lib/nfs/sm /var/lib/nfs/sm.bak
	cns rpcbind -w || fail "rpcbind in the client namespace"
	cns rpc.statd --no-notify || fail "rpc.statd in the client namespace"
	for i in $(seq 50); do
		cns timeout 5 rpcinfo -p "$SRV_IP" > /dev/null 2>&1 && break
		sleep 0.2
	done
	cns timeout 5 rpcinfo -p "$SRV_IP" > /dev/null || fail "the client namespace cannot reach rpcbind at $SRV_IP"
	# Two rpcbinds: the client's knows its statd, not rnfsd.
	cns rpcinfo -p 127.0.0.1
	cns rpcinfo -p 127.0.0.1 | awk '$1 == 100024' | grep -q . || fail "client statd not registered"
	cns rpcinfo -p 127.0.0.1 | awk '$1 == 100005' | grep -q . && fail "the client namespace sees the server's rpcbind"
	return 0
}

check_mount() {
	cns mount -t nfs -o vers=3,proto=tcp,port=2049 "$SRV_IP:$EXPORT" "$MNT" || fail "mount without nolock failed"
	local line
	line=$(cns grep " $MNT nfs " /proc/mounts) || fail "$MNT not in the client's /proc/mounts"
	echo "$line"
	case $line in *nolock*) fail "mounted with nolock: $line";; esac
	case $line in *local_lock=none*) ;; *) fail "locks are not sent to the server: $line";; esac
	grep -q " $MNT nfs " /proc/mounts && fail "the mount leaked into the init namespace"
	cns sh -c "echo 0123456789abcdef > $MNT/$F" || fail "cannot write $MNT/$F"
	expect_eq "server-side content" 0123456789abcdef "$(cat "$EXPORT/$F")"
}

# Each kernel lockd registered with its own rpcbind: the client's nlockmgr is
# the kernel's (not 2049), the server's is rnfsd's on 2049.
check_nlm_split() {
	local cli srv
	cli=$(cns rpcinfo -p 127.0.0.1)
	srv=$(cns rpcinfo -p "$SRV_IP")
	echo "client: $cli"; echo "server: $srv"
	echo "$cli" | awk '$1 == 100021 && $2 == 4 && $3 == "tcp" && $4 != 2049' | grep -q . ||
		fail "the client's lockd is not registered with the client's rpcbind"
	echo "$srv" | awk '$1 == 100021 && $2 == 4 && $3 == "tcp" && $4 == 2049' | grep -q . ||
		fail "the server's rpcbind does not name rnfsd's nlockmgr on 2049"
	echo "$srv" | awk '$1 == 100021 && $3 == "tcp" && $4 != 2049' | grep -q . &&
		fail "a kernel lockd registered NLM/tcp with the server's rpcbind"
	return 0
}

check_exclusive_shared() {
	local out
	out=$(clk "ex 0 100" "touch $SCRATCH/a1" "wait $SCRATCH/b1" "un 0 100" "sh 0 100" "touch $SCRATCH/a2" \
		"wait $SCRATCH/b2" "un 0 100" "touch $SCRATCH/a3" "wait $SCRATCH/b3" &
		clk "wait $SCRATCH/a1" "ex 0 1" "sh 50 10" "touch $SCRATCH/b1" "wait $SCRATCH/a2" "sh 0 100" \
		"ex 10 1" "touch $SCRATCH/b2" "wait $SCRATCH/a3" "ex 10 1" "un 0 100" "touch $SCRATCH/b3"; wait)
	echo "$out"
	local want="ex 0 100 ok
ex 0 1 denied
sh 50 10 denied
sh 0 100 ok
sh 0 100 ok
ex 10 1 denied
ex 10 1 ok"
	expect_eq "lock results" "$want" "$out"
}

check_ranges() {
	local out
	rm -f "$SCRATCH"/r*
	out=$(clk "ex 0 100" "ex 200 50" "touch $SCRATCH/r1" "wait $SCRATCH/r2" "un 0 300" &
		clk "wait $SCRATCH/r1" "ex 100 100" "ex 99 1" "ex 249 2" "sh 150 60" "ex 250 0" \
		"un 100 100" "un 250 0" "touch $SCRATCH/r2"; wait)
	echo "$out"
	local want="ex 0 100 ok
ex 200 50 ok
ex 100 100 ok
ex 99 1 denied
ex 249 2 denied
sh 150 60 denied
ex 250 0 ok"
	expect_eq "range results" "$want" "$out"
}

# Unlocking the middle of a held range splits it; a lock over two held
# ranges is refused until both are gone.
check_split() {
	local out
	rm -f "$SCRATCH"/s*
	out=$(clk "ex 0 100" "un 40 20" "touch $SCRATCH/s1" "wait $SCRATCH/s2" "un 0 50" "touch $SCRATCH/s3" \
		"wait $SCRATCH/s4" "un 0 100" "touch $SCRATCH/s5" &
		clk "wait $SCRATCH/s1" "ex 40 20" "ex 30 11" "ex 59 2" "un 40 20" "touch $SCRATCH/s2" \
		"wait $SCRATCH/s3" "ex 0 60" "ex 55 10" "touch $SCRATCH/s4" "wait $SCRATCH/s5" "ex 60 40" "un 0 100"; wait)
	echo "$out"
	local want="ex 0 100 ok
ex 40 20 ok
ex 30 11 denied
ex 59 2 denied
ex 0 60 ok
ex 55 10 denied
ex 60 40 ok"
	expect_eq "split results" "$want" "$out"
}

# flock(2) on an NFS file is a whole-file POSIX lock over NLM.
check_flock() {
	rm -f "$SCRATCH"/f*
	clk "ex 500 1" "touch $SCRATCH/f1" "wait $SCRATCH/f2" &
	cns python3 "$LOCKCTL" /dev/null "wait $SCRATCH/f1"
	local rc=0
	cns flock -n -s "$MNT/$F" true || rc=$?
	touch "$SCRATCH/f2"
	wait
	[ "$rc" = 1 ] || fail "flock -n while a byte range is locked: status $rc, expected 1 (conflict)"
	cns flock -n -s "$MNT/$F" true || fail "flock -n -s on the unlocked file failed"
}

# A local process on the server's file system and the NFS client conflict:
# only rnfsd (OFD locks on the export) can make that happen.
check_server_local() {
	rm -f "$SCRATCH"/l*
	local out
	out=$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10" "touch $SCRATCH/l1" "wait $SCRATCH/l2" "un 0 10" \
		"touch $SCRATCH/l3" "wait $SCRATCH/l4" "ex 15 10" "touch $SCRATCH/l5" &
		clk "wait $SCRATCH/l1" "ex 5 1" "ex 10 10" "touch $SCRATCH/l2" "wait $SCRATCH/l3" "ex 0 10" \
		"touch $SCRATCH/l4" "wait $SCRATCH/l5"; wait)
	echo "$out"
	local want="ex 0 10 ok
ex 5 1 denied
ex 10 10 ok
ex 0 10 ok
ex 15 10 denied"
	expect_eq "local/NFS results" "$want" "$out"
}

# F_SETLKW against a local process's lock on the server (two processes on
# the one client would wait in the client's own kernel, which checks its
# local locks before calling the server): rnfsd answers BLOCKED, its retry
# thread takes the lock once the local holder lets go (within a second) and
# sends GRANTED to the client's lockd; the client only polls every 30 s, so a
# wait of a few seconds means the GRANTED call arrived.
check_blocking() {
	rm -f "$SCRATCH"/w*
	local out secs i
	out=$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 100" "touch $SCRATCH/w1" "sleep 3" "un 0 100" &
		clk "wait $SCRATCH/w1" "exw 50 10" "un 50 10"; wait)
	echo "$out"
	case $out in *"exw 50 10 ok after "*) ;; *) fail "blocking lock: $out";; esac
	secs=$(echo "$out" | awk '/^exw/ { print int($NF) }')
	[ "$secs" -ge 2 ] || fail "the blocking lock did not wait for the holder (${secs}s)"
	[ "$secs" -lt 20 ] || fail "granted after ${secs}s: the client's poll, not rnfsd's GRANTED"
	for i in $(seq 50); do
		grep -q "nlm: GRANTED callback accepted" "$RNFSD_LOG" && return 0
		sleep 0.1
	done
	fail "rnfsd's log has no accepted GRANTED callback"
}

# rnfsd itself counted the NLM calls (not the client's own lockd).
check_rnfsd_counted() {
	local st
	[ -x "${RNFSCTL:-}" ] || fail "no rnfsctl built next to rnfsd"
	st=$(timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock stats) || fail "rnfsctl stats"
	echo "$st" | grep -E '^(PROGRAM|nlockmgr)'
	local p
	for p in LOCK UNLOCK; do
		echo "$st" | awk -v p="$p" '$1 == "nlockmgr" && $2 == 4 && $3 == p && $4 > 0' | grep -q . ||
			fail "rnfsctl stats show no NLM v4 $p calls"
	done
	grep -E "SM_MON|statd" "$RNFSD_LOG" | tail -n 3
	return 0
}

check_server_alive() {
	rnfsd_running || fail "rnfsd is no longer running: $(tail -n 1 "$RNFSD_LOG")"
	cns umount "$MNT" || fail "umount"
}

guest_base
guest_net tcp
# What a new admin gets: rnfsd's embedded default export (secure, root_squash).
use_default_export
if run_check server-start 60 check_server_start &&
   run_check client-ns 60 check_client_ns; then
	CLIENT_NS_PID=$(cat "$SCRATCH/client-ns.pid")
	if run_check mount 60 check_mount; then
		run_check nlm-split 30 check_nlm_split
		run_check lock-exclusive-shared 90 check_exclusive_shared
		run_check lock-ranges 90 check_ranges
		run_check lock-split 90 check_split
		run_check lock-flock 60 check_flock
		run_check lock-server-local 60 check_server_local
		run_check lock-blocking 90 check_blocking
		run_check rnfsd-counted 30 check_rnfsd_counted
		# The figures, on the console: the blocked wait, rnfsd's NLM counts.
		sed -n 's/^exw .* after /@@ INFO blocked-lock-wait-s /p' "$GUEST_LOGDIR/check-lock-blocking.out"
		sed -n 's/^nlockmgr/@@ INFO nlockmgr/p; s/^.*\(nlm: .*statd.*\)$/@@ INFO \1/p' \
			"$GUEST_LOGDIR/check-rnfsd-counted.out"
	fi
	run_check server-alive 30 check_server_alive
fi
run_check server-stop 30 rnfsd_stop
guest_end
