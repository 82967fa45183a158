#!/bin/sh
# Build dm-sluice.ko and dm-sluice-weight.ko for one kernel release in
# build/k-<release>/, where the module sources are linked in from dmtarget/.
# Each kernel's objects and modules stay in a directory of their own, so
# those built for one kernel never stand in for another's, and builds for two
# kernels follow each other without rebuilding what did not change.
# Usage: modules.sh <release> [<kbuild argument>...]
# Without arguments Kbuild runs only when a source is newer than the modules
# (it takes seconds even when nothing changed); with some (lint.sh: C=2) it
# always runs, with them.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
kver=$1
shift
src=$root/dmtarget
dir=$root/build/k-$kver
kdir=/lib/modules/$kver/build
if [ ! -d "$kdir" ]; then
	echo "modules.sh: no headers for $kver ($kdir)" >&2
	exit 1
fi
mkdir -p "$dir"

# the sources, as links: a new one in (and a build), a removed one out
fresh=0
find "$dir" -maxdepth 1 -xtype l -delete
for f in "$src"/Kbuild "$src"/*.c "$src"/*.h; do
	case $f in *.mod.c) continue ;; esac
	[ -e "$f" ] || continue
	if [ ! -L "$dir/${f##*/}" ]; then
		ln -s "$f" "$dir/${f##*/}"
		fresh=1
	fi
done

# up to date: both modules there, and no source (through its link) newer
up_to_date() {
	for k in "$dir/dm-sluice.ko" "$dir/dm-sluice-weight.ko"; do
		[ -e "$k" ] || return 1
		[ -z "$(find -L "$dir" -maxdepth 1 \( -name Kbuild -o -name '*.[ch]' \) \
			! -name '*.mod.c' -newer "$k" | head -n 1)" ] || return 1
	done
}
if [ $# = 0 ] && [ $fresh = 0 ] && up_to_date; then
	exit 0
fi
make --no-print-directory -s -C "$kdir" M="$dir" "$@" modules
# what Kbuild left as it was (nothing to relink) is up to date all the same
touch "$dir/dm-sluice.ko" "$dir/dm-sluice-weight.ko"
