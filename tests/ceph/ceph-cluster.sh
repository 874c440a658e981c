#!/bin/bash
# ceph-cluster.sh - a throwaway one-node Ceph cluster on 127.0.0.1 for the
# CephFS backend's tests (tests/ceph/README.md):
#   ceph-cluster.sh start DIR    mon, mgr, one memstore osd, mds and a file
#                                system "cephfs" under DIR; prints DIR/ceph.conf
#   ceph-cluster.sh stop DIR     kill exactly the daemons started under DIR, remove DIR
#   ceph-cluster.sh osd-stop DIR / osd-start DIR   (failure tests)
# Everything (config, keys, data, sockets, logs, pid files) lives under DIR;
# cephx keys are generated locally. Settings are the smallest that work (one
# PG per pool, size 1, memstore, debug 0) because the test machine is shared.
# Exit 77 (meson's SKIP) with the reason when Ceph is not installed.
set -euo pipefail

usage() { echo "usage: $0 start|stop|osd-stop|osd-start DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
conf=$dir/ceph.conf

need() {
	local b
	for b in ceph ceph-mon ceph-mgr ceph-osd ceph-mds ceph-authtool monmaptool; do
		command -v "$b" >/dev/null || { echo "ceph-cluster: $b not installed (./dev.sh deps installs it)" >&2; exit 77; }
	done
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

c() { timeout 30 ceph -c "$conf" --connect-timeout 20 "$@"; }

write_conf() {   # PORT FSID
	cat > "$conf" <<EOF
[global]
fsid = $2
mon_host = v2:127.0.0.1:$1
public_addr = 127.0.0.1
ms_bind_msgr1 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
keyring = $dir/keyring
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
pid_file = $dir/run/\$name.pid
log_file = $dir/log/\$name.log
log_to_stderr = false
err_to_stderr = true
crash_dir = $dir/crash
debug_ms = 0
debug_mon = 0
debug_osd = 0
debug_mds = 0
debug_mgr = 0
debug_client = 0
debug_monc = 0
debug_auth = 0
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 1
osd_pool_default_pgp_num = 1
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
osd_crush_chooseleaf_type = 0
mon_data_avail_warn = 1
mon_data_avail_crit = 0
ms_async_op_threads = 1
[client]
# several mounts in one process (two rnfsd instances in one test): no admin socket
admin_socket =
log_file = $dir/log/\$name.\$pid.log
[mon]
mon_data = $dir/mon/\$cluster-\$id
mon_cluster_log_file = $dir/log/cluster.log
mon_osd_down_out_interval = 0
[mgr]
mgr_data = $dir/mgr/\$cluster-\$id
keyring = $dir/mgr/\$cluster-\$id/keyring
mgr_initial_modules =
[osd]
osd_data = $dir/osd/\$cluster-\$id
keyring = $dir/osd/\$cluster-\$id/keyring
osd_objectstore = memstore
memstore_device_bytes = 1073741824
osd_memory_target = 268435456
osd_op_num_shards = 1
osd_op_num_threads_per_shard = 1
osd_heartbeat_grace = 5
[mds]
mds_data = $dir/mds/\$cluster-\$id
keyring = $dir/mds/\$cluster-\$id/keyring
mds_cache_memory_limit = 134217728
EOF
}

wait_for() {   # SECONDS WHAT COMMAND...
	local until=$((SECONDS + $1)) what=$2; shift 2
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $until ] || { echo "ceph-cluster: timed out waiting for $what" >&2; return 1; }
		sleep 0.5
	done
}

mds_active() { c mds stat 2>/dev/null | grep -q 'up:active'; }

# Until the OSD's first report reaches the monitor, the data pool's space is
# 0 and a client's statfs says the file system has 0 bytes free (an NFS
# FSSTAT test saw it once): wait for the pool's max_avail.
data_pool_space() {
	c df -f json 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(p["name"] == "cephfs_data" and p["stats"]["max_avail"] > 0 for p in d["pools"]) else 1)'
}

start_osd() {
	ceph-osd -c "$conf" -i 0 >/dev/null 2>&1
}

start() {
	need
	[ ! -e "$conf" ] || { echo "ceph-cluster: $dir already holds a cluster (stop it first)" >&2; exit 1; }
	mkdir -p "$dir"/{mon/ceph-a,mgr/ceph-x,osd/ceph-0,mds/ceph-a,run,log,crash}
	local port fsid uuid t0=$SECONDS
	port=$(free_port)
	fsid=$(cat /proc/sys/kernel/random/uuid)
	write_conf "$port" "$fsid"
	ceph-authtool -C "$dir/keyring" -g -n mon. --cap mon 'allow *' >/dev/null
	ceph-authtool "$dir/keyring" -g -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
		--cap mds 'allow *' --cap mgr 'allow *' >/dev/null
	monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$dir/monmap" >/dev/null
	ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
	ceph-mon -c "$conf" -i a >/dev/null
	wait_for 30 "the monitor" c mon stat

	uuid=$(cat /proc/sys/kernel/random/uuid)
	c osd new "$uuid" >/dev/null
	ceph-authtool -C "$dir/osd/ceph-0/keyring" -g -n osd.0 >/dev/null
	c auth add osd.0 osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' \
		-i "$dir/osd/ceph-0/keyring" >/dev/null 2>&1
	ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$uuid" >/dev/null 2>&1
	start_osd

	c auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
		-o "$dir/mgr/ceph-x/keyring" >/dev/null 2>&1
	ceph-mgr -c "$conf" -i x >/dev/null

	c auth get-or-create mds.a mon 'allow profile mds' osd 'allow rwx' mds 'allow' mgr 'allow profile mds' \
		-o "$dir/mds/ceph-a/keyring" >/dev/null 2>&1
	ceph-mds -c "$conf" -i a >/dev/null

	local p
	for p in cephfs_metadata cephfs_data; do   # size 1: osd_pool_default_size above
		c osd pool create "$p" 1 1 >/dev/null 2>&1
	done
	c fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1
	wait_for 60 "the MDS to become active" mds_active
	# CEPH_WAIT_SPACE=0: a caller that never asks the file system's free space
	# (the VM's ceph phase, where this takes minutes under emulation).
	[ "${CEPH_WAIT_SPACE:-1}" = 0 ] ||
		wait_for 180 "the data pool's space figures" data_pool_space
	echo "ceph-cluster: up in $((SECONDS - t0)) s ($conf)" >&2
	echo "$conf"
}

# Kills the daemons whose pid files are under DIR (never by name: other clusters may run).
kill_daemons() {   # PIDFILE...
	local f pid pids=
	for f in "$@"; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || continue
		kill "$pid" 2>/dev/null || true
		pids="$pids $pid"
	done
	for pid in $pids; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	done
}

stop() {
	[ -d "$dir" ] || return 0
	kill_daemons "$dir"/run/*.pid
	case "$dir" in /|/tmp|/var/tmp|"") echo "ceph-cluster: refusing to remove $dir" >&2; exit 1 ;; esac
	rm -rf "$dir"
}

case "$cmd" in
start) start ;;
stop) stop ;;
osd-stop) kill_daemons "$dir/run/osd.0.pid" ;;
osd-start) start_osd ;;
*) usage ;;
esac
