// SPDX-License-Identifier: GPL-2.0
/* The id map; see idmap.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

struct ag_idmap_entry {
	struct ag_idmap_entry *next;
	const char *id;
	void *value;
};

/* FNV-1a: ids are short and not chosen to collide (a chain is at worst long, never wrong) */
static size_t hash(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*id) {
		h ^= (unsigned char)*id++;
		h *= 0x100000001b3ULL;
	}
	return (size_t)(h ^ (h >> 32));
}

static struct ag_idmap_entry **slot(const struct ag_idmap *m, const char *id)
{
	struct ag_idmap_entry **e = &m->buckets[hash(id) & (m->nr_buckets - 1)];

	while (*e && strcmp((*e)->id, id))
		e = &(*e)->next;
	return e;
}

void *ag_idmap_get(const struct ag_idmap *m, const char *id)
{
	struct ag_idmap_entry **e;

	if (!m->nr_buckets)
		return NULL;
	e = slot(m, id);
	return *e ? (*e)->value : NULL;
}

static int grow(struct ag_idmap *m)
{
	size_t n = m->nr_buckets ? m->nr_buckets * 2 : 64, i;
	struct ag_idmap_entry **b = calloc(n, sizeof(*b)), *e, *next;

	if (!b)
		return -ENOMEM;
	for (i = 0; i < m->nr_buckets; i++)
		for (e = m->buckets[i]; e; e = next) {
			size_t h = hash(e->id) & (n - 1);

			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	free(m->buckets);
	m->buckets = b;
	m->nr_buckets = n;
	return 0;
}

int ag_idmap_put(struct ag_idmap *m, const char *id, void *value)
{
	struct ag_idmap_entry **e, *n;

	if (m->nr >= m->nr_buckets && grow(m))
		return -ENOMEM;
	e = slot(m, id);
	if (*e)
		return -EEXIST;
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = (struct ag_idmap_entry){ NULL, id, value };
	*e = n;
	m->nr++;
	return 0;
}

void *ag_idmap_del(struct ag_idmap *m, const char *id)
{
	struct ag_idmap_entry **e, *gone;
	void *v;

	if (!m->nr_buckets)
		return NULL;
	e = slot(m, id);
	if (!*e)
		return NULL;
	gone = *e;
	v = gone->value;
	*e = gone->next;
	free(gone);
	m->nr--;
	return v;
}

void ag_idmap_destroy(struct ag_idmap *m)
{
	struct ag_idmap_entry *e, *next;
	size_t i;

	for (i = 0; i < m->nr_buckets; i++)
		for (e = m->buckets[i]; e; e = next) {
			next = e->next;
			free(e);
		}
	free(m->buckets);
	memset(m, 0, sizeof(*m));
}

void **ag_idmap_values(const struct ag_idmap *m)
{
	void **out = m->nr ? malloc(m->nr * sizeof(*out)) : NULL;
	struct ag_idmap_entry *e;
	size_t i, k = 0;

	if (!out)
		return NULL;
	for (i = 0; i < m->nr_buckets; i++)
		for (e = m->buckets[i]; e; e = e->next)
			out[k++] = e->value;
	return out;
}
