#!/bin/sh
# Build the guest's initramfs in two layers, concatenated by the caller (the
# kernel unpacks concatenated newc archives in order):
#   base    busybox, dmsetup, fio, mke2fs, their shared libraries and the
#           kernel's own modules the tests use. Changes only with the packages.
#   overlay the project's modules and binaries, /init and the guest tests.
#           Rebuilt on every run; small.
# Usage: mkinitramfs.sh base <kver> <out.cpio>
#        mkinitramfs.sh base-if-stale <kver> <out.cpio>  (missing or older than
#                                                       the scripts building it)
#        mkinitramfs.sh overlay <kver> <out.cpio> <repo-root>
#        mkinitramfs.sh initrd <kver> <out.cpio> <repo-root> <base.cpio>
#                                  (the base if stale, a fresh overlay, the two
#                                  concatenated: what the guest boots)
set -eu

mode=$1 kver=$2 out=$3
if [ "$mode" = initrd ]; then
	"$0" base-if-stale "$kver" "$5"
	"$0" overlay "$kver" "$out.overlay" "$4"
	cat "$5" "$out.overlay" > "$out.tmp"
	rm -f "$out.overlay"
	mv "$out.tmp" "$out"
	exit 0
fi
if [ "$mode" = base-if-stale ]; then
	here=$(dirname "$0")
	if [ -s "$out" ] && ! [ "$here/mkinitramfs.sh" -nt "$out" ] &&
		! [ "$here/stub-libs.sh" -nt "$out" ]; then
		exit 0
	fi
	mode=base
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$stage.stubs"' EXIT

# copy_with_libs <program>...: the programs and their shared libraries; a
# library found in $stubs (see stub-libs.sh) goes in as its stand-in.
stubs=$stage.stubs
copy_with_libs() {
	for bin in "$@"; do
		mkdir -p "$stage$(dirname "$bin")"
		cp -L "$bin" "$stage$bin"
		LD_LIBRARY_PATH=$stubs ldd "$bin" |
		awk '/=>/ && $3 ~ /^\// {print $3} /^[[:space:]]*\/[^ ]*ld-linux/ {print $1}' |
		while read -r lib; do
			dest=$lib
			case $lib in "$stubs"/*) dest=/lib/x86_64-linux-gnu/${lib##*/} ;; esac
			[ -e "$stage$dest" ] && continue
			mkdir -p "$stage$(dirname "$dest")"
			cp -L "$lib" "$stage$dest"
		done
	done
}

# Copy a kernel module and, through modules.dep, everything it depends on. A
# module built into the kernel (6.12 builds in some that 6.1 has as modules)
# needs nothing. Compressed modules (6.12's are .ko.xz) go in decompressed:
# busybox's insmod and modprobe load only plain ones, and the guest's depmod
# lists what it finds.
copy_module() {
	moddir=/lib/modules/$kver
	rel=$(awk -F: -v m="/$1.ko" '{ f = $1; sub(/\.xz$/, "", f) }
		index(f, m) && substr(f, length(f) - length(m) + 1) == m {print; exit}' \
		"$moddir/modules.dep")
	if [ -z "$rel" ]; then
		grep -q "/$1\.ko\$" "$moddir/modules.builtin" 2> /dev/null && return 0
		echo "mkinitramfs: module $1 not found for $kver" >&2
		exit 1
	fi
	for f in ${rel%%:*} ${rel#*:}; do
		mkdir -p "$stage$moddir/$(dirname "$f")"
		case $f in
		*.ko.xz) xz -dc "$moddir/$f" > "$stage$moddir/${f%.xz}" ;;
		*) cp "$moddir/$f" "$stage$moddir/$f" ;;
		esac
	done
}

pack() {
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$out.tmp"
	mv "$out.tmp" "$out"
}

case $mode in
base)
	mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" "$stage/dev" \
		"$stage/proc" "$stage/sys" "$stage/tmp" "$stage/run" "$stage/etc" "$stage/mnt" "$stage/root"
	cp /bin/busybox "$stage/bin/busybox"
	# fio's engines for Ceph, Gluster, NBD, RDMA and PMDK are never used
	"$(dirname "$0")/stub-libs.sh" /usr/bin/fio "$stubs" libgfapi.so.0 libnbd.so.0 \
		libibverbs.so.1 librdmacm.so.1 librados.so.2 librbd.so.1 libpmemblk.so.1 libpmem.so.1
	copy_with_libs /usr/sbin/dmsetup /usr/bin/fio /sbin/mke2fs /usr/bin/wrk /usr/sbin/nvme
	for m in dm-mod dm-delay dm-flakey dm-zero brd configfs null_blk bfq mq-deadline virtio_blk virtio_pci loop \
		nvmet nvmet-tcp nvme-tcp virtio_net qemu_fw_cfg; do
		copy_module "$m"
	done
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		cp "/lib/modules/$kver/$f" "$stage/lib/modules/$kver/$f"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' > "$stage/etc/passwd"
	printf 'root:x:0:\n' > "$stage/etc/group"
	;;
overlay)
	root=$4
	mkdir -p "$stage/lib/modules/$kver/extra" "$stage/sluice"
	# the project's modules as built for this kernel (mk/modules.sh)
	for ko in "$root/build/k-$kver"/*.ko; do
		[ -e "$ko" ] && cp "$ko" "$stage/lib/modules/$kver/extra/"
	done
	# the project's programs, with the libraries the base does not have
	for bin in "$root"/build/bin/*; do
		[ -x "$bin" ] || continue
		mkdir -p "$stage/usr/sbin"
		cp "$bin" "$stage/usr/sbin/"
		ldd "$bin" | awk '/=>/ && $3 ~ /^\// {print $3}' | while read -r lib; do
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done
	done
	# two self-signed certificates for 127.0.0.1, for the HTTPS test (made
	# once): the second replaces the first at a SIGHUP
	tls=$root/build/test-tls
	for c in "" 2; do
		[ ! -s "$tls/cert$c.pem" ] || continue
		mkdir -p "$tls"
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=127.0.0.1 \
			-addext subjectAltName=IP:127.0.0.1 -keyout "$tls/key$c.pem" \
			-out "$tls/cert$c.pem" > /dev/null 2>&1
	done
	cp -r "$tls" "$stage/sluice/tls"
	cp "$root/tests/vm/guest/init" "$stage/init"
	chmod 755 "$stage/init"
	cp -r "$root/tests/vm/guest" "$stage/sluice/guest"
	cp -r "$root/tests/vm/tests" "$stage/sluice/tests"
	mkdir -p "$stage/sluice/bench"
	cp -r "$root/bench/lib.sh" "$root/bench/runner.sh" "$root/bench/scenarios" "$stage/sluice/bench/"
	;;
*)
	echo "usage: $0 base|overlay <kver> <out> [root]" >&2
	exit 2
	;;
esac
pack
