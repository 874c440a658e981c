#!/bin/bash
# vm-rdma-requester.sh SERVER REQUESTER [RNFSD] - host side of the vm-suite
# test rdma-requester-SERVER. Boots the qemu soft-RoCE
# guest with guest-rdma-requester.sh, which runs rdma_requester against
# SERVER (knfsd: the reference, judged with its known deviations from
# knfsd-deviations.txt; rnfsd: every verdict must pass).
# Exit: 0 pass, 1 fail, 77 skip (with the reason on stdout).
#
# Harness: $RT_VMRUN / $RT_GUEST_LIB if set, else the project's tests/vm
# harness (tests/vm). VM work dir: $RT_VM_WORK or
# /tmp/vmw-rdmatest-$SERVER (initramfs, console.log).
set -u
server=${1:?server}; requester=${2:?requester}; rnfsd=${3:-}
here=$(dirname "$(readlink -f "$0")")
src=$(readlink -f "$here/../..")
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "the VM suite needs root (qemu, 9p root filesystem)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (./dev.sh deps)"
ls /lib/modules 2>/dev/null | grep -qE '^6\.1\..*-amd64$' || skip "no Debian 6.1 kernel modules (linux-image-amd64)"
[ -x "$requester" ] || skip "rdma_requester not built"

vmrun=${RT_VMRUN:-}; glib=${RT_GUEST_LIB:-}
if [ -z "$vmrun" ]; then
	vmrun=$src/tests/vm/vmrun.sh; glib=$src/tests/vm/guest-lib.sh
fi
[ -x "$vmrun" ] && [ -f "$glib" ] || skip "no VM harness (looked for tests/vm/vmrun.sh and $vmrun)"

xfail=
case "$server" in
knfsd)
	command -v rpc.nfsd >/dev/null || skip "nfs-kernel-server not installed (./dev.sh deps)"
	# Known deviations of the 6.1 knfsd from the RFCs: "name  # reason" lines.
	xfail=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/knfsd-deviations.txt" | awk '{print $1}' | paste -sd, -)
	;;
rnfsd)
	[ -x "$rnfsd" ] || skip "rnfsd not built"
	# An RDMA transport must at least listen with librdmacm.
	nm -D "$(readlink -f "$rnfsd")" 2>/dev/null | grep -qw rdma_listen || [ -n "${RT_FORCE_RNFSD:-}" ] ||
		skip "rnfsd has no RPC-over-RDMA listener yet (it does not import rdma_listen)"
	;;
*)
	echo "unknown server $server"; exit 2 ;;
esac

work=${RT_VM_WORK:-/tmp/vmw-rdmatest-$server}
mkdir -p "$work"
# The guest mounts fresh tmpfs on /tmp and /run: what it runs is staged in a
# private directory under /var/tmp (the host's, seen through 9p), removed after.
stage=$(mktemp -d /var/tmp/rnfsd-rdmatest.XXXXXX) || { echo "FAIL: cannot stage in /var/tmp"; exit 1; }
trap 'rm -rf "$stage"' EXIT
cp "$requester" "$stage/rdma_requester"
[ -n "$rnfsd" ] && cp "$rnfsd" "$stage/rnfsd"
cp "$here/guest-rdma-requester.sh" "$glib" "$stage/"
launcher=$stage/guest-launch.sh
cat > "$launcher" <<EOF
#!/bin/bash
export RT_SERVER='$server' RT_REQUESTER='$stage/rdma_requester' RT_RNFSD='$stage/rnfsd'
export RT_GUEST_LIB='$stage/$(basename "$glib")' RT_XFAIL='$xfail' RT_ONLY='${RT_ONLY:-}' RT_VERBOSE='${RT_VERBOSE:-}'
exec '$stage/guest-rdma-requester.sh'
EOF
chmod +x "$launcher"

log=$work/console.log
echo "booting the guest ($vmrun), console in $log"
VM_WORK=$work "$vmrun" "$launcher" "${RT_VM_TIMEOUT:-840}" "$log"
rc=$?
grep '^@@ ' "$log"

# Verdicts: no FAIL/XPASS, the requester ran to its summary, the guest finished.
grep -q '^@@ RXE OK' "$log" || { echo "FAIL: soft-RoCE did not come up in the guest (vmrun exit $rc)"; exit 1; }
grep -q '^@@ FAIL rnfsd_start' "$log" && { echo "FAIL: rnfsd did not start"; exit 1; }
grep -q '^@@ SUMMARY' "$log" || { echo "FAIL: the requester did not finish (vmrun exit $rc; timeout?)"; exit 1; }
grep -q '^@@ DONE' "$log" || { echo "FAIL: the guest did not finish cleanly (vmrun exit $rc)"; exit 1; }
if grep -qE '^@@ (FAIL|XPASS) ' "$log"; then
	echo "FAIL: $(grep -cE '^@@ (FAIL|XPASS) ' "$log") verdict(s) failed against $server"
	exit 1
fi
echo "PASS: $(grep -c '^@@ PASS ' "$log") verdicts passed against $server"
exit 0
