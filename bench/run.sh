#!/bin/sh
# make bench B=<scenario>[,...]|all: boot the guest once, run the scenarios
# side by side in it, merge each scenario's results into
# bench/out/results.json and rewrite bench/out/results.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sel=${1:-all}
out=$here/out
mkdir -p "$out"
log=$out/bench.log
"$root/tests/vm/run.sh" -m bench -t "$sel" -T 3000 -o "$out/vm" | tee "$log" || {
	echo "bench: a scenario failed; guest output in $out/vm/results.log" >&2
	exit 1
}
json=$out/results.json
[ -s "$json" ] || echo '{}' > "$json"
sed -n 's/^BENCH \([a-z_]*\) \(.*\)$/\1 \2/p' "$log" | while read -r name obj; do
	printf '%s\n' "$obj" | jq --arg n "$name" --slurpfile cur "$json" \
		'. as $o | $cur[0] | .[$n] = $o' > "$json.tmp"
	mv "$json.tmp" "$json"
done
"$here/report.sh" "$json" > "$out/results.md"
cat "$out/results.md"
