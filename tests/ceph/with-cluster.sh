#!/bin/bash
# with-cluster.sh - run one test command against a throwaway Ceph cluster
# (ceph-cluster.sh), torn down when the command ends, also on failure or a
# signal (meson's timeout). The command gets in its environment:
#   RNFSD_CEPH_CONF    the cluster's ceph.conf (client.admin's key in RNFSD_CEPH_DIR/keyring)
#   RNFSD_CEPH_DIR     the cluster's directory
#   RNFSD_CEPH_SCRIPT  ceph-cluster.sh (osd-stop / osd-start for failure tests)
# With --fuse, CephFS's directory $RNFSD_CEPH_DIR/fs is also mounted with
# ceph-fuse at the same local path and TMPDIR points there, so a test that
# makes its files locally under TMPDIR makes them in CephFS at the very path
# it then exports with fs=ceph (the integration harness's HX_CEPH mode).
# Exit 77 (skip) when the cluster cannot be started for want of Ceph.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
fuse=
[ "${1:-}" = --fuse ] && { fuse=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--fuse] COMMAND [ARGS...]" >&2; exit 2; }
dir=$(mktemp -d /var/tmp/rnfsd-ceph-XXXXXX)
rmdir "$dir"
mnt=

cleanup() {
	local m
	# lazily (a mount whose OSD is gone would hold a plain umount); ceph-fuse
	# wrote its pid file under $dir/run, so the cluster's stop kills it too
	for m in "$dir/top" "$dir/fs"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount -l "$m" 2>/dev/null || true
		fi
	done
	"$here/ceph-cluster.sh" stop "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

"$here/ceph-cluster.sh" start "$dir" >/dev/null
rc=$?
conf=$dir/ceph.conf
[ $rc -eq 0 ] || { [ $rc -eq 77 ] && exit 77; echo "with-cluster: the cluster did not start" >&2; exit 1; }
export RNFSD_CEPH_CONF=$conf RNFSD_CEPH_DIR=$dir RNFSD_CEPH_SCRIPT=$here/ceph-cluster.sh

if [ -n "$fuse" ]; then
	command -v ceph-fuse >/dev/null || { echo "with-cluster: ceph-fuse not installed" >&2; exit 77; }
	[ -e /dev/fuse ] || { echo "with-cluster: no /dev/fuse" >&2; exit 77; }
	mnt=$dir/fs
	top=$dir/top
	mkdir -p "$mnt" "$top"
	# ceph-fuse MOUNTPOINT ARGS...: up to 3 tries (a fresh cluster's first
	# mount failed once in a few dozen runs), its output shown if all fail
	fuse_mount() {
		local at=$1 try out
		shift
		for try in 1 2 3; do
			out=$(timeout 60 ceph-fuse -c "$conf" "$@" "$at" 2>&1) && return 0
			mountpoint -q "$at" && umount -l "$at"
			sleep 2
		done
		echo "with-cluster: ceph-fuse $* $at failed 3 times: $out" >&2
		return 1
	}
	# the path $mnt inside CephFS, made through a first mount of the root
	fuse_mount "$top" || exit 1
	mkdir -p "$top$mnt"
	chmod 1777 "$top$mnt"
	umount "$top"
	rmdir "$top"
	# no kernel page cache: the local view reads what rnfsd wrote through its own mount
	fuse_mount "$mnt" --fuse_disable_pagecache=true -r "$mnt" || exit 1
	export TMPDIR=$mnt HX_CEPH=$conf
fi
"$@"
