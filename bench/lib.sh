# shellcheck shell=sh
# Helpers for bench scenarios, which run in the guest. A scenario prints its
# results as one line "RESULT <json object>" and anything else as comments.
. /sluice/guest/lib.sh

# err_pct <target> <achieved>: 100 * |achieved - target| / target
err_pct() {
	awk -v t="$1" -v a="$2" 'BEGIN { d = a - t; if (d < 0) d = -d; printf "%.3f", 100 * d / t }'
}

# mean of the arguments
mean() {
	echo "$@" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF }'
}

# median of the arguments
median() {
	echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# quartiles of the arguments, as "q1, q3" (the medians of the lower and the
# upper half)
quartiles() {
	echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '
		function med(lo, hi,  n) {
			n = hi - lo + 1
			return n % 2 ? v[lo + (n - 1) / 2] : (v[lo + n / 2 - 1] + v[lo + n / 2]) / 2
		}
		{ v[NR] = $1 }
		END { h = int(NR / 2); printf "%.4f, %.4f\n", med(1, h), med(NR - h + 1, NR) }'
}

# ratio <a> <b>: a / b
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'
}

# max of the arguments
max_of() {
	echo "$@" | awk '{ m = $1; for (i = 2; i <= NF; i++) if ($i > m) m = $i; print m }'
}

# in_cgroup <cgroup dir> <command...>: run a command inside a cgroup v2 group
in_cgroup() {
	cg=$1
	shift
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
