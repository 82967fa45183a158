#!/bin/sh
# Run host unit test binaries, then replay fuzzer corpora, and write the
# counts ("passed failed skipped") to $1.
# Usage: run.sh <counts> <test-binary>... [-- <fuzzer> <corpus-dir>]...
counts=$1
shift
passed=0 failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	bin=$1
	shift
	variant=$(basename "$(dirname "$bin")")
	if ASAN_OPTIONS=detect_leaks=1 MALLOC_PERTURB_=165 "$bin" > "$out" 2>&1; then rc=0; else rc=$?; fi
	sed -n "s|^ok |ok $variant/|p; s|^not ok |not ok $variant/|p" "$out"
	grep -v '^ok \|^not ok ' "$out" | sed 's/^/# /'
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok $variant/$(basename "$bin") # exit $rc"
		f=1
	fi
	passed=$((passed + p)) failed=$((failed + f))
done
while [ $# -gt 0 ]; do
	[ "$1" = -- ] && shift
	fuzzer=$1 corpus=$2
	shift 2
	name="fuzz/$(basename "$fuzzer")/corpus-replay"
	# shellcheck disable=SC2046
	if "$fuzzer" $(find "$corpus" -type f | sort) > "$out" 2>&1; then
		echo "ok $name ($(find "$corpus" -type f | wc -l) inputs)"
		passed=$((passed + 1))
	else
		echo "not ok $name"
		sed 's/^/# /' "$out" | tail -n 30
		failed=$((failed + 1))
	fi
done
echo "$passed $failed 0" > "$counts"
[ "$failed" = 0 ]
