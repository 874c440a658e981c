#!/bin/bash
# nfs4-vs-v3.sh RNFSD NFSLOAD NFS4LOAD [ROUNDS] [UNITS] - rnfsd natively on
# 127.0.0.1 over a tmpfs export (/dev/shm): GETATTR, LOOKUP and 4 KiB READ
# calls per second at depth 1, NFSv3 (nfsload -d 1) and NFSv4.1 (nfs4load),
# alternating per round so that both see the same load, and the server's CPU
# time per call (utime + stime of all its threads, /proc/PID/stat: less
# sensitive to a loaded host than the rate); prints each run and the medians.
# Speed is shown, never asserted. As root (rnfsd's identities).
set -u
RNFSD=$1 NFSLOAD=$2 NFS4LOAD=$3 ROUNDS=${4:-5} UNITS=${5:-20000}
tmp=$(mktemp -d -p /dev/shm) RN=
trap '[ -n "$RN" ] && kill -KILL "$RN" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/export" "$tmp/state"
port=$((26000 + RANDOM % 4000))
printf '[rnfsd]\nthreads = 4\nstate-dir = %s\nrpcbind = no\n[tcp]\nlisten = 127.0.0.1:%s\n[rdma]\nenable = no\n' \
	"$tmp/state" "$port" > "$tmp/rnfsd.conf"
echo "$tmp/export 127.0.0.1(rw,no_root_squash,insecure)" > "$tmp/exports"
"$RNFSD" -f -c "$tmp/rnfsd.conf" -e "$tmp/exports" > "$tmp/rnfsd.log" 2>&1 & RN=$!
for i in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.1; done
"$NFSLOAD" -p "$port" -e "$tmp/export" --setup >/dev/null || { echo "setup failed"; exit 1; }
declare -A runs
ticks() { awk '{print $14 + $15}' "/proc/$RN/stat"; }   # the process's utime + stime, clock ticks
hz=$(getconf CLK_TCK)
# run OP V CMD...: units/s of the run, then the server's CPU us per unit
run() {
	local t0 t1 rate
	t0=$(ticks)
	rate=$("${@:3}" | sed -n 's/.*units\/s \([0-9.]*\).*errors 0$/\1/p')
	t1=$(ticks)
	echo "${rate:-0} $(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$UNITS" 'BEGIN {printf "%.1f", d * 1e6 / hz / n}')"
}
for r in $(seq "$ROUNDS"); do
	for op in getattr lookup read4k; do
		read -r v3 c3 < <(run "$op" 3 "$NFSLOAD" -p "$port" -e "$tmp/export" -o "$op" -n "$UNITS" -d 1)
		read -r v4 c4 < <(run "$op" 4 "$NFS4LOAD" -p "$port" -e "$tmp/export" -o "$op" -n "$UNITS")
		echo "round $r $op v3 $v3/s ${c3}us v4.1 $v4/s ${c4}us"
		runs[$op-v3]+="$v3 " runs[$op-v4]+="$v4 " runs[$op-c3]+="$c3 " runs[$op-c4]+="$c4 "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b ? a / b : 0}'; }
for op in getattr lookup read4k; do
	m3=$(echo "${runs[$op-v3]}" | median) m4=$(echo "${runs[$op-v4]}" | median)
	k3=$(echo "${runs[$op-c3]}" | median) k4=$(echo "${runs[$op-c4]}" | median)
	echo "median $op calls/s v3 $m3 v4.1 $m4 (v4.1/v3 $(ratio "$m4" "$m3")); server CPU us/call v3 $k3 v4.1 $k4 (v4.1/v3 $(ratio "$k4" "$k3"))"
done
kill -TERM "$RN"; wait "$RN"; RN=
