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
#
# A second client namespace (B: 203.0.113.2, the server end 203.0.113.1,
# its own rpcbind and statd) with its own UTS namespace: each client has its
# own nodename (clienta, clientb), so their NLM caller names differ, as two
# hosts' do. The guest's /etc/hosts names all of them (what DNS does on a real
# network): each statd matches an SM_NOTIFY's mon_name (a hostname) against
# the addresses it monitors. Then: the two clients' locks conflict at rnfsd,
# a blocked lock in B is granted by GRANTED when A unlocks, A "reboots" (its
# sm-notify -f: a new NSM state) and loses its locks, and rnfsd restarts:
# sm-notify tells both clients, A reclaims in the grace period, B's new lock
# waits for the grace period to end.
#
# Then B mounts the export again with vers=4.1 (rnfsd serves NFSv4 from the
# start, by default) while A keeps vers=3: A's NLM locks and B's NFSv4 LOCKs
# are the same backend locks, so they refuse each other, and a blocked lock
# on either side is given once the other side unlocks. A mounts vers=4.2
# beside its NFSv3 mount: the two NFSv4 clients' locks on the same ranges,
# and B's lock held across a restart of rnfsd and reclaimed in the NFSv4
# grace period.
#
# Last, the proto=rdma part (lock-rdma.sh): a mount over soft-RoCE made
# without nolock in the initial namespace takes NLM locks that conflict with
# local processes and with client B's NFSv4.1 locks, and a blocked one is
# given by rnfsd's GRANTED call.

. "$(dirname "$(readlink -f "$0")")/guest-lib.sh"
. "$(dirname "$(readlink -f "$0")")/lock-rdma.sh"    # the proto=rdma part, last

SERVER=rnfsd
SRV_IP=198.51.100.1
CLI_IP=198.51.100.2
LOCKCTL=$(dirname "$(readlink -f "$0")")/lockctl.py
CLIENT_NS_PID=
SRV_IP_B=203.0.113.1
CLI_IP_B=203.0.113.2
CLIENT_B_NS_PID=
F=lockfile      # the locked file, $MNT/$F on the client, $EXPORT/$F on the server

# Run a command in client A's (B's) network, mount and UTS namespaces.
cns() { nsenter -t "$CLIENT_NS_PID" -n -m -u -- "$@"; }
cnsb() { nsenter -t "$CLIENT_B_NS_PID" -n -m -u -- "$@"; }

# lockctl in client A's (B's) namespace on the mounted file (one lock owner).
clk() { cns python3 "$LOCKCTL" "$MNT/$F" "$@"; }
clkb() { cnsb python3 "$LOCKCTL" "$MNT/$F" "$@"; }

# ---- isolation: each lock check starts from no lock at all ----

# rnfsd's count of NLM (owner, file) records (rnfsctl --json "nlm_held"; "?" when not answered).
nlm_held() {
	local v
	v=$(timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock --json 2>/dev/null | sed -n 's/.*"nlm_held": \([0-9]*\).*/\1/p')
	echo "${v:-?}"
}

# No lock on the file: a local process takes and gives back an exclusive lock
# of all of it (NLM, NFSv4 and local locks are all the backend's), and rnfsd
# keeps no NLM record. Waits up to TENTHS tenths of a second.
locks_clear() {     # TENTHS
	local i
	for i in $(seq "$1"); do
		[ "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 0" "un 0 0")" = "ex 0 0 ok" ] &&
			{ [ "$(nlm_held)" = 0 ] || [ ! -x "$RNFSCTL" ]; } && return 0
		sleep 0.1
	done
	return 1
}

# What the lock state is, for a failed check or reset.
lock_diag() {
	echo "rnfsd running: $(rnfsd_running && echo yes || echo no); NLM held records: $(nlm_held)"
	timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock stats 2>/dev/null | grep -E "^nlockmgr|NLM|nfsv4 state|grace" || true
	echo "lock processes:"; ps -eo pid,stat,wchan:30,etime,args | grep "[l]ockctl" || true
	echo "/proc/locks:"; cat /proc/locks || true
	echo "rnfsd log:"; grep -E "nlm|nfs4: (grace|LOCK)|sm-notify" "$RNFSD_LOG" | tail -n 15 || true
	echo "dmesg:"; dmesg | tail -n 15 || true
}

# The start of each lock check: the lock processes a failed check left
# (killed at its timeout, or still waiting for a file that never came) are
# killed, and their closes unlock; rnfsd runs again if a check stopped it and
# failed before starting it (grace-period = 0: nothing to reclaim); then the
# file must be free (above). A lock that stays (a LOCK granted after its
# process was killed) is released the way a real client's reboot releases
# it: each client's statd sends SM_NOTIFY with a new state (sm-notify -f), and
# rnfsd drops that host's locks. Else the check fails with the diagnostics.
lock_reset() {
	local pids ns
	pids=$(pgrep -f "$LOCKCTL" || true)
	if [ -n "$pids" ]; then
		echo "reset: lock processes left over: $(echo $pids)"
		kill -KILL $pids 2>/dev/null || true
	fi
	if ! rnfsd_running; then
		echo "reset: rnfsd was not running: started with grace-period = 0"
		RNFSD_EXTRA="grace-period = 0" rnfsd_start || fail "reset: rnfsd did not start: $(tail -n 3 "$RNFSD_LOG")"
	fi
	locks_clear 300 && return 0
	echo "reset: $F still locked 30 s on; the clients send a reboot notification"
	for ns in "$CLIENT_NS_PID" "$CLIENT_B_NS_PID"; do
		[ -z "$ns" ] || nsenter -t "$ns" -n -m -u -- sm-notify -f -d > /dev/null 2>&1 || true
	done
	locks_clear 200 && return 0
	lock_diag
	fail "reset: $F still locked (NLM held records: $(nlm_held)) after the clients' reboot notification"
}

# run_check for a lock check: the reset first (its time added to the check's
# TIMEOUT); a failure prints the lock state on the console.
lock_check() {      # NAME TIMEOUT FUNCTION
	run_check "$1" "$(($2 + 50))" lock_checked "$3" && return 0   # + the reset's 50 s at most
	lock_diag 2>&1 | sed "s/^/   $1| diag: /"
	return 1
}

lock_checked() {    # FUNCTION
	lock_reset
	"$1"
}

check_server_start() {
	guest_rpcbind
	rpc.statd --no-notify || fail "rpc.statd did not start in the init namespace"
	server_start rnfsd || fail "rnfsd did not start"
	rpcinfo -p 127.0.0.1 | awk '$1 == 100024' | grep -q . || fail "rpc.statd (status) not registered"
	# A fresh machine (guest_base: the guest's own state directories): no
	# client to wait for, so no grace period; one would hold every new lock.
	grep "grace period of" "$RNFSD_LOG" && fail "rnfsd's first start holds a grace period: $(grep "grace period of" "$RNFSD_LOG" | head -n 1)"
	return 0
}

# A client namespace: a holder process (its pid in $SCRATCH/NAME.pid), its
# nodename NAME, veth VSRV (server end SRV/24) - VCLI (CLI/24), private /run
# and /var/lib/nfs, its own rpcbind and statd.
client_ns_setup() {     # NAME SRV CLI VSRV VCLI
	local name=$1 srv=$2 cli=$3 vsrv=$4 vcli=$5 pid i
	modprobe veth
	unshare --net --mount --uts --propagation private sleep infinity < /dev/null > /dev/null 2>&1 &
	pid=$!
	echo "$pid" > "$SCRATCH/$name.pid"
	for i in $(seq 100); do      # until unshare(2) has run
		[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	local in="nsenter -t $pid -n -m -u --"
	$in hostname "$name"
	ip link add "$vsrv" type veth peer name "$vcli" netns "$pid" || fail "veth pair $vsrv"
	ip addr add "$srv/24" dev "$vsrv"
	ip link set "$vsrv" up
	$in ip link set lo up
	$in ip addr add "$cli/24" dev "$vcli"
	$in ip link set "$vcli" up
	# Every server address through this veth: the server's name resolves to
	# both of its addresses, and sm-notify may pick either.
	$in ip route add default via "$srv"
	$in mount -t tmpfs tmpfs /run
	$in mount -t tmpfs tmpfs /var/lib/nfs
	$in mkdir -p /run/rpcbind /run/lock /var/lib/nfs/sm /var/lib/nfs/sm.bak
	$in rpcbind -w || fail "rpcbind in the client namespace $name"
	$in rpc.statd --no-notify || fail "rpc.statd in the client namespace $name"
	for i in $(seq 50); do
		$in timeout 5 rpcinfo -p "$srv" > /dev/null 2>&1 && break
		sleep 0.2
	done
	$in timeout 5 rpcinfo -p "$srv" > /dev/null || fail "the client namespace $name cannot reach rpcbind at $srv"
	# Two rpcbinds: the client's knows its statd, not rnfsd.
	$in rpcinfo -p 127.0.0.1
	$in rpcinfo -p 127.0.0.1 | awk '$1 == 100024' | grep -q . || fail "client $name: statd not registered"
	$in rpcinfo -p 127.0.0.1 | awk '$1 == 100005' | grep -q . && fail "client $name sees the server's rpcbind"
	expect_eq "client $name's nodename" "$name" "$($in uname -n)"
}

check_client_ns() {
	# What DNS would say on a real network (statd matches SM_NOTIFY's mon_name by address).
	printf '%s vmguest\n%s vmguest\n%s clienta\n%s clientb\n' "$SRV_IP" "$SRV_IP_B" "$CLI_IP" "$CLI_IP_B" |
		cat - /etc/hosts > "$SCRATCH/hosts" && cat "$SCRATCH/hosts" > /etc/hosts
	client_ns_setup clienta "$SRV_IP" "$CLI_IP" vsrv vcli
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

# OUT holds "exw 50 10 ok after SECONDS": the lock waited for the holder
# (2 s or more: the waiter says it is about to lock, a file the holder waits
# for, and the holder unlocks 3 s later; before, a waiter started late on a
# loaded machine found only 1 s left) and was granted by rnfsd's GRANTED call
# (under 20 s: the Linux client polls only every 30 s).
expect_granted_wait() {         # OUT WHAT TOO_SOON WHOSE_POLL
	local secs
	case $1 in *"exw 50 10 ok after "*) ;; *) fail "$2: $1";; esac
	secs=$(echo "$1" | awk '/^exw/ { print int($NF) }')
	[ "$secs" -ge 2 ] || fail "$3 (${secs}s)"
	[ "$secs" -lt 20 ] || fail "granted after ${secs}s: $4"
}

# F_SETLKW against a local process's lock on the server (two processes on
# the one client would wait in the client's own kernel, which checks its
# local locks before calling the server): rnfsd answers BLOCKED, its retry
# thread takes the lock once the local holder lets go (within a second) and
# sends GRANTED to the client's lockd; the client only polls every 30 s, so a
# wait of a few seconds means the GRANTED call arrived.
check_blocking() {
	rm -f "$SCRATCH"/w*
	local out i
	out=$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 100" "touch $SCRATCH/w1" "wait $SCRATCH/w0" "sleep 3" "un 0 100" &
		clk "wait $SCRATCH/w1" "touch $SCRATCH/w0" "exw 50 10" "un 50 10"; wait)
	echo "$out"
	expect_granted_wait "$out" "blocking lock" "the blocking lock did not wait for the holder" \
		"the client's poll, not rnfsd's GRANTED"
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

# Client B: its own namespace and nodename, the same export mounted over its
# own veth pair.
check_client_b() {
	client_ns_setup clientb "$SRV_IP_B" "$CLI_IP_B" vsrvb vclib
	CLIENT_B_NS_PID=$(cat "$SCRATCH/clientb.pid")
	cnsb mount -t nfs -o vers=3,proto=tcp,port=2049 "$SRV_IP_B:$EXPORT" "$MNT" || fail "client B: mount failed"
	cnsb grep " $MNT nfs " /proc/mounts | grep -q nolock && fail "client B mounted with nolock"
	expect_eq "client B reads A's file" 0123456789abcdef "$(cnsb cat "$MNT/$F")"
}

# The two clients' locks meet only at rnfsd (neither kernel knows the other's):
# exclusive refuses both kinds across clients, shared admits shared, adjacent
# ranges pass and a one-byte overlap does not; B's upgrade once A is gone.
# The clients' lockctl commands (clk / clk4, clkb) and a file prefix.
two_clients_locks() {     # A_LOCKCTL B_LOCKCTL PREFIX WHAT
	local a=$1 b=$2 p=$SCRATCH/$3 out
	rm -f "$p"*
	out=$($a "ex 0 100" "touch ${p}1" "wait ${p}2" "un 0 100" "sh 0 100" "touch ${p}3" \
		"wait ${p}4" "un 0 100" "touch ${p}5" "wait ${p}6" &
		$b "wait ${p}1" "ex 50 10" "sh 99 1" "ex 100 10" "un 100 10" "touch ${p}2" \
		"wait ${p}3" "sh 50 100" "ex 60 1" "touch ${p}4" "wait ${p}5" "ex 60 1" \
		"un 0 200" "touch ${p}6"; wait)
	echo "$out"
	local want="ex 0 100 ok
ex 50 10 denied
sh 99 1 denied
ex 100 10 ok
sh 0 100 ok
sh 50 100 ok
ex 60 1 denied
ex 60 1 ok"
	expect_eq "$4" "$want" "$out"
}

check_two_clients() {
	two_clients_locks clk clkb t "two-client results"
}

granted_count() { grep -c "nlm: GRANTED callback accepted" "$RNFSD_LOG" || true; }

# B's F_SETLKW on A's range: rnfsd answers BLOCKED, A unlocks after 3 s, and
# rnfsd's GRANTED call reaches B's lockd (over B's veth, its port from B's
# rpcbind) well before B's own 30 s poll.
check_two_clients_granted() {
	local out n0 i
	rm -f "$SCRATCH"/g*
	n0=$(granted_count)
	out=$(clk "ex 0 100" "touch $SCRATCH/g1" "wait $SCRATCH/g0" "sleep 3" "un 0 100" "wait $SCRATCH/g2" &
		clkb "wait $SCRATCH/g1" "touch $SCRATCH/g0" "exw 50 10" "touch $SCRATCH/g2" "un 50 10"; wait)
	echo "$out"
	expect_granted_wait "$out" "client B's blocking lock" "B's blocking lock did not wait for A" \
		"B's poll, not rnfsd's GRANTED"
	for i in $(seq 50); do
		[ "$(granted_count)" -gt "$n0" ] && return 0
		sleep 0.1
	done
	fail "rnfsd's log has no new accepted GRANTED callback"
}

# A holds a lock and "reboots": its statd's sm-notify -f sends SM_NOTIFY with
# a new state to the server's statd, which calls rnfsd (NLM procedure 16 over
# UDP): A's locks are released and B's blocked lock is granted. A's process
# still thinks it holds the lock (a rebooted client would not exist).
check_client_reboot() {
	local out secs
	rm -f "$SCRATCH"/b*
	out=$(clk "ex 0 10" "touch $SCRATCH/b1" "wait $SCRATCH/b3" &
		clkb "wait $SCRATCH/b1" "ex 0 10" "touch $SCRATCH/b2" "exw 5 1" "un 0 10" "touch $SCRATCH/b3" &
		cns python3 "$LOCKCTL" /dev/null "wait $SCRATCH/b2" "sleep 2"
		cns sm-notify -f -d > "$SCRATCH/sm-notify-a.out" 2>&1; echo "sm-notify $?"; wait)
	echo "$out"
	cat "$SCRATCH/sm-notify-a.out"
	local want="ex 0 10 ok
ex 0 10 denied"
	expect_eq "before the reboot" "$want" "$(echo "$out" | grep -v -e '^exw' -e '^sm-notify')"
	case $out in *"sm-notify 0"*) ;; *) fail "sm-notify in client A failed: $out";; esac
	case $out in *"exw 5 1 ok after "*) ;; *) fail "B was not granted A's range after A's reboot: $out";; esac
	secs=$(echo "$out" | awk '/^exw/ { print int($NF) }')
	[ "$secs" -lt 20 ] || fail "B granted after ${secs}s: not through the reboot notification"
	grep "nlm: clienta rebooted" "$RNFSD_LOG" || fail "rnfsd did not log clienta's reboot"
}

# Wait up to TENTHS tenths of a second for a line matching PATTERN in rnfsd's log.
wait_log() {    # PATTERN TENTHS
	local i
	for i in $(seq "$2"); do
		grep -q "$1" "$RNFSD_LOG" && return 0
		sleep 0.1
	done
	return 1
}

# rnfsd restarts while A holds a lock: rnfsd finds A and B in statd's monitor
# list, runs sm-notify -f, A's lockd reclaims in the grace period (20 s here)
# and a local process on the server is refused the range again; B's new lock
# during the grace period is refused (DENIED_GRACE_PERIOD) and retried by B's
# kernel until the grace period ends: Linux's nlmclnt_call() (fs/lockd/
# clntproc.c) waits NLMCLNT_GRACE_WAIT (5 s) between tries, and a call whose
# reply is lost waits lockd's RPC timeout (nlm_timeout, 10 s). So B's lock
# comes 20 + 5 s after the restart, 35 s if one reply is lost (or after A's
# reclaim, which sm-notify's retries may bring up to 45 s on); the check's
# timeout (180 s) adds rnfsd's stop and start and a loaded machine's margin.
# No NFSv4 client was ever recorded here, so no NFSv4 term may hold the grace
# period longer (issue 23: a stale record held it for 90 s; B hung).
check_restart_reclaim() {
	local t0 t1 i out apid
	rm -f "$SCRATCH"/c*
	clk "ex 0 10" "touch $SCRATCH/c1" "wait $SCRATCH/c2" "un 0 10" > "$SCRATCH/c-a.out" 2>&1 &
	apid=$!
	trap 'touch "$SCRATCH/c2"' EXIT      # on failure too: A's process lets go (umount later)
	cns python3 "$LOCKCTL" /dev/null "wait $SCRATCH/c1"
	expect_eq "a local process before the restart" "ex 0 10 denied" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
	ls /var/lib/nfs/sm
	rnfsd_stop || fail "rnfsd did not stop"
	expect_eq "a local process while rnfsd is down" "ex 0 10 ok" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
	t0=$SECONDS
	RNFSD_EXTRA="grace-period = 20" rnfsd_start || fail "rnfsd did not start again"
	grep -q "nlm: grace period of 20 s" "$RNFSD_LOG" || fail "no grace period after the restart"
	grep "nfs4: grace period of\|nfs4: no client" "$RNFSD_LOG" | tail -n 1 | grep -q "nfs4: no client" ||
		fail "an NFSv4 grace period after the restart (no NFSv4 client was recorded): $(grep "nfs4: grace period of" "$RNFSD_LOG" | tail -n 1)"
	# sm-notify (nfs-utils) resends an unanswered SM_NOTIFY after 2 s, then 4,
	# 8, 16 s; on a loaded machine the client's rpcbind, statd and lockd may
	# miss the first tries: 45 s covers four.
	wait_log "reclaimed \[0, +10)" 450 || true
	grep "sm-notify\|reclaimed" "$RNFSD_LOG" | tail -n 5
	grep -q "reclaimed \[0, +10)" "$RNFSD_LOG" || fail "client A did not reclaim [0, +10) within 45 s of the restart"
	echo "reclaimed $((SECONDS - t0)) s after the restart"
	expect_eq "a local process after the reclaim" "ex 0 10 denied" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
	out=$(clkb "ex 20 10" "un 20 10")
	t1=$((SECONDS - t0))
	echo "client B: $out, ${t1}s after the restart"
	expect_eq "client B's new lock" "ex 20 10 ok" "$out"
	[ "$t1" -ge 18 ] || fail "B's new lock was granted ${t1}s after the restart, inside the 20 s grace period"
	touch "$SCRATCH/c2"
	wait "$apid"     # not rnfsd, a child of this check since rnfsd_start
}

check_client_b_umount() {
	cnsb umount "$MNT" || fail "client B: umount"
}

# An NFSv4 mount in a client's namespace: listed as nfs4 of that version,
# and it reads A's file.
v4_mount_in() {     # NSENTER_FN CLIENT VERS SERVER_ADDR MOUNTPOINT
	local in=$1 who=$2 vers=$3 line
	$in mkdir -p "$5"
	$in mount -t nfs -o "vers=$vers,proto=tcp,port=2049" "$4:$EXPORT" "$5" || fail "client $who: vers=$vers mount failed"
	line=$($in grep " $5 nfs4 " /proc/mounts) || fail "client $who: no nfs4 mount at $5"
	echo "$line"
	case $line in *vers=$vers*) ;; *) fail "client $who: not an NFSv$vers mount: $line";; esac
	expect_eq "client $who (NFSv$vers) reads A's file" 0123456789abcdef "$($in cat "$5/$F")"
}

# Client B again, over NFSv4.1 this time (A stays on NFSv3 + NLM).
check_v4_mount() {
	v4_mount_in cnsb B 4.1 "$SRV_IP_B" "$MNT"
}

# A's NLM locks and B's NFSv4 locks refuse each other, both ways, and each
# takes the other's range once it is given back.
check_v3_v4_locks() {
	local out
	rm -f "$SCRATCH"/v*
	out=$(clk "ex 0 100" "touch $SCRATCH/v1" "wait $SCRATCH/v2" "ex 250 10" "un 0 100" "touch $SCRATCH/v3" \
		"wait $SCRATCH/v4" "ex 200 100" "touch $SCRATCH/v5" "wait $SCRATCH/v6" "un 200 100" &
		clkb "wait $SCRATCH/v1" "ex 50 10" "sh 99 1" "sh 200 100" "touch $SCRATCH/v2" "wait $SCRATCH/v3" \
		"un 200 100" "ex 0 100" "touch $SCRATCH/v4" "wait $SCRATCH/v5" "sh 250 1" "un 0 100" \
		"touch $SCRATCH/v6"; wait)
	echo "$out"
	local want="ex 0 100 ok
ex 50 10 denied
sh 99 1 denied
sh 200 100 ok
ex 250 10 denied
ex 0 100 ok
ex 200 100 ok
sh 250 1 denied"
	expect_eq "NFSv3 (A) / NFSv4.1 (B) results" "$want" "$out"
}

# OUT holds "exw START LEN ok after SECONDS": WHO's lock waited for the
# holder (2 s or more) and was granted in under MAX seconds.
expect_waited() {       # OUT WHO START LEN MAX
	local secs
	case $1 in *"exw $3 $4 ok after "*) ;; *) fail "$2's blocking lock: $1";; esac
	secs=$(echo "$1" | awk '/^exw/ { print int($NF) }')
	[ "$secs" -ge 2 ] || fail "$2's blocking lock did not wait for the holder (${secs}s)"
	[ "$secs" -lt "$5" ] || fail "$2's blocking lock granted after ${secs}s (not under $5 s)"
}

# Blocking both ways: B's F_SETLKW (NFSv4 LOCK, retried by B's kernel) waits
# for A's NLM lock; A's F_SETLKW (NLM BLOCKED) waits for B's NFSv4 lock and is
# given by rnfsd's GRANTED call (its retry thread sees the backend release
# within a second; A's own poll would take 30 s).
check_v3_v4_blocking() {
	local out
	rm -f "$SCRATCH"/x*
	out=$(clk "ex 0 100" "touch $SCRATCH/x1" "wait $SCRATCH/x0" "sleep 3" "un 0 100" "wait $SCRATCH/x2" &
		clkb "wait $SCRATCH/x1" "touch $SCRATCH/x0" "exw 50 10" "touch $SCRATCH/x2" "un 50 10"; wait)
	echo "$out"
	expect_waited "$out" "B (NFSv4)" 50 10 40
	out=$(clkb "ex 200 100" "touch $SCRATCH/x3" "wait $SCRATCH/x5" "sleep 3" "un 200 100" "wait $SCRATCH/x4" &
		clk "wait $SCRATCH/x3" "touch $SCRATCH/x5" "exw 250 10" "touch $SCRATCH/x4" "un 250 10"; wait)
	echo "$out"
	expect_waited "$out" "A (NLM, rnfsd's GRANTED, not A's 30 s poll)" 250 10 20
}

# Client A mounts the export again, with vers=4.2, beside its NFSv3 mount:
# from here on both clients lock over NFSv4 (A 4.2, B 4.1).
MNT4=/mnt/nfs4
clk4() { cns python3 "$LOCKCTL" "$MNT4/$F" "$@"; }

check_v4_a_mount() {
	v4_mount_in cns A 4.2 "$SRV_IP" "$MNT4"
}

# The same byte ranges from two NFSv4 clients (RFC 8881 §9.5: LOCK, LOCKT,
# LOCKU between lock owners of different clients), as two-clients over NLM.
check_v4_two_clients() {
	two_clients_locks clk4 clkb p "NFSv4.2 (A) / NFSv4.1 (B) results"
}

# RFC 8881 §9.6, §20.11: B (NFSv4.1) blocks in F_SETLKW (a WRITEW_LT LOCK,
# denied) on a range A holds, first through A's NFSv4.2 mount, then through
# A's NFSv3 mount (an NLM lock). Once rnfsd has answered B's blocking LOCK
# (its LOCK error count grew), A unlocks (NFSv4 LOCKU, then NLM UNLOCK):
# rnfsd's release listener sends B a CB_NOTIFY_LOCK each time, and B gets the
# lock. (Two processes of one client cannot show it: the Linux client makes
# the second wait for the first locally, before any LOCK is sent.)
notify_round() {   # HOLDER-FUNCTION WHAT START
	local holder=$1 what=$2 start=$3 e0 n0 n1 i bpid
	rm -f "$SCRATCH"/n*
	n0=$(rnfsd_async cb_notify_lock_sent)
	$holder "ex $start 10" "touch $SCRATCH/n1" "wait $SCRATCH/n2" "un $start 10" > "$SCRATCH/n-a.out" 2>&1 &
	cns python3 "$LOCKCTL" /dev/null "wait $SCRATCH/n1"
	e0=$(rnfsd_nfs4_lock_errors)
	clkb "exw $start 10" "un $start 10" > "$SCRATCH/n-b.out" 2>&1 &
	bpid=$!
	for i in $(seq 1 600); do
		[ "$(rnfsd_nfs4_lock_errors)" -gt "$e0" ] && break
		sleep 0.1
	done
	touch "$SCRATCH/n2"
	wait "$bpid" || fail "B's blocking lock failed ($what)"
	wait
	cat "$SCRATCH/n-a.out" "$SCRATCH/n-b.out"
	grep -q "exw $start 10 ok" "$SCRATCH/n-b.out" || fail "B did not get the lock after $what"
	n1=$(rnfsd_async cb_notify_lock_sent)
	echo "$what: CB_NOTIFY_LOCK sent $n0 -> $n1"
	[ "$n1" -gt "$n0" ] || fail "no CB_NOTIFY_LOCK after $what"
}

check_v4_notify_lock() {
	notify_round clk4 "A's NFSv4.2 LOCKU" 400
	notify_round clk "A's NLM UNLOCK" 500
	rnfsd_async_json
}

# B (NFSv4.1) holds [0,10) while rnfsd restarts with [nfsv4] grace-time = 60
# (and NLM's term off: grace-period = 0, so the grace period is NFSv4's
# alone). The previous run recorded A and B (state-dir/nfs4-clients), so the
# restart holds the grace period for them (RFC 8881 §8.4.2). A call from each
# client (statfs: GETATTR, never cached) meets the unknown session (BADSESSION),
# and the kernel's state manager recovers: EXCHANGE_ID, CREATE_SESSION, OPEN
# CLAIM_PREVIOUS, LOCK with reclaim = true (§8.4.2.1), RECLAIM_COMPLETE. rnfsd
# logs the reclaimed range; once both sent RECLAIM_COMPLETE the grace period
# ends early (§18.51.3). Then the lock is B's again: a local process and A's
# new lock on it are refused, A's lock beside it is granted; after B unlocks,
# the local process gets the range.
check_v4_restart_reclaim() {
	local t0 bpid
	rm -f "$SCRATCH"/q*
	clkb "ex 0 10" "touch $SCRATCH/q1" "wait $SCRATCH/q2" "un 0 10" > "$SCRATCH/q-b.out" 2>&1 &
	bpid=$!
	trap 'touch "$SCRATCH/q2"' EXIT
	cns python3 "$LOCKCTL" /dev/null "wait $SCRATCH/q1"
	expect_eq "a local process before the restart" "ex 0 10 denied" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
	rnfsd_stop || fail "rnfsd did not stop"
	expect_eq "a local process while rnfsd is down" "ex 0 10 ok" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
	t0=$SECONDS
	RNFSD_EXTRA="grace-period = 0" RNFSD_CONF_EXTRA="[nfsv4]
grace-time = 60" rnfsd_start || fail "rnfsd did not start again"
	grep "nfs4: grace period of\|nfs4: no client" "$RNFSD_LOG" | tail -n 1
	grep "nfs4: grace period of\|nfs4: no client" "$RNFSD_LOG" | tail -n 1 | grep -q "grace period of 60 s for 2 client" ||
		fail "no NFSv4 grace period for the two recorded clients after the restart"
	cnsb stat -f "$MNT" > /dev/null || fail "client B: statfs after the restart"
	cns stat -f "$MNT4" > /dev/null || fail "client A: statfs after the restart"
	wait_log "nfs4: LOCK reclaimed \[0, +10)" 300 || fail "client B did not reclaim [0, +10) within 30 s"
	grep "nfs4: LOCK reclaimed\|nfs4: grace period" "$RNFSD_LOG" | tail -n 3
	echo "reclaimed $((SECONDS - t0)) s after the restart"
	wait_log "nfs4: grace period over (every client" 300 ||
		fail "the grace period did not end with both clients' RECLAIM_COMPLETE"
	echo "grace over $((SECONDS - t0)) s after the restart"
	expect_eq "a local process after the reclaim" "ex 0 10 denied" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
	expect_eq "client A's conflicting and adjacent locks" "ex 5 1 denied
ex 10 10 ok" "$(clk4 "ex 5 1" "ex 10 10" "un 10 10")"
	touch "$SCRATCH/q2"
	wait "$bpid" || fail "client B's lock process: $(cat "$SCRATCH/q-b.out")"
	expect_eq "client B's lock process" "ex 0 10 ok" "$(cat "$SCRATCH/q-b.out")"
	expect_eq "a local process once B unlocked" "ex 0 10 ok" "$(python3 "$LOCKCTL" "$EXPORT/$F" "ex 0 10")"
}

check_v4_umount() {
	cns umount "$MNT4" || fail "client A: umount of the NFSv4.2 mount"
	cnsb umount "$MNT" || fail "client B: umount of the NFSv4.1 mount"
}

check_server_alive() {
	rnfsd_running || fail "rnfsd is no longer running: $(tail -n 1 "$RNFSD_LOG")"
	cns umount "$MNT" || fail "umount"
}

guest_base
guest_net rdma      # rxe0 for the proto=rdma part; the namespaced clients use TCP
RNFSD_RDMA=yes
# What a new admin gets: rnfsd's embedded default export (secure, root_squash).
use_default_export
# NFSv4 is served beside NFSv3 by default (no [nfsv4] section: client B's
# NFSv4.1 and client A's NFSv4.2 mounts at the end).
if run_check server-start 60 check_server_start &&
   run_check client-ns 60 check_client_ns; then
	CLIENT_NS_PID=$(cat "$SCRATCH/clienta.pid")
	if run_check mount 60 check_mount; then
		run_check nlm-split 30 check_nlm_split
		lock_check lock-exclusive-shared 90 check_exclusive_shared
		lock_check lock-ranges 90 check_ranges
		lock_check lock-split 90 check_split
		lock_check lock-flock 60 check_flock
		lock_check lock-server-local 60 check_server_local
		lock_check lock-blocking 90 check_blocking
		run_check rnfsd-counted 30 check_rnfsd_counted
		if run_check client-b 60 check_client_b; then
			CLIENT_B_NS_PID=$(cat "$SCRATCH/clientb.pid")
			lock_check two-clients 60 check_two_clients
			lock_check two-clients-granted 60 check_two_clients_granted
			lock_check client-reboot 60 check_client_reboot
			lock_check restart-reclaim 180 check_restart_reclaim
			run_check client-b-umount 30 check_client_b_umount
			if run_check v4-mount 60 check_v4_mount; then
				lock_check v3-v4-locks 60 check_v3_v4_locks
				lock_check v3-v4-blocking 120 check_v3_v4_blocking
				# What the NFSv4 client held and what was recalled, on the console.
				timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock stats 2>/dev/null |
					sed -n 's/^\(nfsv4: .*\)/@@ INFO v3-v4 \1/p'
				if run_check v4-a-mount 60 check_v4_a_mount; then
					lock_check v4-two-clients 90 check_v4_two_clients
					lock_check v4-notify-lock 150 check_v4_notify_lock
					lock_check v4-restart-reclaim 150 check_v4_restart_reclaim
				fi
				run_check v4-umount 30 check_v4_umount
			fi
			if run_check rdma-lock-mount 60 check_rdma_lock_mount; then
				lock_check rdma-lock-owners 60 check_rdma_lock_owners
				lock_check rdma-lock-blocking 60 check_rdma_lock_blocking
				lock_check rdma-lock-v4 60 check_rdma_lock_v4
				lock_check rdma-lock-restart 120 check_rdma_lock_restart
				run_check rdma-lock-umount 30 check_rdma_lock_umount
			fi
		fi
		# The figures, on the console: the blocked wait, rnfsd's NLM counts.
		sed -n 's/^exw .* after /@@ INFO blocked-lock-wait-s /p' "$GUEST_LOGDIR/check-lock-blocking.out"
		sed -n 's/^nlockmgr/@@ INFO nlockmgr/p; s/^.*\(nlm: .*statd.*\)$/@@ INFO \1/p' \
			"$GUEST_LOGDIR/check-rnfsd-counted.out"
		sed -n 's/^exw .* after /@@ INFO two-clients-granted-wait-s /p' "$GUEST_LOGDIR/check-two-clients-granted.out"
		sed -n 's/^exw 5 1 ok after /@@ INFO reboot-release-wait-s /p' "$GUEST_LOGDIR/check-client-reboot.out"
		sed -n 's/^exw 50 10 ok after /@@ INFO v4-blocked-by-v3-wait-s /p; s/^exw 250 10 ok after /@@ INFO v3-blocked-by-v4-wait-s /p' \
			"$GUEST_LOGDIR/check-v3-v4-blocking.out"
		sed -n 's/^reclaimed \([0-9]*\) s after.*/@@ INFO reclaim-after-restart-s \1/p' \
			"$GUEST_LOGDIR/check-restart-reclaim.out"
		sed -n 's/^reclaimed \([0-9]*\) s after.*/@@ INFO v4-reclaim-after-restart-s \1/p;
			s/^grace over \([0-9]*\) s after.*/@@ INFO v4-grace-over-after-restart-s \1/p' \
			"$GUEST_LOGDIR/check-v4-restart-reclaim.out"
		sed -n 's/^exw .* after /@@ INFO rdma-blocked-lock-wait-s /p' "$GUEST_LOGDIR/check-rdma-lock-blocking.out"
		sed -n 's/^.* \(nfs .*proto=rdma[^ ]*\).*/@@ INFO rdma-lock-mount \1/p; s/^ *\(100021 .*\)/@@ INFO rdma-lock-rpcbind \1/p' \
			"$GUEST_LOGDIR/check-rdma-lock-mount.out"
	fi
	run_check server-alive 30 check_server_alive
fi
run_check server-stop 30 rnfsd_stop
guest_end
