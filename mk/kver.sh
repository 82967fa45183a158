#!/bin/sh
# Print the release of the kernel the guest boots and the modules are built
# for, chosen by $KERNEL:
#   6.1 (the default)  the installed linux-image-cloud-amd64 (Debian 12's own)
#   6.12               the newest installed linux-image-6.12.*+deb12-cloud-amd64
#                      (Debian 12's security archive) that has its headers
# The host's own running kernel (uname -r) is unrelated and never used.
set -eu
kernel=${KERNEL:-6.1}

# has <release>: its image and its headers are both there
has() {
	[ -f "/boot/vmlinuz-$1" ] && [ -d "/lib/modules/$1/build" ]
}

case $kernel in
6.1)
	pkg=$(dpkg-query -W -f='${Depends}' linux-image-cloud-amd64 2>/dev/null) || {
		echo "kver.sh: linux-image-cloud-amd64 is not installed (run make deps)" >&2
		exit 1
	}
	img=$(printf '%s\n' "$pkg" | tr ',' '\n' | sed -n 's/^ *linux-image-\([^ ]*\).*/\1/p' | head -n 1)
	if [ -z "$img" ]; then
		echo "kver.sh: cannot read the kernel release from linux-image-cloud-amd64" >&2
		exit 1
	fi
	if [ ! -f "/boot/vmlinuz-$img" ]; then
		echo "kver.sh: /boot/vmlinuz-$img is missing" >&2
		exit 1
	fi
	if [ ! -d "/lib/modules/$img/build" ]; then
		echo "kver.sh: headers for $img are missing (linux-headers-cloud-amd64 must match the image)" >&2
		exit 1
	fi
	;;
6.12)
	img=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'linux-image-6.12.*+deb12-cloud-amd64' 2>/dev/null |
		sed -n 's/^installed linux-image-//p' | sort -V -r |
		while read -r r; do
			if has "$r"; then
				echo "$r"
				break
			fi
		done)
	if [ -z "$img" ]; then
		echo "kver.sh: no linux-image-6.12.*+deb12-cloud-amd64 with its headers is installed (run make deps KERNEL=6.12)" >&2
		exit 1
	fi
	;;
*)
	echo "kver.sh: KERNEL=$kernel: not a kernel this project builds for (6.1 or 6.12)" >&2
	exit 1
	;;
esac
printf '%s\n' "$img"
