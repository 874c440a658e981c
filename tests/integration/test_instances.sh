#!/bin/bash
# test_instances.sh RNFSD - several rnfsd processes on one host (issue 23):
#  - a second instance with the first one's state-dir (or stats socket)
#    exits 1 naming the first one's pid, and the first one keeps serving;
#  - one with its own state-dir, port and socket runs beside it;
#  - with a real rpcbind (root): the second instance leaves the first one's
#    live registrations alone at start and at exit, replaces a stale one (a
#    killed instance's), and takes a live one over with rpcbind-replace = yes;
#    two on one port and two addresses share one registration, which the
#    last one to stop removes.
# Without root or rpcbind the rpcbind part is skipped (SKIP lines).
set -u
RNFSD=$1
fails=0 passes=0
check() { if eval "$2"; then echo "PASS $1"; passes=$((passes+1)); else echo "FAIL $1"; fails=$((fails+1)); fi; }
command -v rpcinfo >/dev/null || { echo "SKIP: rpcinfo (rpcbind) not installed"; exit 77; }

tmp=$(mktemp -d); RB=; PIDS=
cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	[ -n "$RB" ] && { kill "$RB" 2>/dev/null; wait "$RB" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
base=$((21000 + RANDOM % 2000))
mkdir -p "$tmp/export"; echo hello > "$tmp/export/hello.txt"
echo "$tmp/export 127.0.0.1(rw,insecure)" > "$tmp/exports"

# conf NAME STATE-DIR PORT SOCKET RPCBIND [EXTRA]: write $tmp/NAME.conf
conf() {
	cat > "$tmp/$1.conf" <<EOC
[rnfsd]
state-dir = $2
stats-socket = $4
rpcbind = $5
${6:-}
[tcp]
listen = 127.0.0.1:$3
[rdma]
enable = no
EOC
}
# start NAME: rnfsd -f in the background; its pid in $pid
start() {
	"$RNFSD" -f -c "$tmp/$1.conf" -e "$tmp/exports" > "$tmp/$1.log" 2>&1 & pid=$!
	PIDS="$PIDS $pid"
}
answers() { timeout 10 rpcinfo -n "$1" -t 127.0.0.1 100003 3 >/dev/null 2>&1; }
wait_up() { for _ in $(seq 100); do answers "$1" && return 0; sleep 0.1; done; return 1; }
# served NAME: its start-up is over (after rpcbind): the log's "serving N exports" line
served() { for _ in $(seq 100); do grep -q 'serving [0-9]* exports' "$tmp/$1.log" && return 0; sleep 0.1; done; return 1; }
# exits_within PID S: the process ended within S seconds; its status in $rc
exits_within() {
	for _ in $(seq $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; rc=$?; return 0; }
		sleep 0.1
	done
	rc=running; return 1
}
stop() { kill -TERM "$1" 2>/dev/null; exits_within "$1" 20; }
reg_port() { rpcinfo -p 127.0.0.1 2>/dev/null | awk -v p="$1" '$1 == p && $2 == 3 && $3 == "tcp" { print $4 }'; }

# ---- one state directory per instance ----
have_rpcbind=no
if [ "$(id -u)" = 0 ] && command -v rpcbind >/dev/null; then
	if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
		rpcbind -f & RB=$!
		for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
	fi
	rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && have_rpcbind=yes
fi
pa=$base pb=$((base + 1)) pc=$((base + 2))
conf a "$tmp/state-a" $pa "$tmp/a.sock" $have_rpcbind
start a; A=$pid
check "instance A serves on port $pa" "wait_up $pa && served a"
key_a=$(od -An -tx1 "$tmp/state-a/fh.key" 2>/dev/null | tr -d ' \n')

conf b1 "$tmp/state-a" $pb "$tmp/b.sock" $have_rpcbind
start b1; B1=$pid
exits_within "$B1" 10
check "B with A's state-dir exits 1 (got $rc)" "[ \"$rc\" = 1 ]"
check "B's message names A's pid $A" "grep -q 'state-dir $tmp/state-a is in use by another rnfsd (pid $A)' \"$tmp/b1.log\""
check "A's file-handle key untouched" "[ \"\$(od -An -tx1 \"$tmp/state-a/fh.key\" | tr -d ' \n')\" = \"$key_a\" ]"
conf b2 "$tmp/state-b" $pb "$tmp/a.sock" $have_rpcbind
start b2; B2=$pid
exits_within "$B2" 10
check "B with A's stats socket exits 1 (got $rc)" "[ \"$rc\" = 1 ]"
check "that message names A's pid too" "grep -q 'stats-socket $tmp/a.sock is in use by another rnfsd (pid $A)' \"$tmp/b2.log\""
check "A still serves after both refusals" "answers $pa && kill -0 $A"
[ "$have_rpcbind" = yes ] && check "A's NFS 3 still registered at $pa" "[ \"\$(reg_port 100003)\" = $pa ]"
check "--check-config with A's configuration passes while A runs" \
	"\"$RNFSD\" --check-config -c \"$tmp/a.conf\" -e \"$tmp/exports\" >/dev/null 2>&1"

conf b "$tmp/state-b" $pb "$tmp/b.sock" $have_rpcbind
start b; B=$pid
check "B with its own state-dir, port and socket serves on $pb" "wait_up $pb"
check "A serves beside B" "answers $pa"

# ---- rpcbind: only what each instance owns ----
if [ "$have_rpcbind" = yes ]; then
	served b # B registers after its listeners are up
	check "B says it left A's registration alone" "grep -q 'registered at port $pa, which another running server uses: left alone' \"$tmp/b.log\""
	check "A's NFS 3, MOUNT 3, NLM 4 still at $pa while B runs" \
		"[ \"\$(reg_port 100003)\" = $pa ] && [ \"\$(reg_port 100005)\" = $pa ] && rpcinfo -p 127.0.0.1 | grep -Eq '^ *100021 +4 +tcp +$pa '"
	stop "$B"
	check "B exits 0" "[ \"$rc\" = 0 ]"
	check "B's exit leaves A's NFS 3, MOUNT 3 and NLM 4 registrations at $pa" \
		"[ \"\$(reg_port 100003)\" = $pa ] && [ \"\$(reg_port 100005)\" = $pa ] && rpcinfo -p 127.0.0.1 | grep -Eq '^ *100021 +4 +tcp +$pa '"
	# A killed instance's registration is stale: the next one replaces it, and removes it at exit.
	kill -KILL "$A"; wait "$A" 2>/dev/null
	conf c "$tmp/state-c" $pc "$tmp/c.sock" yes
	start c; C=$pid
	wait_up $pc
	for _ in $(seq 50); do [ "$(reg_port 100003)" = $pc ] && break; sleep 0.1; done
	check "C replaces the stale registration of killed A (NFS 3 at $pc)" "[ \"\$(reg_port 100003)\" = $pc ]"
	# rpcbind-replace = yes takes a live one over.
	conf d "$tmp/state-d" $pa "$tmp/d.sock" yes "rpcbind-replace = yes"
	start d; D=$pid
	wait_up $pa
	for _ in $(seq 50); do [ "$(reg_port 100003)" = $pa ] && break; sleep 0.1; done
	check "D with rpcbind-replace = yes takes C's live registration over" "[ \"\$(reg_port 100003)\" = $pa ]"
	stop "$C"
	check "C's exit leaves D's registration (it names $pa now)" "[ \"\$(reg_port 100003)\" = $pa ]"
	stop "$D"
	check "D's exit removes its own registrations" "[ -z \"\$(reg_port 100003)\" ] && [ -z \"\$(reg_port 100005)\" ]"
	# One port on two addresses: one registration, right for both; the last to stop removes it.
	pe=$((base + 3))
	conf e "$tmp/state-e" $pe "$tmp/e.sock" yes
	start e; E=$pid
	wait_up $pe && served e
	conf f "$tmp/state-f" $pe "$tmp/f.sock" yes
	sed -i "s/^listen = 127.0.0.1:/listen = 127.0.0.2:/" "$tmp/f.conf"
	start f; F=$pid
	served f
	check "F on 127.0.0.2:$pe shares E's registration of port $pe" \
		"grep -q 'already registered at port $pe by another server on this port' \"$tmp/f.log\" && [ \"\$(reg_port 100003)\" = $pe ]"
	stop "$E"
	check "E's exit leaves the registration F still serves" "[ \"\$(reg_port 100003)\" = $pe ] && [ \"\$(reg_port 100005)\" = $pe ]"
	stop "$F"
	check "the last one's exit removes it" "[ -z \"\$(reg_port 100003)\" ] && [ -z \"\$(reg_port 100005)\" ]"
else
	echo "SKIP rpcbind checks (need root and rpcbind)"
	stop "$B"
	stop "$A"
	check "A exits 0" "[ \"$rc\" = 0 ]"
fi
[ $fails = 0 ] || for f in "$tmp"/*.log; do echo "--- $f"; cat "$f"; done
echo "$passes passed, $fails failed"
[ $fails = 0 ]
