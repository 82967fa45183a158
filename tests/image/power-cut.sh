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
# boot <console log> [qemu args]: the appliance in the background
boot() {
	con=$1
	shift
	qemu-system-x86_64 -accel tcg -machine q35 -cpu max -smp 2 -m 1024 -display none \
		-serial "file:$con" -monitor none \
		-drive "file=$out/root.qcow2,if=virtio,format=qcow2" \
		-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$port-:8080" \
		"$@" 2>> "$out/qemu.err" &
	qpid=$!
}
# wait_for <regex> <seconds>: the console shows a line matching it
wait_for() {
	i=0
	while ! grep -aEq "$1" "$con" 2> /dev/null; do
		kill -0 "$qpid" 2> /dev/null || return 1
		i=$((i + 1))
		[ $i -le "$2" ] || return 1
		sleep 0.5
	done
}

st=0 why=""
if [ ! -s "$image" ]; then
	st=1 why="no image at $image"
else
	qemu-img create -q -f qcow2 -b "$(cd "$(dirname "$image")" && pwd)/${image##*/}" \
		-F qcow2 "$out/root.qcow2"
	boot "$out/console-1.log"
	wait_for 'sluice: admin token [0-9a-f]{64}' $((boot_timeout * 2)) ||
		st=1 why="first boot: no admin token on the console"
	kill -9 "$qpid" 2> /dev/null
	wait "$qpid" 2> /dev/null
	token=$(sed -n 's/.*sluice: admin token \([0-9a-f]\{64\}\).*/\1/p' "$out/console-1.log" | head -n 1)
fi
if [ $st = 0 ]; then
	boot "$out/console-2.log"
	wait_for 'sluice: (API ready|the API did not answer)|Failed to start' $((boot_timeout * 2)) ||
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
