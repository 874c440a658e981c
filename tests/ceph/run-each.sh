#!/bin/bash
# run-each.sh RNFSD TEST... - run each integration test binary against RNFSD
# in turn (inside with-cluster.sh, so they share one cluster); prints each
# one's result and its output when it fails. Exit 0 when all passed (or some
# skipped), 77 when all skipped, 1 otherwise.
set -u
rnfsd=$1; shift
fail=0 ok=0 skip=0
for t in "$@"; do
	name=$(basename "$t")
	out=$("$t" "$rnfsd" 2>&1)
	rc=$?
	case $rc in
	0) ok=$((ok + 1)); echo "ok    $name ($(grep -c '^PASS' <<<"$out") checks)" ;;
	77) skip=$((skip + 1)); echo "skip  $name: $(grep -m1 -i skip <<<"$out")" ;;
	*) fail=$((fail + 1)); echo "FAIL  $name (exit $rc)"; grep -E '^(FAIL|KNOWN_FAIL)' <<<"$out" | head -40
	   tail -20 <<<"$out" ;;
	esac
done
echo "run-each: $ok passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $ok -gt 0 ] || exit 77
