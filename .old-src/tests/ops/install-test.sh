#!/bin/sh
# install-test.sh MESON BUILDDIR SRCDIR PREFIX SBINDIR SYSCONFDIR MANDIR UNITDIR
# `meson install --destdir` into a scratch directory; checks that the daemon,
# rnfsctl, the unit (ExecStart pointing to the installed rnfsd), the man
# pages and the /etc/rnfsd examples land where an admin expects them, and
# that a second install keeps an edited /etc/rnfsd file.
set -eu
meson=$1 build=$2 src=$3 prefix=$4 sbindir=$5 sysconfdir=$6 mandir=$7 unitdir=$8
abs() { case $1 in /*) echo "$1";; *) echo "$prefix/$1";; esac; }
sbin=$(abs "$sbindir"); etc=$(abs "$sysconfdir")/rnfsd; man=$(abs "$mandir")

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$meson" install -C "$build" --no-rebuild --quiet --destdir "$dest" > "$dest.log" 2>&1 || { cat "$dest.log"; rm -f "$dest.log"; fail "meson install"; }
cat "$dest.log"; rm -f "$dest.log"

[ -x "$dest$sbin/rnfsd" ] || fail "no $sbin/rnfsd"
[ -x "$dest$sbin/rnfsctl" ] || fail "no $sbin/rnfsctl"
[ -f "$dest$unitdir/rnfsd.service" ] || fail "no $unitdir/rnfsd.service"
grep -qx "ExecStart=$sbin/rnfsd -f" "$dest$unitdir/rnfsd.service" || fail "ExecStart is not $sbin/rnfsd -f"
grep -q '@' "$dest$unitdir/rnfsd.service" && fail "unsubstituted @...@ in the unit"
for p in man8/rnfsd.8 man8/rnfsctl.8; do
	[ -f "$dest$man/$p" ] || fail "no $man/$p"
	grep -q '@VERSION@' "$dest$man/$p" && fail "unsubstituted @VERSION@ in $p"
done
for p in rnfsd.conf.5 rnfsd-exports.5; do
	if [ -f "$src/docs/$p" ]; then
		[ -f "$dest$man/man5/$p" ] || fail "no $man/man5/$p"
	fi
done
statedir=$(sed -n 's/^ReadWritePaths=-//p' "$dest$unitdir/rnfsd.service")
[ -d "$dest$statedir" ] || fail "state directory $statedir not made"
[ "$(stat -c %a "$dest$statedir")" = 700 ] || fail "state directory $statedir is not mode 700"
n=0
for pair in conf/rnfsd.conf.example:rnfsd.conf conf/exports.default:exports; do
	from=${pair%%:*} to=${pair##*:}
	[ -f "$src/$from" ] || { echo "note: $from not in the tree yet"; continue; }
	n=$((n + 1))
	cmp -s "$src/$from" "$dest$etc/$to" || fail "$etc/$to is not $from"
	echo "# edited by the admin" >> "$dest$etc/$to"
done

# Reinstall: edited configuration must survive.
"$meson" install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null 2>&1 || fail "second meson install"
for to in rnfsd.conf exports; do
	[ -f "$dest$etc/$to" ] || continue
	tail -n 1 "$dest$etc/$to" | grep -qx "# edited by the admin" || fail "$etc/$to overwritten by reinstall"
done
echo "install layout ok ($n /etc/rnfsd examples)"
