/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A map from an id (a NUL-terminated string that the value owns and keeps
 * unchanged while it is in the map) to the value, by hashing with chains:
 * find, insert and remove take constant time on average at any size, so
 * that no operation on one volume costs more with 10,000 of them.
 * Not synchronised: the caller's lock guards it.
 */
#ifndef SLUICE_AGENT_IDMAP_H
#define SLUICE_AGENT_IDMAP_H

#include <stddef.h>

struct ag_idmap_entry;

struct ag_idmap {
	struct ag_idmap_entry **buckets;
	size_t nr_buckets;	/* a power of two, or 0 before the first insert */
	size_t nr;
};

void *ag_idmap_get(const struct ag_idmap *m, const char *id);
/* 0, -EEXIST if id is there already, or -ENOMEM. */
int ag_idmap_put(struct ag_idmap *m, const char *id, void *value);
/* The value that was there, or NULL. */
void *ag_idmap_del(struct ag_idmap *m, const char *id);
/* Free the map's own memory (not the values). */
void ag_idmap_destroy(struct ag_idmap *m);

/*
 * The values, in no order, into a malloc'd array of m->nr (NULL when the
 * map is empty or memory is short: check m->nr).
 */
void **ag_idmap_values(const struct ag_idmap *m);

#endif
