#!/bin/sh
# vm-systemd-guest.sh - PID 1 of a qemu guest (see vm-systemd.sh):
# boots the real systemd with only rnfsd-vmcheck.service as its goal. That
# unit (vm-systemd-check.sh) starts rnfsd.service - this build's unit file,
# hardening and all - and checks Type=notify, reload, stats and clients.
# With vmarg_scenario=deb it runs vm-deb-check.sh instead, and the unit comes
# from the package that script installs.
# Arguments come on the kernel command line: vmarg_build=DIR vmarg_src=DIR.
mount -t proc proc /proc 2>/dev/null
for a in $(cat /proc/cmdline); do
	case $a in
	vmarg_build=*) BUILD=${a#vmarg_build=} ;;
	vmarg_src=*) SRC=${a#vmarg_src=} ;;
	vmarg_origbuild=*) ORIGBUILD=${a#vmarg_origbuild=} ;;
	vmarg_scenario=*) SCENARIO=${a#vmarg_scenario=} ;;
	esac
done
echo "@@ GUEST UP build=$BUILD src=$SRC"

SCENARIO=${SCENARIO:-systemd}
# The unit under test: ExecStart points to this build's rnfsd.
mkdir -p /etc/systemd/system
if [ "$SCENARIO" = systemd ]; then
	mkdir -p /etc/rnfsd
	# (the build dir may have been staged elsewhere: vm-systemd.sh)
	sed "s|${ORIGBUILD:-$BUILD}|$BUILD|g" "$BUILD/systemd/rnfsd-verify.service" > /etc/systemd/system/rnfsd.service
fi
cat > /etc/systemd/system/rnfsd-vmcheck.service <<EOF
[Unit]
Description=rnfsd checks under systemd
After=basic.target
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
Environment=BUILD=$BUILD SRC=$SRC
ExecStart=/bin/sh $SRC/tests/ops/vm-$SCENARIO-check.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=900
EOF
# Emulated boot is slow: mask what this machine has no use for (udev: the
# kernel's devtmpfs already has /dev/infiniband; timers, time sync, getty;
# networkd's wait-online, which waits 2 minutes for links networkd does not
# manage here).
for u in systemd-udevd.service systemd-udev-trigger.service systemd-udev-settle.service \
	 systemd-udevd-control.socket systemd-udevd-kernel.socket timers.target \
	 systemd-timesyncd.service systemd-pstore.service systemd-random-seed.service \
	 e2scrub_reap.service getty.target systemd-journal-catalog-update.service \
	 systemd-update-utmp.service ldconfig.service \
	 systemd-networkd-wait-online.service; do
	ln -sf /dev/null /etc/systemd/system/$u
done
# Keep the console for our lines; a fresh machine id for journald.
rm -f /etc/machine-id
# The guest's / is the host's, and the host may be a container: its /.dockerenv made systemd say
# "Detected virtualization docker" and leave / private, as it does in containers (mount-setup). A
# machine's systemd makes / shared, so a unit's mount namespace (ProtectSystem=, PrivateTmp=) sees the
# admin's later umounts; with / private rnfsd.service kept copies of the test's NFS mounts of itself and
# hung at exit in their DESTROY_SESSION (the package test's stop hang). This guest is a machine.
rm -f /.dockerenv /run/.containerenv
# A machine boots with an empty /tmp. The guest's /tmp is the host's (through the overlay), and
# systemd-tmpfiles' "D /tmp" empties it at boot: a walk of every CI tree and test directory there,
# over 9p (55 s unloaded; a loaded run's package guest printed nothing for 12 min). A tmpfs of its
# own instead (vm-systemd.sh stages a build or source tree under /tmp in /var/lib first).
mount -t tmpfs -o mode=1777,size=512m tmpfs /tmp
umount /proc
exec /lib/systemd/systemd --unit=rnfsd-vmcheck.service --show-status=false
