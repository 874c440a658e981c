#!/bin/bash
# run-vm.sh - host-side runner of the VM suite.
#
#   run-vm.sh [--build-dir DIR] [--rnfsd BINARY] [--server rnfsd|knfsd]
#             [--transport tcp|rdma] [--timeout S] [--work DIR]
#             [--phases main,default,ceph,v40,v41,v42,v4,krb5] SCENARIO
#
# Boots the qemu guest (Debian 6.1 kernel, TCG, no NIC, the host's / read-only
# so the build directory is at the same path) and runs tests/vm/SCENARIO.sh
# in it against SERVER over TRANSPORT. The guest prints "@@ PASS name" /
# "@@ FAIL name: detail"; every name in tests/vm/SCENARIO.checks must PASS.
# Exit: 0 all expected checks passed; 1 a check failed or is missing, the
# guest hung (killed after --timeout) or did not boot; 77 the VM cannot run
# here (not root, packages not installable, no qemu, no 6.1 kernel), unless
# RNFSD_VM_REQUIRED=1, then 1. On failure the console log is printed: it
# ends with the guest's diagnostics (rnfsd log, dmesg).
# --phases (kernel-client): which phases run, "main" (the insecure
# no_root_squash export), "default" (the server's default export) and/or
# "ceph" (a CephFS export of a one-node cluster started in the guest); the
# checks named default-* are expected only with "default", ceph-* only with
# "ceph", the others only with "main"; v40, v41, v42 and v4 are the main
# checks over NFSv4.0, 4.1, 4.2 and a mount without vers= (v40-* ...);
# krb5 the RPCSEC_GSS phase (krb5-*, tests/vm/krb5-phase.sh). A phase the
# guest reports as "@@ SKIP PHASE: why" (a prerequisite missing) has none of
# its checks expected; with RNFSD_VM_REQUIRED=1 the skip fails the run.
# Default: main,default.

set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/vm-host.sh"

BUILD_DIR=
RNFSD=
SERVER=rnfsd
TRANSPORT=tcp
TIMEOUT=1200
WORK=
PHASES=main,default
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD_DIR=$2; shift 2;;
	--rnfsd) RNFSD=$2; shift 2;;
	--server) SERVER=$2; shift 2;;
	--transport) TRANSPORT=$2; shift 2;;
	--timeout) TIMEOUT=$2; shift 2;;
	--work) WORK=$2; shift 2;;
	--phases) PHASES=$2; shift 2;;
	-h|--help) sed -n '2,27p' "$0"; exit 0;;
	-*) echo "run-vm.sh: unknown option $1" >&2; exit 2;;
	*) break;;
	esac
done
[ $# = 1 ] || { echo "usage: run-vm.sh [options] SCENARIO (see --help)" >&2; exit 2; }
SCENARIO=$1
GUEST=$HERE/$SCENARIO.sh
CHECKS=$HERE/$SCENARIO.checks
[ -f "$GUEST" ] && [ -f "$CHECKS" ] || { echo "run-vm.sh: no $GUEST or $CHECKS" >&2; exit 2; }
case $SERVER in rnfsd|knfsd) ;; *) echo "run-vm.sh: --server rnfsd|knfsd" >&2; exit 2;; esac
case $TRANSPORT in tcp|rdma) ;; *) echo "run-vm.sh: --transport tcp|rdma" >&2; exit 2;; esac
case ,$PHASES, in *,main,*|*,default,*|*,ceph,*|*,v40,*|*,v41,*|*,v42,*|*,v4,*|*,krb5,*) ;;
*) echo "run-vm.sh: --phases main,default,ceph,v40,v41,v42,v4,krb5" >&2; exit 2;; esac
phase_of() {
	case $1 in default-*) echo default;; ceph-*) echo ceph;; v40-*) echo v40;; v41-*) echo v41;;
	v42-*) echo v42;; v4-*) echo v4;; krb5-*) echo krb5;; *) echo main;; esac
}

skip() {
	if [ "${RNFSD_VM_REQUIRED:-0}" = 1 ]; then
		echo "FAIL: the VM suite is required (RNFSD_VM_REQUIRED=1) but cannot run: $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

vm_require_host || skip "$VM_SKIP_REASON"

if [ -z "$BUILD_DIR" ]; then
	BUILD_DIR=$(readlink -f "$HERE/../../build")
fi
BUILD_DIR=$(readlink -f "$BUILD_DIR")
RNFSD=$(readlink -f "${RNFSD:-$BUILD_DIR/rnfsd}")
if [ "$SERVER" = rnfsd ] && [ ! -x "$RNFSD" ]; then
	echo "FAIL: $RNFSD not built"
	exit 1
fi
case "$RNFSD$HERE" in
*" "*) echo "FAIL: paths with spaces cannot be passed to the guest: $RNFSD $HERE"; exit 1;;
esac

WORK=${WORK:-$BUILD_DIR/vm-work}
mkdir -p "$WORK"
vm_initramfs "$WORK/cache" || { echo "FAIL: could not build the initramfs"; exit 1; }
LOG=$WORK/console-$SCENARIO-$SERVER-$TRANSPORT.log

echo "vm: $SCENARIO against $SERVER over $TRANSPORT (kernel $VM_KVER, timeout ${TIMEOUT}s, console $LOG)"
RNFSCTL=$(dirname "$RNFSD")/daemon/rnfsctl
[ -x "$RNFSCTL" ] || RNFSCTL=none
vm_boot "$LOG" "$TIMEOUT" "$GUEST" "SERVER=$SERVER" "TRANSPORT=$TRANSPORT" "RNFSD=$RNFSD" \
	"RNFSCTL=$RNFSCTL" "DEADLINE=$((TIMEOUT - 25))" "PHASES=$PHASES"
boot_rc=$?

# Results: the last report of each check wins (a check reports once).
declare -A result detail skipped
while IFS= read -r line; do
	case $line in
	"@@ SKIP "*)
		name=${line#@@ SKIP }
		skipped[${name%%:*}]=${line#*: }
		echo "$line"
		;;
	"@@ PASS "*)
		set -- $line
		result[$3]=PASS
		echo "$line"
		;;
	"@@ FAIL "*)
		name=${line#@@ FAIL }
		name=${name%%:*}
		name=${name%% *}
		result[$name]=FAIL
		detail[$name]=${line#*: }
		echo "$line"
		;;
	"@@ "*|"   rnfsctl|"*)
		echo "$line"
		;;
	esac
done < "$LOG"

failed=0
npass=0
nexpected=0
while read -r name only; do
	case $name in ''|'#'*) continue;; esac
	# "NAME TRANSPORT": expected only over that transport.
	[ -z "${only:-}" ] || [ "$only" = "$TRANSPORT" ] || continue
	# Phases are kernel-client.sh's: other scenarios' names (kernel-lock's v4-mount) are all expected.
	if [ "$SCENARIO" = kernel-client ]; then
		case ,$PHASES, in *,"$(phase_of "$name")",*) ;; *) continue;; esac
		[ -z "${skipped[$(phase_of "$name")]:-}" ] || continue
	fi
	nexpected=$((nexpected + 1))
	case ${result[$name]:-} in
	PASS) npass=$((npass + 1));;
	FAIL) failed=1;;
	*) echo "@@ FAIL $name: missing (the guest never reported this check)"; failed=1;;
	esac
done < "$CHECKS"
for name in "${!result[@]}"; do
	if [ "${result[$name]}" = FAIL ] && ! grep -qE "^$name( |\$)" "$CHECKS"; then
		failed=1        # an unexpected failure (e.g. boot, rxe) also fails the run
	fi
done

if [ "$boot_rc" = 124 ]; then
	echo "FAIL: the guest hung: killed after ${TIMEOUT}s"
	failed=1
elif ! grep -q '^@@ DONE' "$LOG"; then
	echo "FAIL: the guest did not finish (qemu status $boot_rc)"
	failed=1
fi

for phase in "${!skipped[@]}"; do
	echo "vm: SKIP phase $phase: ${skipped[$phase]}"
	if [ "${RNFSD_VM_REQUIRED:-0}" = 1 ]; then
		echo "FAIL: phase $phase skipped but the VM suite is required (RNFSD_VM_REQUIRED=1)"
		failed=1
	fi
done
echo "vm: $npass/$nexpected checks passed ($SCENARIO, $SERVER, $TRANSPORT) in ${VM_BOOT_SECONDS}s"
if [ "$failed" != 0 ]; then
	echo "==== console log ($LOG) ===="
	cat "$LOG"
	echo "==== end of console log ===="
	exit 1
fi
exit 0
