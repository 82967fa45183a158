#!/bin/sh
# Render bench/out/results.json as a markdown page: per scenario, its scalar
# keys, and any array of objects as a table.
set -eu
jq -r '
  to_entries[] |
  "## \(.key)\n",
  (.value | to_entries | map(select(.value | type != "array")) |
     if length > 0 then "| key | value |\n| --- | --- |", (.[] | "| \(.key) | \(.value) |") else empty end),
  (.value | to_entries[] | select(.value | type == "array") |
     "\n### \(.key)\n",
     ((.value[0] | keys_unsorted) as $k |
       ("| " + ($k | join(" | ")) + " |"),
       ("|" + ($k | map(" --- |") | join(""))),
       (.value[] | "| " + ([.[$k[]] | tostring] | join(" | ")) + " |"))),
  ""
' "$1"
