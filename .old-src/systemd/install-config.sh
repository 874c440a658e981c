#!/bin/sh
# install-config.sh DIR SOURCE NAME [SOURCE NAME ...]
# meson install script: copy each SOURCE to $DESTDIR/DIR/NAME unless a file
# is already there, so that reinstalling never overwrites an admin's
# configuration. A SOURCE that does not exist (yet) is skipped with a note.
set -eu
dir=$1
shift
dest="${DESTDIR:-}$dir"
while [ $# -ge 2 ]; do
	src=$1 name=$2
	shift 2
	if [ ! -f "$src" ]; then
		echo "install-config: $src not in the source tree, $dir/$name not installed"
		continue
	fi
	if [ -e "$dest/$name" ] || [ -L "$dest/$name" ]; then
		echo "install-config: keeping existing $dest/$name"
		continue
	fi
	if [ "${MESON_INSTALL_DRY_RUN:-}" ]; then
		echo "install-config: would install $dest/$name"
		continue
	fi
	install -d -m 0755 "$dest"
	install -m 0644 "$src" "$dest/$name"
	echo "install-config: installed $dest/$name"
done
