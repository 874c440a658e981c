# vm-check-lib.sh - sourced by the guest's check scripts (vm-systemd-check.sh,
# vm-deb-check.sh): one "@@ PASS name" / "@@ FAIL name: detail" line per
# check, each followed by the guest's uptime, for vm-systemd.sh to collect.
up() { cut -d' ' -f1 /proc/uptime; }
pass() { echo "@@ PASS $1"; echo "@@ t=$(up)s"; }
fail() { echo "@@ FAIL $1: $2"; echo "@@ t=$(up)s"; }
check() { # check NAME COMMAND... : PASS if the command succeeds
	name=$1; shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"; fi
}
