#!/bin/bash
# microbench.sh - instructions per NFSv3 operation of rnfsd, and of
# nfs-ganesha for the ratio, on this host (no VM), driven by bench/nfsload.
#
#   microbench.sh [--build-dir DIR] [--rnfsd BIN] [--nfsload BIN]
#                 [--servers rnfsd,ganesha] [--ops null,getattr,...]
#                 [--scale F] [--depth D] [--work DIR]
#                 [--baseline FILE] [--write-baseline] [--quick]
#
# Everything runs in a private network and mount namespace (unshare): its
# own loopback, a tmpfs export, its own rpcbind for ganesha; nothing on the
# host is touched and nothing is left running. Per server, two passes:
#   1. native: per operation kind, a warm-up, then `perf stat` on the server
#      over a run of 0 units (connect, MNT, 3 LOOKUPs: the fixed cost) and
#      over a run of N units; (run - fixed) / N = syscalls, context switches
#      and CPU microseconds per unit.
#   2. under valgrind --tool=callgrind: the same, with `callgrind_control`
#      zeroing and dumping the counters around each run; (run - fixed) / N =
#      instructions per unit (all threads, user space only). Deterministic up
#      to thread interleaving, so a change shows up as a percentage.
# Prints both tables, each rnfsd figure with its change against the baseline
# file (bench/microbench-baseline.txt), and ganesha/rnfsd ratios.
# A benchmark, not a test: exits 0 when it ran, 77 when it cannot run here
# (not root, packages missing), 1 when a server or the load failed.
# How to read it: bench/README.md.

set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/bench-host.sh"

BUILD_DIR= RNFSD= NFSLOAD= WORK=
SERVERS=rnfsd,ganesha
OPS=null,getattr,lookup,read4k,write4k,create-remove,readdirplus-1000
SCALE=1 DEPTH=16 WRITE_BASELINE=0 IN_NS=0
BASELINE=$HERE/microbench-baseline.txt
ARGS=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD_DIR=$2; shift 2;;
	--rnfsd) RNFSD=$2; shift 2;;
	--nfsload) NFSLOAD=$2; shift 2;;
	--servers) SERVERS=$2; shift 2;;
	--ops) OPS=$2; shift 2;;
	--scale) SCALE=$2; shift 2;;
	--depth) DEPTH=$2; shift 2;;
	--work) WORK=$2; shift 2;;
	--baseline) BASELINE=$2; shift 2;;
	--write-baseline) WRITE_BASELINE=1; shift;;
	--quick) SCALE=0.2; shift;;
	--in-namespace) IN_NS=1; shift;;
	-h|--help) sed -n '2,26p' "$0"; exit 0;;
	*) echo "microbench.sh: unknown argument $1 (see --help)" >&2; exit 2;;
	esac
done

BUILD_DIR=$(readlink -f "${BUILD_DIR:-$HERE/../build}")
RNFSD=$(readlink -f "${RNFSD:-$BUILD_DIR/rnfsd}")
NFSLOAD=$(readlink -f "${NFSLOAD:-$BUILD_DIR/bench/nfsload}")
WORK=$(readlink -f "${WORK:-$BUILD_DIR/bench/microbench-work}")
NFS_PORT=2049 GANESHA_MNT_PORT=20048 THREADS=8
EXPORT=$WORK/export

# Units per run by kind (times --scale); warm-up is a tenth.
units_of() {
	local n
	case $1 in
	readdirplus-1000) n=60;;
	create-remove) n=2000;;
	*) n=5000;;
	esac
	awk -v n="$n" -v s="$SCALE" 'BEGIN { v = int(n * s); print (v < 5 ? 5 : v) }'
}

if [ "$IN_NS" = 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, tmpfs, rnfsd's identity switching)"; exit 77; }
	for b in "$RNFSD" "$NFSLOAD"; do
		[ -x "$b" ] || { echo "microbench.sh: $b not built (meson compile -C $BUILD_DIR)" >&2; exit 1; }
	done
	pkgs="valgrind linux-perf rpcbind iproute2 util-linux"
	case ",$SERVERS," in *,ganesha,*) pkgs="$pkgs nfs-ganesha nfs-ganesha-vfs";; esac
	bench_install_packages $pkgs || { echo "SKIP: $BENCH_SKIP_REASON"; exit 77; }
	mkdir -p "$WORK"
	echo "microbench: rnfsd $RNFSD ($(git -C "$HERE" describe --always --dirty 2>/dev/null || echo '?'))"
	echo "microbench: host load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
	unshare --net --mount --propagation private "$0" "${ARGS[@]}" --in-namespace \
		--work "$WORK" --rnfsd "$RNFSD" --nfsload "$NFSLOAD"
	rc=$?
	echo "microbench: host load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit $rc
fi

# ---- inside the namespace ---------------------------------------------------

. "$HERE/microbench-lib.sh"
mb_main
