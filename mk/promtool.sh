#!/bin/sh
# /metrics as Prometheus checks it: the guest test api/001 prints the body it
# got (lines "METRICS ..."), and promtool (Debian's prometheus) checks it on
# the host. Writes counts to $1; skipped when api/001 did not run.
set -u
counts=$1 vm_out=$2
log=$(mktemp) text=$(mktemp)
trap 'rm -f "$log" "$text"' EXIT
find "$vm_out" -name results.log -exec cat {} + 2> /dev/null |
	tr -d '\r' | sed -n 's/^# api\/001-endpoints: METRICS //p' > "$text"
if [ ! -s "$text" ]; then
	echo "ok metrics/promtool-check # SKIP api/001 did not run"
	echo "0 0 1" > "$counts"
	exit 0
fi
if promtool check metrics < "$text" > "$log" 2>&1; then
	echo "ok metrics/promtool-check ($(grep -vc '^#' "$text") samples)"
	echo "1 0 0" > "$counts"
else
	echo "not ok metrics/promtool-check"
	sed 's/^/# /' "$log" | tail -n 20
	echo "0 1 0" > "$counts"
fi
