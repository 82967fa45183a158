#!/bin/sh
# make run: boot the appliance in qemu (TCG) on a copy-on-write copy of the
# image, with a blank sparse 8 GiB data disk, the API forwarded to
# 127.0.0.1:8080 and NVMe/TCP to 127.0.0.1:4420, and the console on this
# terminal (Ctrl-a x quits, Ctrl-a c is qemu's monitor). Once the API
# answers, the URL and the admin token are printed here; the token is kept in
# <dir>/admin.token, since the appliance shows it on the console at its first
# boot only. The disks stay in <dir> (rm -rf it to start afresh).
# Usage: run.sh <image.qcow2> <dir>
set -eu
image=$(cd "$(dirname "$1")" && pwd)/${1##*/}
dir=$2
port=${SLUICE_PORT:-8080}
nvme_port=${SLUICE_NVME_PORT:-4420}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -e "$dir/root.qcow2" ] || qemu-img create -q -f qcow2 -b "$image" -F qcow2 "$dir/root.qcow2"
[ -e "$dir/data.raw" ] || truncate -s 8G "$dir/data.raw"
con=$dir/console.log
: > "$con"

# the URL and the token, once the appliance's console says the API is up
(
	i=0
	until grep -aq 'sluice: API ready' "$con" 2> /dev/null; do
		i=$((i + 1))
		[ $i -lt 900 ] || exit 0
		sleep 1
	done
	tok=$(sed -n 's/.*sluice: admin token \([0-9a-f]\{64\}\).*/\1/p' "$con" | head -n 1)
	if [ -n "$tok" ]; then
		(umask 077 && echo "$tok" > "$dir/admin.token")
	fi
	tok=$(cat "$dir/admin.token" 2> /dev/null || echo "(not seen: it was shown at the image's first boot)")
	# the certificate served, for sluicectl --cacert (its fingerprint is on the console to compare)
	openssl s_client -connect "127.0.0.1:$port" < /dev/null 2> /dev/null |
		openssl x509 > "$dir/cert.pem" 2> /dev/null || true
	fp=$(openssl x509 -in "$dir/cert.pem" -noout -fingerprint -sha256 2> /dev/null | sed 's/.*=//')
	printf '\r\n\r\n== sluice appliance: API https://127.0.0.1:%s/v1\r\n' "$port"
	printf '== admin token %s (kept in %s/admin.token)\r\n' "$tok" "$dir"
	printf '== certificate %s/cert.pem, SHA-256 %s\r\n\r\n' "$dir" "$fp"
) &
watcher=$!
trap 'kill $watcher 2> /dev/null || true' EXIT INT TERM

echo "sluice: booting $image (TCG: the API is up after a minute or two); Ctrl-a x quits"
qemu-system-x86_64 -accel tcg -machine q35 -cpu max -smp 2 -m 2048 -nographic \
	-chardev "stdio,id=con,mux=on,signal=off,logfile=$con" -serial chardev:con -mon chardev=con \
	-drive "file=$dir/root.qcow2,if=virtio,format=qcow2" \
	-drive "file=$dir/data.raw,if=virtio,format=raw" \
	-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$port-:8080,hostfwd=tcp:127.0.0.1:$nvme_port-:4420"
