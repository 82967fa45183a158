#!/bin/sh
# Render bench/out/results.json as a markdown page: per scenario, its scalar
# keys (arrays of numbers inline), and any array of objects as a table.
set -eu
jq -r '
  def objarray: type == "array" and length > 0 and (.[0] | type == "object");
  to_entries[] |
  "## \(.key)\n",
  (.value | to_entries | map(select(.value | objarray | not)) |
     if length > 0 then "| key | value |\n| --- | --- |",
       (.[] | "| \(.key) | \(if (.value | type) == "array" then (.value | map(tostring) | join(", ")) else .value end) |")
     else empty end),
  (.value | to_entries[] | select(.value | objarray) |
     "\n### \(.key)\n",
     ((.value[0] | keys_unsorted) as $k |
       ("| " + ($k | join(" | ")) + " |"),
       ("|" + ($k | map(" --- |") | join(""))),
       (.value[] | "| " + ([.[$k[]] | tostring] | join(" | ")) + " |"))),
  ""
' "$1"
