#!/bin/bash
# deb-build.sh OUTDIR SRCDIR
# Builds the Debian packages (debian/) from a copy of the source tree under
# OUTDIR (the build directory, never /tmp: the VM guest reads them), twice:
#   OUTDIR/v1: the tree's own version (dpkg-buildpackage -us -uc -b);
#   OUTDIR/v2: the same tree rebuilt (-nc: the compiled objects are reused)
#              with a higher version, a changelog entry added to the copy
#              only, for the upgrade step of vm-deb-check.sh.
# Then lintian on v1, which must report no error (its tags are printed).
# Exit 0 / 1, or 77 when dpkg-buildpackage or debhelper is missing
# (./dev.sh deps installs them).
set -u
OUT=$(readlink -m "$1") SRC=$(readlink -f "$2")
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
	{ echo "SKIP: dpkg-buildpackage or debhelper (dh) missing: ./dev.sh deps"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/src/rnfsd" "$OUT/v1" "$OUT/v2" || exit 1
tar -C "$SRC" --exclude='./build*' --exclude=./.git --exclude='./obj-*' -cf - . |
	tar -C "$OUT/src/rnfsd" -xf - || exit 1
cd "$OUT/src/rnfsd" || exit 1
t0=$(date +%s)
# A plain run of the build: one line per step, the whole log on failure.
dpkgbuild() { # dpkgbuild LOG DEST [dpkg-buildpackage options]
	local log=$1 dest=$2; shift 2
	if ! DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b "$@" > "$log" 2>&1; then
		tail -n 60 "$log"; echo "FAIL: dpkg-buildpackage $* (log: $log)"; exit 1
	fi
	mv ../*.deb ../*.changes ../*.buildinfo "$dest"/ || exit 1
}
dpkgbuild "$OUT/v1.log" "$OUT/v1"
t1=$(date +%s)
V1=$(dpkg-parsechangelog -S Version) V2=$(dpkg-parsechangelog -S Version)+vmtest1
{ printf 'rnfsd (%s) unstable; urgency=medium\n\n  * Test rebuild for the upgrade step (tests/ops/deb-build.sh).\n\n -- %s  %s\n\n' \
	"$V2" "$(dpkg-parsechangelog -S Maintainer)" "$(date -R)"; cat debian/changelog; } > debian/changelog.new &&
	mv debian/changelog.new debian/changelog || exit 1
dpkgbuild "$OUT/v2.log" "$OUT/v2" -nc
t2=$(date +%s)
echo "built $V1 in $((t1 - t0)) s and $V2 in $((t2 - t1)) s:"
for d in v1 v2; do
	for f in "$OUT/$d"/*.deb; do echo "  $d/$(basename "$f"): $(dpkg-deb -c "$f" | grep -vc '/$') files"; done
done
if command -v lintian >/dev/null; then
	lintian --fail-on error --tag-display-limit 0 "$OUT"/v1/*.changes > "$OUT/lintian.txt" 2>&1
	lrc=$?
	echo "lintian (exit $lrc, $(($(date +%s) - t2)) s):"; sed 's/^/  /' "$OUT/lintian.txt"
	[ $lrc -eq 0 ] || { echo "FAIL: lintian reports errors"; exit 1; }
else
	echo "lintian not installed: not checked"
fi
exit 0
