# shellcheck shell=sh
# Results as tests for the host checks (lint.sh, openapi.sh, deb-check.sh):
# sourced; each check is reported by report(), the counts written last.
passed=0 failed=0

# report <name> <status> [<log> <lines>]: "ok <name>", or "not ok <name>"
# and the log's last lines as comments
report() {
	if [ "$2" = 0 ]; then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1"
		[ -z "${3:-}" ] || sed 's/^/# /' "$3" | tail -n "$4"
		failed=$((failed + 1))
	fi
}

# report_counts <file>: "passed failed 0", the form mk/summary.sh adds up
report_counts() {
	echo "$passed $failed 0" > "$1"
}
