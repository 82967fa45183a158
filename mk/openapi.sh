#!/bin/sh
# api/openapi.yaml as tests: valid OpenAPI 3.1 by a real validator (npm's
# @seriousme/openapi-schema-validator, installed once into build/npm), and
# every documented answer exercised by the guest API and tenant tests (and nothing
# answered that is undocumented). Writes counts to $1.
set -u
counts=$1
root=$(cd "$(dirname "$0")/.." && pwd)
npm_dir=$root/build/npm
validator=@seriousme/openapi-schema-validator@2.11.0
. "$root/mk/report.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ ! -x "$npm_dir/node_modules/.bin/validate-api" ]; then
	mkdir -p "$npm_dir"
	npm install --no-audit --no-fund --silent --prefix "$npm_dir" "$validator" > "$log" 2>&1 ||
		{ echo "not ok openapi/install-validator"; sed 's/^/# /' "$log" | tail -n 20; }
fi
"$npm_dir/node_modules/.bin/validate-api" "$root/api/openapi.yaml" > "$log" 2>&1
report openapi/valid-3.1 $? "$log" 30
NODE_PATH=$npm_dir/node_modules node "$root/tests/openapi/coverage.js" "$root/api/openapi.yaml" \
	"$root"/tests/vm/tests/api/* "$root"/tests/vm/tests/tenant/* "$root"/tests/vm/tests/export/* > "$log" 2>&1
rc=$?
[ $rc = 0 ] && sed 's/^/# /' "$log" | tail -n 1
report openapi/every-documented-answer-exercised $rc "$log" 30
report_counts "$counts"
[ "$failed" = 0 ]
