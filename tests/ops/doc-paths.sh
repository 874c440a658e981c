#!/bin/sh
# doc-paths.sh SRCDIR: every file or folder that docs/architecture.md and
# README.md name in backticks (`rpc/rpc_call.c`, `nfs4.h`, `state/`) exists,
# so a newcomer following a pointer finds the file. A name resolves at the
# top (`core/stats.c`), under nfs/v4/ or nfs/ (the documents abbreviate
# `ops/nfs4_call.c`, `common/fh.c`), or as the tail of one path in the tree
# (`fh.c`, `local/local.h`); a glob (`nfs/v3/nfs3_proc_*.c`) must match.
# Skipped: absolute and parent paths, `state-dir/...` (run-time files),
# built artefacts (.so, .deb). Each missing name is listed; any fails.
cd "${1:?usage: doc-paths.sh SRCDIR}" || exit 1
files=$(find . -path ./.git -prune -o -path './build*' -prune -o -print | sed 's|^\./||')
rc=0
for doc in docs/architecture.md README.md; do
	[ -f "$doc" ] || { echo "$doc: missing (wrong SRCDIR?)"; exit 1; }
	for t in $(grep -o '`[^` ]*`' "$doc" | tr -d '`' |
		   grep -E '/|\.(c|h|md|sh|py|build)$' | sort -u); do
		case "$t" in
		/* | ../* | state-dir/* | *.so | *.deb) continue ;;
		esac
		t=${t%/}
		case "$t" in
		*'*'*)
			# shellcheck disable=SC2086 # the glob is meant
			set -- $t
			[ -e "$1" ] && continue ;;
		*)
			[ -e "$t" ] || [ -e "nfs/v4/$t" ] || [ -e "nfs/$t" ] && continue
			printf '%s\n' "$files" | grep -q -e "/$t\$" && continue ;;
		esac
		echo "$doc: \`$t\` names no file in the tree"
		rc=1
	done
done
[ $rc = 0 ] && echo "doc-paths: every path named exists"
exit $rc
