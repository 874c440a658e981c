#!/bin/sh
# man-lint.sh PAGE...: groff with all warnings on each page that
# exists; any warning fails.
command -v groff >/dev/null 2>&1 || { echo "no groff: skipped"; exit 77; }
rc=0 n=0
for p in "$@"; do
	[ -f "$p" ] || continue
	n=$((n + 1))
	out=$(groff -man -ww -z "$p" 2>&1)
	if [ -n "$out" ]; then
		echo "$p:"; echo "$out"; rc=1
	fi
done
echo "$n pages checked"
[ $n -gt 0 ] || exit 1
exit $rc
