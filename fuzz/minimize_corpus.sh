#!/bin/sh
# minimize_corpus.sh - after a fuzzing run, picks the few working-corpus
# inputs worth committing: the edges (libFuzzer features with
# -use_counters=0) of every input, one -merge_inner process per file so each
# file's set is complete, then a greedy set cover that keeps the named seeds
# (files whose name is not a 40-hex sha1) and adds, largest gain first
# (smallest file on ties), inputs until every edge is covered. Prints the
# inputs to copy into the committed corpus; nothing is changed.
#
#   fuzz/minimize_corpus.sh build-fuzz/fuzz/fuzz_exports fuzz/corpus/exports build-fuzz/work/exports
set -eu
fuzzer=$1 corpus=$2 work=$3
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/minimize.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in "$corpus"/* "$work"/*; do
	printf '1\n0\n%s\n' "$f" > "$tmp/ctl"
	"$fuzzer" -merge_inner=1 -use_counters=0 -merge_control_file="$tmp/ctl" >/dev/null 2>&1 || true
	printf '%s %s\n' "$f" "$(sed -n 's/^FT 0 //p' "$tmp/ctl")" >> "$tmp/features"
done
python3 - "$tmp/features" <<'PY'
import os, re, sys
ft = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if parts:
        ft[parts[0]] = set(parts[1:])
seed = lambda f: not re.fullmatch(r'[0-9a-f]{40}', os.path.basename(f))
covered = set()
for f in filter(seed, ft):
    covered |= ft[f]
extra = []
while True:
    best = max(ft, key=lambda f: (len(ft[f] - covered), -os.path.getsize(f)))
    if not ft[best] - covered:
        break
    covered |= ft[best]
    extra.append(best)
print(len(extra), 'inputs beside the named seeds cover all', len(covered), 'edges', file=sys.stderr)
print('\n'.join(extra))
PY
