# krb5-phase.sh - the krb5 phase of kernel-client.sh (sourced after
# guest-lib.sh): the kernel client against $SERVER (rnfsd or knfsd) with
# RPCSEC_GSS krb5, krb5i and krb5p (issue 25), over the boot's transport.
#
# The guest is its own realm: tests/integration/krb5-realm.sh makes the
# throwaway realm RNFSD.TEST in $KRB5_DIR with krb5kdc on every address
# (port 88; /etc/krb5.conf names $ADDR), then the guest's keys go to
# /etc/krb5.keytab: nfs/$KRB5_FQDN (the server's key, and the client's
# machine credential: rpc.gssd takes nfs/ before host/) and host/$KRB5_FQDN.
# The user krbuser (uid 1234, principal krbuser@RNFSD.TEST) gets its
# tickets with kinit from its own keytab. rpc.gssd serves the client;
# rnfsd reads /etc/krb5.keytab ([rnfsd] keytab, docs/kerberos.md), knfsd gets
# rpc.svcgssd (Debian 12's nfs-kernel-server has no gssproxy) and
# rpc.idmapd. Exports: $EXPORT = /export-krb5 (sec=krb5:krb5i:krb5p, 0777
# so that users' files can be made in it) and /export-sys (sec=sys).
#
# The phase reports "@@ SKIP krb5: why" (run-vm.sh then expects none of its
# checks) only when a prerequisite is missing: a Kerberos or nfs-utils tool,
# or the kernel's rpcsec_gss_krb5 module.

KRB5_REALM=RNFSD.TEST
KRB5_FQDN=vmguest.rnfsd.test
KRB5_DIR=/var/tmp/krb5
KRB5_USER=krbuser
KRB5_UID=1234
KRB5_FLAVORS="krb5 krb5i krb5p"
KRB5_SYS_EXPORT=/export-sys
KRB5_V4ROOT=            # knfsd: its NFSv4 root (fsid=0), which holds both exports
GSSD_LOG=$GUEST_LOGDIR/rpc.gssd.log
SVCGSSD_LOG=$GUEST_LOGDIR/rpc.svcgssd.log

# Why the phase cannot run here, or nothing.
krb5_missing() {
	local t
	for t in kdb5_util kadmin.local krb5kdc kinit kdestroy klist rpc.gssd; do
		command -v "$t" >/dev/null 2>&1 || { echo "no $t (krb5-kdc, krb5-admin-server, krb5-user, nfs-common)"; return; }
	done
	if [ "$SERVER" = knfsd ]; then
		for t in rpc.svcgssd rpc.idmapd; do
			command -v "$t" >/dev/null 2>&1 || { echo "no $t (nfs-kernel-server, nfs-common)"; return; }
		done
	fi
	modprobe -n rpcsec_gss_krb5 2>/dev/null || echo "no rpcsec_gss_krb5 module for kernel $(uname -r)"
}

as_krbuser() { setpriv --reuid=$KRB5_UID --regid=$KRB5_UID --clear-groups -- "$@"; }
krb5_kinit() {
	as_krbuser env KRB5CCNAME=FILE:/tmp/krb5cc_$KRB5_UID kinit -k -t "$KRB5_DIR/user.keytab" "$KRB5_USER@$KRB5_REALM"
}
krb5_kdestroy() { as_krbuser env KRB5CCNAME=FILE:/tmp/krb5cc_$KRB5_UID kdestroy -q 2>/dev/null || true; }

# krb5_mount VERS SEC [EXPORT]: mount $KRB5_FQDN:EXPORT at $MNT over the
# boot's transport (vers=3 with MOUNT over TCP and nolock, as guest-lib.sh).
# A failed mount prints what the kernel said and, for knfsd, its export
# caches (the mount's errno alone does not say which side refused).
krb5_mount() {
	NFS_VERS=$1
	set_transport "$TRANSPORT"
	local path=${3:-$EXPORT}
	# knfsd's NFSv4 paths are relative to its fsid=0 root (run_krb5_phase).
	[ "$1" = 3 ] || path=${path#"$KRB5_V4ROOT"}
	timeout 90 mount -t nfs -o "$MOUNT_OPTS,sec=$2" "$KRB5_FQDN:$path" "$MNT" && return 0
	local rc=$?
	echo "mount -o $MOUNT_OPTS,sec=$2 $KRB5_FQDN:$path failed ($rc); dmesg:"
	dmesg | tail -n 8
	if [ "$SERVER" = knfsd ]; then
		exportfs -v
		grep -v '^#' /proc/net/rpc/nfsd.export/content /proc/net/rpc/nfsd.fh/content 2>/dev/null | tail -n 12
	fi
	return "$rc"
}

krb5_umount() {
	grep -q " $MNT " /proc/mounts || return 0
	umount "$MNT" || { sleep 2; umount "$MNT"; }
}

# The realm, the keys, the user, the name of the guest and the daemons.
check_krb5_realm() {
	local kadm=(kadmin.local -r "$KRB5_REALM" -q)
	grep -q "$KRB5_FQDN" /etc/hosts || echo "$ADDR $KRB5_FQDN vmguest" >> /etc/hosts
	expect_eq "canonical name of the guest" "$KRB5_FQDN" "$(hostname -f)"
	grep -q "^$KRB5_USER:" /etc/passwd ||
		echo "$KRB5_USER:x:$KRB5_UID:$KRB5_UID:krb5 test user:/nonexistent:/bin/sh" >> /etc/passwd
	grep -q "^$KRB5_USER:" /etc/group || echo "$KRB5_USER:x:$KRB5_UID:" >> /etc/group
	rm -rf "$KRB5_DIR" /etc/krb5.keytab
	mkdir -p "$KRB5_DIR"
	sh "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../integration/krb5-realm.sh" \
		"$KRB5_DIR" 88 "$ADDR" rnfsd.test || fail "krb5-realm.sh failed: $(tail -n 3 "$KRB5_DIR/kadmin.log")"
	cp "$KRB5_DIR/krb5.conf" /etc/krb5.conf
	export KRB5_KDC_PROFILE=$KRB5_DIR/kdc.conf
	local p
	for p in "nfs/$KRB5_FQDN" "host/$KRB5_FQDN"; do
		"${kadm[@]}" "addprinc -randkey $p" >> "$KRB5_DIR/kadmin.log" 2>&1 || fail "addprinc $p"
		"${kadm[@]}" "ktadd -k /etc/krb5.keytab $p" >> "$KRB5_DIR/kadmin.log" 2>&1 || fail "ktadd $p"
	done
	"${kadm[@]}" "addprinc -randkey $KRB5_USER" >> "$KRB5_DIR/kadmin.log" 2>&1 || fail "addprinc $KRB5_USER"
	"${kadm[@]}" "ktadd -k $KRB5_DIR/user.keytab $KRB5_USER" >> "$KRB5_DIR/kadmin.log" 2>&1 || fail "ktadd $KRB5_USER"
	chown "$KRB5_UID:$KRB5_UID" "$KRB5_DIR/user.keytab"
	klist -k /etc/krb5.keytab
	klist -k /etc/krb5.keytab | grep -q "nfs/$KRB5_FQDN@$KRB5_REALM" || fail "no nfs/$KRB5_FQDN in /etc/krb5.keytab"
	# The user's first ticket proves the KDC answers on $ADDR:88.
	krb5_kinit || fail "kinit -k $KRB5_USER@$KRB5_REALM (KDC on $ADDR:88) failed"
	krb5_kdestroy
	local m
	for m in sunrpc nfs nfsv3 nfsv4 auth_rpcgss rpcsec_gss_krb5; do
		modprobe "$m" || fail "modprobe $m failed"
	done
	mkdir -p /run/rpc_pipefs
	mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs || fail "cannot mount rpc_pipefs"
	pgrep -x rpc.gssd >/dev/null || { setsid rpc.gssd -f -vvv -p /run/rpc_pipefs >> "$GSSD_LOG" 2>&1 < /dev/null & }
	[ "$SERVER" = knfsd ] && krb5_knfsd_daemons
	sleep 1
	pgrep -x rpc.gssd >/dev/null || fail "rpc.gssd did not start: $(tail -n 2 "$GSSD_LOG")"
}

# knfsd's side: rpc.svcgssd accepts contexts (keys from /etc/krb5.keytab) and
# maps principals through libnfsidmap; rpc.idmapd answers NFSv4 owner names.
krb5_knfsd_daemons() {
	modprobe nfsd
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	pgrep -x rpc.svcgssd >/dev/null || { setsid rpc.svcgssd -f -vvv >> "$SVCGSSD_LOG" 2>&1 < /dev/null & }
	pgrep -x rpc.idmapd >/dev/null || { setsid rpc.idmapd -f -vvv -p /run/rpc_pipefs >> "$GUEST_LOGDIR/rpc.idmapd.log" 2>&1 < /dev/null & }
	sleep 1
	pgrep -x rpc.svcgssd >/dev/null || fail "rpc.svcgssd did not start: $(tail -n 2 "$SVCGSSD_LOG")"
}

check_krb5_server_start() {
	local from=1   # rnfsd's log holds the earlier phases' lines too
	[ -f "$RNFSD_LOG" ] && from=$(($(wc -l < "$RNFSD_LOG") + 1))
	server_start "$SERVER" || fail "$SERVER did not start"
	chmod 0777 "$EXPORT"
	mkdir -p "$EXPORT/rootonly" && chmod 0755 "$EXPORT/rootonly"
	[ "$SERVER" = rnfsd ] || return 0
	! tail -n +"$from" "$RNFSD_LOG" | grep "grace period of" ||
		fail "rnfsd's start holds a grace period: $(tail -n +"$from" "$RNFSD_LOG" | grep -m1 "grace period of")"
	grep -q "RPCSEC_GSS (krb5, krb5i, krb5p) with keytab /etc/krb5.keytab, realm $KRB5_REALM" "$RNFSD_LOG" ||
		fail "rnfsd did not turn RPCSEC_GSS on: $(grep 'RPCSEC_GSS' "$RNFSD_LOG" | tail -n 1)"
}

# The errno name of CMD run as krbuser (python: the exact error), or OK.
krb5_user_errno() {   # OP PATH
	as_krbuser timeout 60 python3 -c '
import errno, os, sys
op, path = sys.argv[1], sys.argv[2]
try:
    if op == "create":
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    else:
        os.listdir(path)
    print("OK")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))' "$@"
}

# Without a ticket the user is refused (rpc.gssd finds no credential):
# EACCES or EKEYEXPIRED, on a fresh mount (no context cached in the kernel).
krb5_refused_without_ticket() {   # VERS
	local got
	krb5_mount "$1" krb5 || fail "vers=$1 sec=krb5 mount failed"
	got=$(krb5_user_errno create "$MNT/no-ticket-$1") || got="no answer (exit status $?)"
	krb5_umount
	case $got in
	EACCES|EKEYEXPIRED) echo "vers=$1: create without a ticket: $got";;
	*) fail "vers=$1: create without a ticket: expected EACCES or EKEYEXPIRED, got $got";;
	esac
	[ ! -e "$EXPORT/no-ticket-$1" ] || fail "vers=$1: the file was made on the server without a ticket"
}

check_krb5_no_ticket() {
	krb5_kdestroy
	krb5_refused_without_ticket 3
	krb5_refused_without_ticket 4.2
}

# kinit from the user's keytab: what the user makes is its own (uid and
# group 1234 on the server's disk, and as the client sees it).
check_krb5_user_ticket() {
	krb5_kinit || fail "kinit -k $KRB5_USER failed"
	local v f
	for v in 3 4.2; do
		f=$MNT/by-user-$v
		krb5_mount "$v" krb5 || fail "vers=$v sec=krb5 mount failed"
		as_krbuser sh -c "echo hello > $f" || fail "vers=$v: $KRB5_USER with a ticket cannot create a file"
		expect_eq "vers=$v: owner on the server" "$KRB5_UID:$KRB5_UID" "$(stat -c %u:%g "$EXPORT/by-user-$v")"
		expect_eq "vers=$v: owner as the client sees it" "$KRB5_UID" "$(stat -c %u "$f")"
		krb5_umount
	done
}

# One flavor x version: mount, the user's workload (4 MiB written with fsync,
# read back after drop_caches, buffered and O_DIRECT, checksums against the
# server's disk; a small tree made, listed, renamed and removed; symlink,
# chmod), the flavor in /proc/mounts, umount.
check_krb5_combo() {   # VERS SEC
	local v=$1 sec=$2 d want line
	d=u-$v-$sec
	[ -s "$SCRATCH/krb5src" ] || head -c 4M /dev/urandom > "$SCRATCH/krb5src"
	chmod 0644 "$SCRATCH/krb5src"
	want=$(sha_of "$SCRATCH/krb5src")
	krb5_mount "$v" "$sec" || fail "mount vers=$v,sec=$sec failed"
	line=$(grep " $MNT nfs" /proc/mounts)
	echo "$line"
	case $line in *sec=$sec,*|*sec=$sec" "*) ;; *) fail "/proc/mounts: no sec=$sec: $line";; esac
	case $line in *proto=$TRANSPORT,*) ;; *) fail "/proc/mounts: no proto=$TRANSPORT: $line";; esac
	as_krbuser mkdir "$MNT/$d" || fail "mkdir as $KRB5_USER failed"
	as_krbuser dd if="$SCRATCH/krb5src" of="$MNT/$d/data" bs=1M conv=fsync status=none ||
		fail "4 MiB write as $KRB5_USER failed"
	expect_eq "server-side sha256" "$want" "$(sha_of "$EXPORT/$d/data")"
	expect_eq "server-side owner" "$KRB5_UID:$KRB5_UID" "$(stat -c %u:%g "$EXPORT/$d/data")"
	drop_caches
	expect_eq "sha256 read back after drop_caches" "$want" "$(as_krbuser sha256sum "$MNT/$d/data" | cut -d' ' -f1)"
	expect_eq "sha256 of an O_DIRECT read" "$want" \
		"$(as_krbuser dd if="$MNT/$d/data" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1)"
	as_krbuser sh -c "cd $MNT/$d && mkdir t && for i in \$(seq 20); do echo f\$i > t/f\$i; done &&
		mv t t2 && ln -s t2/f1 link && chmod 0600 t2/f2" || fail "namespace operations as $KRB5_USER failed"
	expect_eq "files listed" 20 "$(as_krbuser ls "$MNT/$d/t2" | wc -l)"
	expect_eq "read through the symlink" f1 "$(as_krbuser cat "$MNT/$d/link")"
	expect_eq "mode on the server" 600 "$(stat -c %a "$EXPORT/$d/t2/f2")"
	as_krbuser rm -rf "$MNT/$d" || fail "rm -rf as $KRB5_USER failed"
	[ ! -e "$EXPORT/$d" ] || fail "$d still on the server"
	krb5_umount || fail "umount failed"
}

# kdestroy: a fresh mount refuses the user again (EACCES or EKEYEXPIRED).
check_krb5_kdestroy() {
	krb5_kdestroy
	krb5_refused_without_ticket 3
	krb5_refused_without_ticket 4.2
}

# Root's calls go with the machine credential (nfs/$KRB5_FQDN, from the
# keytab), which both servers map to nobody by default: root's file in the
# 0777 export root belongs to 65534, and root may not create in the server
# root's 0755 directory. rnfsd with gss-host-root = yes maps it to root.
krb5_root_as() {   # VERS EXPECTED_UID
	krb5_mount "$1" krb5 || fail "vers=$1 sec=krb5 mount as root failed"
	rm -f "$EXPORT/by-root-$1"
	echo root > "$MNT/by-root-$1" || fail "vers=$1: root cannot create in the 0777 export root"
	expect_eq "vers=$1: owner of root's file on the server" "$2:$2" "$(stat -c %u:%g "$EXPORT/by-root-$1")"
	if [ "$2" = 0 ]; then
		echo x > "$MNT/rootonly/r-$1" || fail "vers=$1: root (mapped to 0) cannot create in rootonly/"
	elif echo x > "$MNT/rootonly/r-$1" 2>/dev/null; then
		fail "vers=$1: root (mapped to $2) created a file in the server root's 0755 directory"
	fi
	krb5_umount
	echo "vers=$1: root acts as uid $2 on the server"
}

check_krb5_root() {
	krb5_root_as 3 65534
	krb5_root_as 4.2 65534
	[ "$SERVER" = rnfsd ] || return 0
	server_stop || fail "rnfsd did not stop"
	rm -f /var/lib/rnfsd/nfs4-clients   # no NFSv4 grace period at the restart
	RNFSD_EXTRA="keytab = /etc/krb5.keytab
gss-host-root = yes"
	server_start rnfsd || fail "rnfsd with gss-host-root = yes did not start"
	krb5_root_as 3 0
	krb5_root_as 4.2 0
	server_stop || fail "rnfsd did not stop"
	rm -f /var/lib/rnfsd/nfs4-clients
	RNFSD_EXTRA="keytab = /etc/krb5.keytab"
	server_start rnfsd || fail "rnfsd did not start again"
}

# A mount that must fail: VERS SEC EXPORT.
krb5_mount_refused() {
	if krb5_mount "$1" "$2" "$3" 2> "$SCRATCH/mount.err"; then
		krb5_umount
		fail "vers=$1,sec=$2 of $3 was mounted; the export does not allow $2"
	fi
	echo "vers=$1,sec=$2 of $3 refused: $(tail -n 1 "$SCRATCH/mount.err")"
}

# The sec=sys export refuses krb5 (mount fails) and serves sys; the krb5
# export refuses sys, for each version.
check_krb5_sys_export() {
	local v
	for v in 3 4.1 4.2; do
		krb5_mount_refused "$v" krb5 "$KRB5_SYS_EXPORT"
		krb5_mount "$v" sys "$KRB5_SYS_EXPORT" || fail "vers=$v,sec=sys of the sys export failed"
		echo ok > "$MNT/sys-$v" || fail "vers=$v: root cannot write the sys export"
		krb5_umount
	done
}

check_krb5_krb5_export() {
	local v
	for v in 3 4.1 4.2; do
		krb5_mount_refused "$v" sys "$EXPORT"
	done
}

# Each check unmounts what it mounted: nothing is left for a final umount.
check_krb5_server_alive() {
	server_alive || fail "$SERVER is no longer running: $(tail -n 1 "$RNFSD_LOG" 2>/dev/null)"
	! grep -q " $MNT " /proc/mounts || krb5_umount || fail "umount of a mount a check left failed"
}

krb5_dump_daemons() {
	echo "--- rpc.gssd log (last 60 lines)"; tail -n 60 "$GSSD_LOG" 2>/dev/null
	[ "$SERVER" = knfsd ] || return 0
	echo "--- rpc.svcgssd log (last 60 lines)"; tail -n 60 "$SVCGSSD_LOG" 2>/dev/null
}

# The phase: vers=3, 4.1, 4.2 x krb5, krb5i, krb5p over $TRANSPORT.
run_krb5_phase() {
	local p=krb5- why v sec vn
	why=$(krb5_missing)
	if [ -n "$why" ]; then
		echo "@@ SKIP krb5: $why"
		return 0
	fi
	if server_alive; then server_stop || true; fi
	grep -q " $MNT " /proc/mounts && umount -f "$MNT"
	# No NFSv4 grace period at the start: a client an earlier phase left recorded
	# (NFSv4.0 has no DESTROY_CLIENTID at umount) would make rnfsd hold the first
	# OPEN for the default 90 s (krb5-user-ticket took 89 s after v40,v42 in one
	# boot, 2.4 s alone). krb5-server-start fails if a grace period is logged.
	rm -f /var/lib/rnfsd/nfs4-clients
	# knfsd's NFSv4 pseudo root would be the guest's / (9p under an overlay), which
	# it cannot export ("exp_export: export of invalid fs type": every NFSv4 mount
	# failed with ENOENT): it gets a tmpfs root with fsid=0 holding both exports.
	KRB5_V4ROOT=
	[ "$SERVER" = knfsd ] && KRB5_V4ROOT=/krb5root
	EXPORT=$KRB5_V4ROOT/export-krb5 EXPORTS_BUILTIN=0 ROOT_SQUASH=0 EXPORT_XATTR=
	KRB5_SYS_EXPORT=$KRB5_V4ROOT/export-sys
	EXPORT_LINE_OPTS="rw,no_root_squash,insecure,no_subtree_check,sec=krb5:krb5i:krb5p,fsid=11"
	EXPORTS_EXTRA="$KRB5_SYS_EXPORT *(rw,no_root_squash,insecure,no_subtree_check,sec=sys,fsid=12)"
	if [ -n "$KRB5_V4ROOT" ]; then
		EXPORT=$KRB5_V4ROOT guest_export
		EXPORTS_EXTRA="$EXPORTS_EXTRA
$KRB5_V4ROOT *(ro,insecure,no_subtree_check,sec=sys:krb5:krb5i:krb5p,fsid=0)"
	fi
	RNFSD_EXTRA="keytab = /etc/krb5.keytab"
	RNFSD_CONF_EXTRA=
	guest_export
	EXPORT=$KRB5_SYS_EXPORT guest_export
	chmod 0777 "$KRB5_SYS_EXPORT"
	echo "@@ INFO phase krb5: server=$SERVER transport=$TRANSPORT export=$EXPORT (sec=krb5:krb5i:krb5p)" \
		"and $KRB5_SYS_EXPORT (sec=sys)"
	run_check "${p}realm" 120 check_krb5_realm || { krb5_dump_daemons; return 0; }
	run_check "${p}server-start" 60 check_krb5_server_start || { krb5_dump_daemons; return 0; }
	run_check "${p}no-ticket" 240 check_krb5_no_ticket
	run_check "${p}user-ticket" 180 check_krb5_user_ticket
	for v in 3 4.1 4.2; do
		vn=v${v/./}
		for sec in $KRB5_FLAVORS; do
			run_check "${p}$vn-$sec" 300 check_krb5_combo "$v" "$sec"
		done
	done
	run_check "${p}kdestroy" 240 check_krb5_kdestroy
	run_check "${p}root" 240 check_krb5_root
	run_check "${p}sys-export" 300 check_krb5_sys_export
	run_check "${p}krb5-export" 300 check_krb5_krb5_export
	[ "$GUEST_FAILED" = 0 ] || krb5_dump_daemons
	[ "$SERVER" = rnfsd ] && rnfsd_stats
	run_check "${p}server-alive" 60 check_krb5_server_alive
	run_check "${p}server-stop" 30 check_server_stop
	krb5_umount
	EXPORTS_EXTRA= RNFSD_EXTRA=
}
