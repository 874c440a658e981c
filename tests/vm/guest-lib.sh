# guest-lib.sh - guest side of the qemu test bed, sourced by
# guest scripts that tests/vm/vm-host.sh boots as PID 1 (bash). The guest
# sees the host's / read-only (tmpfs overlay on top), so the build directory
# and these scripts are at their host paths; it has no network device: only
# loopback and 192.0.2.1 on dummy0 are used.
#
# Arguments come from the kernel command line as vmarg_NAME=VALUE and are
# set as shell variables NAME=VALUE by guest_args.
#
# Also the helpers of the original shared/vm/guest-lib.sh (guest_rxe,
# guest_knfsd DIR), used with tests/vm/vmrun.sh by other suites.
#
# Servers (one at a time on 2049; same tmpfs export, same export options):
#   server_start knfsd|rnfsd, server_stop, server_log
# Exports: by default /export with EXPORT_LINE_OPTS (insecure, no_root_squash);
#   after use_default_export, rnfsd's embedded default instead: no exports
#   file at all, so rnfsd serves /srv/rnfsd *(rw,root_squash) (secure), and
#   knfsd the same line (plus the fsid= a tmpfs export needs there).
# Client:  nfs_mount [extra options], nfs_umount
#   TRANSPORT=tcp  -> vers=3,proto=tcp,port=2049
#   TRANSPORT=rdma -> vers=3,proto=rdma,port=20049 (MOUNT stays on TCP)
# Checks:  run_check NAME TIMEOUT_S FUNCTION prints "@@ PASS NAME (Ts)" or
#          "@@ FAIL NAME: detail" (detail = what FUNCTION wrote to $DETAIL,
#          else its last output line); a check that overruns is killed.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
ADDR=192.0.2.1
EXPORT=/export
MNT=/mnt/nfs
SCRATCH=/var/tmp/vmtest     # guest-local files (tmpfs overlay), not on NFS
GUEST_LOGDIR=/var/log/vmtest
RNFSD_LOG=$GUEST_LOGDIR/rnfsd.log
SERVER=
GUEST_FAILED=0

guest_args() {
	local a
	for a in $(cat /proc/cmdline); do
		case $a in
		vmarg_*=*)
			a=${a#vmarg_}
			printf -v "${a%%=*}" '%s' "${a#*=}"
			;;
		esac
	done
	set_transport "${TRANSPORT:-tcp}"
}

# The one switch between NFS over TCP and NFS over RPC-over-RDMA.
set_transport() {
	TRANSPORT=$1
	case $TRANSPORT in
	tcp)  NFS_PORT=2049;;
	rdma) NFS_PORT=20049;;
	*)    echo "@@ FAIL transport: unknown TRANSPORT=$TRANSPORT"; TRANSPORT=tcp; NFS_PORT=2049;;
	esac
	# NFS_VERS: 3 (default; nolock: NLM is tested in kernel-lock.sh), 4.0,
	# 4.1, 4.2, or "default" (no vers= at all: what the client prefers).
	case ${NFS_VERS:-3} in
	3) MOUNT_OPTS="vers=3,proto=$TRANSPORT,port=$NFS_PORT,nolock";;
	default) MOUNT_OPTS="proto=$TRANSPORT,port=$NFS_PORT";;
	*) MOUNT_OPTS="vers=$NFS_VERS,proto=$TRANSPORT,port=$NFS_PORT";;
	esac
}

guest_base() {
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mkdir -p /dev/pts /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	mount -t tmpfs tmpfs /run
	# /tmp is left as the overlay (writable, tmpfs-backed) so that a build
	# directory under the host's /tmp stays visible.
	# A fresh machine's state: the host's / is the overlay's lower layer, live, so
	# rnfsd's state-dir and statd's directory would otherwise show what rnfsd or
	# statd on the host recorded (even during this boot: dev.sh test runs the host
	# suites beside the VM suite). Issue 23: a previous boot's NFSv4 client
	# record there makes the guest's rnfsd hold a 90 s grace period at start
	# (new NLM locks wait for it), statd's records the same through NLM's term.
	mkdir -p /var/lib/rnfsd /var/lib/nfs
	mount -t tmpfs -o mode=0700 tmpfs /var/lib/rnfsd
	mount -t tmpfs -o mode=0755 tmpfs /var/lib/nfs
	# sm-notify moves sm/'s records to sm.bak/ and notifies what sm.bak/ holds:
	# without sm.bak/ it tells no one (tried: no client reclaimed after a restart).
	mkdir -p /run/lock /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/v4recovery /run/netns
	rm -rf "$SCRATCH" "$GUEST_LOGDIR"
	mkdir -p "$SCRATCH" "$GUEST_LOGDIR" "$MNT"
	hostname vmguest
	ip link set lo up
	guest_args
	guest_watchdog
	echo "@@ GUEST UP $(cut -d' ' -f1 /proc/uptime)s kernel $(uname -r)"
}

# Before the host's timeout (vmarg DEADLINE, seconds of guest uptime) kills
# the guest, say so and print the diagnostics.
guest_watchdog() {
	[ -n "${DEADLINE:-}" ] || return 0
	local left
	left=$(awk -v d="$DEADLINE" '{ printf "%d", d - $1 }' /proc/uptime)
	(
		sleep "$left"
		echo "@@ FAIL watchdog: the guest ran into its deadline (${DEADLINE}s of uptime)"
		ps -eo pid,stat,wchan:30,etime,args | grep -v '\[' | sed 's/^/   ps| /'
		guest_dump_diagnostics
		echo "@@ DONE (watchdog)"
		echo o > /proc/sysrq-trigger
	) &
}

# dummy0 with $ADDR; soft-RoCE rxe0 on it when $1 = rdma.
guest_net() {
	if ! ip link show dummy0 >/dev/null 2>&1; then
		modprobe dummy
		ip link add dummy0 type dummy
		ip link set dummy0 mtu "${RXE_MTU:-9000}"
		ip addr add "$ADDR/24" dev dummy0
		ip link set dummy0 up
	fi
	[ "$1" = rdma ] || return 0
	[ -e /sys/class/infiniband/rxe0 ] && return 0
	modprobe rdma_rxe
	modprobe rdma_ucm
	modprobe ib_uverbs
	modprobe rpcrdma
	rdma link add rxe0 type rxe netdev dummy0
	if ibv_devices | grep -q rxe0; then
		echo "@@ RXE OK"
	else
		echo "@@ FAIL rxe: no verbs device rxe0"
		return 1
	fi
}

# The helpers of the original shared/vm/guest-lib.sh, for guest scripts
# written against it: guest_rxe; guest_knfsd DIR (knfsd exporting a tmpfs at
# DIR on tcp 2049 and rdma 20049, with statd, v4 lease and grace 10 s).
guest_rxe() {
	guest_net rdma
}

guest_knfsd() {
	EXPORT=$1
	guest_export
	guest_rpcbind
	rpc.statd --no-notify 2>/dev/null
	if knfsd_start && grep -q 'rdma 20049' /proc/fs/nfsd/portlist; then
		echo "@@ KNFSD OK"
	else
		echo "@@ KNFSD FAIL"
	fi
}

guest_export() {
	mkdir -p "$EXPORT"
	mount -t tmpfs -o "size=${EXPORT_SIZE:-1g}" tmpfs "$EXPORT"
	chmod 0755 "$EXPORT"
}

EXPORT_LINE_OPTS="rw,no_root_squash,insecure,no_subtree_check,fsid=0"
EXPORT_XATTR=           # a second export on ext4 (user xattrs: tmpfs has none in 6.1), or empty
EXPORTS_EXTRA=          # more export lines for both servers, verbatim (the krb5 phase's sec=sys export)

# An ext4 file system in a loop file mounted at DIR, exported beside $EXPORT (rnfsd_write_config).
guest_xattr_export() {   # DIR
	local img=/var/tmp/xattr-export.img
	EXPORT_XATTR=$1
	mountpoint -q "$EXPORT_XATTR" && umount "$EXPORT_XATTR"
	modprobe loop 2>/dev/null
	rm -f "$img"
	truncate -s 128M "$img" && mkfs.ext4 -q -F "$img" && mkdir -p "$EXPORT_XATTR" &&
		mount -o loop "$img" "$EXPORT_XATTR" && chmod 0755 "$EXPORT_XATTR" ||
		{ echo "@@ INFO the xattr export $EXPORT_XATTR could not be made"; EXPORT_XATTR=; }
}
EXPORTS_BUILTIN=0       # 1: rnfsd gets no exports file (use_default_export)
ROOT_SQUASH=0           # 1: the export squashes the client's root to 65534

# Switch to rnfsd's embedded default export (daemon/main.c: no exports file,
# no --export: "/srv/rnfsd *(rw,root_squash)", secure by default). The guest
# root cannot serve file handles (9p + overlay), so a tmpfs goes there first;
# it is world-writable, as an admin makes a root_squash export that root
# clients write to (not sticky: the client's fs.protected_symlinks would then
# refuse root to follow the squashed user's symlinks there).
# A CephFS export (kernel-client.sh's ceph phase): a one-node cluster
# (tests/ceph/ceph-cluster.sh) on the guest's loopback, its directory /export
# mounted at $EXPORT by the kernel's own CephFS client (ms_mode=crc: the
# cluster speaks msgr2 only), so checks that read "the server's disk" read
# CephFS through a client independent of rnfsd; rnfsd serves the same CephFS
# path with fs=ceph.
CEPH_DIR=/var/lib/rnfsd-ceph
ceph_cluster_start() {
	local mon key
	# The ceph phase skips df (its figures trail the writes): no wait for them.
	CEPH_WAIT_SPACE=0 "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ceph/ceph-cluster.sh" start "$CEPH_DIR" > /dev/null ||
		{ echo "the Ceph cluster did not start"; return 1; }
	mon=$(awk '$1 == "mon_host" { sub("v2:", "", $3); print $3 }' "$CEPH_DIR/ceph.conf")
	key=$(ceph-authtool -p -n client.admin "$CEPH_DIR/keyring")
	modprobe ceph || { echo "modprobe ceph failed"; return 1; }
	mkdir -p /cephroot "$EXPORT"
	mount -i -t ceph "$mon:/" /cephroot -o "name=admin,secret=$key,ms_mode=crc" ||
		{ echo "kernel ceph mount of / failed"; return 1; }
	mkdir -p "/cephroot$EXPORT"
	chmod 0755 "/cephroot$EXPORT"
	umount /cephroot
	mount -i -t ceph "$mon:$EXPORT" "$EXPORT" -o "name=admin,secret=$key,ms_mode=crc" ||
		{ echo "kernel ceph mount of $EXPORT failed"; return 1; }
}
ceph_cluster_stop() {
	if mountpoint -q "$EXPORT"; then umount "$EXPORT" || umount -l "$EXPORT"; fi
	"$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../ceph/ceph-cluster.sh" stop "$CEPH_DIR" > /dev/null
}
# The variables of a CephFS export (set in the scenario's own shell).
use_ceph_export() {
	EXPORT=/export
	EXPORTS_BUILTIN=0
	ROOT_SQUASH=0
	EXPORT_LINE_OPTS="rw,no_root_squash,insecure,fs=ceph"
	RNFSD_CONF_EXTRA="[ceph]
conf = $CEPH_DIR/ceph.conf
keyring = $CEPH_DIR/keyring"
}

use_default_export() {
	EXPORT=/srv/rnfsd
	EXPORTS_BUILTIN=1
	ROOT_SQUASH=1
	EXPORT_LINE_OPTS="rw,root_squash,fsid=1"
	guest_export
	chmod 0777 "$EXPORT"
}

guest_rpcbind() {
	pgrep -x rpcbind >/dev/null || rpcbind -w
}

wait_tcp_listen() {     # PORT TIMEOUT_S
	local i
	for i in $(seq $(($2 * 5))); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.2
	done
	return 1
}

knfsd_start() {
	modprobe nfsd
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	echo "$EXPORT *($EXPORT_LINE_OPTS)" > /etc/exports
	[ -z "${EXPORTS_EXTRA:-}" ] || printf '%s\n' "$EXPORTS_EXTRA" >> /etc/exports
	guest_rpcbind
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	exportfs -ra || return 1
	rpc.mountd || return 1
	rpc.nfsd "${NFSD_THREADS:-8}" || return 1
	wait_tcp_listen 2049 10 || return 1
	# RPC-over-RDMA too whenever the guest has the soft-RoCE device.
	if [ -e /sys/class/infiniband/rxe0 ]; then
		echo "rdma 20049" > /proc/fs/nfsd/portlist
		grep -q 'rdma 20049' /proc/fs/nfsd/portlist || return 1
	fi
}

# Is anything listening for RDMA-CM connections on port 20049?
rdma_listening() {
	rdma resource show cm_id 2>/dev/null | grep -E 'state LISTEN' | grep -q ':20049 '
}

knfsd_stop() {
	rpc.nfsd 0
	exportfs -ua
	pkill -x rpc.mountd
	local i
	for i in $(seq 50); do
		pgrep -x rpc.mountd >/dev/null || break
		sleep 0.1
	done
	# knfsd keeps the listeners until its threads are gone.
	for i in $(seq 50); do
		ss -Hltn "sport = :2049" | grep -q . || return 0
		sleep 0.2
	done
	return 1
}

# RNFSD_EXTRA: more lines for the [rnfsd] section (a scenario's own settings).
rnfsd_write_config() {
	mkdir -p /etc/rnfsd /var/lib/rnfsd /run/rnfsd
	local exports_key="exports = /etc/rnfsd/exports"
	if [ "$EXPORTS_BUILTIN" = 1 ]; then
		rm -f /etc/rnfsd/exports
		exports_key="# no exports file: the embedded default export"
	else
		echo "$EXPORT *($EXPORT_LINE_OPTS)" > /etc/rnfsd/exports
		[ -z "$EXPORT_XATTR" ] || echo "$EXPORT_XATTR *($EXPORT_LINE_OPTS)" >> /etc/rnfsd/exports
		[ -z "${EXPORTS_EXTRA:-}" ] || printf '%s\n' "$EXPORTS_EXTRA" >> /etc/rnfsd/exports
	fi
	cat > /etc/rnfsd/rnfsd.conf <<EOF
# written by tests/vm/guest-lib.sh
[rnfsd]
threads = ${RNFSD_THREADS:-8}
state-dir = /var/lib/rnfsd
$exports_key
rpcbind = yes
# lock-rdma.sh: one host is client and server, its kernel lockd holds NLM in
# rpcbind; a restarted rnfsd takes NLM back from it (rnfsd.conf(5)).
rpcbind-replace = yes
stats-socket = /run/rnfsd/rnfsd.sock
${RNFSD_EXTRA:-}
[tcp]
listen = 0.0.0.0:2049
[rdma]
enable = ${RNFSD_RDMA:-$([ "$TRANSPORT" = rdma ] && echo yes || echo no)}
listen = $ADDR:20049
EOF
	# more sections a scenario needs (e.g. [ceph]), verbatim
	[ -z "${RNFSD_CONF_EXTRA:-}" ] || printf '%s\n' "$RNFSD_CONF_EXTRA" >> /etc/rnfsd/rnfsd.conf
}

# rnfsd runs in its own session (a check's timeout kills only the check)
# under a small monitor that records its exit status.
RNFSD_PIDFILE=/run/vmtest-rnfsd.pid
RNFSD_STATUSFILE=/run/vmtest-rnfsd.status

rnfsd_pid() { cat "$RNFSD_PIDFILE" 2>/dev/null; }

rnfsd_running() {
	local pid
	pid=$(rnfsd_pid)
	[ -n "$pid" ] && [ ! -e "$RNFSD_STATUSFILE" ] && kill -0 "$pid" 2>/dev/null
}

rnfsd_start() {
	if [ -z "${RNFSD:-}" ] || [ ! -x "$RNFSD" ]; then
		echo "rnfsd binary '${RNFSD:-}' not found (vmarg_RNFSD)" | tee -a "$RNFSD_LOG"
		return 1
	fi
	guest_rpcbind
	rnfsd_write_config
	rm -f "$RNFSD_PIDFILE" "$RNFSD_STATUSFILE"
	setsid bash -c '"$0" -f -v -c /etc/rnfsd/rnfsd.conf >> "$1" 2>&1 &
		echo $! > "$2"; wait $!; s=$?
		echo "rnfsd (pid $(cat "$2")) exited with status $s" >> "$1"; echo $s > "$3"' \
		"$RNFSD" "$RNFSD_LOG" "$RNFSD_PIDFILE" "$RNFSD_STATUSFILE" < /dev/null &
	local i
	for i in $(seq 100); do
		[ -s "$RNFSD_PIDFILE" ] && break
		sleep 0.1
	done
	for i in $(seq 100); do
		rnfsd_running || { echo "rnfsd is not running: $(tail -n 3 "$RNFSD_LOG")"; return 1; }
		ss -Hltn "sport = :2049" | grep -q . && break
		sleep 0.2
	done
	ss -Hltn "sport = :2049" | grep -q . || { echo "rnfsd does not listen on tcp 2049"; return 1; }
	if [ "$EXPORTS_BUILTIN" = 1 ]; then
		for i in $(seq 50); do
			grep -q "exports from $EXPORT (built in)" "$RNFSD_LOG" && break
			sleep 0.1
		done
		grep -q "exports from $EXPORT (built in)" "$RNFSD_LOG" || {
			echo "rnfsd does not serve its built-in default export $EXPORT: $(grep 'serving' "$RNFSD_LOG" | tail -n 1)"
			return 1
		}
	fi
	if [ "$TRANSPORT" = rdma ]; then
		for i in $(seq 50); do
			rdma_listening && break
			sleep 0.2
		done
		rdma_listening || { echo "rnfsd does not listen for RDMA-CM on 20049"; return 1; }
	fi
	# MOUNT v3 must be registered for TCP: the kernel client asks rpcbind.
	for i in $(seq 50); do
		rpcinfo -p 127.0.0.1 2>/dev/null | awk '$1 == 100005 && $2 == 3 && $3 == "tcp"' | grep -q . && return 0
		sleep 0.2
	done
	echo "rnfsd: MOUNT v3/tcp not registered with rpcbind" | tee -a "$RNFSD_LOG"
	return 1
}

# SIGTERM; rnfsd must exit with status 0 within 15 s (it drains for at most 10).
rnfsd_stop() {
	local pid i
	pid=$(rnfsd_pid)
	[ -n "$pid" ] || return 0
	if [ -e "$RNFSD_STATUSFILE" ]; then
		echo "rnfsd had already exited with status $(cat "$RNFSD_STATUSFILE")"
		return 1
	fi
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 75); do
		[ -e "$RNFSD_STATUSFILE" ] && break
		sleep 0.2
	done
	if [ ! -e "$RNFSD_STATUSFILE" ]; then
		echo "rnfsd did not exit within 15 s of SIGTERM; killed" | tee -a "$RNFSD_LOG"
		kill -KILL "$pid"
		return 1
	fi
	local st
	st=$(cat "$RNFSD_STATUSFILE")
	[ "$st" = 0 ] || { echo "rnfsd exited with status $st after SIGTERM"; return 1; }
	rm -f "$RNFSD_PIDFILE"
	return 0
}

server_start() {
	SERVER=$1
	case $SERVER in
	knfsd) knfsd_start;;
	rnfsd) rnfsd_start;;
	*) echo "unknown server $SERVER"; return 1;;
	esac
}

server_stop() {
	case $SERVER in
	knfsd) knfsd_stop;;
	rnfsd) rnfsd_stop;;
	esac
}

server_alive() {
	case $SERVER in
	knfsd) [ -n "$(cat /proc/fs/nfsd/threads 2>/dev/null | grep -v '^0$')" ];;
	rnfsd) rnfsd_running;;
	esac
}

nfs_mount() {   # [extra,options]
	mount -t nfs -o "$MOUNT_OPTS${1:+,$1}" "$ADDR:$EXPORT" "$MNT"
}

nfs_umount() {
	umount "$MNT"
}

drop_caches() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
}

# run_check NAME TIMEOUT_S FUNCTION [ARGS...]
# FUNCTION runs in its own process group (killed on timeout) with
# errexit; it may write a one-line reason to $DETAIL.
run_check() {
	local name=$1 timeout=$2 start end pid rc out
	shift 2
	out=$GUEST_LOGDIR/check-$name.out
	DETAIL=$GUEST_LOGDIR/check-$name.detail
	export DETAIL
	: > "$DETAIL"
	start=${EPOCHREALTIME/./}
	set -m
	( set -e; "$@" ) > "$out" 2>&1 &
	pid=$!
	set +m
	local deadline=$((SECONDS + timeout))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "timed out after ${timeout}s" > "$DETAIL"
			echo "--- $name timed out; its processes (kernel stacks):"
			for p in $(pgrep -g "$pid"); do
				echo "$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null) [$p]"
				sed 's/^/     /' "/proc/$p/stack" 2>/dev/null
			done
			kill -KILL -- "-$pid" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	end=${EPOCHREALTIME/./}
	if [ "$rc" = 0 ] && [ ! -s "$DETAIL" ]; then
		local ds=$(((end - start) / 100000))
		echo "@@ PASS $name ($((ds / 10)).$((ds % 10))s)"
		return 0
	fi
	local why
	why=$(head -n 1 "$DETAIL")
	[ -n "$why" ] || why="exit status $rc: $(tail -n 1 "$out")"
	echo "@@ FAIL $name: $why"
	sed -n '1,40p' "$out" | sed "s/^/   $name| /"
	GUEST_FAILED=1
	return 1
}

fail() {        # fail "reason": record the reason and stop the check
	echo "$*" > "$DETAIL"
	exit 1
}

expect_eq() {   # WHAT EXPECTED GOT
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# rnfsctl's "nfs4_async" object (asynchronous copies, CB_OFFLOAD, CB_NOTIFY_LOCK).
rnfsd_async_json() {
	timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock --json 2>/dev/null | grep -o '"nfs4_async": {[^}]*}'
}

rnfsd_async() {   # FIELD: its number (0 when not shown)
	local v
	v=$(rnfsd_async_json | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p")
	echo "${v:-0}"
}

# Errors rnfsd answered to NFSv4 LOCK so far (NFS4ERR_DENIED among them).
rnfsd_nfs4_lock_errors() {
	local v
	v=$(timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock --json 2>/dev/null |
		grep -o '"program": "nfs", "version": 4, "procedure": "LOCK", "calls": [0-9]*, "errors": [0-9]*' |
		sed 's/.*"errors": //')
	echo "${v:-0}"
}

# rnfsd's own view (rnfsctl stats: per-procedure calls, errors, latency).
rnfsd_stats() {
	[ -n "${RNFSCTL:-}" ] && [ -x "$RNFSCTL" ] && [ -S /run/rnfsd/rnfsd.sock ] || return 0
	echo "@@@ rnfsctl stats"
	timeout 10 "$RNFSCTL" -s /run/rnfsd/rnfsd.sock stats 2>&1 | sed 's/^/   rnfsctl| /'
}

guest_dump_diagnostics() {
	echo "@@@ BEGIN diagnostics (server ${SERVER:-?})"
	echo "--- mounts"; grep -E ' nfs|nfsd|tmpfs /export|tmpfs /srv/rnfsd' /proc/mounts
	echo "--- listeners"; ss -Hltn
	echo "--- rpcinfo"; rpcinfo -p 127.0.0.1 2>&1
	echo "--- NFS client per-op statistics (ops trans timeouts bytes_sent bytes_recv queue_ms rtt_ms exec_ms)"
	sed -n '/^device .* mounted on .* with fstype nfs/,$p' /proc/self/mountstats 2>/dev/null |
		awk '/per-op statistics/ { p = 1; next } p && NF > 2 && $2 > 0'
	rnfsd_stats
	if [ -s "$RNFSD_LOG" ]; then
		echo "--- rnfsd log (last 300 lines of $RNFSD_LOG)"
		tail -n 300 "$RNFSD_LOG"
	fi
	echo "--- dmesg (last 150 lines)"; dmesg | tail -n 150
	echo "@@@ END diagnostics"
}

guest_end() {
	[ "$GUEST_FAILED" = 0 ] || guest_dump_diagnostics
	echo "@@ DONE $(cut -d' ' -f1 /proc/uptime)s"
	sync
	echo o > /proc/sysrq-trigger
	# Wait for the power-off without touching the (vanishing) 9p root.
	local until=$((SECONDS + 20))
	while [ "$SECONDS" -lt "$until" ]; do :; done
}
