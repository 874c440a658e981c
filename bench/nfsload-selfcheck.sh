#!/bin/bash
# nfsload-selfcheck.sh RNFSD NFSLOAD - the microbenchmark's load generator is
# right: against the real rnfsd on 127.0.0.1, `nfsload --setup` lays out its
# tree (checked on disk), `nfsload --check` runs every kind of unit and every
# reply is checked (READ/WRITE counts, CREATE handles, the 1,000 names of
# READDIRPLUS), and CREATE+REMOVE leaves nothing behind. No timing is looked at.
set -u
RNFSD=$1 NFSLOAD=$2
fails=0 passes=0
check() { if eval "$2"; then echo "PASS $1"; passes=$((passes+1)); else echo "FAIL $1"; fails=$((fails+1)); fi; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rnfsd switches to the caller's identity)"; exit 77; }

tmp=$(mktemp -d) RN=
cleanup() {
	[ -n "$RN" ] && kill -KILL "$RN" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/export" "$tmp/state"
start_rnfsd() {     # a port of our own, retried if someone else has it
	local try i
	for try in 1 2 3 4 5; do
		port=$((22000 + RANDOM % 4000))
		printf '[rnfsd]\nthreads = 2\nstate-dir = %s\nrpcbind = no\nstats-socket = %s\n[tcp]\nlisten = 127.0.0.1:%s\n[rdma]\nenable = no\n' \
			"$tmp/state" "$tmp/rnfsd.sock" "$port" > "$tmp/rnfsd.conf"
		echo "$tmp/export 127.0.0.1(rw,no_root_squash,insecure)" > "$tmp/exports"
		"$RNFSD" -f -c "$tmp/rnfsd.conf" -e "$tmp/exports" > "$tmp/rnfsd.log" 2>&1 & RN=$!
		for i in $(seq 100); do
			kill -0 "$RN" 2>/dev/null || break
			ss -Hltn "sport = :$port" | grep -q . && return 0
			sleep 0.1
		done
		kill -KILL "$RN" 2>/dev/null; wait "$RN" 2>/dev/null; RN=
	done
	return 1
}
check "rnfsd starts" start_rnfsd
out=$("$NFSLOAD" -p "$port" -e "$tmp/export" --setup 2>&1); rc=$?
check "nfsload --setup exits 0 ($out)" "[ $rc = 0 ]"
check "nfsload/data holds 1 MiB" "[ \"\$(stat -c %s \"$tmp/export/nfsload/data\" 2>/dev/null)\" = 1048576 ]"
check "nfsload/dir1000 holds 1000 entries" "[ \"\$(ls \"$tmp/export/nfsload/dir1000\" 2>/dev/null | wc -l)\" = 1000 ]"
out=$("$NFSLOAD" -p "$port" -e "$tmp/export" --check 2>&1); rc=$?
echo "$out" | sed 's/^/  /'
check "nfsload --check: every unit of every kind answered correctly" "[ $rc = 0 ]"
for op in null getattr lookup read4k write4k create-remove readdirplus-1000; do
	check "nfsload --check ran $op without errors" "echo \"\$out\" | grep -q '^nfsload: op $op .* errors 0\$'"
done
check "CREATE+REMOVE left nothing behind" "[ \"\$(ls \"$tmp/export/nfsload\" | tr '\n' ' ')\" = 'data dir1000 ' ]"
out=$("$NFSLOAD" -p "$port" -e "$tmp/export" -o read4k -n 0 2>&1); rc=$?
check "a run of 0 units (the fixed cost) exits 0" "[ $rc = 0 ]"
out=$("$NFSLOAD" -p "$port" -e "$tmp/export/nowhere" -o null -n 1 2>&1); rc=$?
check "nfsload fails on an export it cannot mount ($out)" "[ $rc = 1 ]"
kill -TERM "$RN"; wait "$RN"; RN=
[ $fails = 0 ] || { echo "--- rnfsd log"; tail -n 50 "$tmp/rnfsd.log"; }
echo "$passes passed, $fails failed"
[ $fails = 0 ]
