# shellcheck shell=sh
# Helpers for guest tests. A test is a sh script that exits 0 on success,
# 77 to skip (after printing "SKIP: why"), anything else on failure.

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# dm_create <name> <table>: create a device, failing the test on error.
dm_create() {
	printf '%s\n' "$2" | dmsetup create "$1" --noudevsync ||
		fail "dmsetup create $1 failed for: $2"
	[ -b "/dev/mapper/$1" ] || dmsetup mknodes "$1"
}

# dm_try_create <name> <table>: create, returning dmsetup's status; output in
# $DM_ERR for the caller to inspect.
dm_try_create() {
	DM_ERR=$(printf '%s\n' "$2" | dmsetup create "$1" --noudevsync 2>&1)
}

dm_remove() {
	dmsetup remove --retry "$1" || fail "dmsetup remove $1 failed"
}

# Run fio with terse output; prints the terse line.
fio_terse() {
	fio --output-format=terse --terse-version=3 "$@" | tail -n 1
}

# Fields of a terse v3 line (semicolon-separated, 1-based).
# read: 6 io_kib, 7 bw_kib/s, 8 iops, 9 runtime_ms; write: 47 io_kib, 48 bw_kib/s, 49 iops, 50 runtime_ms
terse_field() {
	printf '%s\n' "$1" | cut -d';' -f"$2"
}

# assert_eq <what> <expected> <actual>
assert_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# assert_within_pct <what> <target> <actual> <pct>: |actual-target| <= pct% of target
assert_within_pct() {
	awk -v t="$2" -v a="$3" -v p="$4" 'BEGIN { d = a - t; if (d < 0) d = -d; exit !(d <= t * p / 100) }' ||
		fail "$1: $3 is not within $4% of $2"
	echo "$1: $3 (target $2, tolerance $4%)"
}

# at_exit <commands>: teardown run when the test exits, however it exits;
# errors in it are ignored and the test's own exit status is kept.
at_exit() {
	SL_AT_EXIT=$1
	trap 'sl_rc=$?; set +e; eval "$SL_AT_EXIT" > /dev/null 2>&1; exit $sl_rc' EXIT
}
