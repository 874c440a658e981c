#!/bin/bash
# vm-systemd.sh BUILDDIR SRCDIR [TIMEOUT_S] [SCENARIO]
# rnfsd.service under the real systemd: boots the qemu guest of the VM suite
# (tests/vm/vm-host.sh) with systemd as PID 1 and only
# rnfsd-vmcheck.service as its goal (vm-systemd-guest.sh), which runs
# vm-SCENARIO-check.sh. Every name in vm-SCENARIO.checks must PASS (other
# checks the guest prints are reported only). SCENARIO:
#   systemd (default)  this build's unit and binaries;
#   deb                the Debian packages, built first under BUILDDIR/deb by
#                      deb-build.sh (lintian included), installed, started,
#                      mounted, upgraded and purged in the guest.
# Exit 0 / 1, or 77 when the VM cannot run here (see vm-host.sh).
set -u
BUILD=$(readlink -f "$1") SRC=$(readlink -f "$2") TIMEOUT=${3:-900} SCENARIO=${4:-systemd}
HERE=$SRC/tests/ops
[ -f "$SRC/tests/vm/vm-host.sh" ] || { echo "SKIP: tests/vm/vm-host.sh not in the tree"; exit 77; }
. "$SRC/tests/vm/vm-host.sh"
vm_require_host || { echo "SKIP: $VM_SKIP_REASON"; exit 77; }
[ -x /lib/systemd/systemd ] || { echo "SKIP: no /lib/systemd/systemd"; exit 77; }

if [ "$SCENARIO" = deb ]; then
	"$HERE/deb-build.sh" "$BUILD/deb" "$SRC"
	rc=$?
	[ $rc -eq 0 ] || exit $rc
fi
WORK=$BUILD/vm-ops
mkdir -p "$WORK"
vm_initramfs "$WORK" || { echo "FAIL: no initramfs"; exit 1; }
LOG=$WORK/console-$SCENARIO.log
# Under systemd the guest's /tmp is not the host's, and rnfsd.service has
# PrivateTmp=yes (a private /tmp and /var/tmp): a tree under /tmp (a CI
# clone, say) is staged under /var/lib, which the guest and the unit see as
# it is, and the unit's paths are rewritten (likewise a tree under /var/tmp).
GBUILD=$BUILD GSRC=$SRC STAGE=
case "$BUILD:$SRC" in
/tmp/*|*:/tmp/*|/var/tmp/*|*:/var/tmp/*)
	STAGE=$(mktemp -d /var/lib/rnfsd-ops-vm.XXXXXX)
	trap 'rm -rf "$STAGE"' EXIT
	mkdir "$STAGE/src" && tar -C "$SRC" --exclude='./build*' -cf - . | tar -C "$STAGE/src" -xf - &&
		cp -a "$BUILD" "$STAGE/build" || { echo "FAIL: could not stage the tree under $STAGE"; exit 1; }
	GBUILD=$STAGE/build GSRC=$STAGE/src
	;;
esac
vm_boot "$LOG" "$TIMEOUT" "$HERE/vm-systemd-guest.sh" "build=$GBUILD" "src=$GSRC" "origbuild=$BUILD" "scenario=$SCENARIO"
rc=$?
grep '^@@' "$LOG"
[ $rc -eq 124 ] && echo "FAIL: guest timed out after ${TIMEOUT}s"
missing=0
while read -r name; do
	case $name in ''|'#'*) continue;; esac
	grep -qx "@@ PASS $name" "$LOG" || { echo "missing PASS: $name"; missing=$((missing + 1)); }
done < "$HERE/vm-$SCENARIO.checks"
if [ $missing -ne 0 ] || ! grep -qx '@@ DONE' "$LOG"; then
	echo "---- console (last 80 lines) ----"; tail -n 80 "$LOG"
	echo "FAIL: $missing expected checks did not pass"
	exit 1
fi
echo "all $(grep -cv '^#' "$HERE/vm-$SCENARIO.checks") required checks passed ($(grep -c '^@@ FAIL' "$LOG") not required failed)"
