#!/bin/bash
# test_rdma_verbs_vm.sh - guest script for /work/shared/vm/vmrun.sh:
# soft-RoCE rxe0, then test_rdma_verbs (the RPC-over-RDMA verbs shell end to
# end) from the build directory given as RDMA_BUILD (default: this worktree's
# build/). Result lines start with @@.
#   VM_WORK=/tmp/vm-rdma /work/shared/vm/vmrun.sh $PWD/tests/unit/test_rdma_verbs_vm.sh 300 /tmp/vm-rdma.log
. /work/shared/vm/guest-lib.sh
guest_base; guest_rxe
ulimit -l unlimited
# Every build directory of this worktree that has the test (build, build-asan, ...).
for B in "$(dirname "$(readlink -f "$0")")"/../../build*/; do
  [ -x "$B/transport/test_rdma_verbs" ] || continue
  echo "@@ == $(basename "$B")"
  timeout 240 "$B/transport/test_rdma_verbs" $ADDR 2>&1 | sed 's/^/@@ /'
  echo "@@ test_rdma_verbs $(basename "$B") exit ${PIPESTATUS[0]}"
done
guest_end
