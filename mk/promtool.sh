#!/bin/sh
# /metrics as Prometheus checks it: guest tests print the body they got
# (lines "METRICS ...": api/001 for the volumes' and the API's series,
# export/004 for the exports' with connections), and promtool (Debian's
# prometheus) checks each test's on the host. Writes counts to $1; skipped
# when none of them ran.
set -u
counts=$1 vm_out=$2
log=$(mktemp) all=$(mktemp) text=$(mktemp)
trap 'rm -f "$log" "$all" "$text"' EXIT
find "$vm_out" -name results.log -exec cat {} + 2> /dev/null | tr -d '\r' |
	sed -n 's/^# \([^ :]*\): METRICS /\1 /p' > "$all"
if [ ! -s "$all" ]; then
	echo "ok metrics/promtool-check # SKIP no test printed /metrics"
	echo "0 0 1" > "$counts"
	exit 0
fi
passed=0 failed=0
for t in $(cut -d' ' -f1 "$all" | sort -u); do
	awk -v t="$t" '$1 == t { sub(/^[^ ]* /, ""); print }' "$all" > "$text"
	if promtool check metrics < "$text" > "$log" 2>&1; then
		echo "ok metrics/promtool-check/$t ($(grep -vc '^#' "$text") samples)"
		passed=$((passed + 1))
	else
		echo "not ok metrics/promtool-check/$t"
		sed 's/^/# /' "$log" | tail -n 20
		failed=$((failed + 1))
	fi
done
echo "$passed $failed 0" > "$counts"
