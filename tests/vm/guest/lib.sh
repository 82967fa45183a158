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

# dm_create_many "<name>,,,,<table>;<name>,,,,<table>...": many devices in
# one dmsetup call (--concise: name,uuid,minor,flags,table); each process
# start costs a tenth of a second under TCG.
dm_create_many() {
	dmsetup create --concise --noudevsync "$1" || fail "dmsetup create --concise failed for: $1"
	dmsetup mknodes
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
# (natural numbers in the shell's arithmetic: a process start costs a tenth
# of a second under TCG; anything else in awk)
assert_within_pct() {
	case $2:$3:$4 in
	*[!0-9:]* | :* | *::* | *: | 0[0-9]* | *:0[0-9]*)
		awk -v t="$2" -v a="$3" -v p="$4" 'BEGIN { d = a - t; if (d < 0) d = -d; exit !(d <= t * p / 100) }' ||
			fail "$1: $3 is not within $4% of $2" ;;
	*)
		sl_d=$(($3 - $2))
		[ $((${sl_d#-} * 100)) -le $(($2 * $4)) ] || fail "$1: $3 is not within $4% of $2" ;;
	esac
	echo "$1: $3 (target $2, tolerance $4%)"
}

# assert_zeros <what> <device>: every byte of the device reads as zero (fio
# compares each block it reads with the pattern; a shell pipeline took 1.5 s
# under TCG for 128 MiB)
assert_zeros() {
	fio --name=zeros --filename="$2" --rw=read --bs=1M --direct=1 --verify=pattern \
		--verify_pattern=0 --output-format=terse > /tmp/zeros.out 2>&1 ||
		fail "$1: not all zeros: $(grep -m 3 'pattern' /tmp/zeros.out)"
	echo "$1: $(($(cut -d';' -f6 /tmp/zeros.out) / 1024)) MiB, all zeros"
}

# at_exit <commands>: teardown run when the test exits, however it exits;
# errors in it are ignored and the test's own exit status is kept.
at_exit() {
	SL_AT_EXIT=$1
	trap 'sl_rc=$?; set +e; eval "$SL_AT_EXIT" > /dev/null 2>&1; exit $sl_rc' EXIT
}

# status_field <dm-name> <key>: a key=value counter from `dmsetup status`.
status_field() {
	dmsetup status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# status_snap <file>: the time since boot on the first line, then every
# sluice device's status, from one dmsetup call: two snapshots bound a
# window of the target's counters. The counters are read somewhere between
# the two reads of the clock around dmsetup, and starting dmsetup can take
# a starved guest hundreds of milliseconds: a rate over a 2 s window once
# read 300 for 250 (a late second snapshot counts more bios than its time
# says). So the time is the middle of the two, and a call that took longer
# than 50 ms is made again (up to 20 times).
status_snap() {
	_tries=0
	while :; do
		read -r _t0 _ < /proc/uptime
		dmsetup status --target sluice > "$1.status"
		read -r _t1 _ < /proc/uptime
		_tries=$((_tries + 1))
		awk -v a="$_t0" -v b="$_t1" 'BEGIN { exit !(b - a <= 0.05) }' && break
		[ $_tries -lt 20 ] || break
	done
	awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f\n", (a + b) / 2 }' > "$1"
	cat "$1.status" >> "$1"
	rm -f "$1.status"
}

# snap_time <file>, snap_field <file> <dm-name> <key>: a status_snap's time,
# and one device's key=value counter in it.
snap_time() {
	head -n 1 "$1"
}

snap_field() {
	awk -v d="$2:" -v k="$3=" 'NR > 1 && $1 == d {
		for (i = 2; i <= NF; i++) if (index($i, k) == 1) { print substr($i, length(k) + 1); exit } }' "$1"
}

# uptime_s: seconds since boot, 10 ms resolution.
uptime_s() {
	cut -d' ' -f1 /proc/uptime
}

# rate <count0> <count1> <t0> <t1>: (count1 - count0) / (t1 - t0), rounded.
rate() {
	awk -v a="$1" -v b="$2" -v s="$3" -v e="$4" 'BEGIN { printf "%d", (b - a) / (e - s) + 0.5 }'
}

# log_mark <label> / log_since <label>: mark the kernel log, and print what it
# logged after the mark. Marks carry the test's pid, so they are unique in
# the boot.
log_mark() {
	echo "sluice-mark: $$ $1 <" > /dev/kmsg
}

log_since() {
	dmesg | awk -v m="sluice-mark: $$ $1 <" 'index($0, m) { on = 1; next } on'
}
