#!/bin/sh
# Run the guest tests in N guests at once, one CPU each, so that the suite
# takes about 1/N of the time on an N-core host. Tests are dealt out by their
# durations in the last run (longest first, each to the least loaded guest).
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
list=""
for f in $(list_tests "$here/tests"); do
	selected "$f" && list="$list $f"
done

# durations of the last run (10 s for a test not seen yet), longest first
weighted=$(for t in $list; do
	d=$(cat "$out"/shard*/results.log 2> /dev/null |
		sed -n "s|^# $t: took \([0-9]*\).*|\1|p" | tail -n 1)
	echo "${d:-10} $t"
done | sort -rn)
i=0
while [ $i -lt "$jobs" ]; do
	eval "load$i=0 tests$i="
	i=$((i + 1))
done
echo "$weighted" | {
	while read -r d t; do
		[ -n "$t" ] || continue
		best=0 i=1
		while [ $i -lt "$jobs" ]; do
			eval "[ \$load$i -lt \$load$best ]" && best=$i
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

# the base layer is built once, for all guests
kver=$("$here/../../mk/kver.sh")
export SLUICE_BASE_CPIO="$out/base-$kver.cpio"
if [ ! -s "$SLUICE_BASE_CPIO" ] || [ "$here/mkinitramfs.sh" -nt "$SLUICE_BASE_CPIO" ] ||
	[ "$here/stub-libs.sh" -nt "$SLUICE_BASE_CPIO" ]; then
	"$here/mkinitramfs.sh" base "$kver" "$SLUICE_BASE_CPIO"
fi

pids="" i=0
while [ $i -lt "$jobs" ]; do
	t=$(cat "$out/shard$i.tests")
	if [ -n "$t" ]; then
		"$here/run.sh" -t "$t" -o "$out/shard$i" -T "$timeout" -Q "-smp 1" > "$out/shard$i.out" 2>&1 &
		pids="$pids $!"
	fi
	i=$((i + 1))
done
for p in $pids; do
	wait "$p" || true
done

passed=0 failed=0 skipped=0 i=0
while [ $i -lt "$jobs" ]; do
	if [ -s "$out/shard$i.tests" ] && [ -n "$(cat "$out/shard$i.tests")" ]; then
		sed "s%^\(ok\|not ok\) vm/\([a-z]*\)%\1 vm/\2/guest$i%" "$out/shard$i.out"
		if [ -s "$out/shard$i/vm.counts" ]; then
			read -r p f s < "$out/shard$i/vm.counts"
		else
			p=0 f=1 s=0
			echo "not ok vm/guest$i # no results"
		fi
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	fi
	i=$((i + 1))
done
echo "$passed $failed $skipped" > "$out/vm.counts"
[ "$failed" = 0 ]
