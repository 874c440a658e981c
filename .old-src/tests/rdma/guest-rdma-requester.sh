#!/bin/bash
# guest-rdma-requester.sh - runs as PID 1 inside the qemu soft-RoCE guest
# (booted by tests/rdma/vm-rdma-requester.sh): brings up rxe0 on 192.0.2.1,
# starts one server, creates the test files in its export and runs
# rdma_requester against 192.0.2.1:20049. Results are the "@@ " lines on the
# console.
#
# Environment (set by the host-side wrapper's generated launcher):
#   RT_SERVER     knfsd | rnfsd
#   RT_REQUESTER  path of the rdma_requester binary
#   RT_RNFSD      path of the rnfsd binary (RT_SERVER=rnfsd)
#   RT_GUEST_LIB  path of guest-lib.sh (the VM harness's helpers)
#   RT_XFAIL      verdicts expected to fail with this server (known deviations)
#   RT_ONLY       optional: scenarios to run (comma list)
#   RT_VERBOSE    optional: non-empty prints every received message
set -u
. "$RT_GUEST_LIB"
guest_base
guest_rxe

make_files() {   # the files rdma_requester expects, in export dir $1
	local ex=$1 i
	"$RT_REQUESTER" --make-pattern "$ex/rdmatest.dat" 2097152 || echo "@@ FAIL setup: pattern file"
	head -c 12582912 /dev/zero > "$ex/rdmatest.wr"
	mkdir -p "$ex/rdmatest.dir"
	for i in $(seq 1 200); do
		: > "$ex/rdmatest.dir/entry-$(printf %04d "$i")-with-a-rather-long-name-for-size"
	done
	chmod -R a+rwX "$ex"
}

start_rnfsd() {  # rnfsd serving $1 over RDMA and TCP, in the foreground as a child
	local ex=$1 conf=/run/rnfsd-test
	mkdir -p "$ex" "$conf/state"
	echo "$ex *(rw,no_root_squash,insecure)" > "$conf/exports"
	cat > "$conf/rnfsd.conf" <<-EOF
	[rnfsd]
	exports = $conf/exports
	state-dir = $conf/state
	stats-socket = $conf/rnfsd.sock
	[rdma]
	enable = yes
	listen = $ADDR:20049
	EOF
	"$RT_RNFSD" --check-config -c "$conf/rnfsd.conf" 2>&1 | sed 's/^/@@ INFO rnfsd --check-config: /'
	rpcbind -w
	"$RT_RNFSD" -f -c "$conf/rnfsd.conf" > /run/rnfsd.log 2>&1 &
	RNFSD_PID=$!
	for _ in $(seq 1 50); do
		rpcinfo -p 127.0.0.1 2>/dev/null | grep -q ' 100005 ' && return 0
		kill -0 $RNFSD_PID 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $RNFSD_PID 2>/dev/null; then
		echo "@@ INFO rnfsd runs but registered no MOUNT with rpcbind within 10 s"
		return 0
	fi
	wait $RNFSD_PID
	echo "@@ FAIL rnfsd_start: expected rnfsd serving got exit status $? at start; its log:"
	sed 's/^/@@ INFO rnfsd: /' /run/rnfsd.log | tail -20
	return 1
}

export_dir=/export
case "$RT_SERVER" in
knfsd)
	guest_knfsd $export_dir
	make_files $export_dir
	;;
rnfsd)
	mkdir -p $export_dir && mount -t tmpfs -o size=256m tmpfs $export_dir
	make_files $export_dir
	start_rnfsd $export_dir || guest_end
	;;
*)
	echo "@@ FAIL setup: unknown RT_SERVER '$RT_SERVER'"
	guest_end
	;;
esac

args=(--label "$RT_SERVER" --export $export_dir)
[ -n "${RT_XFAIL:-}" ] && args+=(--xfail "$RT_XFAIL")
[ -n "${RT_ONLY:-}" ] && args+=(--only "$RT_ONLY")
[ -n "${RT_VERBOSE:-}" ] && args+=(-v)
"$RT_REQUESTER" "${args[@]}" "$ADDR:20049"
rc=$?
echo "@@ REQUESTER EXIT $rc"
[ "$RT_SERVER" = rnfsd ] && [ $rc != 0 ] && tail -40 /run/rnfsd.log | sed 's/^/@@ INFO rnfsd log: /'

if [ "$RT_SERVER" = rnfsd ]; then
	# The server must have survived everything above.
	if kill -0 "$RNFSD_PID" 2>/dev/null; then
		echo "@@ PASS rnfsd_alive"
		kill -TERM "$RNFSD_PID"; wait "$RNFSD_PID"
		echo "@@ INFO rnfsd exit status $? after SIGTERM"
	else
		wait "$RNFSD_PID"
		echo "@@ FAIL rnfsd_alive: expected rnfsd running after the requester got exit status $?"
	fi
	grep -iE 'sanitizer|runtime error|assert|segv' /run/rnfsd.log | head -20 | sed 's/^/@@ INFO rnfsd log: /'
	dmesg | grep -iE 'rxe|rdma' | tail -5 | sed 's/^/@@ INFO dmesg: /'
fi
[ "$RT_SERVER" = knfsd ] && dmesg | grep -iE 'svcrdma|rpcrdma|BUG|Oops|WARNING' | tail -20 | sed 's/^/@@ INFO dmesg: /'
guest_end
