# shellcheck shell=sh
# The appliance under QEMU, for its tests (tests/image/*.sh) and
# bench/image.sh: sourced.

# appliance_overlay <image.qcow2> <copy.qcow2>: a copy-on-write copy of it
appliance_overlay() {
	qemu-img create -q -f qcow2 -b "$(cd "$(dirname "$1")" && pwd)/${1##*/}" -F qcow2 "$2"
}

# what a console shows once its kernel has panicked
kernel_panic='Kernel panic - not syncing'

# appliance_boot <root.qcow2> <console log> <host port> [qemu args...]: the
# appliance under TCG in the background, its API forwarded to
# 127.0.0.1:<host port>; its pid in $qpid. Returns once the kernel runs the
# initramfs (or the machine is gone, or two minutes passed).
#
# TCG with two CPUs now and then runs a stale translation of kernel text
# the kernel has just patched: once in some 300 boots, the 6.12 kernel took
# an "Oops: int3" in run_timer_softirq() as NOHZ came on, 1.3 s into the
# boot, and hung in the panic. A boot whose kernel panics before it runs the
# initramfs has run none of the appliance's code and written nothing to its
# disks: it is started again, once, its console kept beside the new one.
appliance_boot() {
	disk=$1 log=$2 hport=$3
	shift 3
	for try in 1 2; do
		qemu-system-x86_64 -accel tcg -machine q35 -cpu max -smp 2 -m 1024 -display none \
			-serial "file:$log" -monitor none \
			-drive "file=$disk,if=virtio,format=qcow2" \
			-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$hport-:8080" "$@" &
		qpid=$!
		appliance_early_panic "$log" || return 0
		[ "$try" = 1 ] || return 0
		kill "$qpid" 2> /dev/null
		wait "$qpid" 2> /dev/null
		mv "$log" "$log.early-panic"
		echo "# the emulated kernel panicked before its initramfs ran (see $log.early-panic): booted again"
	done
}

# appliance_early_panic <console log>: the kernel of $qpid panicked before
# it ran the initramfs (else it ran it, the machine is gone, or 2 min passed)
appliance_early_panic() {
	i=0
	while ! grep -aq 'Run /init as init process' "$1" 2> /dev/null; do
		grep -aqF "$kernel_panic" "$1" 2> /dev/null && return 0
		kill -0 "$qpid" 2> /dev/null || return 1
		i=$((i + 1))
		[ $i -le 240 ] || return 1
		sleep 0.5
	done
	return 1
}

# appliance_wait_reset <seconds>: the appliance $qpid, booted with
# -no-reboot, reset (its QEMU left) within them; its status reaped. A test
# that reboots the appliance boots it again in a new QEMU: under TCG, a boot
# after QEMU's own reset took 2-4 times as long as one in a new QEMU (the
# kernel's early init alone 50 s, not 6).
appliance_wait_reset() {
	i=0
	while kill -0 "$qpid" 2> /dev/null; do
		i=$((i + 1))
		[ $i -le $(($1 * 2)) ] || return 1
		sleep 0.5
	done
	wait "$qpid"
	return 0
}

# wait_for <regex> <seconds> [<log> <pid>]: the log (the console log $con)
# shows a line matching it while the machine <pid> (the appliance $qpid)
# runs (looked at every half second); not once its kernel has panicked
wait_for() {
	i=0
	while ! grep -aEq "$1" "${3:-$con}" 2> /dev/null; do
		kill -0 "${4:-$qpid}" 2> /dev/null || return 1
		! grep -aqF "$kernel_panic" "${3:-$con}" 2> /dev/null || return 1
		i=$((i + 1))
		[ $i -le $(($2 * 2)) ] || return 1
		sleep 0.5
	done
}

# appliance_login: the admin token the console $con shows in $token, and
# the certificate the API serves on 127.0.0.1:$port in $out/cert.pem
appliance_login() {
	token=$(sed -n 's/.*sluice: admin token \([0-9a-f]\{64\}\).*/\1/p' "$con" | head -n 1)
	openssl s_client -connect "127.0.0.1:$port" < /dev/null 2> /dev/null |
		openssl x509 > "$out/cert.pem" 2> /dev/null
}

# api <method> <path> [json]: a request to the appliance's API as $token;
# the body to stdout, the HTTP status to $out/code
api() {
	curl -s --cacert "$out/cert.pem" -o "$out/body" -w '%{http_code}' -X "$1" \
		-H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
		${3:+--data "$3"} "https://127.0.0.1:$port$2" > "$out/code"
	cat "$out/body"
}

# expect <status> <what>: the last request answered with it, or why not in $why
expect() { [ "$(cat "$out/code")" = "$1" ] || { why="$2: HTTP $(cat "$out/code") $(cat "$out/body")"; return 1; }; }
