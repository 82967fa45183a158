#!/bin/sh
# Boot the test guest and run guest tests in it.
# Usage: run.sh [-t tests] [-T timeout_s] [-m shell|test|bench|host] [-o outdir]
#               [-M mem_mib] [-Q "extra qemu arguments"] [-A "kernel arguments"]
# Prints one line per test (ok/not ok), writes <outdir>/vm.counts with
# "passed failed skipped", keeps the whole console under <outdir>, and exits
# non-zero on any failure, hang, panic or timeout.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tests=all timeout=900 mode=test out=$here/out mem=2048 qemu_extra="" kargs=""
while getopts t:T:m:o:M:Q:A: opt; do
	case $opt in
	t) tests=$OPTARG ;;
	T) timeout=$OPTARG ;;
	m) mode=$OPTARG ;;
	o) out=$OPTARG ;;
	M) mem=$OPTARG ;;
	Q) qemu_extra=$OPTARG ;;
	A) kargs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
kver=$("$root/mk/kver.sh")
mkdir -p "$out"

# SLUICE_INITRD: an initramfs already built for this run (run-shards.sh
# builds one for all its guests)
initrd=${SLUICE_INITRD:-}
if [ -z "$initrd" ]; then
	initrd=$out/initrd.cpio
	"$here/mkinitramfs.sh" initrd "$kver" "$initrd" "$root" "$out/base-$kver.cpio"
fi

# norandmaps: programs and their libraries at the same addresses in every
# process. TCG keeps the code it translated by virtual address, so with
# randomized mappings every process start translated its libraries afresh
# (dmsetup 86 -> 21 ms a run, fio 113 -> 38 ms, sluiced 96 -> 36 ms); the
# tests start thousands of processes.
# init_on_alloc=0: the kernel does not zero every page and slab object it
# hands out (Debian turns that on). Under TCG the zeroing is a large part of
# a test's time (the first reservation of 900 MB of huge pages: 2-3 s with it,
# 0.01 s without), and without it a read of memory the project's code did
# not initialize sees garbage, not zeros, which tests are likelier to catch.
# no_timer_check: the kernel does not time the IO-APIC timer at boot; with
# the host's CPUs busy, the guest missed the ticks it counts and panicked
# ("IO-APIC + timer doesn't work"), five boots in six beside four CPU hogs.
append="console=ttyS0 log_buf_len=8M panic=-1 norandmaps init_on_alloc=0 no_timer_check"
append="$append sluice.mode=$mode sluice.tests=$tests${kargs:+ $kargs}"
# The CPU without ERMS and FSRM: TCG runs "rep movsb" a byte at a time, and
# with them the kernel copies and clears pages that way (256 MiB into tmpfs:
# 2.0 s with them, 1.0 s without; the guest tests 20% faster in all).
set -- qemu-system-x86_64 -accel tcg -machine q35 -cpu max,-erms,-fsrm -smp 2 -m "$mem" \
	-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" -no-reboot
# shellcheck disable=SC2086
[ -z "$qemu_extra" ] || set -- "$@" $qemu_extra

if [ "$mode" = shell ]; then
	exec "$@" -nographic -serial mon:stdio -serial null -append "$append"
fi
# a tenant's host (guest/host.sh) for tests/image/two-machines.sh, which
# stops it: what it says in <outdir>/results.log, its console beside it
if [ "$mode" = host ]; then
	exec "$@" -display none -monitor none -serial "file:$out/console.log" \
		-serial "file:$out/results.log" -append "$append quiet"
fi

console=$out/console.log results=$out/results.log
: > "$results"
rc=0
timeout -s KILL "$timeout" "$@" -display none -monitor none \
	-serial "file:$console" -serial "file:$results" -append "$append quiet" || rc=$?

if [ "$mode" = bench ]; then
	grep -E '^(BENCH|# )' "$results" | grep -v '^# running' || true
	grep -q '^SLUICE-DONE' "$results" || { echo "bench: guest did not finish (qemu exit $rc); see $console"; exit 1; }
	! grep -q '^BENCH-FAILED' "$results"
	exit
fi

passed=$(grep -c '^ok ' "$results" || true)
failed=$(grep -c '^not ok ' "$results" || true)
skipped=$(grep -c '^ok .* # SKIP' "$results" || true)
passed=$((passed - skipped))
grep -E '^(ok|not ok) ' "$results" || true
if ! grep -q '^SLUICE-DONE' "$results"; then
	if grep -q 'Kernel panic' "$console"; then
		why="kernel panic"
	elif [ "$rc" = 137 ]; then
		why="guest timed out after ${timeout}s"
	else
		why="guest stopped early (qemu exit $rc)"
	fi
	last=$(sed -n 's/^# running //p' "$results" | tail -n 1)
	if [ -n "$last" ] && ! grep -q "^\(ok\|not ok\) $last\( \|\$\)" "$results"; then
		why="$why during $last"
	fi
	echo "not ok vm/boot # $why; console log in $console"
	failed=$((failed + 1))
fi
if [ "$failed" -gt 0 ]; then
	echo "# failing tests' output: $results"
	grep '^not ok' "$results" | sed 's/^not ok \([^ ]*\).*/\1/' | while read -r t; do
		grep "^# $t: " "$results" | tail -n 30
	done
fi
echo "$passed $failed $skipped" > "$out/vm.counts"
[ "$failed" = 0 ]
