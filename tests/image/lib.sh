# shellcheck shell=sh
# The appliance under QEMU, for its tests (tests/image/*.sh) and
# bench/image.sh: sourced.

# appliance_overlay <image.qcow2> <copy.qcow2>: a copy-on-write copy of it
appliance_overlay() {
	qemu-img create -q -f qcow2 -b "$(cd "$(dirname "$1")" && pwd)/${1##*/}" -F qcow2 "$2"
}

# appliance_boot <root.qcow2> <console log> <host port> [qemu args...]: the
# appliance under TCG in the background, its API forwarded to
# 127.0.0.1:<host port>; its pid in $qpid
appliance_boot() {
	disk=$1 log=$2 hport=$3
	shift 3
	qemu-system-x86_64 -accel tcg -machine q35 -cpu max -smp 2 -m 1024 -display none \
		-serial "file:$log" -monitor none \
		-drive "file=$disk,if=virtio,format=qcow2" \
		-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$hport-:8080" "$@" &
	qpid=$!
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
# runs (looked at every half second)
wait_for() {
	i=0
	while ! grep -aEq "$1" "${3:-$con}" 2> /dev/null; do
		kill -0 "${4:-$qpid}" 2> /dev/null || return 1
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
