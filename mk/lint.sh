#!/bin/sh
# Kernel style checks on the module sources, reported as tests:
# checkpatch.pl (from Debian's linux-source, run out of tree) and sparse
# (make C=2, which checks every file, built or not) against the headers of
# the kernel KERNEL selects (mk/kver.sh). Writes counts to $1.
set -u
counts=$1
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
kver=$("$root/mk/kver.sh")
. "$root/mk/report.sh"

cp_dir=$build/checkpatch
if [ ! -x "$cp_dir/checkpatch.pl" ]; then
	mkdir -p "$cp_dir"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$cp_dir" --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for f in "$root"/dmtarget/*.c "$root"/dmtarget/*.h; do
	case $f in *.mod.c) continue ;; esac
	"$cp_dir/checkpatch.pl" --no-tree --quiet --show-types -f "$f" > "$log" 2>&1
	rc=$?
	report "lint/checkpatch/$(basename "$f")" "$rc" "$log" 40
done

# in the kernel's own build directory of the modules (mk/modules.sh)
"$root/mk/modules.sh" "$kver" C=2 CF="-D__CHECK_ENDIAN__" > "$log" 2>&1
rc=$?
# sparse reports as warnings on stderr; any line naming a source file fails
# (by its name alone: newer kernels build in the module's directory)
if [ "$rc" = 0 ] && grep -Eq '(^|/)sluice[^/: ]*\.[ch]:[0-9]+(:[0-9]+)?: (warning|error)' "$log"; then
	rc=1
fi
report "lint/sparse/$kver" "$rc" "$log" 40
report_counts "$counts"
[ "$failed" = 0 ]
