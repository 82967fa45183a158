#!/bin/sh
# make test's check of the Debian packages: they build (packaging/build-deb.sh),
# lintian reports no errors, and they hold what they must; and `make install`
# staged in a DESTDIR puts every file in place. Counts to $1.
set -u
counts=$1 out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/mk/report.sh"
"$root/packaging/build-deb.sh" "$out" > "$out.log" 2>&1
rc=$?
report packaging/deb-build-and-lintian $rc
[ $rc = 0 ] || sed 's/^/# /' "$out.log" | tail -n 20
# the files each package must carry
missing=""
list=$(dpkg-deb -c "$out"/sluiced_*_amd64.deb 2> /dev/null | awk '{ print $6 }')
for f in ./usr/sbin/sluiced ./usr/bin/sluicectl ./etc/sluice/sluiced.conf \
	./lib/systemd/system/sluiced.service ./usr/share/man/man8/sluiced.8.gz \
	./usr/share/man/man1/sluicectl.1.gz; do
	printf '%s\n' "$list" | grep -qx "$f" || missing="$missing $f"
done
list=$(dpkg-deb -c "$out"/sluice-dkms_*_all.deb 2> /dev/null | awk '{ print $6 }')
for f in dkms.conf Kbuild sluice-target.c sluice-weight.c sluice-core.h; do
	printf '%s\n' "$list" | grep -q "^./usr/src/sluice-[0-9.]*/$f$" || missing="$missing dkms:$f"
done
# the unit's hardening, as the issue asks for it
unit=$(mktemp -d)
dpkg-deb --fsys-tarfile "$out"/sluiced_*_amd64.deb 2> /dev/null |
	tar -xf - -C "$unit" ./lib/systemd/system/sluiced.service 2> /dev/null
for k in ProtectSystem=strict ReadWritePaths=/var/lib/sluice NoNewPrivileges=yes \
	CapabilityBoundingSet= Type=notify; do
	grep -q "^$k" "$unit/lib/systemd/system/sluiced.service" 2> /dev/null || missing="$missing unit:$k"
done
rm -rf "$unit"
# no file in both packages: dpkg refuses to install such a pair together
both=$(for d in "$out"/sluiced_*_amd64.deb "$out"/sluice-dkms_*_all.deb; do
	dpkg-deb -c "$d" 2> /dev/null | awk '$1 !~ /^d/ { print $6 }'
done | sort | uniq -d | tr '\n' ' ')
[ -z "$both" ] || missing="$missing in-both:$both"
[ -z "$missing" ] && report packaging/contents 0 || { report packaging/contents 1; echo "# missing:$missing"; }
# make install, staged, for the kernel the guest runs
dest=$(mktemp -d)
if make -s -C "$root" install DESTDIR="$dest" INSTALL_KVER="$("$root/mk/kver.sh")" > "$out.install.log" 2>&1; then
	missing=""
	for f in usr/local/sbin/sluiced usr/local/bin/sluicectl etc/sluice/sluiced.conf \
		etc/systemd/system/sluiced.service "lib/modules/$("$root/mk/kver.sh")/extra/dm-sluice.ko" \
		"lib/modules/$("$root/mk/kver.sh")/extra/dm-sluice-weight.ko"; do
		[ -s "$dest/$f" ] || missing="$missing $f"
	done
	grep -q '^ExecStart=/usr/local/sbin/sluiced daemon' "$dest/etc/systemd/system/sluiced.service" ||
		missing="$missing ExecStart"
	[ -z "$missing" ] && report packaging/make-install 0 || { report packaging/make-install 1; echo "# missing:$missing"; }
else
	report packaging/make-install 1
	tail -n 10 "$out.install.log" | sed 's/^/# /'
fi
rm -rf "$dest"
report_counts "$counts"
