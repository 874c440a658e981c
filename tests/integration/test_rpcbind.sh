#!/bin/bash
# test_rpcbind.sh RNFSD - rnfsd registers NFS 3 and MOUNT 3 on tcp, and NLM 4
# on tcp and on udp (its UDP transport), with a real rpcbind (RFC 1833,
# through libtirpc); a libnfs client finds it through rpcbind alone (no port
# given), rpcinfo's UDP call reaches NLM through rpcbind, and the
# registrations are gone after SIGTERM.
# Needs root (rpcbind binds port 111); uses a running rpcbind if there is one,
# else starts one for the test and stops it afterwards.
set -u
RNFSD=$1
fails=0 passes=0
check() { if eval "$2"; then echo "PASS $1"; passes=$((passes+1)); else echo "FAIL $1"; fails=$((fails+1)); fi; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rpcbind binds port 111)"; exit 77; }
command -v rpcbind >/dev/null && command -v rpcinfo >/dev/null || { echo "SKIP: rpcbind/rpcinfo not installed"; exit 77; }
command -v nfs-ls >/dev/null || { echo "SKIP: nfs-ls (libnfs-utils) not installed"; exit 77; }

tmp=$(mktemp -d); RB=; RN=
cleanup() {
	[ -n "$RN" ] && kill -KILL "$RN" 2>/dev/null
	[ -n "$RB" ] && { kill "$RB" 2>/dev/null; wait "$RB" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
	rpcbind -f & RB=$!
	for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
fi
check "rpcbind answers" "rpcinfo -p 127.0.0.1 >/dev/null 2>&1"
# A port of our own, so a running nfs server on this machine is not disturbed.
port=$((21000 + RANDOM % 2000))
mkdir -p "$tmp/export" "$tmp/state"; echo hello > "$tmp/export/hello.txt"
cat > "$tmp/rnfsd.conf" <<EOC
[rnfsd]
state-dir = $tmp/state
stats-socket = $tmp/rnfsd.sock
rpcbind = yes
[tcp]
listen = 127.0.0.1:$port
[rdma]
enable = no
EOC
echo "$tmp/export 127.0.0.1(rw,insecure)" > "$tmp/exports"
"$RNFSD" -f -c "$tmp/rnfsd.conf" -e "$tmp/exports" > "$tmp/rnfsd.log" 2>&1 & RN=$!
for _ in $(seq 100); do rpcinfo -p 127.0.0.1 2>/dev/null | grep -q " $port " && break; sleep 0.1; done
reg=$(rpcinfo -p 127.0.0.1 2>/dev/null)
echo "$reg" | grep " $port " | sed 's/^/  /'
check "NFS 3 registered on tcp port $port" "echo \"\$reg\" | grep -Eq '^ *100003 +3 +tcp +$port'"
check "MOUNT 3 registered on tcp port $port" "echo \"\$reg\" | grep -Eq '^ *100005 +3 +tcp +$port'"
uport=$(sed -n 's/.*udp: listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$tmp/rnfsd.log" | head -1)
for _ in $(seq 50); do rpcinfo -p 127.0.0.1 2>/dev/null | grep -Eq "^ *100021 +4 +udp +$uport" && break; sleep 0.1; done
reg=$(rpcinfo -p 127.0.0.1 2>/dev/null)
check "NLM 4 registered on tcp port $port" "echo \"\$reg\" | grep -Eq '^ *100021 +4 +tcp +$port'"
check "NLM 4 registered on udp port ${uport:-?} (the UDP transport's)" "[ -n \"$uport\" ] && echo \"\$reg\" | grep -Eq '^ *100021 +4 +udp +$uport'"
# rpcinfo -u asks rpcbind for the port, then calls NULL in a datagram.
check "rpcinfo -u: NLM 4 answers NULL over udp" "timeout 10 rpcinfo -u 127.0.0.1 100021 4 >/dev/null 2>&1"
check "rpcinfo -u: NFS is not served over udp" "! timeout 10 rpcinfo -n $port -u 127.0.0.1 100003 3 >/dev/null 2>&1"
# libnfs without nfsport/mountport asks rpcbind for both.
out=$(timeout 20 nfs-cat "nfs://127.0.0.1$tmp/export/hello.txt" 2>&1)
check "libnfs reaches rnfsd through rpcbind" "[ \"\$out\" = hello ]"
kill -TERM "$RN"; wait "$RN"; rc=$?; RN=
check "rnfsd exits 0 on SIGTERM" "[ $rc = 0 ]"
reg=$(rpcinfo -p 127.0.0.1 2>/dev/null)
check "NFS and MOUNT unregistered at exit" "! echo \"\$reg\" | grep -Eq '^ *10000[35] .* $port '"
check "NLM unregistered at exit (tcp and udp)" "! echo \"\$reg\" | grep -Eq '^ *100021 .* ($port|${uport:-none}) '"
[ $fails = 0 ] || { echo "--- rnfsd log"; cat "$tmp/rnfsd.log"; }
echo "$passes passed, $fails failed"
[ $fails = 0 ]
