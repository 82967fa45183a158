// SPDX-License-Identifier: GPL-2.0
/* Pools' labels: written and read back, damage and absence told apart, UUIDs, paths. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "unit.h"
#include "../../agent/label.h"

static int temp_disk(char *path)
{
	int fd;

	strcpy(path, "/tmp/sluice-label-XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0 && ftruncate(fd, 1 << 20))
		abort();
	return fd;
}

static void label_round_trips_and_damage_is_seen(void)
{
	struct ag_label l = { .extents = 8 }, back;
	struct ag_err e;
	char path[64];
	int fd = temp_disk(path);

	CHECK(fd >= 0);
	CHECK(ag_label_read(fd, &back) == 0);	/* zeros: none */
	CHECK(ag_uuid_new(l.uuid) == 0 && ag_uuid_valid(l.uuid));
	strcpy(l.pool, "p0");
	CHECK(ag_label_write(fd, &l, &e) == 0);
	CHECK(ag_label_read(fd, &back) == 1);
	CHECK(!strcmp(back.uuid, l.uuid) && back.extents == 8 && !strcmp(back.pool, "p0"));
	CHECK(ag_label_is(fd, l.uuid));
	/* another pool's uuid is not this one's */
	back.uuid[0] = back.uuid[0] == 'a' ? 'b' : 'a';
	CHECK(!ag_label_is(fd, back.uuid));
	/* a flipped byte inside the label: damaged, not absent, not another's */
	CHECK(pwrite(fd, "X", 1, 50) == 1);
	CHECK(ag_label_read(fd, &back) == -1);
	CHECK(!ag_label_is(fd, l.uuid));
	close(fd);
	unlink(path);
}

static void uuids_are_random_version_4(void)
{
	char a[AG_UUID_TEXT], b[AG_UUID_TEXT];

	CHECK(ag_uuid_new(a) == 0 && ag_uuid_new(b) == 0 && strcmp(a, b));
	CHECK(strlen(a) == 36 && a[14] == '4' && strchr("89ab", a[19]));
	CHECK(!ag_uuid_valid("0123abcd-0000-4000-8000-00000000beeg"));
	CHECK(!ag_uuid_valid("0123abcd-0000-4000-8000-00000000bee"));
	CHECK(!ag_uuid_valid("0123ABCD-0000-4000-8000-00000000beef"));
	CHECK(!ag_uuid_valid("0123abcd+0000-4000-8000-00000000beef"));
	CHECK(ag_uuid_valid("0123abcd-0000-4000-8000-00000000beef"));
}

static void paths_must_be_block_devices_under_dev(void)
{
	char out[32];
	struct ag_err e;
	dev_t d;

	CHECK(ag_blk_canonical("/etc/passwd", out, sizeof(out), &d, &e) == -1);
	CHECK(ag_blk_canonical("/dev/null", out, sizeof(out), &d, &e) == -1 && strstr(e.msg, "block"));
	CHECK(ag_blk_canonical("/dev/./././nope", out, sizeof(out), &d, &e) == -1);
	/* a device is the same as itself, whatever the kernel knows of it */
	CHECK(ag_blk_overlap(makedev(7, 0), makedev(7, 0)));
	CHECK(!ag_blk_overlap(makedev(7, 0), makedev(7, 1)));
}

static const struct unit_test tests[] = {
	UNIT_TEST(label_round_trips_and_damage_is_seen),
	UNIT_TEST(uuids_are_random_version_4),
	UNIT_TEST(paths_must_be_block_devices_under_dev),
};

UNIT_MAIN("label", tests)
