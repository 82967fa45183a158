// SPDX-License-Identifier: GPL-2.0
/* The extent map of a pool; see extent.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "extent.h"

static bool used(const struct ag_extmap *m, uint64_t i)
{
	return m->used[i / 8] & (1u << (i % 8));
}

static void set_used(struct ag_extmap *m, uint64_t i, bool on)
{
	if (on)
		m->used[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		m->used[i / 8] &= (uint8_t)~(1u << (i % 8));
}

uint64_t ag_extents_of(uint64_t bytes)
{
	return bytes / AG_EXTENT_BYTES;
}

int ag_extmap_init(struct ag_extmap *m, uint64_t nr_extents)
{
	m->nr = nr_extents;
	m->used = calloc(nr_extents / 8 + 1, 1);
	if (!m->used)
		return -ENOMEM;
	m->nr_free = 0;
	if (nr_extents) {
		set_used(m, 0, true);	/* the label */
		m->nr_free = nr_extents - 1;
	}
	return 0;
}

void ag_extmap_destroy(struct ag_extmap *m)
{
	free(m->used);
	m->used = NULL;
	m->nr = m->nr_free = 0;
}

static void mark_runs(struct ag_extmap *m, const struct ag_run *runs, size_t n,
		      bool on)
{
	size_t r;
	uint64_t i;

	for (r = 0; r < n; r++)
		for (i = runs[r].start; i < runs[r].start + runs[r].count; i++) {
			if (used(m, i) == on)
				continue;
			set_used(m, i, on);
			if (on)
				m->nr_free--;
			else
				m->nr_free++;
		}
}

int ag_extmap_mark(struct ag_extmap *m, const struct ag_run *runs, size_t n)
{
	size_t r, s;
	uint64_t i;

	for (r = 0; r < n; r++) {
		if (!runs[r].count || runs[r].start < 1 ||
		    runs[r].start > m->nr || runs[r].count > m->nr - runs[r].start)
			return -ERANGE;
		for (i = runs[r].start; i < runs[r].start + runs[r].count; i++)
			if (used(m, i))
				return -EEXIST;
		/* runs of the same call must not overlap each other either */
		for (s = 0; s < r; s++)
			if (runs[s].start < runs[r].start + runs[r].count &&
			    runs[r].start < runs[s].start + runs[s].count)
				return -EEXIST;
	}
	mark_runs(m, runs, n, true);
	return 0;
}

void ag_extmap_release(struct ag_extmap *m, const struct ag_run *runs, size_t n)
{
	size_t r;

	for (r = 0; r < n; r++)
		if (runs[r].start >= 1 && runs[r].start < m->nr &&
		    runs[r].count <= m->nr - runs[r].start)
			mark_runs(m, &runs[r], 1, false);
	/* extent 0 stays the label's */
	set_used(m, 0, m->nr > 0);
}

/* The free stretch starting at or after from: *start, returns its length. */
static uint64_t next_free(const struct ag_extmap *m, uint64_t from, uint64_t *start)
{
	uint64_t i = from, len = 0;

	while (i < m->nr && used(m, i))
		i++;
	*start = i;
	while (i < m->nr && !used(m, i)) {
		i++;
		len++;
	}
	return len;
}

static int append(struct ag_run **runs, size_t *n, size_t *cap, uint64_t start,
		  uint64_t count)
{
	if (*n && (*runs)[*n - 1].start + (*runs)[*n - 1].count == start) {
		(*runs)[*n - 1].count += count;
		return 0;
	}
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 4;
		struct ag_run *r = realloc(*runs, c * sizeof(*r));

		if (!r)
			return -ENOMEM;
		*runs = r;
		*cap = c;
	}
	(*runs)[(*n)++] = (struct ag_run){ start, count };
	return 0;
}

int ag_extmap_alloc(struct ag_extmap *m, uint64_t count, struct ag_run **runs,
		    size_t *n)
{
	struct ag_run *out;
	size_t nout = *n, cap = *n, old_n = *n;
	uint64_t want = count, start, len, best_start = 0, best_len = 0;

	if (!count)
		return 0;
	if (count > m->nr_free)
		return -ENOSPC;
	out = malloc((*n + 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	if (*n)
		memcpy(out, *runs, *n * sizeof(*out));
	cap = *n + 1;

	/* 1. grow the last run in place */
	if (nout) {
		uint64_t end = out[nout - 1].start + out[nout - 1].count;

		len = 0;
		while (end + len < m->nr && !used(m, end + len) && len < want)
			len++;
		if (len) {
			out[nout - 1].count += len;
			mark_runs(m, &(struct ag_run){ end, len }, 1, true);
			want -= len;
		}
	}
	/* 2. the smallest stretch that holds the rest */
	if (want) {
		for (len = next_free(m, 1, &start); len || start < m->nr;
		     len = next_free(m, start + len, &start)) {
			if (len >= want && (!best_len || len < best_len)) {
				best_start = start;
				best_len = len;
			}
			if (start >= m->nr)
				break;
		}
		if (best_len) {
			if (append(&out, &nout, &cap, best_start, want))
				goto nomem;
			mark_runs(m, &(struct ag_run){ best_start, want }, 1, true);
			want = 0;
		}
	}
	/* 3. largest stretches first */
	while (want) {
		best_len = 0;
		for (len = next_free(m, 1, &start); start < m->nr;
		     len = next_free(m, start + len, &start))
			if (len > best_len) {
				best_start = start;
				best_len = len;
			}
		if (!best_len)
			break;	/* cannot happen: nr_free said there was room */
		if (best_len > want)
			best_len = want;
		if (append(&out, &nout, &cap, best_start, best_len))
			goto nomem;
		mark_runs(m, &(struct ag_run){ best_start, best_len }, 1, true);
		want -= best_len;
	}
	free(*runs);
	*runs = out;
	*n = nout;
	return 0;

nomem:
	/* undo: release what this call took, restore the caller's runs */
	{
		size_t r;

		for (r = 0; r < nout; r++) {
			uint64_t s = out[r].start, c = out[r].count;

			if (r < old_n) {
				/* the caller's run, perhaps grown in place */
				s = (*runs)[r].start + (*runs)[r].count;
				c = out[r].start + out[r].count - s;
			}
			if (c)
				mark_runs(m, &(struct ag_run){ s, c }, 1, false);
		}
	}
	free(out);
	return -ENOMEM;
}
