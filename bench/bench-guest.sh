#!/bin/bash
# bench-guest.sh - guest side of bench/run-bench.sh. In one boot: the
# fabric's own limit (perftest on rxe0, when rdma is benchmarked), then
# REPEATS rounds; in each round knfsd, nfs-ganesha and rnfsd, in an order
# rotated by one server per round, each on the same fresh tmpfs export with
# the same export options and the same thread count (and rnfsd-ceph: rnfsd
# serving a CephFS export of a one-node cluster started in the guest for its
# turn), run the same jobs:
#   base rows     vers=3, per transport: 1 MiB sequential, 4 KiB random, metadata
#   scaling rows  vers=3, per transport: 4 KiB random reads from 1, 4 and 16
#                 client processes (fio numjobs), one call in flight each
#   tcp-nc4 rows  vers=3 over TCP with nconnect=4: the 4- and 16-process rows again
#   tcp-v4.1, rdma-v4.1 rows  vers=4.1 per transport, for each server that serves NFSv4
#                 (rnfsd: NFSv4 is on by default; [nfsv4] enable = yes says so)
# Prints
#   @@ FABRIC name value unit
#   @@ BENCH round server xprt job value unit cpu_s work [note]
#       cpu_s: the server's CPU seconds over the job; work: GiB moved (fio,
#       from the client's mountstats) or thousands of operations (metadata)
#   @@ RESOURCES round server key=value ...
# Never fails on speed: a row that cannot run prints "n/a (why)".

. "$(dirname "$(readlink -f "$0")")/../tests/vm/guest-lib.sh"

BENCH_TRANSPORTS=${BENCH_TRANSPORTS:-tcp}   # vmarg: tcp,rdma
BENCH_SERVERS=${BENCH_SERVERS:-knfsd,ganesha,rnfsd}
REPEATS=${REPEATS:-3}
RUNTIME=${RUNTIME:-4}                       # seconds per timed fio job
RAMP=${RAMP:-1}
SCALING=${SCALING:-1,4,16}                  # client processes of the scaling rows
FILE_MB=${FILE_MB:-128}
META_FILES=${META_FILES:-500}
SEQ_QD=${SEQ_QD:-4}
THREADS=${THREADS:-8}                       # nfsd threads, rnfsd threads, ganesha RPC_Ioq_ThrdMax
GANESHA_RDMA=${GANESHA_RDMA:-no}            # yes or no (run-bench.sh checks the packages)
FIO_TIMEOUT=$((RUNTIME * 6 + 180))
BASE_JOBS="seq-write-1m seq-read-1m randread-4k-qd16 randwrite-4k-qd16"
META_JOBS="meta-create meta-stat meta-delete"
V41_JOBS="seq-read-1m randread-4k-qd16"
# Same options for every server; rsize/wsize pinned so that all move the
# same transfer size (left alone, knfsd offers 512 KiB here, rnfsd 1 MiB).
MOUNT_EXTRA=${MOUNT_EXTRA-rsize=524288,wsize=524288}
OUT=$SCRATCH/bench
ROUND=0
NFSD_THREADS=$THREADS RNFSD_THREADS=$THREADS

has_transport() { case ",$BENCH_TRANSPORTS," in *",$1,"*) return 0;; esac; return 1; }

scaling_jobs() {
	local p
	for p in ${SCALING//,/ }; do echo "randread-4k-qd1-p$p"; done
}

# --- the fabric's own limit -----------------------------------------------------

# perftest_run TOOL SIZE ITERS: prints "MiB/s msgs/s" (perftest's MB is 2^20).
perftest_run() {
	local tool=$1 size=$2 iters=$3 srv=$OUT/$1-$2.srv cli=$OUT/$1-$2.cli
	timeout -k 5 120 "$tool" -d rxe0 -s "$size" -n "$iters" -F > "$srv" 2>&1 &
	local spid=$!
	wait_tcp_listen 18515 20
	timeout -k 5 120 "$tool" -d rxe0 -s "$size" -n "$iters" -F "$ADDR" > "$cli" 2>&1
	wait "$spid"
	# Result line: bytes iterations BWpeak BWaverage MsgRate(Mpps)
	awk -v s="$size" '$1 == s && NF >= 5 { printf "%.1f %.0f\n", $4, $5 * 1000000; found = 1 } END { if (!found) exit 1 }' "$cli" ||
		{ sed 's/^/   perftest| /' "$cli" "$srv"; return 1; }
}

fabric_measure() {
	local r
	if r=$(perftest_run ib_write_bw 1048576 200); then
		echo "@@ FABRIC write-bw-1m ${r% *} MiB/s"
	else
		echo "@@ FABRIC write-bw-1m n/a MiB/s"
	fi
	if r=$(perftest_run ib_read_bw 1048576 200); then
		echo "@@ FABRIC read-bw-1m ${r% *} MiB/s"
	else
		echo "@@ FABRIC read-bw-1m n/a MiB/s"
	fi
	if r=$(perftest_run ib_send_bw 4096 20000); then
		echo "@@ FABRIC send-4k ${r#* } msgs/s"
	else
		echo "@@ FABRIC send-4k n/a msgs/s"
	fi
}

# --- nfs-ganesha ------------------------------------------------------------------

GANESHA_PID=
GANESHA_LOG=$GUEST_LOGDIR/ganesha.log

# Same export, same options as the others: rw, no_root_squash, any source
# port, AUTH_SYS; NFSv3 and NFSv4.1 (pseudo path /export, no grace period
# after start); RPC_Ioq_ThrdMax bounds ganesha 4.x's request threads
# (its Nb_Worker is deprecated).
ganesha_write_config() {
	mkdir -p /etc/ganesha /var/lib/nfs/ganesha /run/ganesha
	cat > /etc/ganesha/bench.conf <<EOF
NFS_CORE_PARAM {
	Protocols = 3, 4; NFS_Port = 2049; MNT_Port = 20048;
	Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false;
	RPC_Ioq_ThrdMax = $THREADS;
}
NFSV4 { Graceless = true; Minor_Versions = 1; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
	Export_Id = 1; Path = $EXPORT; Pseudo = $EXPORT;
	Protocols = 3, 4; Transports = TCP; Access_Type = RW; Squash = No_Root_Squash;
	SecType = sys; FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
EOF
}

ganesha_start() {
	local i
	command -v ganesha.nfsd >/dev/null || { echo "ganesha.nfsd is not installed"; return 1; }
	guest_rpcbind
	ganesha_write_config
	ganesha.nfsd -F -f /etc/ganesha/bench.conf -L "$GANESHA_LOG" -p /run/ganesha/ganesha.pid \
		-N NIV_EVENT > "$GANESHA_LOG.out" 2>&1 &
	GANESHA_PID=$!
	for i in $(seq 150); do
		kill -0 "$GANESHA_PID" 2>/dev/null || { echo "ganesha exited: $(tail -n 3 "$GANESHA_LOG")"; return 1; }
		rpcinfo -p 127.0.0.1 2>/dev/null | awk '$1 == 100005 && $2 == 3 && $3 == "tcp"' | grep -q . &&
			ss -Hltn "sport = :2049" | grep -q . && return 0
		sleep 0.2
	done
	echo "ganesha does not serve on 2049 within 30 s"
	return 1
}

ganesha_stop() {
	local i
	[ -n "$GANESHA_PID" ] || return 0
	kill -TERM "$GANESHA_PID" 2>/dev/null
	for i in $(seq 150); do
		kill -0 "$GANESHA_PID" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$GANESHA_PID" 2>/dev/null; then
		kill -KILL "$GANESHA_PID"
		wait "$GANESHA_PID" 2>/dev/null
		GANESHA_PID=
		return 1
	fi
	wait "$GANESHA_PID" 2>/dev/null
	GANESHA_PID=
	# Its registrations go with it; wait for the port.
	for i in $(seq 50); do
		ss -Hltn "sport = :2049" | grep -q . || return 0
		sleep 0.2
	done
	return 1
}

# --- rnfsd-ceph: rnfsd serving a CephFS export ---------------------------------

# The one-node cluster (tests/ceph/ceph-cluster.sh) runs only during this
# server's turn, so that its daemons' CPU never weighs on the other servers'
# figures; the export is CephFS's /cephexport, mounted at the same path by
# the kernel's CephFS client for the bench's own file handling (guest-lib.sh).
BENCH_LOCAL_EXPORT=
rnfsd_ceph_start() {
	BENCH_LOCAL_EXPORT=$EXPORT
	EXPORT=/cephexport
	ceph_cluster_start || return 1
	use_ceph_export
	RNFSD_CONF_EXTRA="$RNFSD_CONF_EXTRA
$BENCH_RNFSD_V4"
	EXPORT=/cephexport
	server_start rnfsd
}

rnfsd_ceph_stop() {
	local rc=0
	SERVER=rnfsd
	server_stop || rc=1
	SERVER=rnfsd-ceph
	ceph_cluster_stop
	EXPORT=$BENCH_LOCAL_EXPORT
	EXPORT_LINE_OPTS=$BENCH_EXPORT_LINE_OPTS RNFSD_CONF_EXTRA=$BENCH_RNFSD_V4
	return $rc
}

bench_server_start() {
	SERVER=$1
	case $1 in
	ganesha) ganesha_start;;
	rnfsd-ceph) rnfsd_ceph_start; local rc=$?; SERVER=rnfsd-ceph; return $rc;;
	*) server_start "$1";;
	esac
}

bench_server_stop() {
	case $SERVER in
	ganesha) ganesha_stop;;
	rnfsd-ceph) rnfsd_ceph_stop;;
	*) server_stop;;
	esac
}

# The server's process (ganesha, rnfsd); none for knfsd.
server_pid() {
	case $SERVER in
	ganesha) echo "$GANESHA_PID";;
	rnfsd|rnfsd-ceph) rnfsd_pid;;
	esac
}

# Server CPU in clock ticks: utime + stime of the process (all its threads,
# live and ended), or of knfsd's nfsd kernel threads.
server_cpu_ticks() {
	local pids p files=()
	if [ "$SERVER" = knfsd ]; then pids=$(pgrep -x nfsd); else pids=$(server_pid); fi
	for p in $pids; do files+=("/proc/$p/stat"); done
	[ ${#files[@]} -gt 0 ] || { echo 0; return; }
	awk '{ sub(/^.*\) /, ""); s += $12 + $13 } END { print s + 0 }' "${files[@]}" 2>/dev/null
}

# Bytes the client moved in READ and WRITE calls on $MNT (mountstats).
mount_bytes() {
	awk -v m="$MNT" '$1 == "device" { on = ($5 == m) } on && $1 == "bytes:" { printf "%.0f\n", $6 + $7; exit }' \
		/proc/self/mountstats
}

. "$(dirname "$(readlink -f "$0")")/bench-jobs.sh"

guest_base
mkdir -p "$OUT"
if has_transport rdma; then
	guest_net rdma
else
	guest_net tcp
fi
guest_export
BENCH_EXPORT_LINE_OPTS=$EXPORT_LINE_OPTS
# rnfsd serves NFSv4 by default; said explicitly so an older build's rows come out too.
BENCH_RNFSD_V4="[nfsv4]
enable = yes"
RNFSD_CONF_EXTRA=$BENCH_RNFSD_V4
RNFSD_RDMA=auto
echo "@@ INFO transports=$BENCH_TRANSPORTS servers=$BENCH_SERVERS repeats=$REPEATS runtime=${RUNTIME}s ramp=${RAMP}s file=${FILE_MB}MiB meta_files=$META_FILES seq_qd=$SEQ_QD scaling=$SCALING threads=$THREADS mount_extra=${MOUNT_EXTRA:-none}"
has_transport rdma && fabric_measure
bench_rounds
guest_end
