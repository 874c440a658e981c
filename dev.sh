#!/bin/bash
# dev.sh - the two commands a fresh Debian 12 machine needs (run as root):
#   ./dev.sh run [rnfsd options]   install dependencies, build, run rnfsd in the foreground
#   ./dev.sh test                  install dependencies, build (plain, ASan+UBSan, TSan), run every test suite
# Other subcommands: deps (install only, bench packages included), build (build only).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

# backend/ceph/ and its throwaway one-node test cluster (tests/ceph/ceph-cluster.sh).
CEPH_PKGS="libcephfs-dev ceph-common ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse"
BUILD_PKGS="gcc meson ninja-build pkg-config libtirpc-dev libevent-dev libibverbs-dev librdmacm-dev libsystemd-dev libmicrohttpd-dev libkrb5-dev libssl-dev liburing-dev"
# krb5-*: the throwaway realm of tests/integration/krb5-realm.sh (RPCSEC_GSS); openssl: it_tls's throwaway CA.
TEST_PKGS="openssl krb5-kdc krb5-admin-server krb5-user libcmocka-dev libnfs-dev libnfs-utils rpcbind systemd clang libclang-rt-14-dev prometheus curl $CEPH_PKGS"
# The VM test bed (tests/vm/README.md): qemu, Debian's 6.1 kernel, soft-RoCE user space, knfsd as baseline.
VM_PKGS="qemu-system-x86 linux-image-amd64 busybox-static kmod cpio iproute2 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest fio nfs-kernel-server nfs-common nftables attr e2fsprogs"
# debian/: the packages, built and checked by tests/ops/deb-build.sh (the ops_vm_deb test).
DEB_PKGS="dpkg-dev debhelper lintian"
# bench/ (not a test): nfs-ganesha as the second baseline server, valgrind and perf for the microbenchmark.
BENCH_PKGS="nfs-ganesha nfs-ganesha-vfs valgrind linux-perf"

have_all() { dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null | grep -c '^install ok installed$' | grep -qx "$#"; }

install_pkgs() {
	# shellcheck disable=SC2086
	if have_all $*; then return 0; fi
	if [ "$(id -u)" != 0 ]; then echo "dev.sh: need root to install: $*" >&2; return 1; fi
	# Keep package scripts from starting daemons (rpcbind, nfs-server) on this machine.
	local prc=; [ -e /usr/sbin/policy-rc.d ] || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; prc=1; }
	apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $* >/dev/null
	[ -z "$prc" ] || rm -f /usr/sbin/policy-rc.d
	# nfs-ganesha's and ceph's packages enable their units: the bench and tests/ceph start them by hand, never at boot.
	local u; for u in nfs-ganesha nfs-ganesha-lock nfs-ganesha-config ceph ceph-mon ceph-mgr ceph-osd ceph-mds ceph-crash; do
		[ ! -e "/lib/systemd/system/$u.service" ] || systemctl disable "$u.service" >/dev/null 2>&1 || true
		[ ! -e "/lib/systemd/system/$u.target" ] || systemctl disable "$u.target" >/dev/null 2>&1 || true
	done
}

build() {   # build DIR [meson options...]
	local dir=$1; shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
	meson compile -C "$dir"
}

summarize() {   # one closing line over meson's JSON test logs
	python3 - "$@" <<'PY'
import json, sys
n = {"OK": 0, "FAIL": 0, "SKIP": 0}
for path in sys.argv[1:]:
    try:
        lines = open(path).readlines()
    except OSError:
        print(f"{path}: missing (its suites did not run)")
        n["FAIL"] += 1
        continue
    for line in lines:
        r = json.loads(line)["result"]
        key = {"OK": "OK", "EXPECTEDFAIL": "OK", "SKIP": "SKIP"}.get(r, "FAIL")
        n[key] += 1
print(f"{n['OK']} passed, {n['FAIL']} failed, {n['SKIP']} skipped")
PY
}

case "${1:-}" in
deps)
	install_pkgs $BUILD_PKGS $TEST_PKGS $VM_PKGS $DEB_PKGS $BENCH_PKGS ;;
build)
	install_pkgs $BUILD_PKGS
	build build ;;
run)
	shift
	install_pkgs $BUILD_PKGS
	build build
	exec ./build/rnfsd -f "$@" ;;
test)
	install_pkgs $BUILD_PKGS $TEST_PKGS $VM_PKGS $DEB_PKGS
	build build
	rm -f build/meson-logs/vm.json build/meson-logs/host.json build-asan/meson-logs/asan.json \
		build-tsan/meson-logs/tsan-tsan.json
	# Two lanes, so the second core works while a qemu guest (TCG, about 1.2 of the 2 cores)
	# runs: the VM suite, one guest at a time, in the foreground; the host suites (unit,
	# integration, fuzz corpora, ceph) at a lower priority beside it, on the plain build,
	# then again on an AddressSanitizer + UndefinedBehaviorSanitizer build, then a
	# ThreadSanitizer build (issue 22: several event loops; meson.build's `tsan` setup runs
	# every daemon with [rnfsd] loops = 4, timeouts x3). That part runs the unit suite (fuzz
	# corpora included) and only the integration tests of suite `threads`, those that drive
	# the daemon's threads (loops, inline calls, callbacks, delegations, copy, GSS, Prometheus,
	# TLS, live exports, the soaks; tests/integration/README.md lists them and why): about
	# 3 min on 2 loaded cores against 5.5 for the whole integration suite, plus 4-5 min of
	# build, and the host lane already ended within 2 min of the VM lane's ~19 min. The
	# host lane's output is printed when both are done.
	host_lane() {
		local r=0
		meson test -C build --no-rebuild --print-errorlogs --num-processes 2 --no-suite vm --logbase host || r=1
		build build-asan -Db_sanitize=address,undefined -Db_lundef=false || return 1
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite vm --logbase asan || r=1
		build build-tsan -Db_sanitize=thread -Db_lundef=false || return 1
		# the log is build-tsan/meson-logs/tsan-tsan.json (meson adds the setup's name)
		meson test -C build-tsan --setup tsan --print-errorlogs --num-processes 2 \
			--suite unit --suite threads --logbase tsan || r=1
		return $r
	}
	host_log=build/meson-logs/host-lane.txt
	mkdir -p build/meson-logs
	( host_lane > "$host_log" 2>&1 ) &
	host_pid=$!
	rc=0
	nice -n -5 meson test -C build --no-rebuild --print-errorlogs --suite vm --logbase vm || rc=1
	wait "$host_pid" || rc=1
	echo "==== host suites (plain, then ASan+UBSan, then TSan), run beside the VM suite ===="
	cat "$host_log"
	summarize build/meson-logs/vm.json build/meson-logs/host.json build-asan/meson-logs/asan.json \
		build-tsan/meson-logs/tsan-tsan.json
	exit $rc ;;
*)
	sed -n '2,6p' "$0" >&2; exit 2 ;;
esac
