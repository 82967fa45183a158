#!/bin/sh
# make image: the appliance as a bootable qcow2, from Debian's packages only.
# debootstrap (Debian 12, from the mirror apt already uses), the 6.12 cloud
# kernel of Debian 12's security archive (the only kernel in it), DKMS with
# the headers (so the modules are rebuilt for a new kernel), the two packages
# of `make deb`, and the image's own files (files/). The disk: an MBR with
# syslinux, a FAT boot partition holding the kernel and initramfs, and an
# ext4 root made by mke2fs -d, so no loop device or mount of the image is
# needed. Usage: build.sh <debdir> <out.qcow2>
set -eu
here=$(cd "$(dirname "$0")" && pwd)
debs=$(cd "$1" && pwd)
out=$2
work=$(dirname "$out")/image-work
mkdir -p "$work"
work=$(cd "$work" && pwd)
rootfs=$work/rootfs
cache=$work/cache
suite=bookworm
# the mirrors of the host's own sources (deb822 or one-line form)
uris=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p; s/^deb \(\[[^]]*\] \)\?\(http[^ ]*\) bookworm[-a-z]* .*/\2/p' \
	/etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2> /dev/null | sed 's|/$||')
mirror=$(printf '%s\n' "$uris" | grep '/debian$' | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
security=$(printf '%s\n' "$uris" | grep '/debian-security$' | head -n 1)
security=${security:-http://deb.debian.org/debian-security}
boot_mib=128 root_mib=3072

need=""
for p in debootstrap syslinux syslinux-common mtools dosfstools qemu-utils e2fsprogs fdisk; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
	echo "image: installing$need"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need > /dev/null
fi

umount_all() {
	for m in dev/pts dev proc sys; do
		mountpoint -q "$rootfs/$m" 2> /dev/null && umount -l "$rootfs/$m"
	done
	return 0
}
trap umount_all EXIT INT TERM
umount_all
rm -rf "$rootfs"
mkdir -p "$cache" "$rootfs"

pkgs=systemd-sysv,udev,kmod,dbus,iproute2,e2fsprogs,util-linux,procps,less,openssl,ca-certificates,curl,initramfs-tools
echo "image: debootstrap $suite from $mirror"
debootstrap --variant=minbase --cache-dir="$cache" --include="$pkgs" \
	"$suite" "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$work/debootstrap.log"; exit 1; }

mount -t proc proc "$rootfs/proc"
mount -t sysfs sys "$rootfs/sys"
mount --bind /dev "$rootfs/dev"
mount --bind /dev/pts "$rootfs/dev/pts"
# no service starts inside the build
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
cat > "$rootfs/etc/apt/sources.list" <<SRC
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
SRC
# The root disk is found by label, so the initramfs needs no host probing.
mkdir -p "$rootfs/etc/initramfs-tools/conf.d"
echo "MODULES=most" > "$rootfs/etc/initramfs-tools/conf.d/sluice"
mkdir -p "$rootfs/tmp/debs"
cp "$debs"/sluiced_*.deb "$debs"/sluice-dkms_*.deb "$rootfs/tmp/debs/"
chroot "$rootfs" /bin/sh -ec '
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends linux-image-6.12-cloud-amd64 \
		linux-headers-6.12-cloud-amd64 dkms gcc make libc6-dev xz-utils
	apt-get install -y -q --no-install-recommends /tmp/debs/*.deb
' > "$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log"; exit 1; }
# one kernel, 6.12's: the one the boot partition gets
kvers=$(cd "$rootfs/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//')
case $kvers in
6.12.*-cloud-amd64) kver=$kvers ;;
*) echo "image: the kernels installed are '$(echo $kvers)', not one 6.12 cloud kernel"; exit 1 ;;
esac
# DKMS builds for the kernel it runs on; in the build that is the host's
chroot "$rootfs" dkms autoinstall -k "$kver" >> "$work/apt.log" 2>&1 || true
for m in dm-sluice dm-sluice-weight; do
	find "$rootfs/lib/modules/$kver" -name "$m.ko*" | grep -q . ||
		{ tail -n 30 "$work/apt.log"; echo "image: DKMS did not build $m for $kver"; exit 1; }
done

# the image's own files: configuration, first-boot and console units
cp -r "$here/files/." "$rootfs/"
chmod 0755 "$rootfs"/usr/libexec/sluice-image/*
chroot "$rootfs" /bin/sh -ec '
	systemctl enable sluiced.service sluice-firstboot.service \
		sluice-console.service sluice-pools.service sluice-provision.service \
		systemd-networkd.service > /dev/null 2>&1
	systemctl mask systemd-networkd-wait-online.service > /dev/null 2>&1
	passwd -l root > /dev/null
	echo sluice > /etc/hostname
	printf "LABEL=sluice-root / ext4 errors=remount-ro 0 1\n" > /etc/fstab
	update-initramfs -u -k all > /dev/null 2>&1
	apt-get clean
	rm -rf /var/lib/apt/lists/* /tmp/debs /usr/sbin/policy-rc.d
	rm -f /etc/machine-id /var/lib/dbus/machine-id
	: > /etc/machine-id
'
umount_all

# The boot partition: syslinux (installed through mtools) and the kernel.
boot=$work/boot.img
rm -f "$boot"
mkfs.fat -F 16 -n SLUICEBOOT -C "$boot" $((boot_mib * 1024)) > /dev/null
syslinux --install "$boot"
cat > "$work/syslinux.cfg" <<CFG
SERIAL 0 115200
DEFAULT sluice
PROMPT 0
TIMEOUT 0
LABEL sluice
	LINUX /vmlinuz
	INITRD /initrd.img
	APPEND root=LABEL=sluice-root ro console=tty0 console=ttyS0,115200n8
CFG
mcopy -o -i "$boot" "$work/syslinux.cfg" ::/syslinux.cfg
mcopy -o -i "$boot" "$rootfs/boot/vmlinuz-$kver" ::/vmlinuz
mcopy -o -i "$boot" "$rootfs/boot/initrd.img-$kver" ::/initrd.img

# The root file system, filled from the tree without mounting it.
rootimg=$work/root.img
rm -f "$rootimg"
mke2fs -q -t ext4 -L sluice-root -d "$rootfs" "$rootimg" "${root_mib}M"

# The disk: 1 MiB for the MBR, then boot, then root.
disk=$work/disk.raw
rm -f "$disk"
truncate -s $((1 + boot_mib + root_mib))M "$disk"
sfdisk -q "$disk" <<PART
label: dos
start=1MiB, size=${boot_mib}MiB, type=e, bootable
start=$((1 + boot_mib))MiB, type=83
PART
dd if=/usr/lib/syslinux/mbr/mbr.bin of="$disk" bs=440 count=1 conv=notrunc status=none
dd if="$boot" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
dd if="$rootimg" of="$disk" bs=1M seek=$((1 + boot_mib)) conv=notrunc,sparse status=none
qemu-img convert -c -O qcow2 "$disk" "$out.tmp"
mv "$out.tmp" "$out"
rm -f "$disk" "$boot" "$rootimg"
echo "image: $out ($kver, $(($(stat -c %s "$out") / 1048576)) MiB)"
