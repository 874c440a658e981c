#!/bin/sh
# run-pynfs.sh - run the public pynfs suites (nfs4.1 and nfs4.0, "all")
# against rnfsd on loopback, by hand: never registered in meson, never
# fetching or building pynfs (CI must not depend on fetched code).
#
# usage: tests/conformance/run-pynfs.sh PYNFS_DIR [RNFSD] [SUITE...]
#   PYNFS_DIR  an existing pynfs checkout, already built (./setup.py build)
#   RNFSD      the daemon to test (default: build/rnfsd of this tree)
#   SUITE      nfs4.1, nfs4.1-only, nfs4.0 and/or nfs4.2 (default: nfs4.1 nfs4.0).
#              nfs4.1: "all" at pynfs's own default --minorversion 2, as a plain
#              testserver.py run (197 tests); nfs4.1-only: --minorversion 1 (183);
#              nfs4.2: the nfs4.1 directory's NFSv4.2 tests, flags sparse xattr
#              copy, with --minorversion 2
# Environment: PYTHON (default python3; needs ply), PORT (default 20490),
#   LEASE ([nfsv4] lease-time, default 15: pynfs's courtesy and expiry tests
#   sleep a lease and more, several times),
#   KEEP=1 keeps the temporary directory (logs, JSON results),
#   TESTS: the codes or flags run instead of "all" (e.g. TESTS="DELEG24 DELEG25")
# Must run as root (the local backend needs CAP_DAC_READ_SEARCH). Prints, per
# suite, pynfs's summary line and the names of the failed tests.
set -u
PYNFS=${1:?usage: run-pynfs.sh PYNFS_DIR [RNFSD] [SUITE...]}
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
RNFSD=${1:-$here/build/rnfsd}
[ $# -gt 0 ] && shift
SUITES=${*:-nfs4.1 nfs4.0}
PYTHON=${PYTHON:-python3}
PORT=${PORT:-20490}

[ -x "$RNFSD" ] || { echo "run-pynfs: no daemon at $RNFSD" >&2; exit 2; }
[ -f "$PYNFS/nfs4.1/testserver.py" ] || { echo "run-pynfs: $PYNFS is not a pynfs checkout" >&2; exit 2; }

tmp=$(mktemp -d /var/tmp/run-pynfs.XXXXXX)
mkdir -p "$tmp/state" "$tmp/export"
chmod 0777 "$tmp/export"
# pynfs's test tree, made on disk as its --maketree would over NFS (which
# needs CREATE, OPEN and WRITE): /tmp its scratch directory, /tree the objects.
maketree() {
	rm -rf "$tmp/export/tmp" "$tmp/export/tree"
	mkdir -m 0777 "$tmp/export/tmp" "$tmp/export/tree"
	t=$tmp/export/tree
	mkdir "$t/dir" && mkfifo "$t/fifo" && ln -s /etc/X11 "$t/link" &&
		mknod "$t/block" b 1 2 && mknod "$t/char" c 1 2 &&
		"$PYTHON" -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$t/socket" &&
		printf 'This is the file test data.' > "$t/file"
}
# pynfs connects from unprivileged ports and as root: insecure, no_root_squash.
echo "$tmp/export 127.0.0.1(rw,insecure,no_root_squash)" > "$tmp/exports"
cat > "$tmp/rnfsd.conf" <<CONF
[rnfsd]
state-dir = $tmp/state
exports = $tmp/exports
rpcbind = no
nlm = no
stats-socket = $tmp/rnfsd.sock
[tcp]
listen = 127.0.0.1:$PORT
[rdma]
enable = no
[nfsv4]
enable = yes
delegations = yes
lease-time = ${LEASE:-15}
CONF
# A fresh state directory: no clients of a previous run, so no grace period.

pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "run-pynfs: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

"$RNFSD" -f -c "$tmp/rnfsd.conf" > "$tmp/rnfsd.log" 2>&1 &
pid=$!
for _ in $(seq 50); do
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/rnfsd.log" >&2; echo "run-pynfs: rnfsd exited" >&2; exit 2; }
	"$PYTHON" -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()" \
		"$PORT" 2>/dev/null && break
	sleep 0.2
done

rev=$(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo ?)
status=0
for suite in $SUITES; do
	dir=$suite tests=${TESTS:-all}
	case $suite in
	# pynfs's own default, --minorversion 2, as a plain "testserver.py SERVER all"
	# runs (the NFSv4.2 tests flagged all are then selected too)
	nfs4.1) minor= ;;
	nfs4.1-only) minor="--minorversion 1" dir=nfs4.1 ;;
	nfs4.0) minor= ;;
	nfs4.2) minor="--minorversion 2" dir=nfs4.1 tests="sparse xattr copy" ;;
	*) echo "run-pynfs: unknown suite $suite" >&2; exit 2 ;;
	esac
	out=$tmp/$suite
	maketree || { echo "run-pynfs: cannot make the test tree" >&2; exit 2; }
	# Both suites take the export and use its /tmp and /tree.
	path=$tmp/export
	# shellcheck disable=SC2086  # $minor is one option or none, $tests one or more flags
	(cd "$PYNFS/$dir" && timeout 1800 "$PYTHON" ./testserver.py "127.0.0.1:$PORT$path" $minor \
		--json "$out.json" $tests > "$out.log" 2>&1)
	echo "== $suite: $RNFSD (tree at $rev), $(date -u +%F)"
	grep -E "^Command line|Of those:" "$out.log" | tail -2
	"$PYTHON" - "$out.json" <<'PY' || status=1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no results:", e); sys.exit(1)
cases = r.get("testcase", [])
fails = sorted(c["code"] + " " + c["name"] for c in cases if "failure" in c)
print("pass %d fail %d skipped-or-not-run %d" % (sum(1 for c in cases if "failure" not in c and "skipped" not in c),
                                  len(fails), sum(1 for c in cases if "skipped" in c)))
for f in fails:
    print("  FAIL", f)
PY
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=
exit $status
