#!/bin/sh
# Print the kernel release of the installed linux-image-cloud-amd64, the kernel
# the guest boots and the modules are built for. The host's own running kernel
# (uname -r) is unrelated and never used.
set -eu
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
printf '%s\n' "$img"
