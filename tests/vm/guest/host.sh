#!/bin/sh
# A tenant's host, for tests/image/two-machines.sh (the test guest booted with
# sluice.mode=host): it connects to a volume the appliance exports, writes a
# pattern and verifies it, then waits out the appliance's reboot, which its
# kernel must reconnect from by itself, and verifies the pattern again. What
# it was given comes from the hypervisor's firmware config
# (opt/org.sluice/host, sh assignments):
#   mac      its NIC on the appliance's tenant network
#   addr     its address there (a.b.c.d/len)
#   connect  the nvme connect command
#   size     bytes of pattern, seed the pattern's seed
#   back_s   how long the controller may take to be live again after it lost
#            the appliance
# Each step prints "HOST <step> ok|failed [...]" and HOST done at the end.
. /sluice/guest/nvme.sh
. /sluice/guest/dmesg-scan.sh
cfg=/sys/firmware/qemu_fw_cfg/by_name/opt/org.sluice/host/raw

# (the loops below read with the shell's builtins: under TCG every process
# started costs)
now() {
	read -r up _ < /proc/uptime
	echo "${up%%.*}"
}
state() { read -r st < "$ctrl/state" 2> /dev/null && echo "$st"; }
say() { echo "HOST $*"; }
# stop <step> <why>: the step failed, and nothing after it can run
stop() {
	say "$1 failed $2"
	say "done"
	exit 1
}

modprobe qemu_fw_cfg
modprobe virtio_pci
modprobe virtio_net
modprobe nvme-tcp || stop setup "no nvme-tcp"
[ -r $cfg ] || stop setup "nothing in the firmware config"
# shellcheck disable=SC1090 # mac, addr, connect, size, seed, back_s
. $cfg

# -- the NIC on the tenant network
nic="" i=0
while [ -z "$nic" ]; do
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address")" = "$mac" ] && nic=${n##*/}
	done
	i=$((i + 1))
	[ -n "$nic" ] || [ $i -lt 50 ] || stop setup "no NIC with MAC $mac: $(cat /sys/class/net/*/address | tr '\n' ' ')"
	[ -n "$nic" ] || sleep 0.1
done
ip link set dev "$nic" up && ip addr add "$addr" dev "$nic" || stop setup "cannot configure $nic"

# -- the given command connects (retried while ARP and the port settle)
subnqn=$(echo "$connect" | sed -n 's/.* -n \([^ ]*\).*/\1/p')
i=0
until $connect > /tmp/conn 2>&1; do
	i=$((i + 1))
	[ $i -lt 10 ] || stop connect "$(cat /tmp/conn)"
	sleep 1
done
i=0
until connected_dev "$subnqn"; do
	i=$((i + 1))
	[ $i -lt 100 ] || stop connect "no namespace of $subnqn"
	sleep 0.1
done
ctrl=
for c in /sys/class/nvme/nvme*; do
	[ "$(cat "$c/subsysnqn")" = "$subnqn" ] && ctrl=$c
done
say connect ok "$dev ${ctrl##*/}"

# -- the pattern, written and read back; fio's blocks carry their offset
pattern() {
	fio --name=pattern --filename="$dev" --rw=write --bs=256k --size="$size" --direct=1 \
		--ioengine=psync --verify=crc32c --randseed="$seed" --output-format=terse "$@"
}
sum() { dd if="$dev" bs=1M count=$((size / 1048576)) iflag=direct 2> /dev/null | sha256sum | cut -d' ' -f1; }
t0=$(now)
pattern --do_verify=1 > /tmp/w.out 2>&1 || stop write "$(tail -n 5 /tmp/w.out)"
written=$(sum)
say write ok "$((size / 1048576)) MiB in $(($(now) - t0)) s, sha256 $written"

# -- the appliance goes away (the test reboots it) and comes back: the
# controller is live again with no new connect
t0=$(now)
while [ "$(state)" = live ]; do
	[ $(($(now) - t0)) -lt 900 ] || stop lost "the controller stayed live"
	sleep 0.5
done
say lost ok "$(state)"
t0=$(now)
until [ "$(state)" = live ]; do
	[ -e "$ctrl" ] || stop back "the controller was removed"
	[ $(($(now) - t0)) -lt "$back_s" ] || stop back "the controller is $(state) after $back_s s"
	sleep 0.5
done
ctrls=$(ls -d /sys/class/nvme/nvme* | wc -l)
[ "$ctrls" = 1 ] || stop back "$ctrls controllers"
connected_dev "$subnqn" || stop back "no namespace of $subnqn"
say back ok "${ctrl##*/} live after $(($(now) - t0)) s"

# -- the pattern again
pattern --verify_only > /tmp/r.out 2>&1 || stop verify "$(tail -n 5 /tmp/r.out)"
again=$(sum)
[ "$again" = "$written" ] || stop verify "sha256 $again, written $written"
say verify ok "sha256 $again"

found=$(dmesg | dmesg_findings | head -n 5)
[ -z "$found" ] || say kernel failed "$found"
say "done"
