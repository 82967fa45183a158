#!/bin/sh
# The appliance and a tenant's host, two machines on one network. The
# appliance (a copy-on-write copy of the image, a blank 1 GiB data disk) has
# its API forwarded here as in smoke.sh and a second NIC on a tenant network,
# a UDP socket pair to the host's QEMU, where the provisioning script gives
# it $appl_ip. Through the API: a pool, a tenant, a volume, the host's NQN,
# the volume exported to it. The host is the test guest (tests/vm/run.sh -m
# host, guest/host.sh): it runs the connect line the API gave (the
# appliance's address put in, and a reconnect delay with no loss timeout),
# writes a pattern and verifies it. Then the appliance reboots (the test asks
# the provisioning script, on a second serial port, for a systemctl reboot)
# and the host's kernel must reconnect by itself within $back_s seconds of
# losing it, and the pattern read back intact.
# Usage: two-machines.sh <image.qcow2> <outdir> <counts file>
set -u
image=$1 out=$2 counts=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/mk/report.sh"
. "$root/tests/image/lib.sh"
port=${SMOKE_PORT:-18443}
boot_timeout=${SMOKE_BOOT_TIMEOUT:-420}
# the tenant network: the appliance's QEMU on UDP $net, the host's on $net+1
net=${TWO_MACHINES_NET_PORT:-18470}
appl_ip=10.77.0.1 appl_mac=52:54:00:77:00:01
host_ip=10.77.0.2 host_mac=52:54:00:77:00:02
host_nqn=nqn.2014-08.org.nvmexpress:uuid:77777777-0000-4000-8000-000000000002
size=$((16 * 1048576)) back_s=180
rm -rf "$out"
mkdir -p "$out"
con=$out/console-1.log hout=$out/host hlog=$out/host/results.log
qpid="" hpid=""
t=image/two-machines
# check <name> <status> [why]: one result line, the reason as a comment
check() {
	report "$t/$1" "$2"
	[ "$2" = 0 ] || [ -z "${3:-}" ] || echo "# $3"
}
finish() {
	for p in $qpid $hpid; do
		kill "$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	if [ "$failed" != 0 ]; then
		for f in "$out"/console-*.log "$hout/console.log" "$hlog"; do
			[ -s "$f" ] || continue
			echo "# $f, its end:"
			tail -n 15 "$f" | sed 's/^/#   /'
		done
	fi
	report_counts "$counts"
	exit 0
}
trap 'finish' INT TERM
# host_says <step> <seconds>: the host's "HOST <step> ok", or why not in $why
host_says() {
	wait_for "^HOST ($1|done)( |\$)" "$2" "$hlog" "$hpid" &&
		grep -aq "^HOST $1 ok" "$hlog" && return 0
	why=$(grep -a "^HOST [a-z]* failed" "$hlog" || echo "no word from the host on $1 in $2 s")
	return 1
}

if [ ! -s "$image" ]; then
	check appliance-up 1 "no image at $image"
	finish
fi
appliance_overlay "$image" "$out/root.qcow2"
qemu-img create -q -f qcow2 "$out/data.qcow2" 1G
mkfifo "$out/ctl.in" "$out/ctl.out"
cat > "$out/provision.sh" <<GUEST
#!/bin/sh
# written by tests/image/two-machines.sh: the tenant network's address (kept,
# so networkd sets it early in the next boot); at the first boot, a reboot
# when the test asks (a line on ttyS1); after it, the appliance's state
net=/etc/systemd/network/10-tenant.network
if [ ! -e \$net ]; then
	printf '[Match]\nMACAddress=$appl_mac\n\n[Network]\nAddress=$appl_ip/24\n' > \$net
	networkctl reload
fi
i=0
until ip -4 -o addr show | grep -q " $appl_ip/"; do
	i=\$((i + 1))
	[ \$i -lt 120 ] || { echo "TWO no address on the tenant network"; exit 1; }
	sleep 0.5
done
m=/var/lib/sluice-two-machines
if [ -e \$m/rebooted ]; then
	echo "TWO up again"
	sleep 5
	echo "TWO failed-units \$(systemctl list-units --failed --plain --no-legend | wc -l)"
	echo "TWO kernel-reports \$(dmesg | grep -cE 'BUG:|WARNING:|Oops|still has objects|blocked for more than|circular locking')"
else
	stty -F /dev/ttyS1 clocal -echo
	echo "TWO waiting"
	read -r line < /dev/ttyS1
	mkdir -p \$m
	: > \$m/rebooted
	sync
	echo "TWO rebooting"
	systemctl reboot
fi
GUEST

# boot <console log>: the appliance, in the background, until it resets (a
# reboot boots it again in a new QEMU: appliance_wait_reset). The host's end
# of the UDP socket pair does not mind the appliance's going away meanwhile.
boot() {
	con=$1
	appliance_boot "$out/root.qcow2" "$con" "$port" -no-reboot \
		-drive "file=$out/data.qcow2,if=virtio,format=qcow2" \
		-netdev "socket,id=tenant,udp=127.0.0.1:$((net + 1)),localaddr=127.0.0.1:$net" \
		-device "virtio-net-pci,netdev=tenant,mac=$appl_mac" \
		-serial "pipe:$out/ctl" \
		-fw_cfg "name=opt/org.sluice/provision,file=$out/provision.sh" 2>> "$out/qemu.err"
}
t0=$(date +%s)
boot "$out/console-1.log"

# the host's initramfs while the appliance boots (its base kept beside the image)
kver=$("$root/mk/kver.sh" 2> "$out/initrd.log") &&
	"$root/tests/vm/mkinitramfs.sh" initrd "$kver" "$out/host-initrd.cpio" "$root" \
		"$(dirname "$image")/host-base-$kver.cpio" >> "$out/initrd.log" 2>&1 ||
	{ echo "# the host's initramfs: $(tail -n 3 "$out/initrd.log")"; }

# -- the appliance: its API, and its address on the tenant network
st=0 why=""
wait_for 'sluice: admin token [0-9a-f]{64}' "$boot_timeout" || { st=1 why="no admin token on the console"; }
[ $st = 0 ] && ! wait_for 'TWO (waiting|no address)' 60 && st=1 why="the provisioning script did not start"
grep -aq 'TWO waiting' "$con" || { st=1 why="${why:-no address $appl_ip on the tenant network}"; }
appliance_login
check appliance-up $st "$why"
echo "# appliance up in $(($(date +%s) - t0)) s"
[ $st = 0 ] || finish

# -- a pool, a tenant, a volume, the host, the export
st=1 why=""
if api POST /v1/pools '{"name":"vdb","device":"/dev/vdb"}' > /dev/null && expect 201 "pool" &&
	api POST /v1/tenants '{"id":"acme"}' > /dev/null && expect 201 "tenant" &&
	api POST /v1/tenants/acme/volumes '{"name":"v1","pool":"vdb","size_bytes":67108864}' > /dev/null &&
	expect 201 "volume" &&
	api POST /v1/tenants/acme/hosts "{\"name\":\"web\",\"nqn\":\"$host_nqn\"}" > /dev/null &&
	expect 201 "host" &&
	api PUT /v1/volumes/acme.v1/exports/web > /dev/null && expect 200 "export"; then
	given=$(sed -n 's/.*"connect":"\([^"]*\)".*/\1/p' "$out/body")
	case $given in
	"nvme connect -t tcp -a <the appliance's address> -s 4420 -n "*" --hostnqn $host_nqn") st=0 ;;
	*) why="the connect line: $(cat "$out/body")" ;;
	esac
fi
check export-through-api $st "$why"
[ $st = 0 ] || finish

# -- the host connects with the line it was given, writes and verifies
connect="$(echo "$given" | sed "s/<the appliance's address>/$appl_ip/") --hostid ${host_nqn##*:uuid:}"
connect="$connect --ctrl-loss-tmo=-1 --reconnect-delay=2"
echo "# host: $connect"
cat > "$out/host.env" <<ENV
mac=$host_mac addr=$host_ip/24 size=$size seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ') back_s=$back_s
connect='$connect'
ENV
mkdir -p "$hout"
: > "$hlog"
t1=$(date +%s)
SLUICE_INITRD=$out/host-initrd.cpio "$root/tests/vm/run.sh" -m host -o "$hout" -M 512 \
	-Q "-netdev socket,id=tenant,udp=127.0.0.1:$net,localaddr=127.0.0.1:$((net + 1)) -device virtio-net-pci,netdev=tenant,mac=$host_mac -fw_cfg name=opt/org.sluice/host,file=$out/host.env" \
	> "$hout/run.log" 2>&1 &
hpid=$!
st=0 why=""
host_says connect 120 || st=1
check host-connects $st "$why"
[ $st = 0 ] || finish
echo "# host booted and connected in $(($(date +%s) - t1)) s"
st=0 why=""
host_says write 300 || st=1
check host-writes-and-verifies $st "$why"
[ $st = 0 ] || finish
echo "# host: $(grep -a '^HOST write ok' "$hlog" | cut -d' ' -f4-)"

# -- the appliance reboots (asked again if the line went astray) and serves again
st=0 why=""
t2=$(date +%s)
for i in 1 2 3; do
	echo reboot > "$out/ctl.in"
	wait_for 'TWO rebooting' 10 && break
done
grep -aq 'TWO rebooting' "$con" || { st=1 why="the provisioning script did not take the reboot"; }
[ $st = 0 ] && ! appliance_wait_reset 120 && st=1 why="the appliance did not reset in 120 s"
if [ $st = 0 ]; then
	boot "$out/console-2.log"
	wait_for 'TWO up again' "$boot_timeout" || st=1 why="no second boot"
fi
if [ $st = 0 ]; then
	api GET /v1/volumes/acme.v1/exports > /dev/null
	expect 200 "exports after the reboot" && ! grep -q '"host":"web"' "$out/body" &&
		st=1 why="the export after the reboot: $(cat "$out/body")"
fi
check appliance-reboots $st "$why"
echo "# appliance rebooted in $(($(date +%s) - t2)) s"

# -- the host's kernel reconnects by itself, and the pattern is intact
st=0 why=""
{ host_says lost 60 && host_says back $((back_s + 30)); } || st=1
check host-reconnects-by-itself $st "$why"
[ $st = 0 ] && echo "# host: $(grep -a '^HOST back ok' "$hlog" | cut -d' ' -f4-)"
st=0 why=""
host_says verify 120 || st=1
check data-intact-after-reboot $st "$why"

# -- no failed unit in the appliance, no kernel report in either
st=0 why=""
wait_for 'TWO kernel-reports' 30
wait_for '^HOST done' 30 "$hlog" "$hpid"
grep -aEq 'TWO failed-units 0([^0-9]|$)' "$con" || { st=1 why="$(grep -a 'TWO failed-units' "$con")"; }
grep -aEq 'TWO kernel-reports 0([^0-9]|$)' "$con" || { st=1 why="$why $(grep -a 'TWO kernel-reports' "$con")"; }
grep -aq '^HOST kernel' "$hlog" && { st=1 why="$why $(grep -a '^HOST kernel' "$hlog")"; }
check units-and-kernels-clean $st "$why"
echo "# two machines: $(($(date +%s) - t0)) s in all"
finish
