#!/bin/sh
# Run the tests that span a reboot (tests/vm/tests/reboot/*): each one boots
# the guest twice over the same two disk images, /dev/vda (512 MiB, for a
# pool) and /dev/vdb (64 MiB, for the agent's state), with sluice.boot=1 and
# then sluice.boot=2 on the kernel command line; the test sees $SLUICE_BOOT.
# The second boot runs even when the first failed, so that its log says what
# survived. Usage: reboot.sh [-t tests] [-o outdir] [-T timeout_s] [-Q "qemu args"]
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
	truncate -s 512M "$dir/pool.img"
	truncate -s 64M "$dir/state.img"
	disks="-drive file=$dir/pool.img,format=raw,if=virtio"
	disks="$disks -drive file=$dir/state.img,format=raw,if=virtio"
	for boot in 1 2; do
		# shellcheck disable=SC2086
		"$here/run.sh" -t "$t" -o "$dir/boot$boot" -T "$timeout" -Q "$qemu_extra $disks" \
			-A "sluice.boot=$boot" > "$dir/boot$boot.out" 2>&1 || true
		sed -n "s%^\(ok\|not ok\) \([^ ]*\)%\1 \2/boot$boot%p" "$dir/boot$boot.out"
		count "$dir/boot$boot/vm.counts" "$t/boot$boot"
	done
done
echo "$passed $failed $skipped" > "$out/vm.counts"
[ "$failed" = 0 ]
