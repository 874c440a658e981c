#!/bin/bash
# rdma-verbs.sh - guest scenario: the RPC-over-RDMA verbs shell end to end on
# soft-RoCE (tests/unit/test_rdma_verbs.c): the real transport, RPC layer and
# worker pool against a librdmacm client that checks every byte, including
# malformed headers, Read/Write/Reply chunks, long calls, credit bursts,
# reverse-direction calls (RFC 8167) with a retransmission and a timeout, and
# disconnects in the middle of RDMA Reads and Writes, 32 concurrent 1 MiB calls
# through a 7-slot shared bulk pool, and 100 idle connections (registered
# memory and RSS on the "# idle:" line). The binary sits beside
# the rnfsd being tested (vmarg RNFSD) in the build tree. Booted by
# tests/vm/run-vm.sh; expected check names are in rdma-verbs.checks.

. "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

check_verbs() {
	local VERBS_TEST
	VERBS_TEST=$(dirname "$RNFSD")/transport/test_rdma_verbs  # vmarg RNFSD, set by guest_base
	[ -x "$VERBS_TEST" ] || fail "$VERBS_TEST not built"
	ulimit -l unlimited
	local out=$GUEST_LOGDIR/verbs.out
	timeout 240 "$VERBS_TEST" "$ADDR" > "$out" 2>&1
	local rc=$?
	grep -E "checks|FAIL|burst|reverse|not ok|# idle|# pool" "$out" | sed 's/^/   /'
	[ $rc = 0 ] || { grep -B2 -A2 FAIL "$out" | head -40; fail "test_rdma_verbs exit status $rc"; }
}

guest_base
guest_net rdma
run_check rdma-verbs 300 check_verbs
echo "@@ INFO test_rdma_verbs: $(grep -E 'checks, [0-9]+ failed|smallest grant|reverse|# idle|# pool' "$GUEST_LOGDIR/verbs.out" | tr '\n' ' ')"
guest_end
