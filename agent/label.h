/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pool's label and the block devices it may be found on.
 *
 * The label is the first 4 KiB of the pool's disk (extent 0, which no volume
 * maps), written when the pool is registered:
 *
 *   offset  size
 *   0       8     magic "SLUICEPL"
 *   8       4     version, 1 (little-endian)
 *   12      4     crc32c of bytes 0..511, these four taken as zero
 *   16      16    the pool's UUID (random, version 4)
 *   32      8     extents when registered (little-endian)
 *   40      64    the pool's name, NUL-padded (for a person reading the disk)
 *   104     ...   zeros to 4096
 *
 * A pool is found by its label, never by its path: paths change between
 * boots (disks enumerate in another order, a disk is moved), and a pool on
 * the wrong disk would map volumes onto other tenants' blocks, and a pending
 * delete would zero them.
 */
#ifndef SLUICE_AGENT_LABEL_H
#define SLUICE_AGENT_LABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define AG_LABEL_BYTES 4096
#define AG_UUID_TEXT 37		/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and NUL */

struct ag_label {
	char uuid[AG_UUID_TEXT];
	uint64_t extents;
	char pool[65];
};

/* Whether text is a UUID as ag_uuid_new() writes it (lower-case hex). */
bool ag_uuid_valid(const char *text);
/* A new random UUID, as text. 0, or -1 if the kernel gives no randomness. */
int ag_uuid_new(char out[AG_UUID_TEXT]);

/* The label of the disk open as fd: 1 found, 0 none there, -1 unreadable. */
int ag_label_read(int fd, struct ag_label *l);
/* Write it at the start of the disk and flush it. */
int ag_label_write(int fd, const struct ag_label *l, struct ag_err *e);

/*
 * A block device path made canonical (symlinks and "." resolved): it must be
 * under /dev/ and fit in len. Its device number in *devno. -1 with e.
 */
int ag_blk_canonical(const char *path, char *out, size_t len, dev_t *devno, struct ag_err *e);

/*
 * Whether two block devices share blocks: the same device, a partition and
 * its disk, or a device stacked on the other (device-mapper, md), through
 * the kernel's view in /sys/dev/block.
 */
bool ag_blk_overlap(dev_t a, dev_t b);

/*
 * The block device that carries the label of uuid: at hint first (the path
 * where it was), else every device in /sys/class/block with a node in
 * /dev. A device stacked on another (device-mapper, md) is taken only when
 * no plain one carries it. 1 found (path, devno), 0 none, -1 found on two
 * plain devices (e says which).
 */
int ag_label_find(const char *uuid, const char *hint, char *path, size_t len, dev_t *devno,
		  struct ag_err *e);

/*
 * Whether the disk at path keeps what was written to it: its label read
 * back past the page cache (O_DIRECT) is uuid's. A device that drops writes
 * (a null_blk without memory) would lose the pool at its next start.
 */
bool ag_label_kept(const char *path, const char *uuid);

/* Whether the disk open as fd carries the label of uuid (a check before writing to it). */
bool ag_label_is(int fd, const char *uuid);

#endif
