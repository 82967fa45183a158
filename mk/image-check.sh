#!/bin/sh
# make test's (and make test-image's) check of the appliance: the image
# builds from the packages in <debdir> (packaging/image/build.sh), is no
# larger than the bench's bound allows, and passes tests/image/smoke.sh,
# tests/image/power-cut.sh and tests/image/two-machines.sh.
# Counts to <counts>. Usage: image-check.sh <counts> <debdir> <image>
set -u
counts=$1 debs=$2 image=$3
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/mk/report.sh"
log=${image%.qcow2}-build.log
mkdir -p "$(dirname "$image")"
"$root/packaging/image/build.sh" "$debs" "$image" > "$log" 2>&1
rc=$?
report image/build-from-packages $rc "$log" 20
if [ $rc != 0 ]; then
	report_counts "$counts"
	exit 0
fi
for t in smoke power-cut two-machines; do
	"$root/tests/image/$t.sh" "$image" "$(dirname "$image")/$t" "$counts.$t"
	read -r p f s < "$counts.$t" || { p=0 f=1 s=0; }
	passed=$((passed + p)) failed=$((failed + f))
done
report_counts "$counts"
