# bench-host.sh - host-side helpers of bench/, sourced by run-bench.sh and
# microbench.sh.
#
#   bench_install_packages PKG...   installs what is missing (Debian 12's
#       apt-get, quiet); package scripts are kept from starting daemons
#       (policy-rc.d, as dev.sh does) and nfs-ganesha's units are disabled
#       afterwards, so the bench never leaves ganesha running or enabled on
#       the host. Returns 77 with BENCH_SKIP_REASON when it cannot.
#   bench_ganesha_units_off         disables nfs-ganesha's systemd units.
#   bench_ganesha_rdma_support      prints "yes", or "no: why".

BENCH_SKIP_REASON=

bench_missing_packages() {
	local p missing=
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] ||
			missing="$missing $p"
	done
	echo $missing
}

bench_ganesha_units_off() {
	local u
	for u in nfs-ganesha.service nfs-ganesha-lock.service nfs-ganesha-config.service; do
		[ -e "/lib/systemd/system/$u" ] || continue
		systemctl disable "$u" >/dev/null 2>&1 || true
	done
}

bench_install_packages() {
	local missing log prc=
	missing=$(bench_missing_packages "$@")
	if [ -z "$missing" ]; then
		bench_ganesha_units_off
		return 0
	fi
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		BENCH_SKIP_REASON="missing packages ($missing) and cannot install them (need root and apt-get)"
		return 77
	fi
	log=$(mktemp /var/tmp/rnfsd-bench-apt.XXXXXX)
	echo "bench: installing:$missing (log $log)" >&2
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		prc=1
	fi
	{ apt-get update -qq &&
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; } > "$log" 2>&1 ||
		tail -n 20 "$log" >&2
	[ -z "$prc" ] || rm -f /usr/sbin/policy-rc.d
	bench_ganesha_units_off
	missing=$(bench_missing_packages "$@")
	if [ -n "$missing" ]; then
		BENCH_SKIP_REASON="packages still missing after apt-get install:$missing (see $log)"
		return 77
	fi
	rm -f "$log"
	return 0
}

# Debian 12's ganesha 4.3: RPC-over-RDMA needs libntirpc built with
# USE_RPC_RDMA (linked to rdma-core) and ganesha built with _USE_NFS_RDMA
# (which adds the "rpcrdma" token to NFS_CORE_PARAM's Protocols).
bench_ganesha_rdma_support() {
	local ntirpc lib
	ntirpc=$(ls /lib/x86_64-linux-gnu/libntirpc.so.* /usr/lib/x86_64-linux-gnu/libntirpc.so.* 2>/dev/null | head -n 1)
	lib=$(ls /usr/lib/ganesha/libganesha_nfsd.so.* 2>/dev/null | head -n 1)
	if [ -z "$ntirpc" ] || [ -z "$lib" ]; then
		echo "no: nfs-ganesha is not installed"
	elif ! ldd "$ntirpc" 2>/dev/null | grep -q librdmacm; then
		echo "no: Debian's libntirpc is built without RPC-over-RDMA (not linked to librdmacm)"
	elif ! grep -qa rpcrdma "$lib"; then
		echo "no: Debian's nfs-ganesha is built without _USE_NFS_RDMA"
	else
		echo yes
	fi
}
