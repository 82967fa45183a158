# shellcheck shell=sh
# dmesg_findings: read kernel log lines on stdin, print those that report a
# kernel bug, warning, oops, leak, lockdep splat, RCU stall or hung task.
dmesg_findings() {
	grep -E 'BUG:|WARNING:|Oops|general protection fault|kernel BUG|still has objects|possible (recursive|circular) locking|inconsistent lock state|lockdep|suspicious RCU usage|rcu_(sched|preempt) detected stall|hung_task|blocked for more than|UBSAN:|KASAN:|Call Trace:' |
		grep -v 'sluice-test: \|sluice-mark: '
}
