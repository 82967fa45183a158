// SPDX-License-Identifier: GPL-2.0
/* Pools' labels and block devices; see label.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "label.h"
#include "store.h"

#define MAGIC "SLUICEPL"
#define VERSION 1
#define CRC_SPAN 512

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void uuid_text(const unsigned char *u, char *out)
{
	snprintf(out, AG_UUID_TEXT,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
}

static int uuid_bytes(const char *text, unsigned char *u)
{
	unsigned int i, k = 0;

	if (strlen(text) != AG_UUID_TEXT - 1)
		return -1;
	for (i = 0; i < AG_UUID_TEXT - 1; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return -1;
			continue;
		}
		if (sscanf(text + i, "%2hhx", &u[k]) != 1 || !strchr("0123456789abcdef", text[i]) ||
		    !strchr("0123456789abcdef", text[i + 1]))
			return -1;
		k++;
		i++;
	}
	return k == 16 ? 0 : -1;
}

bool ag_uuid_valid(const char *text)
{
	unsigned char u[16];

	return !uuid_bytes(text, u);
}

int ag_uuid_new(char out[AG_UUID_TEXT])
{
	unsigned char u[16];

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return -1;
	u[6] = (u[6] & 0x0f) | 0x40;	/* version 4: random */
	u[8] = (u[8] & 0x3f) | 0x80;	/* the RFC 4122 variant */
	uuid_text(u, out);
	return 0;
}

/* A label's first CRC_SPAN bytes: 1 a label (into l), 0 none, -1 damaged. */
static int parse(const void *raw, struct ag_label *l)
{
	unsigned char buf[CRC_SPAN];
	uint32_t crc;

	memcpy(buf, raw, sizeof(buf));
	if (memcmp(buf, MAGIC, 8))
		return 0;
	crc = (uint32_t)get_le(buf + 12, 4);
	memset(buf + 12, 0, 4);
	if (get_le(buf + 8, 4) != VERSION || ag_crc32c(0, buf, sizeof(buf)) != crc)
		return -1;
	uuid_text(buf + 16, l->uuid);
	l->extents = get_le(buf + 32, 8);
	memcpy(l->pool, buf + 40, 64);
	l->pool[64] = '\0';
	return 1;
}

int ag_label_read(int fd, struct ag_label *l)
{
	unsigned char buf[CRC_SPAN];

	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return -1;
	return parse(buf, l);
}

int ag_label_write(int fd, const struct ag_label *l, struct ag_err *e)
{
	unsigned char *buf = calloc(1, AG_LABEL_BYTES);
	int rc = -1;

	if (!buf)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	memcpy(buf, MAGIC, 8);
	put_le(buf + 8, VERSION, 4);
	if (uuid_bytes(l->uuid, buf + 16)) {
		ag_fail(e, AG_E_INTERNAL, "label: bad uuid %.40s", l->uuid);
		goto out;
	}
	put_le(buf + 32, l->extents, 8);
	memcpy(buf + 40, l->pool, strnlen(l->pool, 64));
	put_le(buf + 12, ag_crc32c(0, buf, CRC_SPAN), 4);
	if (pwrite(fd, buf, AG_LABEL_BYTES, 0) != AG_LABEL_BYTES || fdatasync(fd)) {
		ag_fail(e, AG_E_INTERNAL, "writing the pool's label: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

bool ag_label_kept(const char *path, const char *uuid)
{
	struct ag_label l;
	void *buf = NULL;
	bool kept = false;
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd < 0 || posix_memalign(&buf, AG_LABEL_BYTES, AG_LABEL_BYTES) ||
	    pread(fd, buf, AG_LABEL_BYTES, 0) != AG_LABEL_BYTES)
		goto out;
	kept = parse(buf, &l) == 1 && !strcmp(l.uuid, uuid);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return kept;
}

bool ag_label_is(int fd, const char *uuid)
{
	struct ag_label l;

	return ag_label_read(fd, &l) == 1 && !strcmp(l.uuid, uuid);
}

static void stable_path(const char *name, dev_t devno, char *out, size_t len);

int ag_blk_canonical(const char *path, char *out, size_t len, dev_t *devno, struct ag_err *e)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real))
		return ag_fail(e, AG_E_INVALID, "device: %.200s: %s", path, strerror(errno));
	if (strncmp(real, "/dev/", 5) || strlen(real) >= len)
		return ag_fail(e, AG_E_INVALID, "device: %.200s is not a device under /dev/", path);
	if (stat(real, &st) || !S_ISBLK(st.st_mode))
		return ag_fail(e, AG_E_INVALID, "device: %.200s: not a block device", path);
	strcpy(out, real);
	*devno = st.st_rdev;
	/* /dev/dm-N is numbered anew at every boot: /dev/mapper/<name> is not */
	if (!strncmp(real, "/dev/dm-", 8))
		stable_path(real + 5, st.st_rdev, out, len);
	return 0;
}

/* A "maj:min" file of sysfs as a device number. */
static int read_devno(const char *path, dev_t *out)
{
	FILE *f = fopen(path, "re");
	unsigned int ma, mi;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%u:%u", &ma, &mi) == 2;
	fclose(f);
	if (!ok)
		return -1;
	*out = makedev(ma, mi);
	return 0;
}

/* Whether the blocks of dev live (in part) on lower: through partitions and slaves. */
static bool lies_on(dev_t dev, dev_t lower, int depth)
{
	char sys[96], sub[PATH_MAX + 16], real[PATH_MAX];
	struct dirent *d;
	bool found = false;
	DIR *dir;
	dev_t up;

	if (dev == lower)
		return true;
	if (depth > 8)
		return false;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	snprintf(sub, sizeof(sub), "%s/partition", sys);
	if (!access(sub, F_OK) && realpath(sys, real)) {
		/* a partition's directory is inside its disk's */
		char *slash = strrchr(real, '/');

		if (slash) {
			*slash = '\0';
			snprintf(sub, sizeof(sub), "%s/dev", real);
			if (!read_devno(sub, &up) && lies_on(up, lower, depth + 1))
				return true;
		}
	}
	snprintf(sub, sizeof(sub), "%s/slaves", sys);
	dir = opendir(sub);
	while (dir && !found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "/sys/class/block/%s/dev", d->d_name);
		found = !read_devno(sub, &up) && lies_on(up, lower, depth + 1);
	}
	if (dir)
		closedir(dir);
	return found;
}

bool ag_blk_overlap(dev_t a, dev_t b)
{
	return lies_on(a, b, 0) || lies_on(b, a, 0);
}

/* The device-mapper name of /sys/class/block/<name>, "" if it is not one. */
static void dm_name(const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/block/%s/dm/name", name);
	out[0] = '\0';
	f = fopen(path, "re");
	if (f) {
		if (!fgets(out, (int)len, f))
			out[0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/*
 * A stable path for the block device <name> at devno: /dev/mapper/<name>
 * for a device-mapper device (its dm-N number changes from boot to boot),
 * else /dev/<name>.
 */
static void stable_path(const char *name, dev_t devno, char *out, size_t len)
{
	char dm[128], path[PATH_MAX];
	struct stat st;

	dm_name(name, dm, sizeof(dm));
	snprintf(path, sizeof(path), "/dev/mapper/%s", dm);
	if (dm[0] && !stat(path, &st) && S_ISBLK(st.st_mode) && st.st_rdev == devno)
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "/dev/%s", name);
}

/* Whether the device at path (its devno) carries uuid's label. */
static bool carries(const char *path, const char *uuid, dev_t *devno)
{
	struct stat st;
	bool yes;
	int fd;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	yes = ag_label_is(fd, uuid);
	close(fd);
	*devno = st.st_rdev;
	return yes;
}

/* Whether a device is one of sluice's own (a volume's): those never carry a label. */
static bool ours(const char *name)
{
	char dm[128];

	dm_name(name, dm, sizeof(dm));
	return !strncmp(dm, "sluice-", 7);
}

/* The name in /sys/class/block of devno, into out. */
static int name_of(dev_t devno, char *out, size_t len)
{
	char path[96], real[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(devno), minor(devno));
	if (!realpath(path, real) || !(slash = strrchr(real, '/')))
		return -1;
	snprintf(out, len, "%s", slash + 1);
	return 0;
}

/* Whether a device stacked on <name> (not one of sluice's) carries uuid's label too. */
static bool labelled_above(const char *name, const char *uuid)
{
	char sub[PATH_MAX], node[PATH_MAX];
	struct dirent *d;
	bool found = false;
	dev_t at;
	DIR *dir;

	snprintf(sub, sizeof(sub), "/sys/class/block/%s/holders", name);
	dir = opendir(sub);
	while (dir && !found && (d = readdir(dir))) {
		if (d->d_name[0] == '.' || ours(d->d_name))
			continue;
		snprintf(node, sizeof(node), "/dev/%s", d->d_name);
		found = carries(node, uuid, &at);
	}
	if (dir)
		closedir(dir);
	return found;
}

#define MAX_CARRIERS 8

int ag_label_find(const char *uuid, const char *hint, char *path, size_t len, dev_t *devno,
		  struct ag_err *e)
{
	char name[MAX_CARRIERS][256], node[PATH_MAX], sysdev[PATH_MAX], hname[256];
	dev_t no[MAX_CARRIERS], at, want;
	bool lower[MAX_CARRIERS] = { false };
	unsigned int n = 0, i, j, top = 0, kept = 0;
	struct dirent *d;
	DIR *dir;

	/* the last place first, unless something stacked on it carries the label too */
	if (hint && hint[0] && carries(hint, uuid, &at) && !name_of(at, hname, sizeof(hname)) &&
	    !labelled_above(hname, uuid)) {
		stable_path(hname, at, path, len);
		*devno = at;
		return 1;
	}
	dir = opendir("/sys/class/block");
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.' || strlen(d->d_name) >= sizeof(name[0]) || ours(d->d_name))
			continue;
		snprintf(sysdev, sizeof(sysdev), "/sys/class/block/%s/dev", d->d_name);
		snprintf(node, sizeof(node), "/dev/%s", d->d_name);
		if (read_devno(sysdev, &want) || !carries(node, uuid, &at) || at != want)
			continue;
		if (n == MAX_CARRIERS) {
			closedir(dir);
			return ag_fail(e, AG_E_CORRUPT, "the label %s is on more than %d devices", uuid,
				       MAX_CARRIERS);
		}
		strcpy(name[n], d->d_name);
		no[n++] = at;
	}
	if (dir)
		closedir(dir);
	/*
	 * The top of a stack carries the label of what is below it (a RAID1
	 * member, a path of a multipath device): the pool is the device that
	 * nothing else carrying it is stacked on. Two such tops are two disks
	 * claiming one pool: neither is taken.
	 */
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j && no[i] != no[j] && lies_on(no[j], no[i], 0))
				lower[i] = true;
	for (i = 0; i < n; i++)
		if (!lower[i] && kept++ == 0)
			top = i;
	if (!kept)
		return 0;
	if (kept > 1) {
		for (j = top + 1; j < n && lower[j]; j++)
			;
		return ag_fail(e, AG_E_CORRUPT, "the label %s is on both /dev/%s and /dev/%s", uuid,
			       name[top], j < n ? name[j] : "?");
	}
	stable_path(name[top], no[top], path, len);
	*devno = no[top];
	return 1;
}
