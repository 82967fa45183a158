# shellcheck shell=sh
# Adding up guest runs' results, for run-shards.sh and reboot.sh. Each run
# writes <outdir>/vm.counts as "passed failed skipped".
passed=0 failed=0 skipped=0

# count <vm.counts> <what>: add a run's counts (a run without them failed)
count() {
	if [ -s "$1" ]; then
		read -r p f s < "$1"
	else
		p=0 f=1 s=0
		echo "not ok $2 # no results"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}
