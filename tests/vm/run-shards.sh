#!/bin/sh
# Run the guest tests in N guests at once, one CPU each. Tests are dealt out
# by their durations in the last run (longest first, each to the least
# loaded guest that may take it).
#
# A test that measures time (a "# timing: <what>" line in its header) waits
# on throttled I/O for a third of its time or more, and needs a CPU the
# moment it wakes; the other tests are CPU-bound and mind only their total.
# With three guests or more the last one runs at nice 10 and takes no timing
# test, and the reboot tests (reboot.sh) run beside it at nice 10 too: on a
# two-core host the timing guests each see a CPU when they want one, and the
# rest use what they leave idle. With one or two guests every guest takes
# every kind (two timing guests would leave nothing for the rest).
# Usage: run-shards.sh -j <n> [-t tests] [-o outdir] [-T timeout_s]
# Prints every guest's ok/not ok lines, writes <outdir>/vm.counts with the
# sums, and exits non-zero on any failure; each guest's logs are in
# <outdir>/shard<i>/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
jobs=2 sel=all out=$here/out timeout=900
while getopts j:t:o:T: opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	t) sel=$OPTARG ;;
	o) out=$OPTARG ;;
	T) timeout=$OPTARG ;;
	*) exit 2 ;;
	esac
done
mkdir -p "$out"

# the selected tests, as the guest's runner selects them
. "$here/guest/select.sh"
# (the tests spanning two boots, reboot/*, too: reboot.sh runs them)
list=""
for f in $(list_tests "$here/tests"); do
	case $sel/$f in all/reboot/*) list="$list $f"; continue ;; esac
	selected "$f" && list="$list $f"
done

# Durations (seconds) of each test when it last ran, "<s> <test>" lines in
# <outdir>/durations, kept across runs of a few tests; tests/vm/durations
# seeds a fresh tree; 10 s for a test seen in neither. A reboot test counts
# both its boots and 10 s for each boot itself. Longest first.
durations=$out/durations
[ -e "$durations" ] || cp "$here/durations" "$durations" 2> /dev/null || : > "$durations"
weighted=$(for t in $list; do
	d=$(awk -v t="$t" '$2 == t { d = $1 } END { print d }' "$durations")
	echo "${d:-10} $t"
done | sort -rn)
# (a run with more guests left more shards: their logs are not this run's)
rm -rf "$out"/shard[0-9]*
i=0
while [ $i -lt "$jobs" ]; do
	eval "load$i=0 tests$i="
	i=$((i + 1))
done
# the guest that takes no timing test (none with fewer than three)
bulk=$jobs
[ "$jobs" -lt 3 ] || bulk=$((jobs - 1))
echo "$weighted" | {
	while read -r d t; do
		[ -n "$t" ] || continue
		# the reboot tests run beside the shards (below)
		case $t in reboot/*) continue ;; esac
		timing=0
		grep -q '^# timing:' "$here/tests/$t" && timing=1
		best="" i=0
		while [ $i -lt "$jobs" ]; do
			if [ $timing = 0 ] || [ $i != "$bulk" ]; then
				[ -n "$best" ] && eval "[ \$load$i -ge \$load$best ]" || best=$i
			fi
			i=$((i + 1))
		done
		eval "load$best=\$((load$best + d + 1)) tests$best=\"\${tests$best:+\$tests$best,}\$t\""
	done
	i=0
	while [ $i -lt "$jobs" ]; do
		eval "echo \"\$tests$i\"" > "$out/shard$i.tests"
		i=$((i + 1))
	done
}

# the initramfs is built once, for all guests
kver=$("$here/../../mk/kver.sh")
export SLUICE_INITRD="$out/initrd.cpio"
"$here/mkinitramfs.sh" initrd "$kver" "$SLUICE_INITRD" "$here/../.." "$out/base-$kver.cpio"

# one CPU a guest when guests run side by side, else two
smp=1
[ "$jobs" -gt 1 ] || smp=2
pids="" i=0
while [ $i -lt "$jobs" ]; do
	t=$(cat "$out/shard$i.tests")
	rm -rf "$out/shard$i" "$out/shard$i.out"
	if [ -n "$t" ]; then
		prio=0
		[ $i != "$bulk" ] || prio=10
		nice -n $prio "$here/run.sh" -t "$t" -o "$out/shard$i" -T "$timeout" -Q "-smp $smp" \
			> "$out/shard$i.out" 2>&1 &
		pids="$pids $!"
	fi
	i=$((i + 1))
done
# the reboot tests, one guest at a time, beside the shards, at the bulk
# guest's priority (below the others' with one or two guests)
r=$(for t in $list; do case $t in reboot/*) echo "$t" ;; esac; done | paste -sd, -)
rm -rf "$out/reboot" "$out/reboot.out"
if [ -n "$r" ]; then
	nice -n 10 "$here/reboot.sh" -t "$r" -o "$out/reboot" -T "$timeout" -Q "-smp 1" > "$out/reboot.out" 2>&1 &
	pids="$pids $!"
fi
for p in $pids; do
	wait "$p" || true
done

# this run's durations replace those of the tests it ran
{
	for r in "$out"/shard*/results.log; do
		[ -e "$r" ] || continue
		sed -n 's|^# \([^:]*\): took \([0-9]*\).*|\2 \1|p' "$r"
	done
	for d in "$out"/reboot/*/; do
		[ -d "$d" ] || continue
		cat "$d"/boot*/results.log 2> /dev/null |
			sed -n 's|^# \([^:]*\): took \([0-9]*\).*|\2 \1|p' |
			awk '{ s += $1; t = $2 } END { if (NR) print s + 20, t }'
	done
} > "$durations.new"
awk 'NR == FNR { seen[$2] = 1; print; next } !($2 in seen)' "$durations.new" "$durations" \
	> "$durations.tmp"
mv "$durations.tmp" "$durations"
rm -f "$durations.new"

# a kernel other than the default names its tests "<kernel>:<test>"
tag=""
[ "${KERNEL:-6.1}" = 6.1 ] || tag="$KERNEL:"
. "$here/counts.sh"
i=0
while [ $i -lt "$jobs" ]; do
	if [ -e "$out/shard$i.out" ]; then
		sed "s%^\(ok\|not ok\) vm/\([a-z]*\)%\1 vm/\2/guest$i%; s%^\(ok\|not ok\) %\1 $tag%" "$out/shard$i.out"
		count "$out/shard$i/vm.counts" "${tag}vm/guest$i"
	fi
	i=$((i + 1))
done
if [ -e "$out/reboot.out" ]; then
	sed "s%^\(ok\|not ok\) %\1 $tag%" "$out/reboot.out"
	count "$out/reboot/vm.counts" "${tag}vm/reboot"
fi
echo "$passed $failed $skipped" > "$out/vm.counts"
[ "$failed" = 0 ]
