#!/bin/sh
# Install the Debian packages the build and the tests need. Idempotent and
# quick when everything is present: apt-get runs only for what is missing.
# Both kernels the modules are built and tested for (mk/kver.sh): Debian 12's
# own 6.1 and the 6.12 of its security archive, each through the metapackage
# that follows its newest release, image and headers alike.
set -eu
pkgs="make gcc libc6-dev linux-image-cloud-amd64 linux-headers-cloud-amd64
linux-image-6.12-cloud-amd64 linux-headers-6.12-cloud-amd64
qemu-system-x86 busybox-static fio dmsetup libdevmapper-dev sparse
linux-source-6.1 cpio kmod xz-utils clang libclang-rt-14-dev e2fsprogs jq
libjansson-dev libsqlite3-dev libblkid-dev libmicrohttpd-dev liburing-dev libgnutls28-dev libcurl4-gnutls-dev prometheus openssl wrk
nvme-cli"
# npm (with node) installs the OpenAPI validator; a machine may have its own
command -v npm > /dev/null 2>&1 || pkgs="$pkgs npm"

# one dpkg-query for all: a package it does not list is not installed
# shellcheck disable=SC2086
installed=" $(dpkg-query -W -f='${db:Status-Status} ${Package}\n' $pkgs 2> /dev/null |
	awk '$1 == "installed" { printf "%s ", $2 }')"
missing=""
for p in $pkgs; do
	case $installed in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
