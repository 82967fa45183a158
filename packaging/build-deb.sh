#!/bin/sh
# make deb: the Debian packages sluiced and sluice-dkms, built from the
# committed and working-tree files git knows (into <out>/), then checked by
# lintian, which must report no errors.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
if [ "$(id -u)" = 0 ]; then
	need=""
	for p in debhelper dh-dkms dkms dpkg-dev lintian; do
		dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" || need="$need $p"
	done
	if [ -n "$need" ]; then
		echo "build-deb: installing$need"
		apt-get install -y -q $need > /dev/null
	fi
fi
version=$(sed -n '1s/^sluice (\([^)]*\)).*/\1/p' "$root/packaging/debian/changelog")
stage=$out/sluice-$version
rm -rf "$out"
mkdir -p "$stage"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
	tar -xf - -C "$stage"
rm -rf "$stage/debian"
cp -r "$root/packaging/debian" "$stage/debian"
(cd "$stage" && dpkg-buildpackage -us -uc -b > "$out/build.log" 2>&1) ||
	{ tail -n 30 "$out/build.log"; echo "build-deb: dpkg-buildpackage failed; $out/build.log"; exit 1; }
ls "$out"/*.deb
lintian --fail-on error --info "$out"/*.changes
