#!/bin/sh
# In the guest: run the selected bench scenarios ($1: a comma list or "all")
# and forward each one's RESULT line as "BENCH <scenario> <json>".
sel=$1
for file in /sluice/bench/scenarios/*; do
	name=$(basename "$file")
	case ",$sel," in *",$name,"* | ",all,") ;; *) continue ;; esac
	echo "# running bench $name"
	sh "$file" > /tmp/bench.out 2>&1
	rc=$?
	sed -n "s|^RESULT |BENCH $name |p" /tmp/bench.out
	grep -v '^RESULT ' /tmp/bench.out | sed "s|^|# $name: |"
	[ "$rc" = 0 ] || echo "BENCH-FAILED $name exit $rc"
done
echo SLUICE-DONE
