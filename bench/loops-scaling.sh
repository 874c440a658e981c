#!/bin/bash
# loops-scaling.sh RNFSD NFSLOAD [CONNS] [UNITS] [ROUNDS] [OPS] - calls per second
# with [rnfsd] loops = 1 and 2 (issue 22, item 3): CONNS nfsload processes at
# once (one TCP connection each, depth 16) against rnfsd on 127.0.0.1, per op,
# rounds alternating 1 and 2 loops on the same tree. Prints one line per run
# ("loops L op OP round R calls/s X") and the median ratio per op. Root (the
# export is served as root). Read the ratio, not the figures: a loaded host
# moves both. Defaults: 8 connections, 20000 units, 3 rounds, getattr read4k.
set -u
RNFSD=$(readlink -f "$1") NFSLOAD=$(readlink -f "$2")
CONNS=${3:-8} UNITS=${4:-20000} ROUNDS=${5:-3} OPS=${6:-getattr read4k}
WORK=$(mktemp -d /tmp/rnfsd-loops.XXXXXX)
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$WORK/export" "$WORK/state"
echo "$WORK/export 127.0.0.1(rw,no_root_squash,insecure)" > "$WORK/exports"
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT

start() { # start LOOPS
	printf '[rnfsd]\nthreads = 8\nloops = %s\nstate-dir = %s\nrpcbind = no\nstats-socket = %s\n[tcp]\nlisten = 127.0.0.1:%s\n[rdma]\nenable = no\n' \
		"$1" "$WORK/state" "$WORK/rnfsd.sock" "$PORT" > "$WORK/rnfsd.conf"
	"$RNFSD" -f -c "$WORK/rnfsd.conf" -e "$WORK/exports" > "$WORK/rnfsd-$1.log" 2>&1 &
	PID=$!
	for _ in $(seq 50); do
		ss -Hltn "sport = :$PORT" | grep -q . && return 0
		sleep 0.2
	done
	echo "rnfsd did not start (loops $1)" >&2
	exit 1
}

stop() {
	kill "$PID" && wait "$PID"
	PID=
}

# run LOOPS OP ROUND: CONNS loaders at once; the sum of their units/s.
run() {
	local i sum=0 u pids=()
	for i in $(seq "$CONNS"); do
		"$NFSLOAD" -p "$PORT" -e "$WORK/export" -o "$2" -n "$UNITS" -d 16 > "$WORK/out.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}" # not rnfsd
	for i in $(seq "$CONNS"); do
		u=$(sed -n 's/.*units\/s \([0-9.]*\).*/\1/p' "$WORK/out.$i")
		[ -n "$u" ] || { echo "nfsload failed: $(cat "$WORK/out.$i")" >&2; exit 1; }
		sum=$(echo "$sum + $u" | bc -l)
	done
	printf 'loops %s op %s round %s calls/s %.0f\n' "$1" "$2" "$3" "$sum"
}

start 1
"$NFSLOAD" -p "$PORT" -e "$WORK/export" --setup > /dev/null || exit 1
stop
for r in $(seq "$ROUNDS"); do
	for l in 1 2; do
		start "$l"
		for op in $OPS; do run "$l" "$op" "$r"; done
		stop
	done
done | tee "$WORK/results"
for op in $OPS; do
	for r in $(seq "$ROUNDS"); do
		a=$(awk -v o="$op" -v r="$r" '$2 == 1 && $4 == o && $6 == r {print $8}' "$WORK/results")
		b=$(awk -v o="$op" -v r="$r" '$2 == 2 && $4 == o && $6 == r {print $8}' "$WORK/results")
		echo "$b / $a" | bc -l
	done | sort -n | awk -v o="$op" '{v[NR] = $1} END {printf "op %s: loops 2 / loops 1, median of %d rounds: %.2f\n", o, NR, v[int((NR + 1) / 2)]}'
done
