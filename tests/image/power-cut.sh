#!/bin/sh
# The appliance survives losing power during its first boot: boot a fresh
# copy-on-write copy of the image, pull the plug (SIGKILL) the moment the
# console shows the admin token (the certificate and token made seconds
# before, likely still only in the page cache), boot it again: the API must
# answer, with the same token, and no unit may have failed.
# Usage: power-cut.sh <image.qcow2> <outdir> <counts file>
set -u
image=$1 out=$2 counts=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/mk/report.sh"
. "$root/tests/image/lib.sh"
port=${SMOKE_PORT:-18443}
boot_timeout=${SMOKE_BOOT_TIMEOUT:-420}
rm -rf "$out"
mkdir -p "$out"
qpid=""
finish() {
	[ -z "$qpid" ] || { kill -9 "$qpid" 2> /dev/null; wait "$qpid" 2> /dev/null; }
	report_counts "$counts"
	exit 0
}
# boot <console log>: the appliance on the copy, in the background
boot() {
	con=$1
	appliance_boot "$out/root.qcow2" "$con" "$port" 2>> "$out/qemu.err"
}

st=0 why=""
if [ ! -s "$image" ]; then
	st=1 why="no image at $image"
else
	appliance_overlay "$image" "$out/root.qcow2"
	boot "$out/console-1.log"
	wait_for 'sluice: admin token [0-9a-f]{64}' "$boot_timeout" ||
		st=1 why="first boot: no admin token on the console"
	kill -9 "$qpid" 2> /dev/null
	wait "$qpid" 2> /dev/null
	token=$(sed -n 's/.*sluice: admin token \([0-9a-f]\{64\}\).*/\1/p' "$out/console-1.log" | head -n 1)
fi
if [ $st = 0 ]; then
	boot "$out/console-2.log"
	wait_for 'sluice: (API ready|the API did not answer)|Failed to start' "$boot_timeout" ||
		st=1 why="second boot: nothing from the API on the console"
fi
if [ $st = 0 ]; then
	sleep 2
	bad=$(grep -a 'FAILED\|Failed to start\|did not answer' "$con" | head -n 3)
	[ -z "$bad" ] || st=1 why="second boot: $bad"
fi
if [ $st = 0 ]; then
	code=$(curl -sk -o "$out/body" -w '%{http_code}' -H "Authorization: Bearer $token" \
		"https://127.0.0.1:$port/v1/tenants")
	[ "$code" = 200 ] || st=1 why="second boot: GET /v1/tenants with the first boot's token: HTTP $code"
fi
report image/power-cut-in-first-boot $st
[ $st = 0 ] || echo "# $why; consoles in $out"
finish
