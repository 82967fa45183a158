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

ko="$dir/dm-sluice.ko $dir/dm-sluice-weight.ko"
if [ $# = 0 ] && [ $fresh = 0 ]; then
	stale=0
	for k in $ko; do
		[ -e "$k" ] || stale=1
	done
	if [ $stale = 0 ]; then
		# the older of the two modules against every source (through its link)
		oldest=$(ls -tr $ko | head -n 1)
		newer=$(find -L "$dir" -maxdepth 1 \( -name Kbuild -o -name '*.[ch]' \) \
			! -name '*.mod.c' -newer "$oldest" | head -n 1)
		[ -n "$newer" ] || exit 0
	fi
fi
make --no-print-directory -s -C "$kdir" M="$dir" "$@" modules
# what Kbuild left as it was (nothing to relink) is up to date all the same
# shellcheck disable=SC2086
touch $ko
