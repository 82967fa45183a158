#!/bin/sh
# make bench B=image, on the host: the appliance image's size and the time
# from starting qemu (TCG) to the API answering over the forwarded port, on
# a copy-on-write copy of the image (first boot: certificate, token) and
# again on the same copy (a later boot). Prints "BENCH image <json>".
set -eu
image=$1 work=$2
port=${BENCH_IMAGE_PORT:-18444}
. "$(dirname "$0")/../tests/image/lib.sh"
rm -rf "$work"
mkdir -p "$work"
appliance_overlay "$image" "$work/root.qcow2"
# seconds from qemu's start until GET /v1/health answers, or fail after 600
boot_to_api() {
	t0=$(date +%s.%N)
	appliance_boot "$work/root.qcow2" "$work/console-$1.log" "$port"
	q=$qpid
	i=0
	until curl -skf -m 2 "https://127.0.0.1:$port/v1/health" > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 1200 ] && kill -0 $q 2> /dev/null || { kill $q 2> /dev/null; echo "bench image: no API" >&2; return 1; }
		sleep 0.5
	done
	t1=$(date +%s.%N)
	kill $q
	wait $q 2> /dev/null || true
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}
first=$(boot_to_api first)
again=$(boot_to_api again)
mib=$(awk -v s="$(stat -c %s "$image")" 'BEGIN { printf "%.1f", s / 1048576 }')
virt=$(qemu-img info --output=json "$image" | jq '."virtual-size" / 1048576 | floor')
echo "# image $image: $mib MiB qcow2 ($virt MiB virtual); API after $first s (first boot), $again s (later boot)"
printf 'BENCH image {"qcow2_mib":%s,"qcow2_mib_max":600,"qcow2_mib_ok":%s,"virtual_mib":%s,"boot_to_api_s":%s,"boot_to_api_later_s":%s,"accel":"tcg"}\n' \
	"$mib" "$(awk -v m="$mib" 'BEGIN { print (m <= 600) ? "true" : "false" }')" "$virt" "$first" "$again"
