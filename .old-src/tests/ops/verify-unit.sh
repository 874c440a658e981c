#!/bin/sh
# verify-unit.sh UNIT DOCDIR...
# `systemd-analyze verify` on the unit (a copy whose ExecStart is this
# build's rnfsd). Clean means exit 0 AND no output: unknown keys and bad
# values are only warnings. Documentation= man pages are checked too when
# every page it names is present in the given doc directories.
set -u
unit=$1
shift
command -v systemd-analyze >/dev/null 2>&1 || { echo "no systemd-analyze: skipped"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The unit under its real name, so messages and dependencies read as installed.
cp "$unit" "$tmp/rnfsd.service"

man=no
mkdir -p "$tmp/man/man5" "$tmp/man/man8"
missing=
for page in $(sed -n 's/^Documentation=//p' "$unit"); do
	ref=${page#man:}                  # rnfsd.conf(5)
	name=${ref%(*}; sect=${ref#*(}; sect=${sect%)}
	found=
	for d in "$@"; do
		if [ -f "$d/$name.$sect" ]; then
			ln -sf "$(readlink -f "$d/$name.$sect")" "$tmp/man/man$sect/$name.$sect"
			found=1
			break
		fi
	done
	[ "$found" ] || missing="$missing $name.$sect"
done
if [ -z "$missing" ] && command -v man >/dev/null 2>&1; then
	man=yes
else
	echo "man pages not checked, missing:$missing"
fi

out=$(MANPATH="$tmp/man" systemd-analyze verify --man=$man "$tmp/rnfsd.service" 2>&1)
rc=$?
echo "systemd-analyze verify --man=$man: exit $rc"
[ -n "$out" ] && echo "$out"
[ $rc -eq 0 ] && [ -z "$out" ]
