#!/bin/sh
# Run the tests that span a reboot (tests/vm/tests/reboot/*): each one boots
# the guest several times over the same disk images, with sluice.boot=<n> on
# the kernel command line; the test sees $SLUICE_BOOT. By default two boots
# over two images, /dev/vda (512 MiB, for a pool) and /dev/vdb (64 MiB, for
# the agent's state). A test may say otherwise in its header:
#   # disks: a.img:512M b.img:512M state.img:64M   the images and sizes
#   # boots: 3                                     how many boots
#   # drives2: b.img a.img state.img               boot 2's drives, in order
#                                                  (vda, vdb, ...); an image
#                                                  left out is unplugged
# A later boot runs even when an earlier one failed, so that its log says
# what survived. Usage: reboot.sh [-t tests] [-o outdir] [-T timeout_s] [-Q "qemu args"]
# Prints ok/not ok lines named <test>/boot<n>, writes <outdir>/vm.counts.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sel=reboot out=$here/out/reboot timeout=600 qemu_extra=""
while getopts t:o:T:Q: opt; do
	case $opt in
	t) sel=$OPTARG ;;
	o) out=$OPTARG ;;
	T) timeout=$OPTARG ;;
	Q) qemu_extra=$OPTARG ;;
	*) exit 2 ;;
	esac
done
mkdir -p "$out"
. "$here/guest/select.sh"
. "$here/counts.sh"

for t in $(list_tests "$here/tests"); do
	case $t in reboot/*) ;; *) continue ;; esac
	selected "$t" || continue
	dir=$out/$(echo "$t" | tr / _)
	rm -rf "$dir"
	mkdir -p "$dir"
	file=$here/tests/$t
	header() {
		sed -n "s/^# $1: *//p" "$file" | head -n 1
	}
	images=$(header disks)
	[ -n "$images" ] || images="pool.img:512M state.img:64M"
	for img in $images; do
		truncate -s "${img#*:}" "$dir/${img%%:*}"
	done
	boots=$(header boots)
	for boot in $(seq "${boots:-2}"); do
		order=$(header "drives$boot")
		[ -n "$order" ] || order=$(for img in $images; do echo "${img%%:*}"; done)
		disks=""
		for img in $order; do
			disks="$disks -drive file=$dir/$img,format=raw,if=virtio"
		done
		# shellcheck disable=SC2086
		"$here/run.sh" -t "$t" -o "$dir/boot$boot" -T "$timeout" -Q "$qemu_extra $disks" \
			-A "sluice.boot=$boot" > "$dir/boot$boot.out" 2>&1 || true
		sed -n "s%^\(ok\|not ok\) \([^ ]*\)%\1 \2/boot$boot%p" "$dir/boot$boot.out"
		count "$dir/boot$boot/vm.counts" "$t/boot$boot"
	done
done
echo "$passed $failed $skipped" > "$out/vm.counts"
[ "$failed" = 0 ]
