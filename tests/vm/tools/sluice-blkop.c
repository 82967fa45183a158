// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-blkop: block operations the guest's busybox cannot issue, for the
 * guest tests.
 *   sluice-blkop punch <dev> <offset> <length>     write-zeroes that may unmap
 *                                                  (fallocate PUNCH_HOLE: no
 *                                                  fallback to writing zeros)
 *   sluice-blkop discard <dev> <offset> <length>   BLKDISCARD
 * Offsets and lengths in bytes, multiples of 512.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

int main(int argc, char **argv)
{
	uint64_t range[2];
	unsigned long req;
	int fd;

	if (argc != 5 || parse_u64(argv[3], &range[0]) || parse_u64(argv[4], &range[1])) {
		fprintf(stderr, "usage: sluice-blkop punch|discard <dev> <offset> <length>\n");
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
