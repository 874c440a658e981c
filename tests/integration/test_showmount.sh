#!/bin/bash
# test_showmount.sh RNFSD RNFSCTL - nfs-common's showmount against rnfsd
# through a real rpcbind (issue 27): showmount -e lists the exports with
# their client specs (MOUNT EXPORT), including one added at run time with
# rnfsctl export add and not one removed with rnfsctl export remove;
# showmount -a lists host:path after a mount (MOUNT DUMP).
# Needs root (rpcbind binds port 111); uses a running rpcbind if there is one,
# else starts one for the test and stops it afterwards.
set -u
RNFSD=$1 RNFSCTL=$2
fails=0 passes=0
check() { if eval "$2"; then echo "PASS $1"; passes=$((passes+1)); else echo "FAIL $1"; fails=$((fails+1)); fi; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (rpcbind binds port 111)"; exit 77; }
command -v rpcbind >/dev/null && command -v rpcinfo >/dev/null || { echo "SKIP: rpcbind/rpcinfo not installed"; exit 77; }
command -v showmount >/dev/null || { echo "SKIP: showmount (nfs-common) not installed"; exit 77; }
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
# showmount asks rpcbind for MOUNT: a mountd already registered (a kernel server here) would answer instead.
if rpcinfo -p 127.0.0.1 2>/dev/null | grep -Eq '^ *100005 '; then echo "SKIP: a mountd is already registered"; exit 77; fi
port=$((23000 + RANDOM % 2000))
mkdir -p "$tmp/export" "$tmp/added" "$tmp/state"
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
echo "$tmp/export 127.0.0.1(rw,insecure) 192.0.2.0/24(ro)" > "$tmp/exports"
"$RNFSD" -f -c "$tmp/rnfsd.conf" -e "$tmp/exports" > "$tmp/rnfsd.log" 2>&1 & RN=$!
for _ in $(seq 100); do rpcinfo -p 127.0.0.1 2>/dev/null | grep -Eq "^ *100005 +3 +tcp +$port" && break; sleep 0.1; done
out=$(timeout 20 showmount -e 127.0.0.1 2>&1); echo "$out" | sed 's/^/  /'
check "showmount -e lists the export with its clients" "echo \"\$out\" | grep -Eq \"^$tmp/export +127.0.0.1,192.0.2.0/24\$\""
"$RNFSCTL" -s "$tmp/rnfsd.sock" export add "$tmp/added" '*(ro,insecure)' >/dev/null
out=$(timeout 20 showmount -e 127.0.0.1 2>&1)
check "showmount -e lists an export added with rnfsctl" "echo \"\$out\" | grep -Eq \"^$tmp/added +\\\\*\$\""
"$RNFSCTL" -s "$tmp/rnfsd.sock" export remove "$tmp/added" >/dev/null
out=$(timeout 20 showmount -e 127.0.0.1 2>&1)
check "and not after rnfsctl export remove" "! echo \"\$out\" | grep -q \"$tmp/added\""
timeout 20 nfs-ls "nfs://127.0.0.1$tmp/export?nfsport=$port&mountport=$port" >/dev/null 2>&1
out=$(timeout 20 showmount -a 127.0.0.1 2>&1); echo "$out" | sed 's/^/  /'
check "showmount -a lists the mount (host:path)" "echo \"\$out\" | grep -q \"^127.0.0.1:$tmp/export\$\""
kill -TERM "$RN"; wait "$RN"; rc=$?; RN=
check "rnfsd exits 0 on SIGTERM" "[ $rc = 0 ]"
[ $fails = 0 ] || { echo "--- rnfsd log"; cat "$tmp/rnfsd.log"; }
echo "$passes passed, $fails failed"
[ $fails = 0 ]
