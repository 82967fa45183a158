// SPDX-License-Identifier: GPL-2.0
/* Device-mapper control through libdevmapper; see dmctl.h. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <pthread.h>
#include <libdevmapper.h>

#include "dmctl.h"

unsigned long ag_dm_calls;

/*
 * libdevmapper keeps the device nodes it has yet to make or remove in one
 * list of its own, unlocked: the calls that add to it (create, resume,
 * remove) and the making of the nodes take turns. The others (a table, a
 * status, a message, a suspend that may wait on a slow disk) run side by
 * side and hold up nobody.
 */
static pthread_mutex_t dm_lock = PTHREAD_MUTEX_INITIALIZER;

void ag_dm_init(void)
{
	char version[64];

	dm_udev_set_sync_support(0);
	/* the control device opened and the driver's version learnt once, on one thread */
	dm_driver_version(version, sizeof(version));
}

static struct dm_task *task(int type, const char *name)
{
	struct dm_task *t = dm_task_create(type);

	if (!t)
		return NULL;
	if (name && !dm_task_set_name(t, name)) {
		dm_task_destroy(t);
		return NULL;
	}
	return t;
}

static int run(struct dm_task *t, int type)
{
	bool nodes = type == DM_DEVICE_CREATE || type == DM_DEVICE_RESUME || type == DM_DEVICE_REMOVE;
	int ok;

	__atomic_fetch_add(&ag_dm_calls, 1, __ATOMIC_RELAXED);
	if (!nodes)
		return dm_task_run(t) ? 0 : -1;
	pthread_mutex_lock(&dm_lock);
	ok = dm_task_run(t);
	/* without udev, libdevmapper makes and removes the nodes itself */
	dm_task_update_nodes();
	pthread_mutex_unlock(&dm_lock);
	return ok ? 0 : -1;
}

/* Add the targets of a text table to t. */
static int add_targets(struct dm_task *t, const char *table)
{
	char *copy = strdup(table), *line, *save = NULL;
	int rc = 0;

	if (!copy)
		return -1;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t start, len;
		char type[64];
		int off = 0;

		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %63s %n", &start, &len, type, &off) < 3 ||
		    !off || !dm_task_add_target(t, start, len, type, line + off)) {
			rc = -1;
			break;
		}
	}
	free(copy);
	return rc;
}

/* The live table of name as text, lines joined by '\n'. */
static char *table_of(const char *name)
{
	struct dm_task *t = task(DM_DEVICE_TABLE, name);
	char *out = NULL, *type, *params;
	size_t len = 0;
	void *next = NULL;
	uint64_t start, length;
	FILE *f;

	if (!t || run(t, DM_DEVICE_TABLE)) {
		if (t)
			dm_task_destroy(t);
		return NULL;
	}
	f = open_memstream(&out, &len);
	if (f) {
		int first = 1;

		do {
			next = dm_get_next_target(t, next, &start, &length, &type, &params);
			if (!type)
				break;
			fprintf(f, "%s%" PRIu64 " %" PRIu64 " %s%s%s", first ? "" : "\n", start,
				length, type, params && *params ? " " : "", params ? params : "");
			first = 0;
		} while (next);
		fclose(f);
	}
	dm_task_destroy(t);
	return out;
}

char *ag_dm_status(const char *name)
{
	struct dm_task *t = task(DM_DEVICE_STATUS, name);
	char *type = NULL, *params = NULL, *out = NULL;
	uint64_t start, length;

	if (!t || run(t, DM_DEVICE_STATUS)) {
		if (t)
			dm_task_destroy(t);
		return NULL;
	}
	/* a sluice device has one target */
	dm_get_next_target(t, NULL, &start, &length, &type, &params);
	if (type)
		out = strdup(params ? params : "");
	dm_task_destroy(t);
	return out;
}

static bool name_has_prefix(const char *name, const void *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

static int list(bool (*match)(const char *, const void *), const void *arg,
		struct ag_have **out, size_t *n)
{
	struct dm_task *t = task(DM_DEVICE_LIST, NULL);
	struct dm_names *names;
	struct ag_have *h = NULL;
	size_t nh = 0, cap = 0;
	unsigned int next = 0;

	*out = NULL;
	*n = 0;
	if (!t || run(t, DM_DEVICE_LIST)) {
		if (t)
			dm_task_destroy(t);
		return -1;
	}
	names = dm_task_get_names(t);
	if (names && names->dev) {
		do {
			names = (struct dm_names *)((char *)names + next);
			if (match(names->name, arg)) {
				if (nh == cap) {
					struct ag_have *g;

					cap = cap ? 2 * cap : 64;
					g = realloc(h, cap * sizeof(*h));
					if (!g)
						goto nomem;
					h = g;
				}
				h[nh].major = major(names->dev);
				h[nh].minor = minor(names->dev);
				h[nh].name = strdup(names->name);
				h[nh].table = table_of(names->name);
				if (!h[nh].name || !h[nh].table) {
					free((char *)h[nh].name);
					free((char *)h[nh].table);
					goto nomem;
				}
				nh++;
			}
			next = names->next;
		} while (next);
	}
	dm_task_destroy(t);
	*out = h;
	*n = nh;
	return 0;
nomem:
	dm_task_destroy(t);
	ag_dm_list_free(h, nh);
	return -1;
}

int ag_dm_list(const char *prefix, struct ag_have **out, size_t *n)
{
	return list(name_has_prefix, prefix, out, n);
}

/*
 * One device by its name, if it exists (DM_DEVICE_INFO answers "none"
 * without an error), with its table: a lookup, whatever the number of
 * devices. 1 found, 0 none, -1 an error.
 */
static int device_of(const char *name, struct ag_have *h)
{
	struct dm_task *t = task(DM_DEVICE_INFO, name);
	struct dm_info info;
	int rc = -1;

	if (!t || run(t, DM_DEVICE_INFO) || !dm_task_get_info(t, &info))
		goto out;
	rc = 0;
	if (!info.exists)
		goto out;
	h->major = (unsigned int)info.major;
	h->minor = (unsigned int)info.minor;
	h->name = strdup(name);
	h->table = table_of(name);
	if (!h->name || !h->table) {
		free((char *)h->name);
		free((char *)h->table);
		rc = -1;
		goto out;
	}
	rc = 1;
out:
	if (t)
		dm_task_destroy(t);
	return rc;
}

int ag_dm_list_volume(const char *id, struct ag_have **out, size_t *n)
{
	char name[2][128];
	int i, rc;

	*n = 0;
	*out = calloc(2, sizeof(**out));
	if (!*out)
		return -1;
	snprintf(name[0], sizeof(name[0]), AG_DM_PREFIX "%s-data", id);
	snprintf(name[1], sizeof(name[1]), AG_DM_PREFIX "%s", id);
	for (i = 0; i < 2; i++) {
		rc = device_of(name[i], &(*out)[*n]);
		if (rc < 0) {
			ag_dm_list_free(*out, *n);
			*out = NULL;
			*n = 0;
			return -1;
		}
		*n += (size_t)rc;
	}
	return 0;
}

void ag_dm_list_free(struct ag_have *h, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)h[i].name);
		free((char *)h[i].table);
	}
	free(h);
}

static int simple(int type, const char *name)
{
	struct dm_task *t = task(type, name);
	int rc;

	if (!t)
		return -1;
	rc = run(t, type);
	dm_task_destroy(t);
	return rc;
}

/* DM_DEVICE_CREATE or DM_DEVICE_RELOAD with a text table. */
static int with_table(int type, const char *name, const char *table)
{
	struct dm_task *t = task(type, name);
	int rc = -1;

	if (t && !add_targets(t, table))
		rc = run(t, type);
	if (t)
		dm_task_destroy(t);
	return rc;
}

int ag_dm_create(const char *name, const char *table)
{
	return with_table(DM_DEVICE_CREATE, name, table);
}

/*
 * A noflush suspend: a sluice table hands the bios it holds back to dm,
 * which submits them again through the new table, instead of sending them
 * all at once (which the target then charges as debt). Neither sluice nor
 * linear tables need a flush to swap.
 */
static int suspend_noflush(const char *name)
{
	struct dm_task *t = task(DM_DEVICE_SUSPEND, name);
	int rc = -1;

	if (t && dm_task_no_flush(t))
		rc = run(t, DM_DEVICE_SUSPEND);
	if (t)
		dm_task_destroy(t);
	return rc;
}

int ag_dm_reload(const char *name, const char *table)
{
	int rc = with_table(DM_DEVICE_RELOAD, name, table);

	if (rc)
		return rc;
	if (suspend_noflush(name))
		return -1;
	return simple(DM_DEVICE_RESUME, name);
}

int ag_dm_message(const char *name, const char *msg)
{
	struct dm_task *t = task(DM_DEVICE_TARGET_MSG, name);
	int rc = -1;

	if (t && dm_task_set_sector(t, 0) && dm_task_set_message(t, msg))
		rc = run(t, DM_DEVICE_TARGET_MSG);
	if (t)
		dm_task_destroy(t);
	return rc;
}

int ag_dm_remove(const char *name)
{
	return simple(DM_DEVICE_REMOVE, name);
}
