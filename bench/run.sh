#!/bin/sh
# make bench B=<scenario>[,...]|all: boot the guest and run the scenarios in
# it, one boot for all that need no special machine, one boot per distinct
# "# qemu: <args>" and "# kargs: <kernel arguments>" lines in a scenario's
# header otherwise (e.g. instruction counting, or the TSC as the guest's
# clock); merge each scenario's results into bench/out/results.json and
# rewrite bench/out/results.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sel=${1:-all}
out=$here/out
mkdir -p "$out"
log=$out/bench.log
: > "$log"

names=""
for f in "$here"/scenarios/*; do
	n=$(basename "$f")
	case ",$sel," in *",$n,"* | ",all,") names="$names $n" ;; esac
done
# image runs on the host (bench/image.sh), on the appliance image
image=""
case ",$sel," in *",image,"* | ",all,") image=yes ;; esac
[ -n "$names$image" ] || { echo "bench: no scenario matches '$sel'" >&2; exit 1; }

# a scenario's machine: "<qemu arguments>|<kernel arguments>"
machine() {
	printf '%s|%s\n' "$(sed -n 's/^# qemu: *//p' "$here/scenarios/$1" | head -n 1)" \
		"$(sed -n 's/^# kargs: *//p' "$here/scenarios/$1" | head -n 1)"
}
# the distinct machines, the plain one first
groups=$(for n in $names; do machine "$n"; done | sort -u)
rc=0
printf '%s\n' "$groups" | while IFS= read -r m; do
	list=""
	for n in $names; do
		[ "$(machine "$n")" = "$m" ] && list="$list${list:+,}$n"
	done
	[ -n "$list" ] || continue
	extra=${m%%|*} kargs=${m#*|}
	echo "# bench boot: $list${extra:+ (qemu $extra)}${kargs:+ (kernel $kargs)}"
	# (the status of the run itself, not of tee)
	{ "$root/tests/vm/run.sh" -m bench -t "$list" -T 3000 -o "$out/vm" -Q "$extra" -A "$kargs" || {
		echo "bench: a scenario failed; guest output in $out/vm/results.log" >&2
		echo failed > "$out/failed"
	}; } | tee -a "$log"
done
if [ -n "$image" ]; then
	echo "# bench on the host: image"
	img=$root/build/image/sluice.qcow2
	{ { [ -s "$img" ] || make -s -C "$root" image; } &&
		"$here/image.sh" "$img" "$out/image" || echo failed > "$out/failed"; } | tee -a "$log"
fi
if [ -e "$out/failed" ]; then
	rm -f "$out/failed"
	rc=1
fi
json=$out/results.json
[ -s "$json" ] || echo '{}' > "$json"
sed -n 's/^BENCH \([a-z_]*\) \(.*\)$/\1 \2/p' "$log" | while read -r name obj; do
	printf '%s\n' "$obj" | jq --arg n "$name" --slurpfile cur "$json" \
		'. as $o | $cur[0] | .[$n] = $o' > "$json.tmp"
	mv "$json.tmp" "$json"
done
"$here/report.sh" "$json" > "$out/results.md"
cat "$out/results.md"
exit $rc
