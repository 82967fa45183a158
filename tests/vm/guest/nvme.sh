# The export tests' helpers: nvmet and the initiator in one guest.
# shellcheck shell=sh

NVMET=/sys/kernel/config/nvmet
# hosts' NQNs: acme's, globex's, and one nobody registered
HA=nqn.2014-08.org.nvmexpress:uuid:0a0a0a0a-0000-4000-8000-00000000000a
HG=nqn.2014-08.org.nvmexpress:uuid:0b0b0b0b-0000-4000-8000-00000000000b
HX=nqn.2014-08.org.nvmexpress:uuid:0c0c0c0c-0000-4000-8000-00000000000c

# hostid <nqn>: the host ID that goes with a host's NQN, the UUID in it, for
# every connect and discover as that host. A real host's nvme-cli sends its
# own (/etc/nvme/hostid); the guest plays several hosts and has none, and
# without one the initiator takes its default host's ID, which it refuses
# beside another NQN from 6.5 on ("found same hostid ... but different
# hostnqn"): 6.1 let the hosts share it.
hostid() {
	echo "${1##*:uuid:}"
}

# nvme_setup: the target's and the initiator's modules, and configfs
nvme_setup() {
	modprobe nvmet && modprobe nvmet-tcp && modprobe nvme-tcp || skip "no nvmet or nvme-tcp"
	mount -t configfs none /sys/kernel/config 2> /dev/null || true
}

# what undoes it (for at_exit): connections, then everything in nvmet's tree, then the modules
NVME_CLEANUP='nvme disconnect-all; for s in $NVMET/ports/*/subsystems/*; do [ -L "$s" ] && rm "$s"; done; for s in $NVMET/subsystems/*; do [ -d "$s" ] || continue; rm -f $s/allowed_hosts/*; echo 0 > $s/namespaces/1/enable; rmdir $s/namespaces/1 $s; done; rmdir $NVMET/hosts/* $NVMET/ports/*; rmmod nvme-tcp nvmet-tcp nvmet'

# subsys_of <volume id>: its subsystem's NQN, from nvmet's tree
subsys_of() {
	ls $NVMET/subsystems | grep ":$(echo "$1" | sed 's/\./\\./g')\$"
}

# connected_dev <subsystem nqn>: the initiator's block device of it, in $dev
# (the namespace's head, nvmeXnY: a path under it, nvmeXcYnZ, has no node)
connected_dev() {
	dev=
	for b in /sys/block/nvme*; do
		case ${b##*/} in nvme*c*n*) continue ;; esac
		[ -e "$b/device/subsysnqn" ] && [ -b "/dev/${b##*/}" ] || continue
		[ "$(cat "$b/device/subsysnqn")" = "$1" ] && dev=/dev/${b##*/}
	done
	[ -n "$dev" ]
}

# wait_dev <subsystem nqn>: connected_dev, waiting up to 5 s for the namespace
wait_dev() {
	n=0
	until connected_dev "$1"; do
		n=$((n + 1))
		[ $n -lt 50 ] || fail "no namespace of $1 after the connect"
		sleep 0.1
	done
}
