#!/bin/sh
# The appliance image's smoke test: boot a copy-on-write copy of the image
# with a blank 8 GiB data disk, wait for the API (over the forwarded port,
# TLS checked against the certificate whose fingerprint the console shows),
# register the blank disk as a pool, create a tenant and a volume with a
# policy through the API; the provisioning script (fw_cfg) writes a pattern
# chosen here through the volume and reboots the appliance (systemctl
# reboot; QEMU leaves at the reset and the test starts it again, see
# appliance_wait_reset); after the reboot the volume, its policy and the pattern
# must be intact.
# Usage: smoke.sh <image.qcow2> <outdir> <counts file>
set -u
image=$1 out=$2 counts=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/mk/report.sh"
. "$root/tests/image/lib.sh"
port=${SMOKE_PORT:-18443}
boot_timeout=${SMOKE_BOOT_TIMEOUT:-420}
rm -rf "$out"
mkdir -p "$out"
# check <name> <status> [why]: one result line, the reason as a comment
check() {
	report "$1" "$2"
	[ "$2" = 0 ] || [ -z "${3:-}" ] || echo "# $3"
}
finish() {
	[ -z "${qpid:-}" ] || kill "$qpid" 2> /dev/null
	[ -z "${qpid:-}" ] || wait "$qpid" 2> /dev/null
	[ "$failed" = 0 ] || echo "# consoles: $out/console-*.log"
	report_counts "$counts"
	exit 0
}

if [ ! -s "$image" ]; then
	check image/first-boot 1 "no image at $image"
	finish
fi
appliance_overlay "$image" "$out/root.qcow2"
qemu-img create -q -f qcow2 "$out/data.qcow2" 8G
seed=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
pattern() { yes "sluice smoke $seed" | head -c 8388608; }
want=$(pattern | sha256sum | cut -d' ' -f1)
cat > "$out/provision.sh" <<GUEST
#!/bin/sh
# written by tests/image/smoke.sh: a pattern through volume v1, then reboot;
# after the reboot its checksum and the appliance's failed units
m=/var/lib/sluice-smoke dev=/dev/mapper/sluice-acme.v1
mkdir -p \$m
i=0
until [ -b \$dev ]; do
	i=\$((i + 1))
	[ \$i -lt 600 ] || { echo "SMOKE no volume"; exit 1; }
	sleep 1
done
if [ -e \$m/written ]; then
	echo "SMOKE read \$(head -c 8388608 \$dev | sha256sum | cut -d' ' -f1)"
	sleep 5
	echo "SMOKE failed-units \$(systemctl list-units --failed --plain --no-legend | wc -l)"
	echo "SMOKE kernel-reports \$(dmesg | grep -cE 'BUG:|WARNING:|Oops|still has objects|blocked for more than|circular locking')"
	echo "SMOKE sluiced \$(systemctl is-active sluiced)"
	echo "SMOKE done"
else
	yes "sluice smoke $seed" | head -c 8388608 | dd of=\$dev bs=1M oflag=direct conv=fsync status=none
	: > \$m/written
	sync
	echo "SMOKE wrote"
	systemctl reboot
fi
GUEST

# boot <console log>: the appliance, in the background, until it resets
boot() {
	con=$1
	appliance_boot "$out/root.qcow2" "$con" "$port" -no-reboot \
		-drive "file=$out/data.qcow2,if=virtio,format=qcow2" \
		-fw_cfg "name=opt/org.sluice/provision,file=$out/provision.sh" 2>> "$out/qemu.err"
}
t0=$(date +%s)
boot "$out/console-1.log"
trap 'finish' INT TERM

# -- first boot: the API, the token, the certificate, the blank disk offered
st=0 why=""
wait_for 'sluice: admin token [0-9a-f]{64}' "$boot_timeout" || { st=1 why="no admin token on the console"; }
t_api=$(($(date +%s) - t0))
appliance_login
fp=$(sed -n 's/.*TLS certificate SHA-256 fingerprint \([0-9A-F:]*\).*/\1/p' "$con" | head -n 1)
served=$(openssl x509 -in "$out/cert.pem" -noout -fingerprint -sha256 2> /dev/null | sed 's/.*=//')
[ $st = 0 ] && [ -z "$fp" -o "$fp" != "$served" ] && st=1 why="console fingerprint '$fp', served '$served'"
[ $st = 0 ] && ! wait_for 'sluice: /dev/vdb \(8.0 GiB, blank\) is offered as a pool' 60 &&
	st=1 why="the blank disk was not offered"
check image/first-boot $st "$why"

# -- TLS 1.2 and 1.3 only: an older client is refused, a TLS 1.2 one served
st=0 why=""
if openssl s_client -tls1_1 -connect "127.0.0.1:$port" < /dev/null > "$out/tls11" 2>&1 &&
	grep -q "^ *Protocol *: TLSv1.1" "$out/tls11"; then
	st=1 why="TLS 1.1 was negotiated"
fi
openssl s_client -tls1_2 -connect "127.0.0.1:$port" < /dev/null > "$out/tls12" 2>&1 ||
	{ st=1 why="TLS 1.2 was refused: $(tail -n 3 "$out/tls12")"; }
check image/tls-1.2-or-later $st "$why"
echo "# first boot to API: ${t_api} s"
echo "$t_api" > "$out/boot_to_api_s"
[ $st = 0 ] || finish

# -- a pool, a tenant and a volume with a policy, through the API
st=1 why=""
policy='{"write_bytes_sec":33554432,"read_iops_sec":2000,"weight":300}'
if api POST /v1/pools '{"name":"vdb","device":"/dev/vdb"}' > /dev/null && expect 201 "pool" &&
	api POST /v1/tenants '{"id":"acme"}' > /dev/null && expect 201 "tenant" &&
	api POST /v1/tenants/acme/volumes "{\"name\":\"v1\",\"pool\":\"vdb\",\"size_bytes\":1073741824,\"policy\":$policy}" > /dev/null &&
	expect 201 "volume"; then
	st=0
fi
check image/tenant-and-volume-through-api $st "$why"
[ $st = 0 ] || finish

# -- the provisioning script writes the pattern through the volume, reboots
st=0 why=""
wait_for 'SMOKE wrote' 300 || { st=1 why="$(grep -a 'SMOKE' "$con" | tr '\n' ' ')no write"; }
check image/write-through-volume $st "$why"
[ $st = 0 ] || finish

# -- after the reboot: the volume, its policy and the data
st=0 why=""
if appliance_wait_reset 120; then
	boot "$out/console-2.log"
	wait_for 'SMOKE done' "$boot_timeout" || { st=1 why="no second boot"; }
else
	st=1 why="no reset after the reboot"
fi
sleep 1
if [ $st = 0 ]; then
	got=$(sed -n 's/.*SMOKE read \([0-9a-f]*\).*/\1/p' "$con" | head -n 1)
	[ "$got" = "$want" ] || { st=1 why="data after reboot: '$got', written '$want'"; }
fi
if [ $st = 0 ]; then
	v=$(api GET /v1/volumes/acme.v1)
	expect 200 "volume after reboot" || st=1
	for kv in '"write_bytes_sec":33554432' '"read_iops_sec":2000' '"weight":300' '"tenant":"acme"' '"pool":"vdb"'; do
		case $v in *"$kv"*) ;; *) st=1 why="volume after reboot lacks $kv: $v" ;; esac
	done
fi
check image/reboot-keeps-volume-policy-data $st "$why"

st=0 why=""
grep -aEq 'SMOKE failed-units 0([^0-9]|$)' "$con" || { st=1 why="$(grep -a 'SMOKE failed-units' "$con")"; }
grep -aq 'SMOKE sluiced active' "$con" || { st=1 why="$why sluiced not active"; }
grep -aEq 'SMOKE kernel-reports 0([^0-9]|$)' "$con" || { st=1 why="$why $(grep -a 'SMOKE kernel-reports' "$con")"; }
bad=$(cat "$out"/console-*.log | grep -aE 'BUG:|WARNING:|Oops|still has objects|blocked for more than|possible circular locking' | head -n 3)
[ -z "$bad" ] || { st=1 why="$why console: $bad"; }
check image/units-and-kernel-clean $st "$why"
finish
