#!/bin/sh
# Runs the guest tests selected by $1 (a comma list of names or groups such as
# "target/001,harness", or "all") and reports on stdout, which is the results
# serial port:
#   ok <name> | ok <name> # SKIP <why> | not ok <name> # <why>
#   # <name>: <a line of the test's output>
#   SLUICE-DONE
# Every test is bracketed by markers in the kernel log; the log between them is
# scanned for kernel error reports, which fail the test. After all tests the
# project's modules are unloaded and the whole log is scanned again.
sel=$1
root=/sluice/tests
. /sluice/guest/dmesg-scan.sh
. /sluice/guest/select.sh

run_one() {
	name=$1 file=$2
	limit=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$file" | head -n 1)
	[ -n "$limit" ] || limit=300
	echo "# running $name"
	echo "sluice-test: begin $name" > /dev/kmsg
	log=/tmp/test.log
	cd /tmp || return
	t0=$(cut -d' ' -f1 /proc/uptime)
	timeout -s KILL "$limit" sh "$file" > "$log" 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	cd / || return
	echo "sluice-test: end $name" > /dev/kmsg
	sed "s|^|# $name: |" "$log"
	echo "# $name: took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s"
	found=$(dmesg | awk -v m="sluice-test: begin $name" 'index($0, m) { on = 1 } on' | dmesg_findings)
	leftover=$(dmsetup ls 2>/dev/null | grep -v '^No devices found' | awk '{print $1}' | tr '\n' ' ')
	if [ -n "$leftover" ]; then
		dmsetup remove_all --force > /dev/null 2>&1
	fi
	if [ -n "$found" ]; then
		printf '%s\n' "$found" | sed "s|^|# $name: dmesg: |"
		echo "not ok $name # dmesg"
	elif [ "$rc" = 137 ]; then
		echo "not ok $name # timeout after ${limit}s"
	elif [ "$rc" = 77 ]; then
		why=$(sed -n 's/^SKIP: //p' "$log" | head -n 1)
		echo "ok $name # SKIP ${why:-requirement missing}"
	elif [ "$rc" != 0 ]; then
		echo "not ok $name # exit $rc"
	elif [ -n "$leftover" ]; then
		echo "not ok $name # left dm devices behind: $leftover"
	else
		echo "ok $name"
	fi
}

ran=0
for name in $(list_tests "$root"); do
	selected "$name" || continue
	run_one "$name" "$root/$name"
	ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || echo "not ok vm/select # no guest test matches '$sel'"

# Teardown: unload the project's modules (the weight module first), then scan
# the whole boot's log, which also catches reports between tests.
why=""
for m in dm_sluice_weight dm_sluice; do
	if grep -q "^$m " /proc/modules; then
		rmmod "$m" 2> /tmp/rmmod.err || why="$why rmmod $m failed: $(cat /tmp/rmmod.err);"
	fi
done
found=$(dmesg | dmesg_findings)
if [ -n "$found" ]; then
	printf '%s\n' "$found" | sed 's|^|# vm/teardown: dmesg: |'
	why="$why dmesg;"
fi
if [ -n "$why" ]; then
	echo "not ok vm/teardown #$why"
else
	echo "ok vm/teardown"
fi
echo SLUICE-DONE
