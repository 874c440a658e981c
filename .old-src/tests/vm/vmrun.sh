#!/bin/bash
# vmrun.sh GUEST_SCRIPT [TIMEOUT_S] [LOG] - the project's own copy of the test
# bed's plain boot command, with the interface of the original
# shared/vm/vmrun.sh so that other suites' guest scripts run unchanged:
# boots the guest with GUEST_SCRIPT as PID 1 (the script sources
# tests/vm/guest-lib.sh itself), console (CR stripped) to LOG (default
# $VM_WORK/console.log), initramfs cached in $VM_WORK (default /tmp/vm-work).
# Exit: qemu's status, 124 when the guest was killed after TIMEOUT_S,
# 77 when the VM cannot run here (reason on stderr).
set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/vm-host.sh"
[ $# -ge 1 ] || { echo "usage: vmrun.sh GUEST_SCRIPT [TIMEOUT_S] [LOG]" >&2; exit 2; }
GUEST=$(readlink -f "$1")
TIMEOUT=${2:-900}
W=${VM_WORK:-/tmp/vm-work}
LOG=${3:-$W/console.log}
mkdir -p "$W"
vm_require_host || { echo "vmrun: cannot run the VM here: $VM_SKIP_REASON" >&2; exit 77; }
vm_initramfs "$W" || { echo "vmrun: could not build the initramfs" >&2; exit 2; }
vm_boot "$LOG" "$TIMEOUT" "$GUEST" "DEADLINE=$((TIMEOUT - 25))"
