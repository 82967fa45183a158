# shellcheck shell=sh
# Test selection, shared by the guest's runner and the host's run-shards.sh.
# $sel is a comma list of names, groups or prefixes ("target/001,harness"),
# or "all". The tests that span two boots of the guest (reboot/*) run only
# when named: tests/vm/reboot.sh boots the guest for them.

# selected <name>: is this test selected?
selected() {
	if [ "$sel" = all ]; then
		case $1 in reboot/*) return 1 ;; esac
		return 0
	fi
	old_ifs=$IFS
	IFS=,
	for s in $sel; do
		case $1 in "$s" | "$s"/* | "$s"-*) IFS=$old_ifs; return 0 ;; esac
	done
	IFS=$old_ifs
	return 1
}

# list_tests <root>: every test under root, as <group>/<name>, sorted
list_tests() {
	(cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) | while read -r f; do
		case $f in *.sh | *.md) continue ;; esac
		echo "$f"
	done
}
