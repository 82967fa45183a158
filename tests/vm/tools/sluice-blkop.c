// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-blkop: block operations the guest's busybox cannot issue, for the
 * guest tests.
 *   sluice-blkop punch <dev> <offset> <length>     write-zeroes that may unmap
 *                                                  (fallocate PUNCH_HOLE: no
 *                                                  fallback to writing zeros)
 *   sluice-blkop discard <dev> <offset> <length>   BLKDISCARD
 * Offsets and lengths in bytes, multiples of 512.
 *   sluice-blkop setloop <dm-name> <key> <count>
 *       sends "set <key>=<1001..1000+count>" to sector 0 of a dm device,
 *       one DM_TARGET_MSG ioctl each (no process per message, so that two
 *       of these side by side race in the kernel)
 *   sluice-blkop setcheck <dm-name> <key> <count>
 *       the same, reading the table (DM_TABLE_STATUS) after each set: exits
 *       1 at the first table that does not show the value just set
 *   sluice-blkop replace <file> <from> <to>
 *       every <from> in a file (binary) replaced by <to>, of the same
 *       length, in place; prints how many (a damaged store, for the tests)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end ? -1 : 0;
}

union dm_buf {
	struct dm_ioctl io;
	char buf[16384];
};

static void dm_buf_init(union dm_buf *u, const char *name)
{
	memset(u, 0, sizeof(struct dm_ioctl) + 256);
	u->io.version[0] = DM_VERSION_MAJOR;
	u->io.data_size = sizeof(*u);
	u->io.data_start = sizeof(struct dm_ioctl);
	snprintf(u->io.name, sizeof(u->io.name), "%s", name);
}

/* "key=value" in the table's arguments, as a whole word */
static int table_has(int fd, const char *name, const char *want)
{
	static union dm_buf u;
	struct dm_target_spec *spec;
	const char *p;
	size_t n = strlen(want);

	dm_buf_init(&u, name);
	u.io.flags = DM_STATUS_TABLE_FLAG;
	if (ioctl(fd, DM_TABLE_STATUS, &u) || u.io.target_count != 1)
		return -1;
	spec = (struct dm_target_spec *)(u.buf + u.io.data_start);
	for (p = (const char *)(spec + 1); (p = strstr(p, want)); p += n)
		if ((p[n] == ' ' || !p[n]) && p[-1] == ' ')
			return 1;
	return 0;
}

static int setloop(const char *name, const char *key, uint64_t count, int check)
{
	static union dm_buf u;
	struct dm_target_msg *msg;
	char want[96];
	uint64_t i;
	int fd = open("/dev/mapper/control", O_RDWR);

	if (fd < 0) {
		fprintf(stderr, "sluice-blkop: /dev/mapper/control: %s\n", strerror(errno));
		return 1;
	}
	for (i = 1; i <= count; i++) {
		dm_buf_init(&u, name);
		msg = (struct dm_target_msg *)(u.buf + sizeof(struct dm_ioctl));
		msg->sector = 0;
		snprintf(want, sizeof(want), "%s=%llu", key, (unsigned long long)(1000 + i));
		snprintf(msg->message, 128, "set %s", want);
		if (ioctl(fd, DM_TARGET_MSG, &u)) {
			fprintf(stderr, "sluice-blkop: message %llu to %s: %s\n",
				(unsigned long long)i, name, strerror(errno));
			close(fd);
			return 1;
		}
		if (check && table_has(fd, name, want) != 1) {
			fprintf(stderr, "sluice-blkop: set %llu: the table does not show %s\n",
				(unsigned long long)i, want);
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
}

static int replace(const char *path, const char *from, const char *to)
{
	size_t n = strlen(from), len, i, count = 0;
	char *buf;
	FILE *f;
	long size;

	if (!n || strlen(to) != n)
		return 2;
	f = fopen(path, "r+b");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0) {
		fprintf(stderr, "sluice-blkop: %s: %s\n", path, strerror(errno));
		return 1;
	}
	len = (size_t)size;
	buf = malloc(len + 1);
	rewind(f);
	if (!buf || fread(buf, 1, len, f) != len)
		return 1;
	for (i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, from, n)) {
			memcpy(buf + i, to, n);
			count++;
		}
	rewind(f);
	if (fwrite(buf, 1, len, f) != len || fclose(f))
		return 1;
	free(buf);
	printf("%zu\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t range[2];
	unsigned long req;
	int fd;

	if (argc == 5 && !strcmp(argv[1], "replace"))
		return replace(argv[2], argv[3], argv[4]);
	if (argc == 5 && (!strcmp(argv[1], "setloop") || !strcmp(argv[1], "setcheck"))) {
		if (parse_u64(argv[4], &range[0]))
			return 2;
		return setloop(argv[2], argv[3], range[0], !strcmp(argv[1], "setcheck"));
	}
	if (argc != 5 || parse_u64(argv[3], &range[0]) || parse_u64(argv[4], &range[1])) {
		fprintf(stderr, "usage: sluice-blkop punch|discard <dev> <offset> <length>\n"
				"       sluice-blkop setloop|setcheck <dm-name> <key> <count>\n"
				"       sluice-blkop replace <file> <from> <to>\n");
		return 2;
	}
	if (!strcmp(argv[1], "punch")) {
		req = 0;
	} else if (!strcmp(argv[1], "discard")) {
		req = BLKDISCARD;
	} else {
		fprintf(stderr, "sluice-blkop: unknown operation '%s'\n", argv[1]);
		return 2;
	}
	fd = open(argv[2], O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "sluice-blkop: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (req ? ioctl(fd, req, range) :
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)range[0],
		      (off_t)range[1])) {
		fprintf(stderr, "sluice-blkop: %s %s: %s\n", argv[1], argv[2], strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
