#!/bin/sh
# Add up the counts files ("passed failed skipped") of the test suites and
# print the closing line. A suite whose counts file is missing did not run to
# the end (a build failure, say): it counts as one failure.
passed=0 failed=0 skipped=0
for f in "$@"; do
	if [ -s "$f" ]; then
		read -r p fl s < "$f"
	else
		echo "not ok $(basename "$f" .counts) # suite did not run to the end"
		p=0 fl=1 s=0
	fi
	passed=$((passed + p)) failed=$((failed + fl)) skipped=$((skipped + ${s:-0}))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
