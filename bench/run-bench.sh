#!/bin/bash
# run-bench.sh - knfsd, nfs-ganesha and rnfsd in one qemu guest boot.
#
#   run-bench.sh [--build-dir DIR] [--rnfsd BINARY] [--transports tcp,rdma]
#                [--servers knfsd,ganesha,rnfsd[,rnfsd-ceph]] [--repeats N] [--runtime S]
#                [--ramp S] [--scaling 1,4,16] [--timeout S] [--work DIR]
#                [--mount-options OPTS]   (added to vers=3,proto=..,port=..,nolock;
#                                          default rsize=524288,wsize=524288)
#                [--quick]                (1 round, 3 s per job: ~10 minutes)
#
# Runs bench/bench-guest.sh in the guest (see tests/vm/vm-host.sh): the same
# jobs against each server (same tmpfs export, same mount options, same
# thread count), REPEATS rounds with the servers' order rotated, per
# transport, plus perftest's figure for the fabric itself when rdma is
# benchmarked; prints the medians with min and max (bench-report.pl). A
# benchmark, not a test: exits 0 whenever the guest ran, whatever the
# figures; 77 if the VM cannot run here; 1 if the guest did not boot or hung.
# How to read the figures: bench/README.md.

set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../tests/vm/vm-host.sh"
. "$HERE/bench-host.sh"

BUILD_DIR= RNFSD= WORK=
TRANSPORTS=tcp,rdma
SERVERS=
MOUNT_EXTRA=rsize=524288,wsize=524288
REPEATS=3 RUNTIME=4 RAMP=1 SCALING=1,4,16
TIMEOUT=
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD_DIR=$2; shift 2;;
	--rnfsd) RNFSD=$2; shift 2;;
	--transports) TRANSPORTS=$2; shift 2;;
	--servers) SERVERS=$2; shift 2;;
	--mount-options) MOUNT_EXTRA=$2; shift 2;;
	--repeats) REPEATS=$2; shift 2;;
	--runtime) RUNTIME=$2; shift 2;;
	--ramp) RAMP=$2; shift 2;;
	--scaling) SCALING=$2; shift 2;;
	--timeout) TIMEOUT=$2; shift 2;;
	--work) WORK=$2; shift 2;;
	--quick) REPEATS=1; RUNTIME=3; shift;;
	-h|--help) sed -n '2,19p' "$0"; exit 0;;
	*) echo "run-bench.sh: unknown argument $1 (see --help)" >&2; exit 2;;
	esac
done

vm_require_host || { echo "SKIP: $VM_SKIP_REASON"; exit 77; }
BUILD_DIR=$(readlink -f "${BUILD_DIR:-$HERE/../build}")
RNFSD=$(readlink -f "${RNFSD:-$BUILD_DIR/rnfsd}")
[ -x "$RNFSD" ] || { echo "run-bench.sh: $RNFSD not built" >&2; exit 1; }
# rnfsd-ceph (rnfsd serving CephFS from a one-node cluster in the guest) is
# in the default set when rnfsd has the Ceph backend and Ceph's daemons are here.
if [ -z "$SERVERS" ]; then
	SERVERS=knfsd,ganesha,rnfsd
	if ldd "$RNFSD" 2>/dev/null | grep -q libcephfs && command -v ceph-mon ceph-osd ceph-mds > /dev/null; then
		SERVERS=$SERVERS,rnfsd-ceph
	fi
fi
# About 14 minutes of guest time per round of three servers at 5 s per job,
# plus ~2 minutes per round to start and stop the Ceph cluster; room for a loaded host.
NSERVERS=$(echo "$SERVERS" | tr ',' '\n' | grep -c .)
TIMEOUT=${TIMEOUT:-$((900 + REPEATS * NSERVERS * (200 + 60 * RUNTIME) + REPEATS * 150))}
GANESHA_RDMA=no
case ",$SERVERS," in
*,ganesha,*)
	bench_install_packages nfs-ganesha nfs-ganesha-vfs || { echo "SKIP: $BENCH_SKIP_REASON"; exit 77; }
	GANESHA_RDMA_WHY=$(bench_ganesha_rdma_support)
	[ "$GANESHA_RDMA_WHY" = yes ] && GANESHA_RDMA=yes
	;;
esac
WORK=${WORK:-$BUILD_DIR/bench-work}
mkdir -p "$WORK"
vm_initramfs "$WORK/cache" || { echo "run-bench.sh: could not build the initramfs" >&2; exit 1; }
LOG=$WORK/console-bench.log
LOADS=$WORK/host-load.txt

echo "bench: $SERVERS ($RNFSD, $(git -C "$HERE" describe --always --dirty 2>/dev/null || echo '?')), transports $TRANSPORTS, $REPEATS rounds, ${RUNTIME}s per timed job; console $LOG"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# The host's 1-minute load average every 30 s while the guest runs (and
# while this script lives: vm_boot's signal handler exits without waiting).
( while kill -0 $$ 2>/dev/null; do cut -d' ' -f1 /proc/loadavg; sleep 30; done ) > "$LOADS" &
SAMPLER=$!
RNFSCTL=$(dirname "$RNFSD")/daemon/rnfsctl
[ -x "$RNFSCTL" ] || RNFSCTL=none
vm_boot "$LOG" "$TIMEOUT" "$HERE/bench-guest.sh" "RNFSD=$RNFSD" "RNFSCTL=$RNFSCTL" \
	"DEADLINE=$((TIMEOUT - 25))" \
	"BENCH_TRANSPORTS=$TRANSPORTS" "BENCH_SERVERS=$SERVERS" "REPEATS=$REPEATS" \
	"RUNTIME=$RUNTIME" "RAMP=$RAMP" "SCALING=$SCALING" "GANESHA_RDMA=$GANESHA_RDMA" \
	"MOUNT_EXTRA=$MOUNT_EXTRA"
rc=$?
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
grep -E '^@@ (INFO|NOTE)' "$LOG"

perl "$HERE/bench-report.pl" "$LOG" "$SERVERS"
case ",$SERVERS,:$TRANSPORTS" in
*,ganesha,*:*rdma*)
	[ "$GANESHA_RDMA" = yes ] || echo "ganesha over rdma: ${GANESHA_RDMA_WHY#no: }; so NFS_CORE_PARAM Protocols has no 'rpcrdma' (bench-host.sh)";;
esac

if grep -q '^   rnfsctl|' "$LOG"; then
	echo
	echo "rnfsd's own view at the end of its last round (rnfsctl stats; latency = time in rnfsd):"
	sed -n 's/^   rnfsctl| //p' "$LOG"
fi
if [ "$rc" = 124 ]; then
	echo "bench: the guest hung and was killed after ${TIMEOUT}s; console log follows"
	cat "$LOG"
	exit 1
fi
if ! grep -q '^@@ DONE' "$LOG"; then
	echo "bench: the guest did not finish (qemu status $rc); console log follows"
	cat "$LOG"
	exit 1
fi
echo "bench: guest time ${VM_BOOT_SECONDS}s; host load average before $LOAD_BEFORE, after $LOAD_AFTER ($(nproc) CPUs);" \
	"1-minute load during the run (every 30 s): $(sort -n "$LOADS" | awk '{ v[NR] = $1 } END { if (NR) printf "min %s median %s max %s", v[1], v[int((NR + 1) / 2)], v[NR] }')"
echo "bench: figures from one boot under TCG emulation: compare only within this run (bench/README.md)"
exit 0
