/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The extent map of a pool. A pool's disk is cut into extents of
 * AG_EXTENT_BYTES; extent 0 is reserved for the pool's label, the rest are
 * handed to volumes as runs of consecutive extents. A volume's data device
 * is a linear map of its runs in order, so growing a volume appends runs.
 *
 * 64 MiB extents: a 16 TiB disk is 262,144 extents, a 32 KiB bitmap, and a
 * volume of any size needs few runs (tables stay short), while the space
 * lost to rounding a volume up is at most 64 MiB.
 */
#ifndef SLUICE_AGENT_EXTENT_H
#define SLUICE_AGENT_EXTENT_H

#include <stddef.h>
#include <stdint.h>

#define AG_EXTENT_BYTES ((uint64_t)64 << 20)
#define AG_EXTENT_SECTORS (AG_EXTENT_BYTES / 512)

struct ag_run {
	uint64_t start;		/* first extent */
	uint64_t count;		/* extents */
};

struct ag_extmap {
	uint64_t nr;		/* extents on the disk, the label's included */
	uint64_t nr_free;
	uint8_t *used;		/* bitmap, bit i = extent i */
};

/* The extents of a disk of bytes bytes (its tail past the last whole one is unused). */
uint64_t ag_extents_of(uint64_t bytes);

int ag_extmap_init(struct ag_extmap *m, uint64_t nr_extents);
void ag_extmap_destroy(struct ag_extmap *m);

/*
 * Mark runs as used, when rebuilding the map from the store. Fails, marking
 * nothing, if a run is out of range or overlaps one already used.
 */
int ag_extmap_mark(struct ag_extmap *m, const struct ag_run *runs, size_t n);

/* Give runs back. */
void ag_extmap_release(struct ag_extmap *m, const struct ag_run *runs, size_t n);

/*
 * Allocate count extents, all or nothing, appending runs to *runs (an array
 * grown with realloc, *n entries). Prefers, in order: extending the last run
 * of *runs in place; the smallest free stretch that holds them all; then the
 * largest stretches first, so that the volume has as few runs as can be.
 * Returns 0, or -ENOSPC / -ENOMEM with *runs and the map unchanged.
 */
int ag_extmap_alloc(struct ag_extmap *m, uint64_t count, struct ag_run **runs,
		    size_t *n);

#endif
