#!/bin/sh
# Build stand-ins for shared libraries a program links but the guest tests
# never use, so that the guest neither carries nor loads them. fio links the
# libraries of its network and persistent-memory engines (Ceph, Gluster, NBD,
# RDMA, PMDK); under TCG loading them and running their constructors costs
# about 0.8 s per fio start and two thirds of the initramfs. Each stand-in
# has the real library's soname and defines, with the same symbol versions,
# every function the program imports from it; calling one aborts.
# Usage: stub-libs.sh <program> <outdir> <soname>...
set -eu
prog=$1 out=$2
shift 2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the program's imports as "name version" (version "-" when it has none)
nm -D --undefined-only "$prog" | awk '$1 == "U" {
	n = split($2, p, "@"); print p[1], (n > 1 ? p[n] : "-") }' > "$work/imports"

for soname in "$@"; do
	real=$(ldd "$prog" | awk -v s="$soname" '$1 == s && $3 ~ /^\// { print $3 }')
	if [ -z "$real" ]; then
		echo "stub-libs: $prog does not link $soname" >&2
		exit 1
	fi
	# the functions the real library defines, and which of them are imported
	nm -D --defined-only "$real" | awk '{ n = split($3, p, "@"); print p[1] }' | sort -u > "$work/defs"
	awk 'NR == FNR { d[$1] = 1; next } ($1 in d)' "$work/defs" "$work/imports" > "$work/syms"
	c=$work/$soname.c map=$work/$soname.map
	{
		echo '#include <stdlib.h>'
		awk '{ printf "void %s(void) { abort(); }\n", $1 }' "$work/syms"
	} > "$c"
	awk '$2 != "-" { v[$2] = v[$2] " " $1 ";" }
		END { for (k in v) printf "%s {%s };\n", k, v[k] }' "$work/syms" > "$map"
	ver=""
	[ -s "$map" ] && ver="-Wl,--version-script=$map"
	# shellcheck disable=SC2086
	cc -shared -fPIC -O0 -w -o "$out/$soname" -Wl,-soname,"$soname" $ver "$c"
done
